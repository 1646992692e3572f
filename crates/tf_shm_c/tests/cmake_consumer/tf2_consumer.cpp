// Code written against tf2's interfaces, handed a tf_shm::Tf2Buffer: prints T_map_odom through a
// tf2::BufferCoreInterface&, waits for it through a tf2_ros::AsyncBufferInterface&, and shows
// that tf2's own exception classes are what it throws; then fills a plain tf2::BufferCore
// from the arena with tf_shm::TransformListener and reads T_map_odom from that.
#include <cstdio>
#include <string>
#include <thread>

#include <tf2/buffer_core.h>
#include <tf_shm/tf2_buffer.hpp>
#include <tf_shm/transform_listener.hpp>

static void print(const tf2::BufferCoreInterface & tf)
{
  const auto t = tf.lookupTransform("map", "odom", tf2::TimePointZero);
  std::printf("map -> odom: %.6f %.6f %.6f\n", t.transform.translation.x,
    t.transform.translation.y, t.transform.translation.z);
}

static bool await(tf2_ros::AsyncBufferInterface & tf)
{
  auto f = tf.waitForTransform("map", "odom", tf2::TimePointZero, std::chrono::seconds(2),
      [](const tf2_ros::TransformStampedFuture &) {});
  return f.get().header.frame_id == "map";
}

int main()
{
  try {
    tf_shm::Tf2Buffer buffer("", -1, std::chrono::seconds(5));
    print(buffer);
    try {
      buffer.lookupTransform("map", "no_such_frame", tf2::TimePointZero);
    } catch (const tf2::LookupException & e) {
      std::printf("tf2::LookupException: %s\n", e.what());
    }
    std::printf("waitForTransform: %s\n", await(buffer) ? "ok" : "wrong frame");
    tf2::BufferCore core;
    tf_shm::TransformListener listener(core);
    for (int i = 0; i < 2000 && !core.canTransform("map", "odom", tf2::TimePointZero); i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const auto t = core.lookupTransform("map", "odom", tf2::TimePointZero);
    std::printf("TransformListener: map -> odom: %.6f %.6f %.6f\n", t.transform.translation.x,
      t.transform.translation.y, t.transform.translation.z);
  } catch (const std::exception & e) {
    std::fprintf(stderr, "tf_shm_tf2_consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}
