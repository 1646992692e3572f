// tf_shm::TransformListener against ROS 2 Jazzy's real tf2: a tf2::BufferCore fed by the
// listener answers bit for bit as one fed the same transforms directly (a grid of lookups:
// values, stamps, frame ids, exception classes and texts; canTransform; the frame list; YAML
// with authorities), with transforms before and after the listener starts, the arena's clear,
// a SIGKILLed and restarted arena owner (real processes: this binary re-executed as the owner,
// driven through a pipe), and the listener destroyed while the owner writes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include <tf2/buffer_core.h>
#include <tf2/exceptions.h>

#include "check.h"
#include "testkit.h"
#include "transform_listener.hpp"

static const int64_t T0 = 1000000000000LL;
static const int64_t MS = 1000000LL;

// --- the owner process: serves the arena and writes what the pipe says ---------------------

static int owner_main(const char * dir, const char * name)
{
  TestOwner * o = tf_shm_testkit_serve(dir, name, 0);
  if (!o) {return 2;}
  std::printf("ready\n");
  std::fflush(stdout);
  char line[512];
  while (std::fgets(line, sizeof line, stdin)) {
    char authority[128], parent[128], child[128];
    long long stamp;
    double t[3], q[4];
    int st;
    if (line[0] == 's' &&
      std::sscanf(line, "s %127s %127s %127s %lld %la %la %la %la %la %la %la %d", authority,
      parent, child, &stamp, &t[0], &t[1], &t[2], &q[0], &q[1], &q[2], &q[3], &st) == 12)
    {
      if (tf_shm_testkit_set_by(o, authority, parent, child, stamp, t, q, st) != 0) {return 3;}
    } else if (line[0] == 'c') {
      tf_shm_testkit_clear(o);
    } else if (line[0] == 'k') {
      // Writes a burst and dies at once (SIGKILL), before the listener can have read it all.
      int n = std::atoi(line + 2);
      const double id[4] = {0, 0, 0, 1};
      for (int i = 0; i < n; i++) {
        const double t[3] = {0.001 * i, 0, 0};
        tf_shm_testkit_set(o, "map", "late", T0 + i * 2 * MS, t, id, 0);
      }
      kill(getpid(), SIGKILL);
    } else if (line[0] == 'b') {
      // Writes as fast as it can for the given ms (the listener is destroyed meanwhile).
      int ms = std::atoi(line + 2);
      const double z[3] = {0, 0, 0}, id[4] = {0, 0, 0, 1};
      auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
      for (int64_t k = 1; std::chrono::steady_clock::now() < end; k++) {
        tf_shm_testkit_set(o, "map", "busy", T0 + k * 1000, z, id, 0);
      }
    }
    std::printf("ok\n");
    std::fflush(stdout);
  }
  tf_shm_testkit_close(o);
  return 0;
}

struct Owner
{
  pid_t pid = -1;
  FILE * to = nullptr;
  FILE * from = nullptr;
};

static Owner spawn_owner(const char * dir, const char * name)
{
  int in[2], outp[2];
  if (pipe(in) != 0 || pipe(outp) != 0) {std::perror("pipe"); std::exit(2);}
  Owner o;
  o.pid = fork();
  if (o.pid == 0) {
    dup2(in[0], 0);
    dup2(outp[1], 1);
    close(in[1]);
    close(outp[0]);
    execl("/proc/self/exe", "test_transform_listener", "owner", dir, name, (char *)nullptr);
    _exit(127);
  }
  close(in[0]);
  close(outp[1]);
  o.to = fdopen(in[1], "w");
  o.from = fdopen(outp[0], "r");
  char line[64];
  if (!std::fgets(line, sizeof line, o.from) || std::strncmp(line, "ready", 5) != 0) {
    std::fprintf(stderr, "owner did not start\n");
    std::exit(2);
  }
  return o;
}

static void send(Owner & o, const std::string & cmd)
{
  std::fprintf(o.to, "%s\n", cmd.c_str());
  std::fflush(o.to);
  char line[64];
  if (!std::fgets(line, sizeof line, o.from)) {
    std::fprintf(stderr, "owner gone after %s\n", cmd.c_str());
    std::exit(2);
  }
}

static void end_owner(Owner & o)
{
  std::fclose(o.to);  // EOF: the owner closes its arena and exits
  waitpid(o.pid, nullptr, 0);
  std::fclose(o.from);
  o = Owner{};
}

