// The wrapper's own cost: tf_shm.hpp's tf_shm::Buffer::lookupTransform (by name) and
// tf_shm::FramePair::lookup against the Rust tf_shm::Buffer::lookup_transform / lookup_pair
// they wrap (run by the testkit, a Rust library), on the same arena, in one run: the arms
// alternate for ROUNDS rounds; prints each arm's median ns per lookup and the median of the
// per-round differences C++ − Rust.
//   crates/tf_shm_c/bench/run.sh
// "C call" is the C call under C++ names (tf_shm::Buffer::lookup: tf_shm_ref_lookup_transform,
// no result strings): C++ names − C call is what the result's two std::string copies cost.
// `wrapper_bench count <arm> <case> <n>` runs n lookups of one arm (0 C++ names, 1 Rust names,
// 2 C++ pair, 3 Rust pair, 4 C call) and nothing else timed, for instruction counts under
// callgrind (bench/run.sh --instructions: the difference of two n is the per-lookup count).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "../tests/testkit.h"
#include "tf_shm.hpp"

namespace
{
const int64_t T0 = 1000000000000LL, MS = 1000000LL;

struct Case
{
  const char * what;
  int pair;
  bool latest;
};
// Pairs: 0 = map -> c (depth 3), 1 = b -> c (depth 1).
const Case CASES[] = {{"depth 3, interpolated", 0, false}, {"depth 3, time 0", 0, true},
  {"depth 1, interpolated", 1, false}, {"depth 1, time 0", 1, true}};
const char * const TARGETS[] = {"map", "b"};
const char * const SOURCES[] = {"c", "c"};
const char * const ARMS[] = {"C++ names", "Rust names", "C++ pair", "Rust pair", "C call"};
const int N_ARMS = 5;

struct Arms
{
  tf_shm::Buffer cxx;
  std::vector<std::pair<std::string, std::string>> names;
  std::vector<tf_shm::FramePair> pairs;
  RustArm * rust;
};

// 64 queries of one case: interpolated times spread over the 1 s of history, or time 0.
std::vector<int64_t> times(const Case & c)
{
  std::vector<int64_t> t;
  for (int i = 0; i < 64; i++) {t.push_back(c.latest ? 0 : T0 + 5 * MS + i * 15 * MS + 123);}
  return t;
}

double run(Arms & a, int arm, const Case & c, const std::vector<int64_t> & ts, size_t n)
{
  const std::vector<int32_t> ps(ts.size(), c.pair);
  if (arm == 1 || arm == 3) {
    return tf_shm_testkit_rust_run(a.rust, ps.data(), ts.data(), ts.size(), n, arm == 1);
  }
  const auto & nm = a.names[static_cast<size_t>(c.pair)];
  auto & pair = a.pairs[static_cast<size_t>(c.pair)];
  double sum = 0;
  size_t i = 0;
  for (size_t k = 0; k < n; k++) {
    try {
      if (arm == 4) {
        tf_shm_transform_stamped t;
        sum += a.cxx.lookup(nm.first, nm.second, tf_shm::fromNs(ts[i]), t) == TF_SHM_OK ?
          t.translation[0] : NAN;
      } else {
        sum += arm == 0 ?
          a.cxx.lookupTransform(nm.first, nm.second, tf_shm::fromNs(ts[i])).transform.translation[0] :
          pair.lookup(tf_shm::fromNs(ts[i])).transform.translation[0];
      }
    } catch (const std::exception &) {
      sum += NAN;
    }
    if (++i == ts.size()) {i = 0;}
  }
  return sum;
}

double nsPer(Arms & a, int arm, const Case & c, const std::vector<int64_t> & ts, size_t n)
{
  const auto t0 = std::chrono::steady_clock::now();
  const double sum = run(a, arm, c, ts, n);
  const double ns =
    std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  if (std::isnan(sum)) {
    std::fprintf(stderr, "wrapper_bench: %s failed a lookup of %s\n", ARMS[arm], c.what);
    std::exit(1);
  }
  return ns / static_cast<double>(n);
}

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}
}  // namespace

