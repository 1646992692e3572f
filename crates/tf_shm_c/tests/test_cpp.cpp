// C++ tests of tf_shm.hpp against a live arena filled through the testkit: tf2's exception
// classes and what() texts for every query form (compared with the Rust engine's answers),
// canTransform's error strings, chrono time conversions, RAII and moves, frame listing, pairs
// from many threads, and opening before the bridge runs. Built with g++ and clang++ under ASan
// and UBSan by crates/tf_shm_c/tests/run.sh.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <unistd.h>

#include "check.h"
#include "scenario.h"
#include "tf_shm.hpp"


// tf2's own definitions (tf2/time.h, ROS 2 Jazzy), written out: ours must be the same types so
// code written against tf2 compiles unchanged.
namespace tf2_copy {
using Duration = std::chrono::nanoseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;
}  // namespace tf2_copy
static_assert(std::is_same<tf_shm::TimePoint, tf2_copy::TimePoint>::value, "tf2::TimePoint");
static_assert(std::is_same<tf_shm::Duration, tf2_copy::Duration>::value, "tf2::Duration");
static_assert(tf_shm::TimePointZero.time_since_epoch().count() == 0, "TimePointZero");
static_assert(std::is_base_of<std::runtime_error, tf_shm::TransformException>::value, "");
static_assert(std::is_base_of<tf_shm::ExtrapolationException, tf_shm::ForwardExtrapolationException>::value, "");
static_assert(std::is_base_of<tf_shm::ExtrapolationException, tf_shm::BackwardExtrapolationException>::value, "");
static_assert(std::is_base_of<tf_shm::ExtrapolationException, tf_shm::NoDataForExtrapolationException>::value, "");
static_assert(std::is_base_of<tf_shm::TransformException, tf_shm::ExtrapolationException>::value, "");
static_assert(std::is_nothrow_destructible<tf_shm::Buffer>::value, "");
static_assert(std::is_nothrow_move_constructible<tf_shm::Buffer>::value, "");
static_assert(std::is_nothrow_move_assignable<tf_shm::Buffer>::value, "");
static_assert(!std::is_copy_constructible<tf_shm::Buffer>::value, "");
static_assert(std::is_nothrow_move_constructible<tf_shm::FramePair>::value, "");

static TestOwner *owner;

// tf2's class name of a caught exception, most derived first.
static std::string className(const std::exception &e) {
  using namespace tf_shm;
  if (dynamic_cast<const ForwardExtrapolationException *>(&e)) return "ForwardExtrapolationException";
  if (dynamic_cast<const BackwardExtrapolationException *>(&e)) return "BackwardExtrapolationException";
  if (dynamic_cast<const NoDataForExtrapolationException *>(&e)) return "NoDataForExtrapolationException";
  if (dynamic_cast<const ExtrapolationException *>(&e)) return "ExtrapolationException";
  if (dynamic_cast<const LookupException *>(&e)) return "LookupException";
  if (dynamic_cast<const ConnectivityException *>(&e)) return "ConnectivityException";
  if (dynamic_cast<const InvalidArgumentException *>(&e)) return "InvalidArgumentException";
  if (dynamic_cast<const TimeoutException *>(&e)) return "TimeoutException";
  if (dynamic_cast<const ArenaException *>(&e)) return "ArenaError";
  return std::string("other:") + typeid(e).name();
}

struct Reference {
  bool ok;
  int64_t stamp;
  double v[7];
  std::string cls, text;
};
static Reference reference(const char *kind, const std::string &target, int64_t t1,
                           const std::string &source, int64_t t2, const char *fixed) {
  Reference r{};
  char cls[64], text[4096];
  r.ok = tf_shm_testkit_reference(owner, kind, target.c_str(), t1, source.c_str(), t2, fixed,
                                  &r.stamp, r.v, cls, text, sizeof text);
  if (!r.ok) {
    r.cls = cls;
    r.text = text;
  }
  return r;
}

static void checkAnswer(const Reference &r, const tf_shm::TransformStamped &t, const std::string &target,
                        const std::string &source, const char *desc) {
  CHECK(r.ok, "%s: answered but the engine says %s", desc, r.cls.c_str());
  CHECK(tf_shm::toNs(t.stamp) == r.stamp, "%s: stamp", desc);
  CHECK(t.frame_id == target && t.child_frame_id == source, "%s: names", desc);
  for (int i = 0; i < 3; i++) CHECK(t.transform.translation[i] == r.v[i], "%s: t", desc);
  for (int i = 0; i < 4; i++) CHECK(t.transform.rotation[i] == r.v[3 + i], "%s: q", desc);
}

