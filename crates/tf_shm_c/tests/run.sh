#!/usr/bin/env bash
# The C and C++ tests of tf_shm_c: checks that include/tf_shm.h is what cbindgen generates from
# src/, then builds tests/test_c.c, tests/test_cpp.cpp, tests/test_geometry_msgs.cpp (against
# geometry_msgs' headers from AMENT_PREFIX_PATH), tests/test_tf2_buffer.cpp and
# tests/test_transform_listener.cpp, tests/test_racing.cpp (against ROS 2 Jazzy's real libtf2 and tf2's headers from a
# prefix of $TF_SHM_TF2_PREFIX / CMAKE_PREFIX_PATH / AMENT_PREFIX_PATH, as find_package(tf2) finds them, and tf2_ros's headers: installed, else
# $TF_SHM_ROS_SOURCES/geometry2/tf2_ros/include), with gcc and clang under ASan and UBSan
# against the release build of libtf_shm_c (and the test-only testkit), and runs them. All of
# them always run: a missing ROS package is a failure, not a skip.
#   eval "$(scripts/ros-env.sh env)"   # after scripts/ros-env.sh setup: geometry_msgs, tf2
#   crates/tf_shm_c/tests/run.sh       # needs cbindgen, gcc, g++, clang, libclang-rt-14-dev,
#                                      # liborocos-kdl-dev (the reference of the geometry_msgs test)
set -euo pipefail
cd "$(dirname "$0")/../../.."
crate=crates/tf_shm_c
rel=${CARGO_TARGET_DIR:-$PWD/target}/release

cargo build --release -p tf_shm_c -p tf_shm_c_testkit

fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
cbindgen --quiet --config $crate/cbindgen.toml --crate tf_shm_c --output "$fresh"
if ! diff -u $crate/include/tf_shm.h "$fresh"; then
  echo "tf_shm_c: include/tf_shm.h is stale; regenerate it with:" >&2
  echo "  cbindgen --config $crate/cbindgen.toml --crate tf_shm_c --output $crate/include/tf_shm.h" >&2
  exit 1
fi