// --- writing to the arena and to the reference buffer alike ---------------------------------

struct Feed
{
  Owner * owner;
  tf2::BufferCore * direct;
  std::uint64_t written = 0;

  void set(const char * parent, const char * child, int64_t stamp, double x, double y,
    double yaw, bool is_static)
  {
    char cmd[512];
    // Rotations tf2's setTransform stores exactly as given (its quaternion -> matrix ->
    // quaternion round trip is exact for these): the arena stores that round trip's result, and
    // the listener gives it to tf2, which applies it once more; for a general quaternion that
    // second pass can change the last bit (see the listener's header), which is not what this
    // test is about. Interpolation between them still gives general values.
    static const double rotations[4][4] = {{0, 0, 0, 1}, {0, 0, 1, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}};
    const double * q = rotations[std::lround(yaw * 10) % 4];
    // Two publishers taking turns on a frame (the arena keeps each frame's newest one): the
    // listener must hand tf2 each sample's, not one it read before.
    const char * authority = (stamp / MS) % 3 == 1 ? "/other_publisher" : "testkit";
    std::snprintf(cmd, sizeof cmd, "s %s %s %s %lld %a %a %a %a %a %a %a %d", authority, parent,
      child, (long long)stamp, x, y, 0.0, q[0], q[1], q[2], q[3], is_static ? 1 : 0);
    send(*owner, cmd);
    geometry_msgs::msg::TransformStamped m;
    m.header.stamp = tf_shm::toMsg(tf_shm::fromNs(stamp));
    m.header.frame_id = parent;
    m.child_frame_id = child;
    m.transform.translation.x = x;
    m.transform.translation.y = y;
    m.transform.rotation.x = q[0];
    m.transform.rotation.y = q[1];
    m.transform.rotation.z = q[2];
    m.transform.rotation.w = q[3];
    direct->setTransform(m, authority, is_static);
    written++;
  }
  void clear()
  {
    send(*owner, "c");
    direct->clear();
  }
};

static bool wait_until(const std::function<bool()> & done, int seconds = 20)
{
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) {return false;}
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// --- comparing two tf2 buffers --------------------------------------------------------------

static std::string outcome(const tf2::BufferCore & b, const std::string & t, const std::string & s,
  int64_t time)
{
  std::ostringstream o;
  try {
    auto r = b.lookupTransform(t, s, tf2::TimePoint(tf2::Duration(time)));
    const double v[7] = {r.transform.translation.x, r.transform.translation.y,
      r.transform.translation.z, r.transform.rotation.x, r.transform.rotation.y,
      r.transform.rotation.z, r.transform.rotation.w};
    o << "ok " << r.header.stamp.sec << "." << r.header.stamp.nanosec << " " <<
      r.header.frame_id << " " << r.child_frame_id;
    for (double d : v) {
      std::uint64_t bits;
      std::memcpy(&bits, &d, 8);
      o << " " << std::hex << bits << std::dec;
    }
  } catch (const tf2::TransformException & e) {
    o << typeid(e).name() << ": " << e.what();
  }
  std::string err;
  const bool can = b.canTransform(t, s, tf2::TimePoint(tf2::Duration(time)), &err);
  o << " | can " << can << " " << err;
  return o.str();
}

/// allFramesAsYAML's per-frame blocks, sorted (tf2 numbers frames in order of arrival, which
/// differs between the two feeds; each frame's block does not).
static std::vector<std::string> yaml_blocks(const tf2::BufferCore & b)
{
  std::istringstream in(b.allFramesAsYAML(tf2::TimePoint(tf2::Duration(T0))));
  std::vector<std::string> blocks;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') {blocks.emplace_back();}
    if (!blocks.empty()) {blocks.back() += line + "\n";}
  }
  std::sort(blocks.begin(), blocks.end());
  return blocks;
}