static void checkThrown(const Reference &r, const std::exception &e, const char *desc) {
  CHECK(!r.ok, "%s: threw %s", desc, e.what());
  CHECK(className(e) == r.cls, "%s: %s != %s", desc, className(e).c_str(), r.cls.c_str());
  CHECK(e.what() == r.text, "%s: [%s] != [%s]", desc, e.what(), r.text.c_str());
}

static void testDifferential(const tf_shm::Buffer &buffer) {
  int thrown = 0;
  for (const char *a : FRAMES)
    for (const char *b : FRAMES)
      for (int64_t time : TIMES) {
        char desc[256];
        std::snprintf(desc, sizeof desc, "lookupTransform(%s, %s, %lld)", a, b, (long long)time);
        const auto r = reference("lookup", a, time, b, 0, nullptr);
        try {
          checkAnswer(r, buffer.lookupTransform(a, b, tf_shm::fromNs(time)), a, b, desc);
        } catch (const tf_shm::TransformException &e) {
          thrown++;
          checkThrown(r, e, desc);
        }
        const auto c = reference("can", a, time, b, 0, nullptr);
        std::string err = "untouched";
        const bool can = buffer.canTransform(a, b, tf_shm::fromNs(time), &err);
        CHECK(can == c.ok, "%s: canTransform %d", desc, can);
        CHECK(can ? err == "untouched" : err == c.text, "%s: errstr [%s] != [%s]", desc, err.c_str(),
              c.text.c_str());
        CHECK(buffer.canTransform(a, b, tf_shm::fromNs(time)) == c.ok, "%s: no errstr", desc);
        const int64_t t2 = time + 30 * MS;
        const auto f = reference("full", a, time, b, t2, "odom");
        try {
          checkAnswer(f, buffer.lookupTransform(a, tf_shm::fromNs(time), b, tf_shm::fromNs(t2), "odom"), a,
                      b, desc);
        } catch (const tf_shm::TransformException &e) {
          checkThrown(f, e, desc);
        }
        const auto cf = reference("can_full", a, time, b, t2, "odom");
        err.clear();
        CHECK(buffer.canTransform(a, tf_shm::fromNs(time), b, tf_shm::fromNs(t2), "odom", &err) == cf.ok &&
                  err == cf.text,
              "%s: canTransform full [%s] [%s]", desc, err.c_str(), cf.text.c_str());
      }
  CHECK(thrown > 100, "only %d lookups threw", thrown);
  // Every class reachable through the hierarchy as tf2 users catch it.
  bool caught = false;
  try {
    buffer.lookupTransform("odom", "base_link", tf_shm::fromNs(T0 + 5000 * MS));
  } catch (const tf_shm::ExtrapolationException &e) {
    caught = className(e) == "ForwardExtrapolationException";
  }
  CHECK(caught, "ForwardExtrapolationException as ExtrapolationException");
  caught = false;
  try {
    buffer.lookupTransform("map", "island", tf_shm::TimePointZero);
  } catch (const std::runtime_error &e) {
    caught = std::string(e.what()).find("not part of the same tree") != std::string::npos;
  }
  CHECK(caught, "ConnectivityException as std::runtime_error");
}

static void testTimes(const tf_shm::Buffer &buffer) {
  // What tf2_ros::fromMsg does with builtin_interfaces/Time{sec, nanosec}.
  const int32_t sec = 1000;
  const uint32_t nanosec = 150000000;
  const tf_shm::TimePoint t = tf_shm::TimePoint(std::chrono::seconds(sec) + std::chrono::nanoseconds(nanosec));
  const auto r = buffer.lookupTransform("odom", "base_link", t);
  CHECK(r.stamp == t, "stamp round trip");
  CHECK(std::fabs(r.transform.translation[0] - 0.75) < 1e-12, "interpolated x %g", r.transform.translation[0]);
  CHECK(buffer.getLatestCommonTime("map", "optical") == tf_shm::fromNs(T0 + 250 * MS), "latest");
  CHECK(buffer.lookupTransform("map", "optical", tf_shm::TimePointZero).stamp == tf_shm::fromNs(T0 + 250 * MS),
        "time 0");
  CHECK(tf_shm::toNs(tf_shm::fromNs(-5)) == -5, "negative");
  // Durations in any chrono unit convert to tf2::Duration.
  const auto start = std::chrono::steady_clock::now();
  CHECK(!buffer.canTransform("map", "nope", tf_shm::TimePointZero, std::chrono::milliseconds(40)), "timeout");
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(40), "waited");
  try {
    buffer.lookupTransform("map", "nope", tf_shm::TimePointZero, std::chrono::milliseconds(20));
    CHECK(false, "no throw");
  } catch (const tf_shm::LookupException &) {
  }
  const auto lf = buffer.lookupTransform("laser", tf_shm::fromNs(T0), "odom", tf_shm::fromNs(T0 + 100 * MS), "map",
                                         std::chrono::milliseconds(10));
  CHECK(lf.stamp == tf_shm::fromNs(T0), "full timeout stamp");
  CHECK(buffer.canTransform("laser", tf_shm::fromNs(T0), "odom", tf_shm::fromNs(T0), "map",
                            std::chrono::milliseconds(10)),
        "full can timeout");
  try {
    buffer.getLatestCommonTime("map", "island");
    CHECK(false, "no throw");
  } catch (const tf_shm::ConnectivityException &) {
  }
}