out=$rel/tf_shm_c_tests
mkdir -p "$out"
san=(-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
inc=(-I$crate/include -I$crate/tests)
libs=("$rel/libtf_shm_c.so" "$rel/libtf_shm_c_testkit.so" "-Wl,-rpath,$rel" -lpthread -lm)
# geometry_msgs' C++ headers (header-only structs) from the ROS prefixes, when loaded.
ros_inc=()
ament=${AMENT_PREFIX_PATH:-}
for prefix in ${ament//:/ }; do
  if [ -d "$prefix/include/geometry_msgs" ]; then
    for p in geometry_msgs std_msgs builtin_interfaces rosidl_runtime_cpp rosidl_runtime_c \
      rosidl_typesupport_interface rcutils; do
      ros_inc+=(-isystem "$prefix/include/$p")
    done
    break
  fi
done
missing() {
  echo "tf_shm_c tests: $1 not found; these tests need the ROS environment:" >&2
  echo '  scripts/ros-env.sh setup && eval "$(scripts/ros-env.sh env)" && crates/tf_shm_c/tests/run.sh' >&2
  exit 1
}
[ -n "${ros_inc[*]}" ] || missing "geometry_msgs (include/geometry_msgs in AMENT_PREFIX_PATH='${AMENT_PREFIX_PATH:-}')"
# ROS 2 Jazzy's tf2 (C++, ament layout: include/tf2/tf2/*.h, lib/libtf2.so) and tf2_ros's headers.
prefixes="${TF_SHM_TF2_PREFIX:-}:${CMAKE_PREFIX_PATH:-}:${AMENT_PREFIX_PATH:-}"
tf2_prefix= tf2_ros_inc= rcutils_lib=
for prefix in ${prefixes//:/ }; do
  [ -z "$tf2_prefix" ] && [ -f "$prefix/include/tf2/tf2/buffer_core.h" ] && [ -f "$prefix/lib/libtf2.so" ] &&
    tf2_prefix=$prefix
  [ -z "$tf2_ros_inc" ] && [ -f "$prefix/include/tf2_ros/tf2_ros/async_buffer_interface.h" ] &&
    tf2_ros_inc=$prefix/include/tf2_ros
  [ -z "$rcutils_lib" ] && [ -f "$prefix/lib/librcutils.so" ] && rcutils_lib=$prefix/lib
done
if [ -z "$tf2_ros_inc" ] && [ -n "${TF_SHM_ROS_SOURCES:-}" ] &&
  [ -f "$TF_SHM_ROS_SOURCES/geometry2/tf2_ros/include/tf2_ros/async_buffer_interface.h" ]; then
  tf2_ros_inc=$TF_SHM_ROS_SOURCES/geometry2/tf2_ros/include  # header-only use: no rclcpp needed
fi
[ -n "$tf2_prefix" ] ||
  missing "ROS 2 Jazzy's tf2 (include/tf2/tf2/buffer_core.h and lib/libtf2.so in a prefix of TF_SHM_TF2_PREFIX / CMAKE_PREFIX_PATH / AMENT_PREFIX_PATH='$prefixes')"
[ -n "$tf2_ros_inc" ] ||
  missing "tf2_ros's headers (include/tf2_ros/tf2_ros/async_buffer_interface.h in those prefixes, or \$TF_SHM_ROS_SOURCES/geometry2/tf2_ros/include)"
[ -n "$rcutils_lib" ] || missing "librcutils.so (libtf2's dependency) in those prefixes"
echo "tf_shm_c tests: tf2 from $tf2_prefix, tf2_ros headers from $tf2_ros_inc"
tf2_args=(-isystem "$tf2_prefix/include/tf2" -isystem "$tf2_ros_inc"
  "$tf2_prefix/lib/libtf2.so" "$rcutils_lib/librcutils.so" "-Wl,--disable-new-dtags,-rpath,$tf2_prefix/lib:$rcutils_lib")  # RPATH: also for libtf2's librcutils
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
for cc in gcc clang; do
  cxx=$([ $cc = gcc ] && echo g++ || echo clang++)
  echo "--- C tests, $cc, ASan + UBSan"
  $cc -std=c11 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" $crate/tests/test_c.c -o "$out/test_c_$cc" "${libs[@]}"
  "$out/test_c_$cc"
  echo "--- C++ tests, $cxx, ASan + UBSan"
  $cxx -std=c++17 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" $crate/tests/test_cpp.cpp -o "$out/test_cpp_$cc" "${libs[@]}"
  "$out/test_cpp_$cc"
  echo "--- geometry_msgs interop tests, $cxx, ASan + UBSan"
  $cxx -std=c++17 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" "${ros_inc[@]}" \
    $crate/tests/test_geometry_msgs.cpp -o "$out/test_geometry_msgs_$cc" "${libs[@]}" -lorocos-kdl
  "$out/test_geometry_msgs_$cc"
  echo "--- tf2 interface tests (tf_shm::Tf2Buffer against tf2::BufferCore), $cxx, ASan + UBSan"
  $cxx -std=c++17 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" "${ros_inc[@]}" \
    $crate/tests/test_tf2_buffer.cpp -o "$out/test_tf2_buffer_$cc" "${tf2_args[@]}" "${libs[@]}"
  "$out/test_tf2_buffer_$cc"
  echo "--- tf_shm::TransformListener tests (a tf2::BufferCore it feeds against one fed directly), $cxx, ASan + UBSan"
  $cxx -std=c++17 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" "${ros_inc[@]}" \
    $crate/tests/test_transform_listener.cpp -o "$out/test_transform_listener_$cc" "${tf2_args[@]}" "${libs[@]}"
  "$out/test_transform_listener_$cc"
  echo "--- lookups racing the writer answer from one moment (C ABI paths, tf_shm::Tf2Buffer), $cxx, ASan + UBSan"
  $cxx -std=c++17 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" "${ros_inc[@]}" \
    $crate/tests/test_racing.cpp -o "$out/test_racing_$cc" "${tf2_args[@]}" "${libs[@]}" -pthread
  "$out/test_racing_$cc"
done
