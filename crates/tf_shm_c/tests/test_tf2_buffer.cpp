// Tests of tf2_buffer.hpp against the real ROS 2 Jazzy tf2: compiled with tf2's and tf2_ros's
// headers, linked with libtf2. Every virtual of tf2::BufferCoreInterface (and the extras) on a
// grid of queries is compared with a tf2::BufferCore fed the same transforms: message values
// (to 1e-9), stamps, frame ids, exception classes (typeid) and what() texts. waitForTransform:
// handles as tf2::BufferCore::addTransformableRequest gives them, data arriving later, timeouts,
// cancel, many outstanding requests, and the buffer destroyed with requests pending.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <future>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <tf2/buffer_core.h>
#include <unistd.h>

#include "check.h"
#include "scenario.h"
#include "tf2_buffer.hpp"

using geometry_msgs::msg::TransformStamped;
using namespace std::chrono_literals;

// tf2_ros::MessageFilter<M, BufferT> static_asserts exactly these two (message_filter.h).
static_assert(std::is_base_of<tf2::BufferCoreInterface, tf_shm::Tf2Buffer>::value,
  "MessageFilter: BufferT must be a descendant of tf2::BufferCoreInterface");
static_assert(std::is_base_of<tf2_ros::AsyncBufferInterface, tf_shm::Tf2Buffer>::value,
  "MessageFilter: BufferT must be a descendant of tf2_ros::AsyncBufferInterface");

static TestOwner * owner;

static tf2::TimePoint tp(int64_t ns) {return tf2::TimePoint(tf2::Duration(ns));}

// Feeds a transform to the arena and to the reference BufferCore alike.
struct Both
{
  TestOwner * o;
  tf2::BufferCore * core;
};
static void bothSink(
  void * ctx, const char * p, const char * c, int64_t stamp, const double t[3],
  const double q[4], int is_static)
{
  auto * b = static_cast<Both *>(ctx);
  scenario_testkit_sink(b->o, p, c, stamp, t, q, is_static);
  TransformStamped m;
  m.header.frame_id = p;
  m.child_frame_id = c;
  m.header.stamp = tf_shm::toMsg(tp(stamp));
  m.transform.translation.x = t[0];
  m.transform.translation.y = t[1];
  m.transform.translation.z = t[2];
  m.transform.rotation.x = q[0];
  m.transform.rotation.y = q[1];
  m.transform.rotation.z = q[2];
  m.transform.rotation.w = q[3];
  if (!b->core->setTransform(m, "testkit", is_static != 0)) {
    std::fprintf(stderr, "reference BufferCore refused %s -> %s\n", p, c);
    std::exit(2);
  }
}
static void both(
  Both & b, const char * p, const char * c, int64_t stamp, double x, double yaw, int is_static)
{
  scenario_set_with(bothSink, &b, p, c, stamp, x, 0.0, 0.0, yaw, is_static);
}

// Values within 1e-9: tf2's rotation arithmetic and tf_shm's can differ in the last bits (the
// project's spec, docs/tf2-semantics.md, section 4: "compare with a tolerance (1e-9 is ample)").
// Stamps, frame ids, classes and texts are compared exactly.
static bool same(double a, double b) {return std::fabs(a - b) < 1e-9;}

static bool sameMsg(const TransformStamped & a, const TransformStamped & b)
{
  const auto & x = a.transform, & y = b.transform;
  return a.header.frame_id == b.header.frame_id && a.child_frame_id == b.child_frame_id &&
         a.header.stamp.sec == b.header.stamp.sec &&
         a.header.stamp.nanosec == b.header.stamp.nanosec &&
         same(x.translation.x, y.translation.x) && same(x.translation.y, y.translation.y) &&
         same(x.translation.z, y.translation.z) && same(x.rotation.x, y.rotation.x) &&
         same(x.rotation.y, y.rotation.y) && same(x.rotation.z, y.rotation.z) &&
         same(x.rotation.w, y.rotation.w);
}

// What a call did: its message, or its exception's class and text.
struct Outcome
{
  bool threw = false;
  const std::type_info * type = nullptr;
  std::string what;
  TransformStamped msg;
};
template<typename F>
static Outcome run(F f)
{
  Outcome o;
  try {
    o.msg = f();
  } catch (const tf2::TransformException & e) {
    o.threw = true;
    o.type = &typeid(e);
    o.what = e.what();
  }
  return o;
}
static bool sameOutcome(const Outcome & a, const Outcome & b)
{
  if (a.threw != b.threw) {return false;}
  if (a.threw) {return *a.type == *b.type && a.what == b.what;}
  return sameMsg(a.msg, b.msg);
}
static std::string show(const Outcome & o)
{
  if (o.threw) {return std::string(o.type->name()) + ": " + o.what;}
  const auto & t = o.msg.transform;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s<-%s @%d.%09u t=(%.17g %.17g %.17g) q=(%.17g %.17g %.17g %.17g)",
    o.msg.header.frame_id.c_str(), o.msg.child_frame_id.c_str(), o.msg.header.stamp.sec,
    o.msg.header.stamp.nanosec, t.translation.x, t.translation.y, t.translation.z,
    t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w);
  return buf;
}

