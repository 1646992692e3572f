// Tests of tf_shm_geometry_msgs.hpp: messages filled as tf2::BufferCore fills them, and
// transform() of PointStamped, PoseStamped and Vector3Stamped equal bit for bit to
// tf2_geometry_msgs's doTransform, computed here with the real orocos KDL (Debian's
// liborocos-kdl, the version ROS 2 Jazzy vendors) exactly as tf2_geometry_msgs calls it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include <kdl/frames.hpp>
#include <unistd.h>

#include "check.h"
#include "scenario.h"
#include "tf_shm_geometry_msgs.hpp"


static bool same(double a, double b) {return std::memcmp(&a, &b, sizeof a) == 0;}

// tf2_geometry_msgs's gmTransformToKDL (Jazzy), with the real KDL.
static KDL::Frame gmTransformToKDL(const geometry_msgs::msg::TransformStamped & t) {
  return KDL::Frame(KDL::Rotation::Quaternion(t.transform.rotation.x, t.transform.rotation.y,
                                              t.transform.rotation.z, t.transform.rotation.w),
                    KDL::Vector(t.transform.translation.x, t.transform.translation.y,
                                t.transform.translation.z));
}

static void testDoTransformAgainstKdl() {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0), big(-1e4, 1e4);
  int quadrants[4] = {0, 0, 0, 0};
  for (int n = 0; n < 20000; n++) {
    auto unit = [&](double q[4]) {
      double s = 0;
      for (int i = 0; i < 4; i++) {
        q[i] = u(rng);
        s += q[i] * q[i];
      }
      for (int i = 0; i < 4; i++) q[i] /= std::sqrt(s);
    };
    double q[4], r[4];
    unit(q);
    unit(r);
    if (n % 7 == 0) {  // near 180-degree compositions take GetQuaternion's other branches
      r[0] = -q[0]; r[1] = q[1]; r[2] = q[2]; r[3] = -q[3];
      std::swap(r[n % 3], r[3]);
    }
    geometry_msgs::msg::TransformStamped t;
    t.header.frame_id = "map";
    t.header.stamp.sec = 12;
    t.header.stamp.nanosec = 34;
    t.transform.translation.x = big(rng);
    t.transform.translation.y = big(rng);
    t.transform.translation.z = big(rng);
    t.transform.rotation.x = q[0];
    t.transform.rotation.y = q[1];
    t.transform.rotation.z = q[2];
    t.transform.rotation.w = q[3];
    const KDL::Frame f = gmTransformToKDL(t);

    geometry_msgs::msg::PointStamped pin, pout;
    pin.point.x = big(rng); pin.point.y = big(rng); pin.point.z = big(rng);
    tf_shm::doTransform(pin, pout, t);
    const KDL::Vector pv = f * KDL::Vector(pin.point.x, pin.point.y, pin.point.z);
    CHECK(same(pout.point.x, pv[0]) && same(pout.point.y, pv[1]) && same(pout.point.z, pv[2]), "point %d", n);
    CHECK(pout.header.frame_id == "map" && pout.header.stamp == t.header.stamp, "point header");

    geometry_msgs::msg::Vector3Stamped vin, vout;
    vin.vector.x = u(rng); vin.vector.y = u(rng); vin.vector.z = u(rng);
    tf_shm::doTransform(vin, vout, t);
    const KDL::Vector vv = f.M * KDL::Vector(vin.vector.x, vin.vector.y, vin.vector.z);
    CHECK(same(vout.vector.x, vv[0]) && same(vout.vector.y, vv[1]) && same(vout.vector.z, vv[2]), "vector %d", n);

    geometry_msgs::msg::PoseStamped sin, sout;
    sin.pose.position.x = big(rng); sin.pose.position.y = big(rng); sin.pose.position.z = big(rng);
    sin.pose.orientation.x = r[0]; sin.pose.orientation.y = r[1];
    sin.pose.orientation.z = r[2]; sin.pose.orientation.w = r[3];
    tf_shm::doTransform(sin, sout, t);
    const KDL::Frame pf = f * KDL::Frame(KDL::Rotation::Quaternion(r[0], r[1], r[2], r[3]),
                                         KDL::Vector(sin.pose.position.x, sin.pose.position.y, sin.pose.position.z));
    double x, y, z, w;
    pf.M.GetQuaternion(x, y, z, w);
    CHECK(same(sout.pose.position.x, pf.p[0]) && same(sout.pose.position.y, pf.p[1]) &&
              same(sout.pose.position.z, pf.p[2]), "pose position %d", n);
    CHECK(same(sout.pose.orientation.x, x) && same(sout.pose.orientation.y, y) &&
              same(sout.pose.orientation.z, z) && same(sout.pose.orientation.w, w),
          "pose orientation %d: %.17g %.17g %.17g %.17g vs KDL %.17g %.17g %.17g %.17g", n,
          sout.pose.orientation.x, sout.pose.orientation.y, sout.pose.orientation.z, sout.pose.orientation.w, x, y, z, w);
    const double tr = pf.M(0, 0) + pf.M(1, 1) + pf.M(2, 2);
    quadrants[tr > 1e-12 ? 0 : (pf.M(0, 0) > pf.M(1, 1) && pf.M(0, 0) > pf.M(2, 2)) ? 1 : pf.M(1, 1) > pf.M(2, 2) ? 2 : 3]++;
  }
  for (int i = 0; i < 4; i++) CHECK(quadrants[i] > 0, "GetQuaternion branch %d never taken", i);
}

