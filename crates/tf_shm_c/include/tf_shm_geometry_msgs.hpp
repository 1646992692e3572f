// tf_shm_geometry_msgs.hpp: geometry_msgs interop for tf_shm.hpp (include only where
// geometry_msgs/msg/*.hpp exist, e.g. in a ROS 2 workspace).
//
//   tf_shm::ros::Buffer buffer;
//   geometry_msgs::msg::TransformStamped t =
//     buffer.lookupTransform("map", "base_link", tf2::TimePointZero);   // as tf2_ros fills it
//   geometry_msgs::msg::PointStamped p_map = buffer.transform(p_laser, "map");
//
// Lookups return geometry_msgs::msg::TransformStamped exactly as tf2::BufferCore fills it;
// transform() applies it to PointStamped, PoseStamped and Vector3Stamped with
// tf2_geometry_msgs's doTransform arithmetic (KDL's, operation for operation), so results equal
// tf2_ros::Buffer::transform's bit for bit.
#ifndef TF_SHM_GEOMETRY_MSGS_HPP
#define TF_SHM_GEOMETRY_MSGS_HPP

#include <cmath>
#include <string>

#include <builtin_interfaces/msg/time.hpp>
#include <geometry_msgs/msg/point_stamped.hpp>
#include <geometry_msgs/msg/pose_stamped.hpp>
#include <geometry_msgs/msg/transform_stamped.hpp>
#include <geometry_msgs/msg/vector3_stamped.hpp>

#include "tf_shm.hpp"

namespace tf_shm
{

/// tf2_ros::toMsg(tf2::TimePoint), including its arithmetic for negative times.
inline builtin_interfaces::msg::Time toMsg(const TimePoint & t)
{
  const std::chrono::nanoseconds ns =
    std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch());
  const std::chrono::seconds s = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch());
  builtin_interfaces::msg::Time msg;
  msg.sec = static_cast<int32_t>(s.count());
  msg.nanosec = static_cast<uint32_t>(ns.count() % 1000000000ull);
  return msg;
}

/// tf2_ros::fromMsg(builtin_interfaces::msg::Time).
inline TimePoint fromMsg(const builtin_interfaces::msg::Time & msg)
{
  const int64_t d = msg.sec * 1000000000ull + msg.nanosec;
  return TimePoint(Duration(d));
}

/// A lookup's answer as tf2::BufferCore::lookupTransform fills the message.
inline geometry_msgs::msg::TransformStamped toMsg(const TransformStamped & t)
{
  geometry_msgs::msg::TransformStamped msg;
  msg.transform.translation.x = t.transform.translation[0];
  msg.transform.translation.y = t.transform.translation[1];
  msg.transform.translation.z = t.transform.translation[2];
  msg.transform.rotation.x = t.transform.rotation[0];
  msg.transform.rotation.y = t.transform.rotation[1];
  msg.transform.rotation.z = t.transform.rotation[2];
  msg.transform.rotation.w = t.transform.rotation[3];
  msg.header.stamp = toMsg(t.stamp);
  msg.header.frame_id = t.frame_id;
  msg.child_frame_id = t.child_frame_id;
  return msg;
}

namespace detail
{
/// KDL::Frame (rotation matrix row-major, position) as tf2_geometry_msgs's gmTransformToKDL
/// builds it, and KDL's products, with KDL's operation order (so the rounding is KDL's).
struct KdlFrame
{
  double m[9];
  double p[3];
};

inline void kdlRotation(double x, double y, double z, double w, double m[9])
{
  const double x2 = x * x, y2 = y * y, z2 = z * z, w2 = w * w;
  const double r[9] = {w2 + x2 - y2 - z2, 2 * x * y - 2 * w * z, 2 * x * z + 2 * w * y,
    2 * x * y + 2 * w * z, w2 - x2 + y2 - z2, 2 * y * z - 2 * w * x,
    2 * x * z - 2 * w * y, 2 * y * z + 2 * w * x, w2 - x2 - y2 + z2};
  for (int i = 0; i < 9; i++) {m[i] = r[i];}
}

inline KdlFrame kdlFrame(const geometry_msgs::msg::TransformStamped & t)
{
  KdlFrame f;
  kdlRotation(t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
    t.transform.rotation.w, f.m);
  f.p[0] = t.transform.translation.x;
  f.p[1] = t.transform.translation.y;
  f.p[2] = t.transform.translation.z;
  return f;
}

/// KDL::Rotation * KDL::Vector.
inline void kdlRotate(const double m[9], const double v[3], double out[3])
{
  const double r[3] = {m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
    m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
    m[6] * v[0] + m[7] * v[1] + m[8] * v[2]};
  out[0] = r[0];
  out[1] = r[1];
  out[2] = r[2];
}

/// KDL::Frame * KDL::Vector: M * v + p.
inline void kdlApply(const KdlFrame & f, const double v[3], double out[3])
{
  double r[3];
  kdlRotate(f.m, v, r);
  out[0] = r[0] + f.p[0];
  out[1] = r[1] + f.p[1];
  out[2] = r[2] + f.p[2];
}

/// KDL::Rotation * KDL::Rotation.
inline void kdlCompose(const double a[9], const double b[9], double out[9])
{
  double r[9];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    }
  }
  for (int i = 0; i < 9; i++) {out[i] = r[i];}
}

