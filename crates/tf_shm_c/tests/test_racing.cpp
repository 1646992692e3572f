// Lookups through the C ABI and tf_shm::Tf2Buffer racing the writer answer from one moment
// (tf_shm's `moment` module: a query reads one moment of the writer's history): a writer thread publishes messages as fast
// as it can (each one `ArenaWriter::batch`, as the bridge writes a TFMessage) while reader
// threads loop over lookups on every path a C or C++ caller has, and every answer is checked
// against what holds at every moment of the history:
//
// - map -> odom -> base: each message moves odom and puts base back where it was, at one
//   stamp, so T_map_base at time 0 (the latest common time: both links' newest stamp) is the
//   same constant at every moment. A read of one link from one message and the other from
//   another fails with an extrapolation (the latest common time of one, a link of the other)
//   or answers another transform; at one moment it is C exactly (up to rounding).
// - base <- base at time 0: identity at every moment.
// - a new frame pair p_j -> c_j (both new, one sample) in some messages: looked up as
//   T_c_j_p_j at time 0 by a reader that saw the message begin, it is either the sample's
//   inverse (the message's moment) or "c_j does not exist" (the one before); "p_j does not
//   exist" with c_j present, a connectivity error or a latest common time of 0 is no moment.
//
// Reads that overlap no write prove nothing here, so the test counts how many reads began
// while a message was being written and requires some (a writer and readers on 2 cores).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "testkit.h"
#include "tf_shm.h"
#include "tf2_buffer.hpp"

namespace
{

constexpr int kPairs = 100;      // new frame pairs over the run (the test arena holds 256 frames)
constexpr int kPairEvery = 400;  // one new pair every this many messages
constexpr int64_t kStep = 10'000'000;  // 10 ms between stamps
const double kC[7] = {0.3, -0.2, 0.1, 0.0, 0.0, std::sin(0.35), std::cos(0.35)};

TestOwner * owner;
std::atomic<int64_t> begun{0};     // messages begun (stored before the batch)
std::atomic<int64_t> completed{0};  // messages completed (stored after it)
std::atomic<int> pairs_begun{0};   // new pairs whose message has begun
std::atomic<bool> stop{false};

struct Tf
{
  double t[3], q[4];
};

Tf mul(const Tf & a, const Tf & b)
{
  const double *p = a.q, *r = b.q;
  Tf o;
  o.q[0] = p[3] * r[0] + p[0] * r[3] + p[1] * r[2] - p[2] * r[1];
  o.q[1] = p[3] * r[1] - p[0] * r[2] + p[1] * r[3] + p[2] * r[0];
  o.q[2] = p[3] * r[2] + p[0] * r[1] - p[1] * r[0] + p[2] * r[3];
  o.q[3] = p[3] * r[3] - p[0] * r[0] - p[1] * r[1] - p[2] * r[2];
  // t = a.t + rot(a.q) * b.t
  const double x = p[0], y = p[1], z = p[2], w = p[3];
  const double *v = b.t;
  const double tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]),
    tz = 2 * (x * v[1] - y * v[0]);
  o.t[0] = a.t[0] + v[0] + w * tx + (y * tz - z * ty);
  o.t[1] = a.t[1] + v[1] + w * ty + (z * tx - x * tz);
  o.t[2] = a.t[2] + v[2] + w * tz + (x * ty - y * tx);
  return o;
}

Tf inv(const Tf & a)
{
  Tf r{{0, 0, 0}, {-a.q[0], -a.q[1], -a.q[2], a.q[3]}};
  const Tf m = mul(r, Tf{{a.t[0], a.t[1], a.t[2]}, {0, 0, 0, 1}});
  r.t[0] = -m.t[0];
  r.t[1] = -m.t[1];
  r.t[2] = -m.t[2];
  return r;
}

std::string pname(const char * prefix, int j) {return prefix + std::to_string(j);}
Tf pair_tf(int j) {return Tf{{0.01 * j, 1.0, -0.5}, {0, 0, std::sin(0.01 * j), std::cos(0.01 * j)}};}

void writer()
{
  const Tf c{{kC[0], kC[1], kC[2]}, {kC[3], kC[4], kC[5], kC[6]}};
  std::vector<std::string> names;
  for (int64_t k = 1; !stop.load(); ++k) {
    const double a = 0.001 * static_cast<double>(k % 5000);
    const Tf odom{{std::cos(a), std::sin(a), 0.01 * a}, {0, 0, std::sin(a / 2), std::cos(a / 2)}};
    const Tf base = mul(inv(odom), c);  // T_odom_base: T_map_base = odom * base = C
    const int64_t stamp = 1'000'000'000'000 + k * kStep;
    tf_shm_testkit_transform items[3] = {
      {"map", "odom", stamp, {odom.t[0], odom.t[1], odom.t[2]},
        {odom.q[0], odom.q[1], odom.q[2], odom.q[3]}, 0},
      {"odom", "base", stamp, {base.t[0], base.t[1], base.t[2]},
        {base.q[0], base.q[1], base.q[2], base.q[3]}, 0},
      {}};
    size_t n = 2;
    const int j = pairs_begun.load();
    std::string p, ch;
    if (k % kPairEvery == 0 && j < kPairs) {
      p = pname("p", j);
      ch = pname("c", j);
      const Tf x = pair_tf(j);
      items[2] = {p.c_str(), ch.c_str(), stamp, {x.t[0], x.t[1], x.t[2]}, {x.q[0], x.q[1], x.q[2],
          x.q[3]}, 0};
      n = 3;
      pairs_begun.store(j + 1);
    }
    begun.store(k);
    CHECK(tf_shm_testkit_set_batch(owner, items, n) == 0, "message %lld refused", (long long)k);
    completed.store(k);
  }
}