// Every virtual on the grid of frames and times, through the interface's references (so the
// overrides are what is called). canTransform's error strings start as `initial` (tf2 assigns
// its text; in one case, below, it appends).
static void testGrid(
  const tf2::BufferCoreInterface & ours, const tf2::BufferCore & ref,
  const char * initial = "unset")
{
  int compared = 0, threw = 0;
  for (const char * target : FRAMES) {
    for (const char * source : FRAMES) {
      for (int64_t t : TIMES) {
        const Outcome a = run([&] {return ours.lookupTransform(target, source, tp(t));});
        const Outcome b = run([&] {return ref.lookupTransform(target, source, tp(t));});
        CHECK(sameOutcome(a, b), "lookupTransform(%s, %s, %lld): %s, tf2: %s", target, source,
          (long long)t, show(a).c_str(), show(b).c_str());
        threw += b.threw;
        std::string ea = initial, eb = initial;
        const bool ca = ours.canTransform(target, source, tp(t), &ea);
        const bool cb = ref.canTransform(target, source, tp(t), &eb);
        CHECK(ca == cb && ea == eb, "canTransform(%s, %s, %lld): %d '%s', tf2: %d '%s'", target,
          source, (long long)t, ca, ea.c_str(), cb, eb.c_str());
        compared += 2;
      }
    }
  }
  // Two-time forms: every target/source pair, three fixed frames, a few time pairs.
  const char * fixed[] = {"map", "odom", "island", "nope"};
  const int64_t times2[][2] = {{0, 0}, {T0 + 50 * MS, T0 + 250 * MS}, {T0 + 400 * MS, T0},
    {T0 + 120 * MS, 0}, {T0 - 1, T0 + 10000 * MS}};
  for (const char * target : FRAMES) {
    for (const char * source : FRAMES) {
      for (const char * f : fixed) {
        for (const auto & tt : times2) {
          const Outcome a = run([&] {
                return ours.lookupTransform(target, tp(tt[0]), source, tp(tt[1]), f);
              });
          const Outcome b = run([&] {
                return ref.lookupTransform(target, tp(tt[0]), source, tp(tt[1]), f);
              });
          CHECK(sameOutcome(a, b), "lookupTransform(%s@%lld, %s@%lld, %s): %s, tf2: %s", target,
            (long long)tt[0], source, (long long)tt[1], f, show(a).c_str(), show(b).c_str());
          std::string ea = initial, eb = initial;
          const bool ca = ours.canTransform(target, tp(tt[0]), source, tp(tt[1]), f, &ea);
          const bool cb = ref.canTransform(target, tp(tt[0]), source, tp(tt[1]), f, &eb);
          CHECK(ca == cb && ea == eb, "canTransform(%s@%lld, %s@%lld, %s): %d '%s', tf2: %d '%s'",
            target, (long long)tt[0], source, (long long)tt[1], f, ca, ea.c_str(), cb,
            eb.c_str());
          compared += 2;
        }
      }
    }
  }
  CHECK(threw > 100 && compared - threw > 100, "the grid must hold answers and errors: %d of %d",
    threw, compared);
  const auto na = ours.getAllFrameNames(), nb = ref.getAllFrameNames();
  CHECK(na == nb, "getAllFrameNames: %zu names, tf2 %zu", na.size(), nb.size());
  std::printf("test_tf2_buffer: %d calls compared with tf2::BufferCore (%d errors)\n", compared,
    threw);
}

static void testExtras(const tf_shm::Tf2Buffer & ours, tf2::BufferCore & ref)
{
  std::vector<std::string> a, b;
  ours._getFrameStrings(a);
  ref._getFrameStrings(b);
  CHECK(a == b, "_getFrameStrings: %zu names, tf2 %zu", a.size(), b.size());
  for (const char * f : FRAMES) {
    CHECK(ours._frameExists(f) == ref._frameExists(f), "_frameExists(%s)", f);
  }
  CHECK(ours._frameExists("NO_PARENT") == ref._frameExists("NO_PARENT"), "_frameExists(NO_PARENT)");
  for (int64_t now : {int64_t(0), int64_t(T0 + 500 * MS)}) {
    const std::string ya = ours.allFramesAsYAML(tp(now)), yb = ref.allFramesAsYAML(tp(now));
    CHECK(ya == yb, "allFramesAsYAML(%lld):\n%s\ntf2:\n%s", (long long)now, ya.c_str(),
      yb.c_str());
  }
  CHECK(ours.allFramesAsYAML() == ref.allFramesAsYAML(), "allFramesAsYAML()");
  CHECK(ours.allFramesAsString() == ref.allFramesAsString(), "allFramesAsString:\n%s\ntf2:\n%s",
    ours.allFramesAsString().c_str(), ref.allFramesAsString().c_str());
  CHECK(ours.getCacheLength() == ref.getCacheLength(), "getCacheLength");
  // catch by tf2's classes, as user code does.
  bool caught = false;
  try {
    ours.lookupTransform("map", "nope", tf2::TimePointZero);
  } catch (const tf2::LookupException &) {
    caught = true;
  }
  CHECK(caught, "tf2::LookupException catches an unknown frame");
  caught = false;
  try {
    ours.lookupTransform("map", "base_link", tp(T0 + 10000 * MS));
  } catch (const tf2::ExtrapolationException &) {
    caught = true;
  }
  CHECK(caught, "tf2::ExtrapolationException catches extrapolation into the future");
  // (clear(): testClear, on an arena of its own.)
  // transform() of a PointStamped equals tf_shm::doTransform with tf2's own lookup.
  geometry_msgs::msg::PointStamped p, out, expect;
  p.header.frame_id = "laser";
  p.header.stamp = tf_shm::toMsg(tp(T0 + 250 * MS));
  p.point.x = 1.5;
  p.point.y = -0.25;
  p.point.z = 2.0;
  ours.transform(p, out, "map");
  tf_shm::doTransform(p, expect, ref.lookupTransform("map", "laser", tp(T0 + 250 * MS)));
  CHECK(same(out.point.x, expect.point.x) && same(out.point.y, expect.point.y) &&
    same(out.point.z, expect.point.z) && out.header.frame_id == "map",
    "transform(PointStamped): %.17g %.17g %.17g, with tf2's transform %.17g %.17g %.17g",
    out.point.x, out.point.y, out.point.z, expect.point.x, expect.point.y, expect.point.z);
}