/// KDL::Rotation::GetQuaternion (orocos_kdl 1.5).
inline void kdlQuaternion(const double m[9], double & x, double & y, double & z, double & w)
{
  const double trace = m[0] + m[4] + m[8];
  const double epsilon = 1E-12;
  if (trace > epsilon) {
    const double s = 0.5 / std::sqrt(trace + 1.0);
    w = 0.25 / s;
    x = (m[7] - m[5]) * s;
    y = (m[2] - m[6]) * s;
    z = (m[3] - m[1]) * s;
  } else if (m[0] > m[4] && m[0] > m[8]) {
    const double s = 2.0 * std::sqrt(1.0 + m[0] - m[4] - m[8]);
    w = (m[7] - m[5]) / s;
    x = 0.25 * s;
    y = (m[1] + m[3]) / s;
    z = (m[2] + m[6]) / s;
  } else if (m[4] > m[8]) {
    const double s = 2.0 * std::sqrt(1.0 + m[4] - m[0] - m[8]);
    w = (m[2] - m[6]) / s;
    x = (m[1] + m[3]) / s;
    y = 0.25 * s;
    z = (m[5] + m[7]) / s;
  } else {
    const double s = 2.0 * std::sqrt(1.0 + m[8] - m[0] - m[4]);
    w = (m[3] - m[1]) / s;
    x = (m[2] + m[6]) / s;
    y = (m[5] + m[7]) / s;
    z = 0.25 * s;
  }
}
}  // namespace detail

/// tf2_geometry_msgs's doTransform for PointStamped: R p + t; header from the transform.
inline void doTransform(
  const geometry_msgs::msg::PointStamped & in, geometry_msgs::msg::PointStamped & out,
  const geometry_msgs::msg::TransformStamped & transform)
{
  const double v[3] = {in.point.x, in.point.y, in.point.z};
  double r[3];
  detail::kdlApply(detail::kdlFrame(transform), v, r);
  out.point.x = r[0];
  out.point.y = r[1];
  out.point.z = r[2];
  out.header.stamp = transform.header.stamp;
  out.header.frame_id = transform.header.frame_id;
}

/// tf2_geometry_msgs's doTransform for Vector3Stamped: R v (no translation).
inline void doTransform(
  const geometry_msgs::msg::Vector3Stamped & in, geometry_msgs::msg::Vector3Stamped & out,
  const geometry_msgs::msg::TransformStamped & transform)
{
  const double v[3] = {in.vector.x, in.vector.y, in.vector.z};
  double r[3];
  detail::kdlRotate(detail::kdlFrame(transform).m, v, r);
  out.vector.x = r[0];
  out.vector.y = r[1];
  out.vector.z = r[2];
  out.header.stamp = transform.header.stamp;
  out.header.frame_id = transform.header.frame_id;
}

/// tf2_geometry_msgs's doTransform for PoseStamped: T * pose as KDL frames, orientation back
/// through KDL's GetQuaternion.
inline void doTransform(
  const geometry_msgs::msg::PoseStamped & in, geometry_msgs::msg::PoseStamped & out,
  const geometry_msgs::msg::TransformStamped & transform)
{
  const detail::KdlFrame t = detail::kdlFrame(transform);
  double r[9];
  detail::kdlRotation(in.pose.orientation.x, in.pose.orientation.y, in.pose.orientation.z,
    in.pose.orientation.w, r);
  const double v[3] = {in.pose.position.x, in.pose.position.y, in.pose.position.z};
  double p[3], m[9];
  detail::kdlApply(t, v, p);
  detail::kdlCompose(t.m, r, m);
  out.pose.position.x = p[0];
  out.pose.position.y = p[1];
  out.pose.position.z = p[2];
  detail::kdlQuaternion(m, out.pose.orientation.x, out.pose.orientation.y,
    out.pose.orientation.z, out.pose.orientation.w);
  out.header.stamp = transform.header.stamp;
  out.header.frame_id = transform.header.frame_id;
}

namespace ros
{

/// tf_shm::Buffer whose lookups return geometry_msgs::msg::TransformStamped (as
/// tf2_ros::Buffer's do) and which transforms stamped points, poses and vectors
/// (tf2_ros::BufferInterface::transform).
class Buffer : public tf_shm::Buffer
{
public:
  using tf_shm::Buffer::Buffer;

  geometry_msgs::msg::TransformStamped lookupTransform(
    const std::string & target_frame, const std::string & source_frame,
    const TimePoint & time, const Duration timeout = Duration::zero()) const
  {
    return toMsg(timeout == Duration::zero() ?
             tf_shm::Buffer::lookupTransform(target_frame, source_frame, time) :
             tf_shm::Buffer::lookupTransform(target_frame, source_frame, time, timeout));
  }

  geometry_msgs::msg::TransformStamped lookupTransform(
    const std::string & target_frame, const TimePoint & target_time,
    const std::string & source_frame, const TimePoint & source_time,
    const std::string & fixed_frame, const Duration timeout = Duration::zero()) const
  {
    return toMsg(timeout == Duration::zero() ?
             tf_shm::Buffer::lookupTransform(target_frame, target_time, source_frame,
               source_time, fixed_frame) :
             tf_shm::Buffer::lookupTransform(target_frame, target_time, source_frame,
               source_time, fixed_frame, timeout));
  }

  /// tf2_ros::BufferInterface::transform(in, out, target_frame, timeout): looks up
  /// T_target_frame_in at in's stamp and applies it; throws tf2's exceptions.
  template<class T>
  T & transform(
    const T & in, T & out, const std::string & target_frame,
    Duration timeout = Duration::zero()) const
  {
    doTransform(in, out,
      lookupTransform(target_frame, in.header.frame_id, fromMsg(in.header.stamp), timeout));
    return out;
  }

  template<class T>
  T transform(
    const T & in, const std::string & target_frame, Duration timeout = Duration::zero()) const
  {
    T out;
    return transform(in, out, target_frame, timeout);
  }
};

}  // namespace ros
}  // namespace tf_shm

#endif  // TF_SHM_GEOMETRY_MSGS_HPP
