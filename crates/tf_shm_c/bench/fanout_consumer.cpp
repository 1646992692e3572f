// Fan-out benchmark, C++ arms (scripts/fanout.sh): one consumer process looking up the given
// frame pairs at time 0 at 100 Hz through tf2's interface, as examples/fanout_consumer.rs does
// through tf_shm (same loop, same counting, same JSON line on stderr):
//   --arm CL  a tf2::BufferCore (ROS 2 Jazzy's own) filled by tf_shm::TransformListener, what a
//             node that swapped tf2_ros::TransformListener for tf_shm's runs;
//   --arm CT  a tf_shm::Tf2Buffer answering from the arena (no private buffer).
//
//     fanout_consumer --arm CL --pairs odom:link_50,sensor_0:sensor_1 [--secs S] [--skip S0]
//
// Exits after S seconds (default 60) and prints one JSON line on stderr: lookups that succeeded
// and failed after the first S0 seconds (default 0); CL adds what its listener gave the buffer.
// Built by crates/tf_shm_c/bench/run.sh --fanout.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <tf2/buffer_core.h>
#include <tf2/exceptions.h>

#include "tf2_buffer.hpp"
#include "transform_listener.hpp"

namespace
{

using Clock = std::chrono::steady_clock;

[[noreturn]] void usage(const char * why)
{
  std::fprintf(stderr, "fanout_consumer: %s\n"
    "usage: fanout_consumer --arm CL|CT --pairs T:S,T:S,... [--secs S] [--skip S0]\n", why);
  std::exit(2);
}

/// `target:source,target:source,…` as pairs; exits 2 on a malformed pair (parse_pairs).
std::vector<std::pair<std::string, std::string>> parsePairs(const std::string & s)
{
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t at = 0;
  while (at <= s.size()) {
    size_t end = s.find(',', at);
    if (end == std::string::npos) {end = s.size();}
    const std::string p = s.substr(at, end - at);
    if (!p.empty()) {
      const size_t colon = p.find(':');
      if (colon == std::string::npos) {
        std::fprintf(stderr, "fanout_consumer: pair \"%s\" is not target:source\n", p.c_str());
        std::exit(2);
      }
      pairs.emplace_back(p.substr(0, colon), p.substr(colon + 1));
    }
    at = end + 1;
  }
  return pairs;
}

/// Counts of lookup outcomes, as examples/common's Tally; `sink` keeps every result observable.
struct Tally
{
  uint64_t ok = 0, err = 0;
  double sink = 0.0;
  std::string first_err;

  /// Looks `pair` up at time 0 and, when `counting`, records the outcome.
  void lookup(
    const tf2::BufferCoreInterface & buffer, const std::pair<std::string, std::string> & pair,
    bool counting)
  {
    try {
      const auto t = buffer.lookupTransform(pair.first, pair.second, tf2::TimePointZero);
      if (counting) {
        ok++;
        sink += t.transform.translation.x;
      }
    } catch (const tf2::TransformException & e) {
      if (!counting) {return;}
      if (err == 0) {first_err = pair.first + "->" + pair.second + ": " + e.what();}
      err++;
    }
  }
};

std::string jsonString(const std::string & s)
{
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char ** argv)
{
  std::string arm, pairs_arg;
  double secs = 60.0, skip = 0.0;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {usage(("missing the value of " + a).c_str());}
    const char * v = argv[++i];
    if (a == "--arm") {
      arm = v;
    } else if (a == "--pairs") {
      pairs_arg = v;
    } else if (a == "--secs") {
      secs = std::atof(v);
    } else if (a == "--skip") {
      skip = std::atof(v);
    } else {
      usage(("unknown option " + a).c_str());
    }
  }
  if (arm != "CL" && arm != "CT") {usage("--arm is CL or CT");}
  const auto pairs = parsePairs(pairs_arg);

  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
    std::chrono::duration<double>(secs));
  // Neither waits for a bridge: both answer tf2's LookupException until one serves, as a
  // tf2_ros::Buffer before its listener has heard anything.
  std::unique_ptr<tf2::BufferCore> core;
  std::unique_ptr<tf_shm::TransformListener> listener;
  std::unique_ptr<tf_shm::Tf2Buffer> shm;
  const tf2::BufferCoreInterface * buffer;
  if (arm == "CL") {
    core = std::make_unique<tf2::BufferCore>();
    listener = std::make_unique<tf_shm::TransformListener>(*core);
    buffer = core.get();
  } else {
    shm = std::make_unique<tf_shm::Tf2Buffer>();
    buffer = shm.get();
  }

  const auto period = std::chrono::milliseconds(10);
  auto next = Clock::now() + period;
  const auto count_from = start + std::chrono::duration_cast<Clock::duration>(
    std::chrono::duration<double>(skip));
  Tally tally;
  for (;;) {
    const auto now = Clock::now();
    if (now >= end) {break;}
    if (now < next) {
      std::this_thread::sleep_for(next - now);
      continue;
    }
    for (const auto & pair : pairs) {
      tally.lookup(*buffer, pair, now >= count_from);
    }
    next += period;
    if (next < now) {next = now + period;}
  }
  std::string extra;
  if (listener) {
    extra = ",\"samples\":" + std::to_string(listener->samples()) +
      ",\"missed\":" + std::to_string(listener->missed()) +
      ",\"read_errors\":" + std::to_string(listener->read_errors()) +
      ",\"apply_errors\":" + std::to_string(listener->apply_errors());
  }
  std::fprintf(stderr, "{\"arm\":\"%s\",\"lookups_ok\":%llu,\"lookups_err\":%llu%s,\"sink\":%s,"
    "\"first_err\":%s}\n", arm.c_str(), static_cast<unsigned long long>(tally.ok),
    static_cast<unsigned long long>(tally.err), extra.c_str(),
    std::isfinite(tally.sink) ? "true" : "false", jsonString(tally.first_err).c_str());
  // The listener goes before the buffer it feeds.
  listener.reset();
  return 0;
}