bool near(const double * got, const double * want, double tol = 1e-9)
{
  double dq = 0, dq_neg = 0;
  for (int i = 0; i < 4; ++i) {
    dq = std::fmax(dq, std::fabs(got[3 + i] - want[3 + i]));
    dq_neg = std::fmax(dq_neg, std::fabs(got[3 + i] + want[3 + i]));
  }
  for (int i = 0; i < 3; ++i) {
    if (std::fabs(got[i] - want[i]) > tol) {return false;}
  }
  return std::fmin(dq, dq_neg) <= tol;
}

void flat(const tf_shm_transform_stamped & t, double * out)
{
  std::memcpy(out, t.translation, sizeof t.translation);
  std::memcpy(out + 3, t.rotation, sizeof t.rotation);
}

// The paths a C or C++ caller has; each answers (status, 7 numbers, error text).
enum Path { kName, kPair, kRef, kFramePair, kTf2Buffer, kPaths };
const char * const kPathNames[kPaths] = {"tf_shm_lookup_transform", "tf_shm_pair_lookup",
  "tf_shm_ref_lookup_transform", "tf_shm_frame_pair_lookup", "tf_shm::Tf2Buffer::lookupTransform"};

struct Reader
{
  tf_shm_buffer buffer;
  const tf_shm_buffer_ref * ref;
  tf_shm::Tf2Buffer * tf2;
  tf_shm_pair map_base, base_base;
  tf_shm_frame_pair * fp_map_base;
  tf_shm_frame_pair * fp_base_base;
  long reads = 0, racing = 0, bad = 0;

  // One lookup on `path`; the error text in `err` when it fails.
  int lookup(Path path, const std::string & target, const std::string & source, double * out,
    std::string & err)
  {
    tf_shm_transform_stamped t{};
    int st = TF_SHM_OK;
    switch (path) {
      case kName: st = tf_shm_lookup_transform(buffer, target.c_str(), source.c_str(), 0, &t); break;
      case kPair: {
          if (target == "map") {st = tf_shm_pair_lookup(map_base, 0, &t);} else if (target == source) {
            st = tf_shm_pair_lookup(base_base, 0, &t);
          } else {
            st = tf_shm_lookup_transform(buffer, target.c_str(), source.c_str(), 0, &t);
          }
          break;
        }
      case kRef:
        st = tf_shm_ref_lookup_transform(ref, target.data(), target.size(), source.data(),
            source.size(), 0, &t);
        break;
      case kFramePair: {
          if (target == "map") {st = tf_shm_frame_pair_lookup(fp_map_base, 0, &t);} else if (target ==
            source)
          {
            st = tf_shm_frame_pair_lookup(fp_base_base, 0, &t);
          } else {
            st = tf_shm_ref_lookup_transform(ref, target.data(), target.size(), source.data(),
                source.size(), 0, &t);
          }
          break;
        }
      default:
        try {
          const auto m = tf2->lookupTransform(target, source, tf2::TimePointZero);
          const auto & tr = m.transform;
          const double v[7] = {tr.translation.x, tr.translation.y, tr.translation.z,
            tr.rotation.x, tr.rotation.y, tr.rotation.z, tr.rotation.w};
          std::memcpy(out, v, sizeof v);
          return TF_SHM_OK;
        } catch (const tf2::LookupException & e) {
          err = e.what();
          return TF_SHM_LOOKUP_EXCEPTION;
        } catch (const tf2::TransformException & e) {
          err = e.what();
          return TF_SHM_ARENA_ERROR;  // any other class: no moment gives it here
        }
    }
    if (st == TF_SHM_OK) {flat(t, out);} else {err = tf_shm_last_error_message();}
    return st;
  }

  void fail(Path path, const std::string & what)
  {
    if (++bad <= 5) {CHECK(false, "%s: %s", kPathNames[path], what.c_str());} else {
      __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
    }
  }