// A callback that records how often and with what it was called.
struct Calls
{
  std::atomic<int> n{0};
  std::atomic<uint64_t> handle{0};
  tf2_ros::TransformReadyCallback cb()
  {
    return [this](const tf2_ros::TransformStampedFuture & f) {
             handle = f.getHandle();
             n++;
           };
  }
};

template<typename F>
static Outcome getFuture(F & f)
{
  return run([&] {return f.get();});
}

static bool waitFor(const std::atomic<int> & n, int want, std::chrono::milliseconds limit)
{
  const auto end = std::chrono::steady_clock::now() + limit;
  while (n.load() < want && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(1ms);
  }
  return n.load() >= want;
}

static void testWaitForTransform(tf_shm::Tf2Buffer & ours, tf2::BufferCore & ref, Both & b)
{
  auto nop = [](tf2::TransformableRequestHandle, const std::string &, const std::string &,
      tf2::TimePoint, tf2::TransformableResult) {};
  // Handles: 0 when transformable at once, all ones when too old, else a request.
  struct Case { const char * t, * s; int64_t time; };
  const Case cases[] = {{"map", "base_link", 0}, {"map", "map", T0}, {"map", "optical", T0 + 100 * MS},
    {"map", "base_link", T0 - 20000 * MS}, {"map", "late", T0}, {"map", "base_link", T0 + 5000 * MS}};
  for (const Case & c : cases) {
    Calls calls;
    auto f = ours.waitForTransform(c.t, c.s, tp(c.time), 0ms, calls.cb());
    const uint64_t rh = ref.addTransformableRequest(nop, c.t, c.s, tp(c.time));
    const bool immediate = rh == 0 || rh == 0xffffffffffffffffULL;
    if (!immediate) {ref.cancelTransformableRequest(rh);}
    CHECK(immediate ? f.getHandle() == rh : (f.getHandle() != 0 && f.getHandle() != ~0ULL),
      "waitForTransform(%s, %s, %lld) handle %llu, tf2's %llu", c.t, c.s, (long long)c.time,
      (unsigned long long)f.getHandle(), (unsigned long long)rh);
    if (rh == 0) {
      CHECK(calls.n == 1 && f.wait_for(0s) == std::future_status::ready, "called at once");
      const Outcome o = getFuture(f);
      const Outcome e = run([&] {return ref.lookupTransform(c.t, c.s, tp(c.time));});
      CHECK(sameOutcome(o, e), "immediate %s %s: %s, tf2 %s", c.t, c.s, show(o).c_str(),
        show(e).c_str());
    } else if (rh == ~0ULL) {
      const Outcome o = getFuture(f);
      CHECK(calls.n == 1 && o.threw && *o.type == typeid(tf2::LookupException) &&
        o.what == std::string("Failed to transform from ") + c.s + " to " + c.t,
        "too old: %d calls, %s", calls.n.load(), show(o).c_str());
    } else {
      // Timeout 0: the waiter times it out with tf2_ros's TimeoutException.
      CHECK(waitFor(calls.n, 1, 2000ms), "timeout 0 completes");
      const Outcome o = getFuture(f);
      CHECK(o.threw && *o.type == typeid(tf2::TimeoutException) &&
        o.what == "Timed out waiting for transform", "timeout: %s", show(o).c_str());
      CHECK(calls.handle == f.getHandle(), "the callback gets the future");
    }
  }

  // Late data: requests wait, the bridge writes, the futures complete as tf2::BufferCore's own
  // requests (addTransformableRequest, fed the same samples) complete: available with tf2's
  // answer, or failed (a time-0 request is "too old" once data arrives, in tf2 too).
  struct Late { const char * t, * s; int64_t time; };
  const Late lates[] = {{"map", "late", T0 + 100 * MS}, {"late", "base_link", 0},
    {"late", "optical", T0 + 120 * MS}, {"late", "base_link", T0 + 50 * MS},
    {"late", "island", T0 + 100 * MS}};
  const int NL = sizeof lates / sizeof lates[0];
  struct RefResult { std::atomic<int> n{0}; tf2::TransformableResult result{}; };
  RefResult refs[NL];
  Calls late[NL];
  std::vector<tf2_ros::TransformStampedFuture> fl;
  for (int i = 0; i < NL; i++) {
    fl.push_back(ours.waitForTransform(lates[i].t, lates[i].s, tp(lates[i].time), 3s,
      late[i].cb()));
    RefResult * r = &refs[i];
    ref.addTransformableRequest([r](tf2::TransformableRequestHandle, const std::string &,
      const std::string &, tf2::TimePoint, tf2::TransformableResult result) {
        r->result = result;
        r->n++;
      }, lates[i].t, lates[i].s, tp(lates[i].time));
  }
  std::this_thread::sleep_for(30ms);
  auto compare = [&](const char * when) {
      for (int i = 0; i < NL; i++) {
        const int want = refs[i].n.load();
        CHECK(waitFor(late[i].n, want, 3000ms) && late[i].n == want,
          "%s: request %d (%s, %s) called %d times, tf2's %d", when, i, lates[i].t, lates[i].s,
          late[i].n.load(), want);
        if (want == 0 || late[i].n == 0) {continue;}
        const Outcome o = getFuture(fl[i]);
        const Outcome e = refs[i].result == tf2::TransformAvailable ?
          run([&] {return ref.lookupTransform(lates[i].t, lates[i].s, tp(lates[i].time));}) :
          run([&]() -> TransformStamped {
              throw tf2::LookupException(std::string("Failed to transform from ") +
                lates[i].s + " to " + lates[i].t);
            });
        CHECK(sameOutcome(o, e), "%s: request %d: %s, tf2: %s", when, i, show(o).c_str(),
          show(e).c_str());
      }
    };
  compare("before any data");
  both(b, "base_link", "late", T0 + 50 * MS, 0.7, 0.1, 0);
  compare("after one sample");
  const auto t_write = std::chrono::steady_clock::now();
  both(b, "base_link", "late", T0 + 150 * MS, 0.9, 0.3, 0);
  CHECK(waitFor(late[0].n, 1, 3000ms), "the second sample completes map <- late");
  const auto woke = std::chrono::steady_clock::now() - t_write;
  compare("after two samples");
  int done = 0;
  for (int i = 0; i < NL; i++) {done += refs[i].n;}
  CHECK(done >= 3 && done < NL, "the late cases must cover completed and pending: %d", done);
  std::printf("test_tf2_buffer: late data completed its future %.1f ms after the write\n",
    std::chrono::duration<double, std::milli>(woke).count());
  for (int i = 0; i < NL; i++) {
    if (refs[i].n == 0) {ours.cancel(fl[i]);}
  }

  // Timeout, and cancel: the cancelled one is never called, the other times out.
  Calls timed, cancelled;
  auto ft = ours.waitForTransform("map", "never", tf2::TimePointZero, 100ms, timed.cb());
  auto fc = ours.waitForTransform("map", "never", tf2::TimePointZero, 100ms, cancelled.cb());
  ours.cancel(fc);
  CHECK(waitFor(timed.n, 1, 3000ms), "times out");
  std::this_thread::sleep_for(200ms);
  const Outcome ot = getFuture(ft);
  CHECK(ot.threw && *ot.type == typeid(tf2::TimeoutException) &&
    ot.what == "Timed out waiting for transform", "timeout: %s", show(ot).c_str());
  bool broken = false;
  try {
    fc.get();
  } catch (const std::future_error & e) {
    broken = e.code() == std::future_errc::broken_promise;
  } catch (const std::exception &) {
  }
  CHECK(cancelled.n == 0 && broken, "cancelled: %d calls, broken promise %d", cancelled.n.load(),
    broken);
  // A shorter timeout asked while the waiter sleeps towards a long one still fires on time.
  Calls long_one, short_one;
  auto flong = ours.waitForTransform("map", "never", tf2::TimePointZero, 60s, long_one.cb());
  std::this_thread::sleep_for(20ms);
  auto fshort = ours.waitForTransform("map", "never", tf2::TimePointZero, 50ms, short_one.cb());
  CHECK(waitFor(short_one.n, 1, 3000ms) && long_one.n == 0, "short timeout under a long one");
  ours.cancel(flong);

  // Many outstanding at once: 200 requests for frames that do not exist yet, half of them
  // cancelled; the writes complete the others, each with tf2's answer.
  const int N = 200;
  Calls many;
  std::vector<tf2_ros::TransformStampedFuture> fs;
  std::vector<std::string> names;
  for (int i = 0; i < N; i++) {
    names.push_back("m" + std::to_string(i));
    fs.push_back(ours.waitForTransform("odom", names.back(), tp(T0), 20s, many.cb()));
  }
  for (int i = 0; i < N; i += 2) {ours.cancel(fs[i]);}
  for (int i = 0; i < N; i++) {both(b, "base_link", names[i].c_str(), T0, 0.01 * i, 0.0, 1);}
  CHECK(waitFor(many.n, N / 2, 10000ms), "many: %d of %d called", many.n.load(), N / 2);
  std::this_thread::sleep_for(50ms);
  CHECK(many.n == N / 2, "only the uncancelled ones are called: %d", many.n.load());
  for (int i = 1; i < N; i += 2) {
    const Outcome o = getFuture(fs[i]);
    const Outcome e = run([&] {return ref.lookupTransform("odom", names[i], tp(T0));});
    CHECK(!o.threw && sameOutcome(o, e), "many %d: %s, tf2 %s", i, show(o).c_str(),
      show(e).c_str());
  }

  // A callback may call the buffer (no lock is held while it runs).
  Calls nested;
  std::atomic<bool> nested_ok{false};
  auto fn = ours.waitForTransform("map", "later", tf2::TimePointZero, 5s,
      [&](const tf2_ros::TransformStampedFuture &) {
        nested_ok = ours.canTransform("map", "later", tf2::TimePointZero);
        ours.waitForTransform("map", "later", tf2::TimePointZero, 1s, nested.cb());
      });
  both(b, "map", "later", T0, 1.0, 0.0, 1);
  CHECK(waitFor(nested.n, 1, 5000ms) && nested_ok, "a callback calls the buffer");

  // A callback that throws: said on stderr with its text; the waiter goes on completing the
  // other requests.
  char path[] = "/tmp/tf_shm_tf2_buffer_stderr_XXXXXX";
  const int log = mkstemp(path);
  CHECK(log >= 0, "mkstemp");
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(log, 2);
  Calls after;
  ours.waitForTransform("map", "thrower", tf2::TimePointZero, 5s,
    [](const tf2_ros::TransformStampedFuture &) {throw std::runtime_error("user callback failed");});
  ours.waitForTransform("map", "after_thrower", tf2::TimePointZero, 5s, after.cb());
  both(b, "map", "thrower", T0, 1.0, 0.0, 1);
  both(b, "map", "after_thrower", T0, 1.0, 0.0, 1);
  const bool went_on = waitFor(after.n, 1, 5000ms);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string said(4096, '\0');
  const ssize_t got = pread(log, &said[0], said.size(), 0);
  said.resize(got > 0 ? static_cast<size_t>(got) : 0);
  close(log);
  unlink(path);
  CHECK(went_on, "requests after a throwing callback complete");
  CHECK(said.find("a waitForTransform callback threw: user callback failed") != std::string::npos,
    "a throwing callback is said on stderr: [%s]", said.c_str());
}