static int compare(const char * what, const tf2::BufferCore & fed, const tf2::BufferCore & direct)
{
  static const char * const frames[] = {"map", "odom", "base_link", "laser", "camera",
    "optical", "world2", "island", "late", "fresh", "nope", ""};
  static const int64_t times[] = {0, T0, T0 + 50 * MS, T0 + 120 * MS, T0 + 250 * MS,
    T0 + 400 * MS, T0 + 401 * MS, T0 - 1, T0 + 10000 * MS, T0 - 3000 * MS, T0 - 2950 * MS};
  int lookups = 0;
  for (const char * t : frames) {
    for (const char * s : frames) {
      for (int64_t time : times) {
        const std::string a = outcome(fed, t, s, time), b = outcome(direct, t, s, time);
        CHECK(a == b, "%s: %s <- %s at %lld: listener's %s, direct %s", what, t, s,
          (long long)time, a.c_str(), b.c_str());
        lookups++;
      }
    }
  }
  auto fa = fed.getAllFrameNames(), fb = direct.getAllFrameNames();
  std::sort(fa.begin(), fa.end());
  std::sort(fb.begin(), fb.end());
  CHECK(fa == fb, "%s: frame names differ (%zu vs %zu)", what, fa.size(), fb.size());
  CHECK(yaml_blocks(fed) == yaml_blocks(direct), "%s: allFramesAsYAML differs:\n%s\nvs\n%s",
    what, fed.allFramesAsYAML(tf2::TimePoint(tf2::Duration(T0))).c_str(), direct.allFramesAsYAML(tf2::TimePoint(tf2::Duration(T0))).c_str());
  return lookups;
}

// --- the cases -------------------------------------------------------------------------------

static void scenario(Feed & f, int64_t base)
{
  f.set("map", "odom", base, 1.0, 2.0, 0.3, true);
  for (int i = 0; i < 5; i++) {
    f.set("odom", "base_link", base + i * 100 * MS, 0.5 * i, 0.1 * i * i, 0.2 * i, false);
  }
  f.set("base_link", "laser", base, 0.2, 0.0, 0.0, true);
  f.set("base_link", "camera", base, 0.1, 0.0, 0.5235987755982988, true);
  for (int i = 0; i < 3; i++) {
    f.set("camera", "optical", base + 50 * MS + i * 100 * MS, 0.01 * i, 0.0, 0.1 * i, false);
  }
  f.set("world2", "island", base + 120 * MS, 3.0, 0.0, 0.0, false);
}