  void run(unsigned seed)
  {
    const double identity[7] = {0, 0, 0, 0, 0, 0, 1};
    double got[7];
    std::string err;
    while (!stop.load()) {
      seed = seed * 1103515245u + 12345u;
      const Path path = static_cast<Path>((seed >> 8) % kPaths);
      const int q = (seed >> 16) % 3;
      const int64_t lo = completed.load();
      err.clear();
      if (q == 0) {
        const int st = lookup(path, "map", "base", got, err);
        if (st != TF_SHM_OK) {
          if (lo > 0) {fail(path, "map <- base at time 0 failed: " + err);}
        } else if (!near(got, kC)) {
          fail(path, "map <- base at time 0 is no moment's (" + std::to_string(got[0]) + ", " +
            std::to_string(got[1]) + ", " + std::to_string(got[2]) + ")");
        }
      } else if (q == 1) {
        const int st = lookup(path, "base", "base", got, err);
        if (lo > 0 && (st != TF_SHM_OK || !near(got, identity, 0))) {
          fail(path, "base <- base at time 0 is not the identity: " + err);
        }
      } else {
        const int j = pairs_begun.load() - 1;
        if (j < 0) {continue;}
        const std::string p = pname("p", j), ch = pname("c", j);
        const int st = lookup(path, ch, p, got, err);
        const Tf x = inv(pair_tf(j));
        const double want[7] = {x.t[0], x.t[1], x.t[2], x.q[0], x.q[1], x.q[2], x.q[3]};
        const bool before = st == TF_SHM_LOOKUP_EXCEPTION &&
          err.find("\"" + ch + "\"") != std::string::npos &&
          err.find("\"" + p + "\"") == std::string::npos;
        if (!(st == TF_SHM_OK && near(got, want)) && !before) {
          fail(path, ch + " <- " + p + " at time 0 is no moment's: status " + std::to_string(st) +
            ": " + err);
        }
      }
      ++reads;
      racing += begun.load() > lo;
    }
  }
};

}  // namespace

int main()
{
  char dir[] = "/tmp/tf_shm_racing_test.XXXXXX";
  if (!mkdtemp(dir)) {return 2;}
  setenv("TF_SHM_RUNTIME_DIR", dir, 1);
  owner = tf_shm_testkit_serve(dir, "racing", 0);
  if (!owner) {return 2;}
  const double seconds = std::getenv("TF_SHM_RACING_SECONDS") ?
    std::atof(std::getenv("TF_SHM_RACING_SECONDS")) : 3.0;
  {
    tf_shm_buffer buffer{};
    CHECK(tf_shm_buffer_open("racing", 0, 1'000'000'000, &buffer) == TF_SHM_OK, "open");
    tf_shm::Tf2Buffer tf2("racing", 0);
    std::vector<Reader> readers(2);
    for (auto & r : readers) {
      r.buffer = buffer;
      r.tf2 = &tf2;
      CHECK(tf_shm_buffer_ref_new(buffer, &r.ref) == TF_SHM_OK, "ref");
      CHECK(tf_shm_pair_new(buffer, "map", "base", &r.map_base) == TF_SHM_OK, "pair");
      CHECK(tf_shm_pair_new(buffer, "base", "base", &r.base_base) == TF_SHM_OK, "pair");
      CHECK(tf_shm_frame_pair_new(r.ref, "map", 3, "base", 4, &r.fp_map_base) == TF_SHM_OK, "fp");
      CHECK(tf_shm_frame_pair_new(r.ref, "base", 4, "base", 4, &r.fp_base_base) == TF_SHM_OK, "fp");
    }
    std::thread w(writer);
    std::vector<std::thread> ts;
    for (size_t i = 0; i < readers.size(); ++i) {
      ts.emplace_back([&readers, i] {readers[i].run(static_cast<unsigned>(7 + i));});
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop.store(true);
    w.join();
    long reads = 0, racing = 0;
    for (auto & t : ts) {t.join();}
    for (auto & r : readers) {
      reads += r.reads;
      racing += r.racing;
      tf_shm_frame_pair_free(r.fp_map_base);
      tf_shm_frame_pair_free(r.fp_base_base);
      tf_shm_pair_free(r.map_base);
      tf_shm_pair_free(r.base_base);
      tf_shm_buffer_ref_free(r.ref);
    }
    std::printf("test_racing: %ld reads, %ld began while a message was being written, %lld "
      "messages, %d new frame pairs\n", reads, racing, (long long)completed.load(),
      pairs_begun.load());
    CHECK(racing >= 100, "only %ld racing reads: the test proved nothing", racing);
    CHECK(pairs_begun.load() >= 3, "only %d new frame pairs written", pairs_begun.load());
    tf_shm_buffer_close(buffer);
  }
  tf_shm_testkit_close(owner);
  const std::string cmd = std::string("rm -rf '") + dir + "'";
  if (std::system(cmd.c_str()) != 0) {std::fprintf(stderr, "could not remove %s\n", dir);}
  const int f = CHECK_FAILURES();
  std::printf("test_racing: %s (%d failed checks)\n", f ? "FAILED" : "ok", f);
  return f ? 1 : 0;
}
