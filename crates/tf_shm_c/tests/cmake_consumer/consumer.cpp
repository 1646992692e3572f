// Prints T_target_source at the latest common time: tf_shm_consumer [target source].
#include <cstdio>
#include <string>

#include <tf_shm/tf_shm.hpp>

int main(int argc, char ** argv)
{
  const std::string target = argc > 2 ? argv[1] : "map", source = argc > 2 ? argv[2] : "odom";
  try {
    tf_shm::Buffer buffer("", -1, std::chrono::seconds(5));
    const auto t = buffer.lookupTransform(target, source, tf_shm::TimePointZero, std::chrono::seconds(2));
    std::printf("%s -> %s: %.6f %.6f %.6f\n", target.c_str(), source.c_str(), t.transform.translation[0],
                t.transform.translation[1], t.transform.translation[2]);
  } catch (const std::exception & e) {
    std::fprintf(stderr, "tf_shm_consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}
