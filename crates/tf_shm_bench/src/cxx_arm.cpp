// The C++ consumer's side of tf_shm for the side-by-side benchmark: tf_shm::Buffer and
// tf_shm::FramePair of include/tf_shm.hpp (crates/tf_shm_c), called from C++ exactly as a C++
// node would, over the C ABI of tf_shm_c (linked into this binary from its rlib).
//
// As in the tf2 shim, the name strings are std::strings built once per pair, so the by-name
// loop measures lookupTransform(const std::string&, const std::string&, TimePoint) itself.
#include "tf_shm.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {
struct CxxArm {
  explicit CxxArm(const char* name) : buffer(name, 0) {}
  tf_shm::Buffer buffer;
  std::vector<std::pair<std::string, std::string>> names;
  std::vector<tf_shm::FramePair> pairs;
};
}  // namespace

extern "C" {

void* cxxshm_open(const char* name) {
  try {
    return new CxxArm(name);
  } catch (...) {
    return nullptr;
  }
}

void cxxshm_free(void* a) { delete static_cast<CxxArm*>(a); }

int cxxshm_pair(void* a, const char* target, const char* source) {
  auto* arm = static_cast<CxxArm*>(a);
  arm->names.emplace_back(target, source);
  arm->pairs.push_back(arm->buffer.pair(target, source));
  return static_cast<int>(arm->pairs.size() - 1);
}

// T_target_source at time_ns, by name or through the pair. out = x y z qx qy qz qw.
// Returns 0 on success, 1 on any tf_shm exception.
int cxxshm_lookup(void* a, int pair, int64_t time_ns, int by_name, double* out, int64_t* stamp_ns) {
  auto* arm = static_cast<CxxArm*>(a);
  const auto i = static_cast<size_t>(pair);
  try {
    tf_shm::TimePoint stamp;
    tf_shm::Transform t;
    if (by_name) {
      auto r = arm->buffer.lookupTransform(arm->names[i].first, arm->names[i].second, tf_shm::fromNs(time_ns));
      stamp = r.stamp;
      t = r.transform;
    } else {
      auto r = arm->pairs[i].lookup(tf_shm::fromNs(time_ns));
      stamp = r.stamp;
      t = r.transform;
    }
    for (int k = 0; k < 3; k++) out[k] = t.translation[k];
    for (int k = 0; k < 4; k++) out[3 + k] = t.rotation[k];
    *stamp_ns = tf_shm::toNs(stamp);
    return 0;
  } catch (const std::exception&) {
    return 1;
  }
}

// n lookups cycling over (pairs[i], times[i]), i < len; the sum of translation.x (NaN for a
// failed lookup) so the work cannot be dropped.
double cxxshm_run(void* a, const int* pairs, const int64_t* times, size_t len, size_t n, int by_name) {
  auto* arm = static_cast<CxxArm*>(a);
  double sum = 0.0;
  size_t i = 0;
  for (size_t k = 0; k < n; ++k) {
    const auto p = static_cast<size_t>(pairs[i]);
    try {
      if (by_name) {
        sum += arm->buffer.lookupTransform(arm->names[p].first, arm->names[p].second, tf_shm::fromNs(times[i]))
                   .transform.translation[0];
      } else {
        sum += arm->pairs[p].lookup(tf_shm::fromNs(times[i])).transform.translation[0];
      }
    } catch (...) {
      sum += __builtin_nan("");
    }
    if (++i == len) i = 0;
  }
  return sum;
}

}  // extern "C"
