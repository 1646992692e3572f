#!/usr/bin/env bash
# The CMake package of tf_shm_c from a consumer's side, against the demo arena
# (crates/tf_shm_cli/examples/demo_arena.rs: static map -> odom at (2, 1, 0)):
#   1. plain CMake: configure, build and install crates/tf_shm_c into a prefix, then build
#      tests/cmake_consumer with find_package(tf_shm) (C++ on tf_shm::tf_shm, C on
#      tf_shm::tf_shm_static, and where ROS 2's tf2 is found, C++ through tf2's interfaces on
#      tf_shm::tf2_buffer) and run them;
#   2. colcon (when the ROS environment of scripts/ros-env.sh is loaded): build crates/tf_shm_c
#      and the ament_cmake example examples/cpp_consumer in one workspace, source it, and run
#      the example.
# No ROS process starts here (the demo arena and the consumers use no DDS).
set -euo pipefail
cd "$(dirname "$0")/../../.."
repo=$PWD
target=${CARGO_TARGET_DIR:-$repo/target}
w=$(mktemp -d)
demo=
cleanup() { [ -n "$demo" ] && kill "$demo" 2>/dev/null; wait 2>/dev/null; rm -rf "$w"; }
trap cleanup EXIT
export TF_SHM_RUNTIME_DIR=$w/run ROS_DOMAIN_ID=0
unset TF_SHM_NAME TF_SHM_DOMAIN
mkdir -m 700 "$TF_SHM_RUNTIME_DIR"

cargo build --release -p tf_shm_c -p tf_shm_cli --example demo_arena
"$target/release/examples/demo_arena" 2>"$w/demo.log" &
demo=$!

expect() { # expect NAME PATTERN COMMAND...
  local name=$1 pattern=$2 out
  shift 2
  out=$("$@") || { echo "$name failed: $out" >&2; exit 1; }
  echo "$name: $out"
  grep -q -- "$pattern" <<<"$out" || { echo "$name: expected '$pattern'" >&2; exit 1; }
}

echo "--- plain CMake: install tf_shm, build a find_package(tf_shm) consumer"
cmake -S crates/tf_shm_c -B "$w/build" -DTF_SHM_CARGO_TARGET_DIR="$target" \
  -DCMAKE_INSTALL_PREFIX="$w/prefix" >/dev/null
cmake --build "$w/build" >/dev/null
cmake --install "$w/build" >/dev/null
# With the ROS environment loaded (and ROS 2's tf2 installed), tf_shm::tf2_buffer is defined too;
# tf2_ros's headers come from a prefix, else from $TF_SHM_ROS_SOURCES (header-only use).
tf2_ros_inc=()
if [ -n "${TF_SHM_ROS_SOURCES:-}" ] && [ -d "$TF_SHM_ROS_SOURCES/geometry2/tf2_ros/include" ]; then
  tf2_ros_inc=(-DTF_SHM_TF2_ROS_INCLUDE_DIR="$TF_SHM_ROS_SOURCES/geometry2/tf2_ros/include")
fi
prefixes="$w/prefix;${TF_SHM_TF2_PREFIX:-};${CMAKE_PREFIX_PATH:-}"
cmake -S crates/tf_shm_c/tests/cmake_consumer -B "$w/consumer" -DCMAKE_PREFIX_PATH="${prefixes//:/;}" \
  "${tf2_ros_inc[@]}" >/dev/null
cmake --build "$w/consumer" >/dev/null
expect "C++ (shared)" "map -> odom: 2.000000 1.000000 0.000000" "$w/consumer/tf_shm_consumer"
expect "C (static)" "map -> odom: 2.000000 1.000000 0.000000" "$w/consumer/tf_shm_consumer_c"
if ldd "$w/consumer/tf_shm_consumer_c" | grep -q libtf_shm_c; then
  echo "tf_shm_consumer_c should not need libtf_shm_c.so" >&2; exit 1
fi
# A shell without the ROS environment, where Debian's ROS 1 tf2 and geometry_msgs (catkin
# packages, installed here as the tests' reference) are found: they must not end the
# configuration (tf_shm::tf2_buffer is then not defined; the rest builds and runs).
env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME" cmake -S crates/tf_shm_c/tests/cmake_consumer \
  -B "$w/consumer_plain" -DCMAKE_PREFIX_PATH="$w/prefix" >/dev/null
cmake --build "$w/consumer_plain" >/dev/null
expect "C++ (shared), outside ROS" "map -> odom: 2.000000 1.000000 0.000000" \
  "$w/consumer_plain/tf_shm_consumer"
if [ -x "$w/consumer/tf_shm_tf2_consumer" ]; then
  expect "C++ through tf2's interfaces" "map -> odom: 2.000000 1.000000 0.000000" "$w/consumer/tf_shm_tf2_consumer"
  expect "tf2's exception classes" "tf2::LookupException: " "$w/consumer/tf_shm_tf2_consumer"
  expect "waitForTransform" "waitForTransform: ok" "$w/consumer/tf_shm_tf2_consumer"
  expect "TransformListener" "TransformListener: map -> odom: 2.000000 1.000000 0.000000" \
    "$w/consumer/tf_shm_tf2_consumer"
else
  echo "--- tf_shm::tf2_buffer consumer skipped: no ROS 2 tf2 found by find_package (scripts/ros-env.sh setup)" >&2
fi

if command -v colcon >/dev/null && [ -n "${AMENT_PREFIX_PATH:-}" ]; then
  echo "--- colcon: tf_shm + the ament_cmake example consumer in one workspace"
  colcon --log-base "$w/log" build --base-paths crates/tf_shm_c examples/cpp_consumer \
    --build-base "$w/colcon_build" --install-base "$w/colcon_install" \
    --cmake-args -DTF_SHM_CARGO_TARGET_DIR="$target" >"$w/colcon.log" 2>&1 ||
    { cat "$w/colcon.log"; exit 1; }
  (
    set +u
    # shellcheck disable=SC1091
    . "$w/colcon_install/local_setup.sh"
    set -u
    # Where `ros2 run tf_shm_cpp_consumer tf_shm_cpp_consumer` finds it.
    exe=$w/colcon_install/tf_shm_cpp_consumer/lib/tf_shm_cpp_consumer/tf_shm_cpp_consumer
    expect "colcon example" "translation 2.000000 1.000000 0.000000" "$exe" map odom
    expect "colcon example" "1 m ahead of base_link in map" "$exe" map base_link
  )
else
  echo "--- colcon example skipped: load the ROS environment (scripts/ros-env.sh env)" >&2
fi
echo "packaging: ok"