// Destroyed with requests pending: no callback, the futures are broken promises (ASan: no use
// after free of the buffer by its waiter).
static void testDestroyedWithPending()
{
  Calls calls;
  std::vector<tf2_ros::TransformStampedFuture> fs;
  {
    tf_shm::Tf2Buffer buffer("tf2buftest", 0);
    for (int i = 0; i < 50; i++) {
      fs.push_back(buffer.waitForTransform("map", "gone" + std::to_string(i), tf2::TimePointZero,
        i % 2 ? 30s : 1ms, calls.cb()));
    }
    std::this_thread::sleep_for(5ms);
  }
  int broken = 0, timed_out = 0;
  for (auto & f : fs) {
    try {
      f.get();
    } catch (const std::future_error & e) {
      broken += e.code() == std::future_errc::broken_promise;
    } catch (const tf2::TimeoutException &) {
      timed_out++;
    }
  }
  CHECK(broken >= 25 && broken + timed_out == 50 && calls.n == timed_out,
    "destroyed: %d broken, %d timed out, %d calls", broken, timed_out, calls.n.load());
  // Construction and destruction while idle and while waiting, repeatedly.
  for (int i = 0; i < 20; i++) {
    tf_shm::Tf2Buffer buffer("tf2buftest", 0);
    if (i % 2) {buffer.waitForTransform("map", "gone", tf2::TimePointZero, 10s, calls.cb());}
  }
}