static void testListing(const tf_shm::Buffer &buffer) {
  std::vector<std::string> ids{"stale"};
  buffer._getFrameStrings(ids);
  CHECK(ids.size() == 8, "%zu frames", ids.size());
  for (size_t i = 0; i < 8; i++)
    CHECK(std::find(ids.begin(), ids.end(), FRAMES[i]) != ids.end(), "missing %s", FRAMES[i]);
  CHECK(buffer.getAllFrameNames() == ids, "getAllFrameNames");
  CHECK(buffer._frameExists("camera") && !buffer._frameExists("nope") && !buffer._frameExists(""), "exists");
  const std::string s = buffer.allFramesAsString();
  CHECK(s.find("Frame optical exists with parent camera.\n") != std::string::npos, "[%s]", s.c_str());
  char c[64 * 1024];
  size_t len = 0;
  CHECK(tf_shm_all_frames_as_string(buffer.handle(), c, sizeof c, &len) == TF_SHM_OK && s == c, "same as C");
  const std::string y = buffer.allFramesAsYAML(tf_shm::fromNs(T0 + 300 * MS));
  CHECK(y.find("optical: \n  parent: 'camera'\n") != std::string::npos, "[%s]", y.c_str());
  CHECK(buffer.allFramesAsYAML() == buffer.allFramesAsYAML(tf_shm::TimePointZero), "YAML()");
}

static void testPairsAndThreads(const tf_shm::Buffer &buffer) {
  const auto expect = buffer.lookupTransform("map", "optical", tf_shm::TimePointZero);
  tf_shm::FramePair pair = buffer.pair("map", "optical");
  const auto p = pair.lookupTransform(tf_shm::TimePointZero);
  CHECK(p.stamp == expect.stamp && p.frame_id == "map" && p.child_frame_id == "optical", "pair");
  for (int i = 0; i < 3; i++) CHECK(std::fabs(p.transform.translation[i] - expect.transform.translation[i]) < 1e-12, "t");
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int n = 0; n < 8; n++)
    threads.emplace_back([&] {
      // A pair is one caller's (lookup() is not const): each thread makes its own; the buffer
      // is shared.
      tf_shm::FramePair mine = buffer.pair("map", "optical");
      for (int i = 0; i < 5000; i++) {
        const auto a = mine.lookup(tf_shm::TimePointZero);
        const auto b = buffer.lookupTransform("map", "optical", tf_shm::TimePointZero);
        if (a.stamp != expect.stamp || b.stamp != expect.stamp ||
            std::fabs(a.transform.translation[0] - expect.transform.translation[0]) > 1e-12)
          bad++;
      }
    });
  for (auto &t : threads) t.join();
  CHECK(bad == 0, "%d bad answers", bad.load());
  tf_shm::FramePair unknown = buffer.pair("map", "nope");
  try {
    unknown.lookup(tf_shm::TimePointZero);
    CHECK(false, "no throw");
  } catch (const tf_shm::LookupException &e) {
    CHECK(std::string(e.what()) == "\"nope\" passed to lookupTransform argument source_frame does not exist. ",
          "[%s]", e.what());
  }
  tf_shm::FramePair moved = std::move(pair);
  CHECK(moved.lookup(tf_shm::TimePointZero).stamp == expect.stamp, "moved pair");
  try {
    pair.lookup(tf_shm::TimePointZero);  // NOLINT(bugprone-use-after-move): misuse on purpose
    CHECK(false, "no throw");
  } catch (const tf_shm::Error &e) {
    CHECK(e.status() == TF_SHM_INVALID_HANDLE, "%d", e.status());
  }
}