static void testTimeMessages() {
  const tf_shm::TimePoint t = tf_shm::fromNs(T0 + 150 * MS);
  const auto m = tf_shm::toMsg(t);
  CHECK(m.sec == 1000 && m.nanosec == 150000000u, "%d %u", m.sec, m.nanosec);
  CHECK(tf_shm::fromMsg(m) == t, "round trip");
  builtin_interfaces::msg::Time z;
  z.sec = 0;
  z.nanosec = 0;
  CHECK(tf_shm::fromMsg(z) == tf_shm::TimePointZero, "zero");
  // tf2_ros's arithmetic for a negative time: sec truncates toward zero, nanosec is the int64
  // taken modulo 1e9 as unsigned: (2^64 - 1.5e9) mod 1e9 = 209551616.
  const auto neg = tf_shm::toMsg(tf_shm::fromNs(-1500000000LL));
  CHECK(neg.sec == -1 && neg.nanosec == 209551616u, "%d %u", neg.sec, neg.nanosec);
}

static void testLookups(const char *name) {
  const tf_shm::ros::Buffer buffer(name, 0);
  const tf_shm::TimePoint at = tf_shm::fromNs(T0 + 150 * MS);
  const geometry_msgs::msg::TransformStamped msg = buffer.lookupTransform("map", "laser", at);
  const tf_shm::TransformStamped raw = buffer.tf_shm::Buffer::lookupTransform("map", "laser", at);
  CHECK(msg.header.frame_id == "map" && msg.child_frame_id == "laser", "names");
  CHECK(msg.header.stamp.sec == 1000 && msg.header.stamp.nanosec == 150000000u, "stamp");
  CHECK(msg.transform.translation.x == raw.transform.translation[0] &&
            msg.transform.rotation.w == raw.transform.rotation[3], "values");
  const auto full = buffer.lookupTransform("laser", at, "odom", tf_shm::fromNs(T0 + 50 * MS), "map");
  CHECK(full.header.frame_id == "laser" && full.child_frame_id == "odom", "full names");

  // transform(): a point seen by the laser, in map, as tf2_ros::Buffer::transform computes it.
  geometry_msgs::msg::PointStamped p;
  p.header.frame_id = "laser";
  p.header.stamp = tf_shm::toMsg(at);
  p.point.x = 1.0;
  const auto in_map = buffer.transform(p, "map");
  geometry_msgs::msg::PointStamped expect;
  tf_shm::doTransform(p, expect, msg);
  CHECK(in_map.header.frame_id == "map" && in_map.point.x == expect.point.x && in_map.point.y == expect.point.y,
        "transform point");
  geometry_msgs::msg::PoseStamped pose;
  pose.header = p.header;
  pose.pose.orientation.w = 1.0;
  CHECK(buffer.transform(pose, "map").pose.orientation.z != 0.0, "pose rotated");
  geometry_msgs::msg::Vector3Stamped v;
  v.header = p.header;
  v.vector.x = 1.0;
  const auto vm = buffer.transform(v, "map", std::chrono::milliseconds(10));
  CHECK(std::fabs(std::hypot(vm.vector.x, vm.vector.y) - 1.0) < 1e-12, "vector length");
  p.header.frame_id = "nope";
  try {
    buffer.transform(p, "map");
    CHECK(false, "no throw");
  } catch (const tf_shm::LookupException &e) {
    CHECK(std::string(e.what()) == "\"nope\" passed to lookupTransform argument source_frame does not exist. ",
          "[%s]", e.what());
  }
}

int main() {
  testDoTransformAgainstKdl();
  testTimeMessages();
  char dir[] = "/tmp/tf_shm_gm_test.XXXXXX";
  if (!mkdtemp(dir)) return 2;
  setenv("TF_SHM_RUNTIME_DIR", dir, 1);
  TestOwner *owner = tf_shm_testkit_serve(dir, "gmtest", 0);
  if (!owner) return 2;
  scenario_fill(owner);
  testLookups("gmtest");
  tf_shm_testkit_close(owner);
  const std::string cmd = std::string("rm -rf '") + dir + "'";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir);
  std::printf("test_geometry_msgs: %s (%d failed checks)\n", failures ? "FAILED" : "ok", failures);
  return failures ? 1 : 0;
}