// A node that starts before its bridge, as tf2_ros::Buffer users expect: the default
// constructor gives an empty buffer that answers as an empty tf2::BufferCore, then joins the
// arena once a bridge serves it; waitForTransform calls begun before complete with tf2's
// answer when the data comes.
static void testBeforeBridge(const char * dir)
{
  setenv("TF_SHM_NAME", "tf2early", 1);
  setenv("TF_SHM_DOMAIN", "0", 1);
  tf_shm::Tf2Buffer ours;  // as `tf2_ros::Buffer buffer(clock);`
  unsetenv("TF_SHM_NAME");
  unsetenv("TF_SHM_DOMAIN");
  CHECK(!ours.joined(), "before the bridge: not joined");
  tf2::BufferCore empty;
  {
    const Outcome o = run([&] {return ours.lookupTransform("map", "early", tf2::TimePointZero);});
    const Outcome e = run([&] {return empty.lookupTransform("map", "early", tf2::TimePointZero);});
    CHECK(o.threw && *o.type == typeid(tf2::LookupException) && sameOutcome(o, e),
      "empty lookup: %s, tf2 %s", show(o).c_str(), show(e).c_str());
    std::string err, ref_err;
    const bool can = ours.canTransform("map", "early", tf2::TimePointZero, &err);
    const bool ref_can = empty.canTransform("map", "early", tf2::TimePointZero, &ref_err);
    CHECK(can == ref_can && err == ref_err, "empty canTransform: %d [%s], tf2 %d [%s]", can,
      err.c_str(), ref_can, ref_err.c_str());
    CHECK(ours._frameExists("map") == empty._frameExists("map") &&
      ours.getAllFrameNames() == empty.getAllFrameNames(), "empty frames");
  }
  Calls calls;
  auto latest = ours.waitForTransform("map", "early", tf2::TimePointZero, 20s, calls.cb());
  auto stamped = ours.waitForTransform("map", "early", tp(T0), 20s, calls.cb());
  std::this_thread::sleep_for(50ms);
  CHECK(calls.n == 0, "nothing completes before the bridge: %d", calls.n.load());
  TestOwner * early = tf_shm_testkit_serve(dir, "tf2early", 0);
  if (!early) {std::exit(2);}
  tf2::BufferCore ref;
  Both b{early, &ref};
  both(b, "map", "early", T0, 3.0, 0.5, 1);
  CHECK(waitFor(calls.n, 2, 5000ms), "waits begun before the bridge: %d of 2 called",
    calls.n.load());
  const Outcome e = run([&] {return ref.lookupTransform("map", "early", tf2::TimePointZero);});
  const Outcome ol = getFuture(latest);
  CHECK(!ol.threw && sameOutcome(ol, e), "latest: %s, tf2 %s", show(ol).c_str(), show(e).c_str());
  const Outcome es = run([&] {return ref.lookupTransform("map", "early", tp(T0));});
  const Outcome os = getFuture(stamped);
  CHECK(!os.threw && sameOutcome(os, es), "at T0: %s, tf2 %s", show(os).c_str(),
    show(es).c_str());
  CHECK(ours.joined(), "joined the bridge");
  CHECK(ours.getCacheLength() == ref.getCacheLength(), "cache length %lld, tf2 %lld",
    static_cast<long long>(ours.getCacheLength().count()),
    static_cast<long long>(ref.getCacheLength().count()));
  tf_shm_testkit_close(early);
}