int main(int argc, char ** argv)
{
  const bool count = argc == 5 && std::string(argv[1]) == "count";
  if (argc != 1 && !count) {
    std::fprintf(stderr, "usage: wrapper_bench [count <arm 0-3> <case 0-3> <n>]\n");
    return 2;
  }
  char dir[] = "/tmp/tf_shm_wrapper_bench.XXXXXX";
  if (!mkdtemp(dir)) {return 2;}
  setenv("TF_SHM_RUNTIME_DIR", dir, 1);
  TestOwner * owner = tf_shm_testkit_serve(dir, "wrapbench", 0);
  if (!owner) {return 2;}
  // map -> a -> b -> c, 100 samples each, 10 ms apart.
  const char * chain[] = {"map", "a", "b", "c"};
  for (int k = 0; k < 100; k++) {
    for (int d = 0; d < 3; d++) {
      const double yaw = 0.001 * k * (d + 1);
      const double t[3] = {0.01 * k + d, 0.1, 0.0};
      const double q[4] = {0.0, 0.0, std::sin(yaw / 2), std::cos(yaw / 2)};
      if (tf_shm_testkit_set(owner, chain[d], chain[d + 1], T0 + k * 10 * MS, t, q, 0) != 0) {
        return 2;
      }
    }
  }
  int rc = 0;
  {
    Arms a{tf_shm::Buffer("wrapbench", 0), {}, {}, nullptr};
    for (int p = 0; p < 2; p++) {
      a.names.emplace_back(TARGETS[p], SOURCES[p]);
      a.pairs.push_back(a.cxx.pair(TARGETS[p], SOURCES[p]));
    }
    a.rust = tf_shm_testkit_rust_open(dir, "wrapbench", TARGETS, SOURCES, 2);
    if (!a.rust) {return 2;}
    if (count) {
      const int arm = std::atoi(argv[2]), c = std::atoi(argv[3]);
      if (arm < 0 || arm >= N_ARMS || c < 0 || c > 3) {return 2;}
      std::printf("%.17g\n", run(a, arm, CASES[c], times(CASES[c]), std::strtoull(argv[4],
        nullptr, 10)));
    } else {
      const int rounds = 15;
      std::printf("%-22s %10s %10s %8s %10s %10s %8s %10s %8s   (median of %d alternating rounds, ns)\n",
        "lookup", "C++ names", "Rust", "C++−Rust", "C++ pair", "Rust", "C++−Rust", "C call",
        "C−Rust", rounds);
      for (const Case & c : CASES) {
        const auto ts = times(c);
        // About 20 ms per arm and round.
        nsPer(a, 1, c, ts, 20000);
        const size_t n = std::max<size_t>(1000, static_cast<size_t>(2e7 / nsPer(a, 1, c, ts, 20000)));
        std::vector<double> ns[N_ARMS], diff[3];
        for (int r = 0; r < rounds; r++) {
          double x[N_ARMS];
          for (int k = 0; k < N_ARMS; k++) {
            const int arm = (k + r) % N_ARMS;  // rotate the order: no arm always runs first
            x[arm] = nsPer(a, arm, c, ts, n);
          }
          for (int arm = 0; arm < N_ARMS; arm++) {ns[arm].push_back(x[arm]);}
          diff[0].push_back(x[0] - x[1]);
          diff[1].push_back(x[2] - x[3]);
          diff[2].push_back(x[4] - x[1]);
        }
        std::printf("%-22s %10.1f %10.1f %+8.1f %10.1f %10.1f %+8.1f %10.1f %+8.1f\n", c.what,
          median(ns[0]), median(ns[1]), median(diff[0]), median(ns[2]), median(ns[3]),
          median(diff[1]), median(ns[4]), median(diff[2]));
      }
    }
    tf_shm_testkit_rust_free(a.rust);
  }
  tf_shm_testkit_close(owner);
  const std::string cmd = std::string("rm -rf '") + dir + "'";
  if (std::system(cmd.c_str()) != 0) {rc = 1;}
  return rc;
}
