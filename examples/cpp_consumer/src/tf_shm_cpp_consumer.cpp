// Example tf_shm consumer: prints T_target_source as a geometry_msgs TransformStamped and a
// point 1 m ahead of the source frame, expressed in the target frame.
//   tf_shm_cpp_consumer [target source]   (default: map base_link)
#include <chrono>
#include <cstdio>
#include <string>

#include <geometry_msgs/msg/point_stamped.hpp>
#include <tf_shm/tf_shm_geometry_msgs.hpp>

int main(int argc, char ** argv)
{
  const std::string target = argc > 2 ? argv[1] : "map";
  const std::string source = argc > 2 ? argv[2] : "base_link";
  try {
    // The arena of $ROS_DOMAIN_ID; waits up to 5 s for tf_shm_bridge.
    tf_shm::ros::Buffer buffer("", -1, std::chrono::seconds(5));
    const geometry_msgs::msg::TransformStamped t =
      buffer.lookupTransform(target, source, tf_shm::TimePointZero, std::chrono::seconds(2));
    std::printf("%s -> %s at %d.%09u: translation %.6f %.6f %.6f rotation %.6f %.6f %.6f %.6f\n",
      t.header.frame_id.c_str(), t.child_frame_id.c_str(), t.header.stamp.sec,
      t.header.stamp.nanosec, t.transform.translation.x, t.transform.translation.y,
      t.transform.translation.z, t.transform.rotation.x, t.transform.rotation.y,
      t.transform.rotation.z, t.transform.rotation.w);
    geometry_msgs::msg::PointStamped ahead;
    ahead.header = t.header;
    ahead.header.frame_id = source;
    ahead.point.x = 1.0;
    const auto p = buffer.transform(ahead, target);
    std::printf("1 m ahead of %s in %s: %.6f %.6f %.6f\n", source.c_str(), target.c_str(),
      p.point.x, p.point.y, p.point.z);
  } catch (const tf_shm::TransformException & e) {
    std::fprintf(stderr, "tf_shm_cpp_consumer: %s\n", e.what());
    return 1;
  } catch (const tf_shm::Error & e) {
    std::fprintf(stderr, "tf_shm_cpp_consumer: %s\n", e.what());
    return 2;
  }
  return 0;
}