// The constructor with a wait is for tools: it throws when no bridge serves.
static void testRequireBridge()
{
  try {
    tf_shm::Tf2Buffer none("tf2nobody", 0, tf2::Duration::zero());
    CHECK(false, "no bridge: no throw");
  } catch (const tf_shm::Error & e) {
    CHECK(e.status() == TF_SHM_OPEN_ERROR, "no bridge: %d", e.status());
  }
}

// clear(): tf2's BufferCore::clear for this buffer alone. A Tf2Buffer and a tf2::BufferCore fed
// the same transforms, both cleared, answer the grid alike, before and after more transforms
// arrive; another buffer on the same arena is not cleared; pairs follow the clear.
static void testClear(const char * dir)
{
  TestOwner * o = tf_shm_testkit_serve(dir, "tf2clear", 0);
  CHECK(o != nullptr, "serve");
  if (!o) {return;}
  tf2::BufferCore ref;
  Both b{o, &ref};
  scenario_fill_with(bothSink, &b);
  {
    tf_shm::Tf2Buffer ours("tf2clear", 0), other("tf2clear", 0);
    tf_shm::FramePair before = ours.tfShm().pair("map", "optical");
    CHECK(ours.canTransform("map", "optical", tf2::TimePointZero), "before the clear");
    ours.clear();
    ref.clear();
    std::printf("test_tf2_buffer: after clear():\n");
    // Error strings start empty: for a target frame whose cache the clear emptied, tf2 appends
    // its text to the string passed in (BufferCore::walkToTopParent reuses it; the cache wrote
    // nothing), which tf_shm does not reproduce (README: clear()).
    testGrid(ours, ref, "");
    CHECK(other.canTransform("map", "optical", tf2::TimePointZero) &&
      other.canTransform("odom", "base_link", tp(T0 + 250 * MS)), "the other buffer keeps its data");
    tf_shm::FramePair after = ours.tfShm().pair("map", "optical");
    for (tf_shm::FramePair * p : {&before, &after}) {
      try {
        p->lookup(tf_shm::TimePointZero);
        CHECK(false, "a pair after the clear must fail as tf2 does");
      } catch (const tf_shm::TransformException & e) {
        std::string err;
        CHECK(!ref.canTransform("map", "optical", tf2::TimePointZero, &err), "tf2 cannot");
        try {
          ref.lookupTransform("map", "optical", tf2::TimePointZero);
        } catch (const tf2::TransformException & t) {
          CHECK(std::string(e.what()) == t.what(), "pair [%s], tf2 [%s]", e.what(), t.what());
        }
      }
    }
    // New data after the clear, in time order.
    for (int i = 0; i < 3; i++) {
      both(b, "odom", "base_link", T0 + (500 + 100 * i) * MS, 0.3 * i, 0.1 * i, 0);
      both(b, "camera", "optical", T0 + (550 + 100 * i) * MS, 0.02 * i, 0.2 * i, 0);
    }
    both(b, "world2", "island", T0 + 700 * MS, 1.0, 0.0, 0);
    std::printf("test_tf2_buffer: after clear() and new data:\n");
    testGrid(ours, ref, "");
    const auto a = before.lookupTransform(tf_shm::TimePointZero);
    const auto r = ref.lookupTransform("map", "optical", tf2::TimePointZero);
    CHECK(tf_shm::toMsg(a.stamp) == r.header.stamp && same(a.transform.translation[0],
      r.transform.translation.x), "the pair answers from the new data");
    // A request pending across new data sees only what came after the clear.
    std::atomic<int> called{0};
    auto f = ours.waitForTransform("map", "optical", tp(T0 + 900 * MS), 2s,
        [&](const tf2_ros::TransformStampedFuture &) {called++;});
    both(b, "odom", "base_link", T0 + 1000 * MS, 1.0, 0.0, 0);
    both(b, "camera", "optical", T0 + 1000 * MS, 1.0, 0.0, 0);
    CHECK(f.wait_for(3s) == std::future_status::ready, "wait after clear");
    const Outcome w = getFuture(f);
    const Outcome x = run([&] {return ref.lookupTransform("map", "optical", tp(T0 + 900 * MS));});
    CHECK(sameOutcome(w, x), "waitForTransform after clear: %s, tf2: %s", show(w).c_str(),
      show(x).c_str());
    CHECK(waitFor(called, 1, 1000ms), "callback after clear");
  }
  tf_shm_testkit_close(o);
}

