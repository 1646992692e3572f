// A C ABI over ROS 1 tf2 0.7.6 `tf2::BufferCore` (Debian 12 `libtf2-dev`), so the Rust harness
// drives the real C++ implementation with exactly the data it gives the other arms.
//
// Lookups go through the public `lookupTransform(std::string, std::string, ros::Time)`, the
// only lookup tf2 offers. The name strings are built once per registered pair (not per call),
// so the timed loop measures tf2's own work (mutex, name hash, walk, interpolation) and not
// C-string → std::string conversions the shim would add.
#include <tf2/buffer_core.h>
#include <tf2/exceptions.h>
#include <geometry_msgs/TransformStamped.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {
struct Shim {
  explicit Shim(double cache_s) : core(ros::Duration(cache_s)) {}
  tf2::BufferCore core;
  std::vector<std::pair<std::string, std::string>> pairs;
};

ros::Time from_ns(int64_t ns) {
  ros::Time t;
  t.fromNSec(static_cast<uint64_t>(ns));
  return t;
}
}  // namespace

extern "C" {

void* tf2shim_new(double cache_s) { return new Shim(cache_s); }

void tf2shim_free(void* s) { delete static_cast<Shim*>(s); }

// Returns 1 if tf2 accepted the transform, 0 if it refused it.
int tf2shim_set(void* s, const char* parent, const char* child, int64_t stamp_ns,
                const double* t, const double* q, int is_static) {
  auto* shim = static_cast<Shim*>(s);
  geometry_msgs::TransformStamped m;
  m.header.frame_id = parent;
  m.child_frame_id = child;
  m.header.stamp = from_ns(stamp_ns);
  m.transform.translation.x = t[0];
  m.transform.translation.y = t[1];
  m.transform.translation.z = t[2];
  m.transform.rotation.x = q[0];
  m.transform.rotation.y = q[1];
  m.transform.rotation.z = q[2];
  m.transform.rotation.w = q[3];
  return shim->core.setTransform(m, "bench", is_static != 0) ? 1 : 0;
}

// Registers a (target, source) pair; returns its index for tf2shim_lookup.
int tf2shim_pair(void* s, const char* target, const char* source) {
  auto* shim = static_cast<Shim*>(s);
  shim->pairs.emplace_back(target, source);
  return static_cast<int>(shim->pairs.size() - 1);
}

// T_target_source at time_ns (0 = latest common time). out = x y z qx qy qz qw.
// Returns 0 on success, 1 LookupException, 2 ConnectivityException,
// 3 ExtrapolationException, 4 any other exception.
int tf2shim_lookup(void* s, int pair, int64_t time_ns, double* out, int64_t* stamp_ns) {
  auto* shim = static_cast<Shim*>(s);
  const auto& p = shim->pairs[static_cast<size_t>(pair)];
  try {
    geometry_msgs::TransformStamped r = shim->core.lookupTransform(p.first, p.second, from_ns(time_ns));
    out[0] = r.transform.translation.x;
    out[1] = r.transform.translation.y;
    out[2] = r.transform.translation.z;
    out[3] = r.transform.rotation.x;
    out[4] = r.transform.rotation.y;
    out[5] = r.transform.rotation.z;
    out[6] = r.transform.rotation.w;
    *stamp_ns = static_cast<int64_t>(r.header.stamp.toNSec());
    return 0;
  } catch (const tf2::LookupException&) {
    return 1;
  } catch (const tf2::ConnectivityException&) {
    return 2;
  } catch (const tf2::ExtrapolationException&) {
    return 3;
  } catch (...) {
    return 4;
  }
}

// Timed loop inside C++: n lookups cycling over (pairs[i], times[i]), i < len. Returns the
// sum of translation.x so the compiler cannot drop the work; a failed lookup adds NaN.
double tf2shim_run(void* s, const int* pairs, const int64_t* times, size_t len, size_t n) {
  auto* shim = static_cast<Shim*>(s);
  double sum = 0.0;
  size_t i = 0;
  for (size_t k = 0; k < n; ++k) {
    const auto& p = shim->pairs[static_cast<size_t>(pairs[i])];
    try {
      sum += shim->core.lookupTransform(p.first, p.second, from_ns(times[i])).transform.translation.x;
    } catch (...) {
      sum += __builtin_nan("");
    }
    if (++i == len) i = 0;
  }
  return sum;
}

}  // extern "C"
