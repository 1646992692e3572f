// tf_shm::Tf2Buffer against ROS 2 Jazzy's tf2::BufferCore, in one run, on the same transforms:
// lookupTransform(target, source, time) by name through tf2::BufferCoreInterface&, at depth 1
// and 3, time 0 (latest) and an interpolated time; the two alternate for 9 rounds; prints the
// median ns per lookup of each and the median of the per-round ratios (with their range).
//   crates/tf_shm_c/bench/run.sh
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <tf2/buffer_core.h>
#include <unistd.h>

#include "../tests/testkit.h"
#include "tf2_buffer.hpp"

static tf2::TimePoint tp(int64_t ns) {return tf2::TimePoint(tf2::Duration(ns));}

static void set(TestOwner * o, tf2::BufferCore & core, const char * p, const char * c,
  int64_t stamp, double x, double yaw)
{
  const double t[3] = {x, 0.1, 0.0};
  const double q[4] = {0.0, 0.0, std::sin(yaw / 2), std::cos(yaw / 2)};
  if (tf_shm_testkit_set(o, p, c, stamp, t, q, 0) != 0) {std::exit(2);}
  geometry_msgs::msg::TransformStamped m;
  m.header.frame_id = p;
  m.child_frame_id = c;
  m.header.stamp = tf_shm::toMsg(tp(stamp));
  m.transform.translation.x = t[0];
  m.transform.translation.y = t[1];
  m.transform.rotation.z = q[2];
  m.transform.rotation.w = q[3];
  core.setTransform(m, "bench", false);
}

static volatile double sink;

static double nsPerLookup(const tf2::BufferCoreInterface & b, const std::string & target,
  const std::string & source, tf2::TimePoint time, int n)
{
  for (int i = 0; i < n / 10; i++) {sink = b.lookupTransform(target, source, time).transform.translation.x;}
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; i++) {sink = b.lookupTransform(target, source, time).transform.translation.x;}
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
}

int main()
{
  char dir[] = "/tmp/tf_shm_tf2_bench.XXXXXX";
  if (!mkdtemp(dir)) {return 2;}
  setenv("TF_SHM_RUNTIME_DIR", dir, 1);
  TestOwner * owner = tf_shm_testkit_serve(dir, "tf2bench", 0);
  if (!owner) {return 2;}
  tf2::BufferCore core;
  // map -> a -> b -> c, 100 samples each, 10 ms apart (1 s of history at 100 Hz).
  const int64_t T0 = 1000000000000LL, MS = 1000000LL;
  const char * chain[] = {"map", "a", "b", "c"};
  for (int k = 0; k < 100; k++) {
    for (int d = 0; d < 3; d++) {
      set(owner, core, chain[d], chain[d + 1], T0 + k * 10 * MS, 0.01 * k + d, 0.001 * k * (d + 1));
    }
  }
  int rc = 0;
  {
    tf_shm::Tf2Buffer shm("tf2bench", 0);
    const int n = 50000, rounds = 9;
    struct Case { const char * what, * target, * source; int64_t time; };
    const Case cases[] = {{"depth 1, time 0", "b", "c", 0},
      {"depth 3, time 0", "map", "c", 0},
      {"depth 3, interpolated", "map", "c", T0 + 505 * MS + 123},
      {"depth 1, interpolated", "b", "c", T0 + 505 * MS + 123}};
    std::printf("%-24s %12s %12s %8s %16s   (median of %d alternating rounds)\n",
      "lookupTransform by name", "tf2 ns", "Tf2Buffer ns", "ratio", "ratio range", rounds);
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
    for (const Case & c : cases) {
      std::vector<double> a, b, r;
      for (int k = 0; k < rounds; k++) {
        // Alternate which goes first.
        const double x = k % 2 ? nsPerLookup(core, c.target, c.source, tp(c.time), n) : 0;
        const double y = nsPerLookup(shm, c.target, c.source, tp(c.time), n);
        const double z = k % 2 ? x : nsPerLookup(core, c.target, c.source, tp(c.time), n);
        a.push_back(z);
        b.push_back(y);
        r.push_back(z / y);
      }
      std::printf("%-24s %12.1f %12.1f %7.2fx %7.2fx-%5.2fx\n", c.what, median(a), median(b),
        median(r), *std::min_element(r.begin(), r.end()), *std::max_element(r.begin(), r.end()));
    }
  }
  tf_shm_testkit_close(owner);
  const std::string cmd = std::string("rm -rf '") + dir + "'";
  if (std::system(cmd.c_str()) != 0) {rc = 1;}
  return rc;
}