// Lookups of a few pairs at `times` (beyond the grid's), through the interface and through a
// FramePair of tf_shm.hpp, against tf2.
static void testTimes(
  const tf_shm::Tf2Buffer & ours, const tf2::BufferCore & ref, std::initializer_list<int64_t> times)
{
  const char * pairs[][2] = {{"odom", "base_link"}, {"map", "optical"}, {"base_link", "optical"},
    {"optical", "map"}};
  for (const auto & p : pairs) {
    tf_shm::FramePair pair = ours.tfShm().pair(p[0], p[1]);
    for (int64_t t : times) {
      const Outcome a = run([&] {return ours.lookupTransform(p[0], p[1], tp(t));});
      const Outcome b = run([&] {return ref.lookupTransform(p[0], p[1], tp(t));});
      CHECK(sameOutcome(a, b), "lookupTransform(%s, %s, %lld): %s, tf2: %s", p[0], p[1],
        (long long)t, show(a).c_str(), show(b).c_str());
      std::string pa;
      try {
        const auto r = pair.lookupTransform(tf_shm::fromNs(t));
        pa = std::to_string(r.stamp.time_since_epoch().count());
      } catch (const tf_shm::TransformException & e) {
        pa = e.what();
      }
      const std::string pb = b.threw ? b.what :
        std::to_string(tf_shm::toNs(tf_shm::fromMsg(b.msg.header.stamp)));
      CHECK(pa == pb, "pair %s %s at %lld: [%s], tf2 [%s]", p[0], p[1], (long long)t,
        pa.c_str(), pb.c_str());
    }
  }
}