static void testRaii(const char *name) {
  tf_shm::Buffer a(name, 0);
  tf_shm::Buffer b(std::move(a));
  CHECK(b.lookupTransform("map", "odom", tf_shm::TimePointZero).transform.translation[0] == 1.0, "moved");
  try {
    a.lookupTransform("map", "odom", tf_shm::TimePointZero);  // NOLINT(bugprone-use-after-move)
    CHECK(false, "no throw");
  } catch (const tf_shm::Error &e) {
    CHECK(e.status() == TF_SHM_INVALID_HANDLE, "moved-from: %d", e.status());
  }
  try {
    a.canTransform("map", "odom", tf_shm::TimePointZero);
    CHECK(false, "canTransform on a moved-from buffer must throw, not answer false");
  } catch (const tf_shm::Error &) {
  }
  const tf_shm_buffer h = b.handle();
  b = tf_shm::Buffer(name, 0);  // the old handle is closed by the assignment
  tf_shm_transform_stamped t;
  CHECK(tf_shm_lookup_transform(h, "map", "odom", 0, &t) == TF_SHM_INVALID_HANDLE, "old handle closed");
  CHECK(b.arena_swaps() == 0 && b.generation() == 0, "arena swaps");
  try {
    tf_shm::Buffer none("nobody_serves_this", 0);
    CHECK(false, "no throw");
  } catch (const tf_shm::Error &e) {
    CHECK(e.status() == TF_SHM_OPEN_ERROR && std::strlen(e.what()) > 0, "%d", e.status());
  }
}

// A node that starts before its bridge: the constructor waits for it.
static void testWaitForBridge(const char *dir) {
  TestOwner *late = nullptr;
  std::thread serve([&] {
    usleep(150000);
    late = tf_shm_testkit_serve(dir, "late", 0);
    scenario_set(late, "a", "b", T0, 4.0, 0, 0, 0, 1);
  });
  const auto start = std::chrono::steady_clock::now();
  tf_shm::Buffer buffer("late", 0, std::chrono::seconds(5));
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(100), "waited");
  CHECK(buffer.lookupTransform("a", "b", tf_shm::TimePointZero, std::chrono::seconds(2)).transform.translation[0] == 4.0,
        "late bridge");
  serve.join();
  tf_shm_testkit_close(late);
}

// A node that starts before its bridge, as tf2_ros::Buffer does: open_or_empty answers as an
// empty buffer at once (tf2's LookupException text for a frame nobody published), then joins
// the arena when it is served; a timed lookup begun before returns once the data is there.
static void testOpenOrEmpty(const char *dir) {
  tf_shm::Buffer buffer(tf_shm::open_or_empty, "early", 0);
  CHECK(!buffer.joined(), "not joined before a bridge serves");
  CHECK(!buffer.canTransform("a", "b", tf_shm::TimePointZero), "empty: canTransform false");
  try {
    buffer.lookupTransform("a", "b", tf_shm::TimePointZero);
    CHECK(false, "empty: no throw");
  } catch (const tf_shm::LookupException &e) {
    CHECK(std::string(e.what()) == "\"a\" passed to lookupTransform argument target_frame does not exist. ",
          "empty: %s", e.what());
  }
  TestOwner *early = nullptr;
  std::thread serve([&] {
    usleep(150000);
    early = tf_shm_testkit_serve(dir, "early", 0);
    scenario_set(early, "a", "b", T0, 5.0, 0, 0, 0, 1);
  });
  const auto start = std::chrono::steady_clock::now();
  const auto t = buffer.lookupTransform("a", "b", tf_shm::TimePointZero, std::chrono::seconds(5));
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(100), "waited for the bridge");
  CHECK(t.transform.translation[0] == 5.0 && buffer.joined(), "joined the late bridge");
  serve.join();
  tf_shm_testkit_close(early);
}

int main() {
  char dir[] = "/tmp/tf_shm_cpp_test.XXXXXX";
  if (!mkdtemp(dir)) return 2;
  setenv("TF_SHM_RUNTIME_DIR", dir, 1);
  owner = tf_shm_testkit_serve(dir, "cpptest", 0);
  if (!owner) return 2;
  scenario_fill(owner);
  {
    const tf_shm::Buffer buffer("cpptest", 0);
    testDifferential(buffer);
    testTimes(buffer);
    testListing(buffer);
    testPairsAndThreads(buffer);
  }
  testRaii("cpptest");
  testWaitForBridge(dir);
  testOpenOrEmpty(dir);
  tf_shm_testkit_close(owner);
  const std::string cmd = std::string("rm -rf '") + dir + "'";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir);
  const int f = CHECK_FAILURES();
  std::printf("test_cpp: %s (%d failed checks)\n", f ? "FAILED" : "ok", f);
  return f ? 1 : 0;
}