static void samples_clear_and_destruction(const char * dir)
{
  Owner owner = spawn_owner(dir, "lsn_a");
  tf2::BufferCore fed, direct;
  Feed f{&owner, &direct};
  scenario(f, T0);  // before the listener starts
  {
    CHECK(!fed.isUsingDedicatedThread(), "a new BufferCore has no filling thread");
    tf_shm::TransformListener listener(fed,
      tf_shm::Buffer("lsn_a", -1, std::chrono::seconds(5)));
    // As tf2_ros::TransformListener's dedicated thread: tf2_ros::Buffer's timed lookups wait
    // only when this is set (else they return at once with tf2_ros's "Do not call
    // canTransform or lookupTransform with a timeout unless you are using another thread").
    CHECK(fed.isUsingDedicatedThread(), "the listener marks the buffer as filled by a thread");
    CHECK(wait_until([&] {return listener.samples() >= f.written;}), "start: %llu of %llu",
      (unsigned long long)listener.samples(), (unsigned long long)f.written);
    compare("at start", fed, direct);
    // After it started: more history, a new frame, an out-of-order sample, a changed static.
    for (int i = 5; i < 8; i++) {
      f.set("odom", "base_link", T0 + i * 100 * MS, 0.5 * i, 0.1 * i * i, 0.2 * i, false);
    }
    f.set("base_link", "fresh", T0 + 10 * MS, 0.0, 1.0, 0.0, false);
    f.set("base_link", "fresh", T0 + 300 * MS, 0.0, 2.0, 0.1, false);
    f.set("camera", "optical", T0 + 120 * MS, 0.5, 0.5, 0.5, false);
    f.set("base_link", "laser", T0, 0.25, 0.0, 0.0, true);
    CHECK(wait_until([&] {return listener.samples() >= f.written;}), "live: %llu of %llu",
      (unsigned long long)listener.samples(), (unsigned long long)f.written);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(listener.samples() == f.written, "each sample once: %llu given, %llu written",
      (unsigned long long)listener.samples(), (unsigned long long)f.written);
    compare("live", fed, direct);
    // The arena's clear (the clock jumped back), then samples from the earlier time.
    f.clear();
    f.set("odom", "base_link", T0 - 3000 * MS, 7.0, 0.0, 0.0, false);
    f.set("odom", "base_link", T0 - 2900 * MS, 8.0, 0.0, 0.0, false);
    f.set("camera", "optical", T0 - 2950 * MS, 0.0, 9.0, 0.0, false);
    CHECK(wait_until([&] {return listener.samples() >= f.written && listener.clears() == 1;}),
      "clear: %llu of %llu, %llu clears", (unsigned long long)listener.samples(),
      (unsigned long long)f.written, (unsigned long long)listener.clears());
    compare("after a clear", fed, direct);
    CHECK(listener.missed() == 0 && listener.read_errors() == 0 && listener.apply_errors() == 0,
      "missed %llu, read errors %llu, apply errors %llu",
      (unsigned long long)listener.missed(), (unsigned long long)listener.read_errors(),
      (unsigned long long)listener.apply_errors());
    // Destroyed while the owner writes as fast as it can (ASan: no use after free; no hang).
    std::fprintf(owner.to, "b 400\n");
    std::fflush(owner.to);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  char line[64];
  CHECK(std::fgets(line, sizeof line, owner.from) != nullptr, "the burst ended");
  end_owner(owner);
}

static void restart(const char * dir)
{
  Owner owner = spawn_owner(dir, "lsn_r");
  tf2::BufferCore fed, direct;
  Feed f{&owner, &direct};
  scenario(f, T0);
  tf_shm::TransformListener listener(fed, tf_shm::Buffer("lsn_r", -1, std::chrono::seconds(5)));
  CHECK(wait_until([&] {return listener.samples() >= f.written;}), "start: %llu of %llu",
    (unsigned long long)listener.samples(), (unsigned long long)f.written);
  // A burst the listener has likely not all read when the owner dies: the old arena's last
  // samples must still reach the buffer.
  const int burst = 200;
  for (int i = 0; i < burst; i++) {
    geometry_msgs::msg::TransformStamped m;
    m.header.stamp = tf_shm::toMsg(tf_shm::fromNs(T0 + i * 2 * MS));
    m.header.frame_id = "map";
    m.child_frame_id = "late";
    m.transform.translation.x = 0.001 * i;
    m.transform.rotation.w = 1.0;
    direct.setTransform(m, "testkit", false);
    f.written++;
  }
  std::fprintf(owner.to, "k %d\n", burst);
  std::fflush(owner.to);
  int status = 0;
  waitpid(owner.pid, &status, 0);  // its own SIGKILL
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the owner was SIGKILLed");
  std::fclose(owner.to);
  std::fclose(owner.from);
  owner = spawn_owner(dir, "lsn_r");
  // The new bridge refills the statics (transient-local /tf_static), then new samples.
  f.set("map", "odom", T0, 1.0, 2.0, 0.3, true);
  f.set("base_link", "laser", T0, 0.2, 0.0, 0.0, true);
  f.set("base_link", "camera", T0, 0.1, 0.0, 0.5235987755982988, true);
  for (int i = 5; i < 9; i++) {
    f.set("odom", "base_link", T0 + i * 100 * MS, 0.5 * i, 0.1 * i * i, 0.2 * i, false);
  }
  f.set("map", "late", T0 + 400 * MS, 1.0, 0.0, 0.0, false);
  CHECK(wait_until([&] {return listener.arenas() == 2 && listener.samples() >= f.written;}),
    "restart: %llu arenas, %llu of %llu, %llu missed, %llu read errors",
    (unsigned long long)listener.arenas(), (unsigned long long)listener.samples(),
    (unsigned long long)f.written, (unsigned long long)listener.missed(),
    (unsigned long long)listener.read_errors());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(listener.samples() == f.written, "restart: each sample once per arena: %llu, %llu",
    (unsigned long long)listener.samples(), (unsigned long long)f.written);
  compare("after a restart", fed, direct);
  end_owner(owner);
}

int main(int argc, char ** argv)
{
  if (argc == 4 && std::strcmp(argv[1], "owner") == 0) {return owner_main(argv[2], argv[3]);}
  char tmpl[] = "/tmp/tf_shm_listener_XXXXXX";
  const char * dir = mkdtemp(tmpl);
  if (!dir) {return 2;}
  setenv("TF_SHM_RUNTIME_DIR", dir, 1);
  setenv("TF_SHM_DOMAIN", "0", 1);
  samples_clear_and_destruction(dir);
  restart(dir);
  if (CHECK_FAILURES() == 0) {std::printf("transform listener tests: ok\n");}
  return CHECK_FAILURES() == 0 ? 0 : 1;
}