// A cache time (tf2::BufferCore(cache_time), tf2_ros::Buffer(clock, cache_time)): a Tf2Buffer
// of 150 ms and a tf2::BufferCore of 150 ms fed the same transforms answer the grid alike
// (samples older than the cache time before the second newest refused with tf2's extrapolation
// texts, values equal elsewhere), also through pairs, the waits and waitForTransform's
// handles, and after a clear() of both, before and after new data. Another buffer on the same
// arena keeps the arena's history. A cache time longer than the arena's is accepted, reported
// by getCacheLength(), and answers as the arena's.
static void testCacheTime(const char * dir)
{
  const tf2::Duration cache = std::chrono::milliseconds(150);
  TestOwner * o = tf_shm_testkit_serve(dir, "tf2cache", 0);
  CHECK(o != nullptr, "serve");
  if (!o) {return;}
  tf2::BufferCore ref(cache);
  Both b{o, &ref};
  scenario_fill_with(bothSink, &b);
  {
    tf_shm::Tf2Buffer ours(cache, "tf2cache", 0), full("tf2cache", 0);
    CHECK(ours.getCacheLength() == ref.getCacheLength(), "getCacheLength %lld, tf2 %lld",
      (long long)ours.getCacheLength().count(), (long long)ref.getCacheLength().count());
    CHECK(full.getCacheLength() == full.tfShm().arenaCacheTime() &&
      ours.tfShm().arenaCacheTime() == full.getCacheLength(), "the other buffer: the arena's");
    // The cache time matters here: tf2 pruned what the arena holds.
    std::string err;
    CHECK(full.canTransform("odom", "base_link", tp(T0 + 50 * MS)) &&
      !ref.canTransform("odom", "base_link", tp(T0 + 50 * MS), &err) &&
      err.find("extrapolation into the past") != std::string::npos, "tf2 pruned: '%s'",
      err.c_str());
    std::printf("test_tf2_buffer: cache time 150 ms:\n");
    testGrid(ours, ref);
    testTimes(ours, ref, {0, T0 + 100 * MS, T0 + 150 * MS, T0 + 199 * MS, T0 + 200 * MS,
      T0 + 300 * MS});
    CHECK(full.canTransform("odom", "base_link", tp(T0 + 50 * MS)), "the other buffer keeps all");

    // The waits: the failure is the last check's, tf2's text.
    std::string ea, eb;
    CHECK(!ours.canTransform("odom", "base_link", tp(T0 + 50 * MS), 20ms, &ea) &&
      !ref.canTransform("odom", "base_link", tp(T0 + 50 * MS), &eb) && ea == eb,
      "timed canTransform '%s', tf2 '%s'", ea.c_str(), eb.c_str());
    const Outcome wa = run([&] {
          return ours.lookupTransform("map", "optical", tp(T0 + 60 * MS), 20ms);
        });
    const Outcome wb = run([&] {return ref.lookupTransform("map", "optical", tp(T0 + 60 * MS));});
    CHECK(wa.threw && sameOutcome(wa, wb), "timed lookup %s, tf2 %s", show(wa).c_str(),
      show(wb).c_str());
    // waitForTransform's "too old" is tf2's, against the buffer's cache time.
    auto nop = [](tf2::TransformableRequestHandle, const std::string &, const std::string &,
        tf2::TimePoint, tf2::TransformableResult) {};
    struct Case { const char * t, * s; int64_t time; };
    const Case cases[] = {{"map", "optical", T0}, {"odom", "base_link", T0 + 50 * MS},
      {"odom", "base_link", T0 + 250 * MS}, {"map", "optical", T0 + 99 * MS},
      {"map", "optical", T0 + 100 * MS}, {"map", "optical", T0 + 260 * MS}};
    int too_old = 0;
    for (const Case & c : cases) {
      Calls calls;
      auto f = ours.waitForTransform(c.t, c.s, tp(c.time), 0ms, calls.cb());
      const uint64_t rh = ref.addTransformableRequest(nop, c.t, c.s, tp(c.time));
      const bool immediate = rh == 0 || rh == ~0ULL;
      if (!immediate) {ref.cancelTransformableRequest(rh);}
      too_old += rh == ~0ULL;
      CHECK(immediate ? f.getHandle() == rh : (f.getHandle() != 0 && f.getHandle() != ~0ULL),
        "waitForTransform(%s, %s, %lld) handle %llu, tf2's %llu", c.t, c.s, (long long)c.time,
        (unsigned long long)f.getHandle(), (unsigned long long)rh);
      CHECK(waitFor(calls.n, 1, 2000ms), "waitForTransform(%s, %s) completes", c.t, c.s);
    }
    CHECK(too_old == 3, "three requests too old for tf2's cache time: %d", too_old);

    // clear() and the cache time together.
    ours.clear();
    ref.clear();
    std::printf("test_tf2_buffer: cache time 150 ms, after clear():\n");
    testGrid(ours, ref, "");
    for (int i = 0; i < 5; i++) {
      both(b, "odom", "base_link", T0 + (500 + 100 * i) * MS, 0.3 * i, 0.1 * i, 0);
      both(b, "camera", "optical", T0 + (550 + 100 * i) * MS, 0.02 * i, 0.2 * i, 0);
    }
    std::printf("test_tf2_buffer: cache time 150 ms, after clear() and new data:\n");
    testGrid(ours, ref, "");
    testTimes(ours, ref, {0, T0 + 550 * MS, T0 + 650 * MS, T0 + 700 * MS, T0 + 750 * MS,
      T0 + 850 * MS, T0 + 900 * MS});
    CHECK(!ref.canTransform("odom", "base_link", tp(T0 + 600 * MS)) &&
      full.canTransform("odom", "base_link", tp(T0 + 600 * MS)), "pruned after the clear too");
  }
  tf_shm_testkit_close(o);

  // Zero and negative, which tf2 keeps as given (BufferCore's constructor, getCacheLength()):
  // its TimeCache then keeps the newest sample and those at the second newest stamp (0), or
  // only the one inserted last (negative).
  const char * names[] = {"tf2cachezero", "tf2cacheneg"};
  const tf2::Duration tiny[] = {tf2::Duration(0), tf2::Duration(-1)};
  for (int k = 0; k < 2; k++) {
    o = tf_shm_testkit_serve(dir, names[k], 0);
    CHECK(o != nullptr, "serve");
    if (!o) {return;}
    tf2::BufferCore tiny_ref(tiny[k]);
    Both t{o, &tiny_ref};
    scenario_fill_with(bothSink, &t);
    {
      tf_shm::Tf2Buffer ours(tiny[k], names[k], 0);
      CHECK(ours.getCacheLength() == tiny_ref.getCacheLength(), "getCacheLength %lld, tf2 %lld",
        (long long)ours.getCacheLength().count(), (long long)tiny_ref.getCacheLength().count());
      std::printf("test_tf2_buffer: cache time %lld ns:\n", (long long)tiny[k].count());
      testGrid(ours, tiny_ref);
      testTimes(ours, tiny_ref, {0, T0 + 300 * MS, T0 + 350 * MS, T0 + 399 * MS, T0 + 400 * MS,
        T0 + 450 * MS});
    }
    tf_shm_testkit_close(o);
  }

  // Longer than the arena's (200 ms here): accepted, getCacheLength() says it, answers are the
  // arena's, i.e. a tf2 buffer of the arena's cache time.
  const tf2::Duration arena = std::chrono::milliseconds(200);
  o = tf_shm_testkit_serve(dir, "tf2cachelong", arena.count());
  CHECK(o != nullptr, "serve");
  if (!o) {return;}
  tf2::BufferCore short_ref(arena);
  Both s{o, &short_ref};
  scenario_fill_with(bothSink, &s);
  {
    tf_shm::Tf2Buffer longer(std::chrono::seconds(1), "tf2cachelong", 0);
    CHECK(longer.getCacheLength() == std::chrono::seconds(1) &&
      longer.tfShm().arenaCacheTime() == arena, "getCacheLength %lld, arena %lld",
      (long long)longer.getCacheLength().count(),
      (long long)longer.tfShm().arenaCacheTime().count());
    std::printf("test_tf2_buffer: cache time 1 s on an arena of 200 ms:\n");
    testGrid(longer, short_ref);
    testTimes(longer, short_ref, {0, T0 + 100 * MS, T0 + 150 * MS, T0 + 199 * MS,
      T0 + 200 * MS, T0 + 300 * MS});
  }
  tf_shm_testkit_close(o);
}

int main()
{
  char dir[] = "/tmp/tf_shm_tf2_buffer_test.XXXXXX";
  if (!mkdtemp(dir)) {return 2;}
  setenv("TF_SHM_RUNTIME_DIR", dir, 1);
  owner = tf_shm_testkit_serve(dir, "tf2buftest", 0);
  if (!owner) {return 2;}
  tf2::BufferCore ref;
  Both b{owner, &ref};
  scenario_fill_with(bothSink, &b);
  {
    tf_shm::Tf2Buffer buffer("tf2buftest", 0);
    testGrid(buffer, ref);
    testExtras(buffer, ref);
    testWaitForTransform(buffer, ref, b);
  }
  testDestroyedWithPending();
  testBeforeBridge(dir);
  testRequireBridge();
  testClear(dir);
  testCacheTime(dir);
  tf_shm_testkit_close(owner);
  const std::string cmd = std::string("rm -rf '") + dir + "'";
  if (std::system(cmd.c_str()) != 0) {std::fprintf(stderr, "could not remove %s\n", dir);}
  const int f = CHECK_FAILURES();
  std::printf("test_tf2_buffer: %s (%d failed checks)\n", f ? "FAILED" : "ok", f);
  return f ? 1 : 0;
}
