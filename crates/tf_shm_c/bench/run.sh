#!/usr/bin/env bash
# Builds and runs bench/tf2_buffer_bench.cpp (-O2, no sanitizers): tf_shm::Tf2Buffer against
# ROS 2 Jazzy's tf2::BufferCore in one run. Needs what tests/run.sh's tf2 test needs (the ROS
# environment of scripts/ros-env.sh with tf2 installed, or TF_SHM_TF2_PREFIX; tf2_ros's headers
# installed or in $TF_SHM_ROS_SOURCES).
set -euo pipefail
cd "$(dirname "$0")/../../.."
crate=crates/tf_shm_c
rel=${CARGO_TARGET_DIR:-$PWD/target}/release
cargo build --release -p tf_shm_c -p tf_shm_c_testkit
prefixes="${TF_SHM_TF2_PREFIX:-}:${CMAKE_PREFIX_PATH:-}:${AMENT_PREFIX_PATH:-}"
tf2= tf2_ros= ros=
for p in ${prefixes//:/ }; do
  [ -z "$tf2" ] && [ -f "$p/lib/libtf2.so" ] && [ -d "$p/include/tf2/tf2" ] && tf2=$p
  [ -z "$tf2_ros" ] && [ -f "$p/include/tf2_ros/tf2_ros/async_buffer_interface.h" ] && tf2_ros=$p/include/tf2_ros
  [ -z "$ros" ] && [ -d "$p/include/geometry_msgs/geometry_msgs" ] && [ -f "$p/lib/librcutils.so" ] && ros=$p
done
[ -z "$tf2_ros" ] && tf2_ros=${TF_SHM_ROS_SOURCES:?no tf2_ros headers: set TF_SHM_ROS_SOURCES}/geometry2/tf2_ros/include
[ -n "$tf2" ] && [ -n "$ros" ] || { echo "bench: no ROS 2 tf2 / geometry_msgs found" >&2; exit 2; }
inc=()
for d in "$ros"/include/*/; do inc+=(-isystem "$d"); done
out=$rel/tf_shm_c_tests
mkdir -p "$out"
g++ -std=c++17 -O2 -Wall -Wextra -I$crate/include -isystem "$tf2/include/tf2" -isystem "$tf2_ros" "${inc[@]}" \
  $crate/bench/tf2_buffer_bench.cpp -o "$out/tf2_buffer_bench" "$rel/libtf_shm_c.so" \
  "$rel/libtf_shm_c_testkit.so" "$tf2/lib/libtf2.so" "$ros/lib/librcutils.so" \
  "-Wl,--disable-new-dtags,-rpath,$rel:$tf2/lib:$ros/lib" -lpthread -lm
"$out/tf2_buffer_bench"
