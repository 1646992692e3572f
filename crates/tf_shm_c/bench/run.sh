#!/usr/bin/env bash
# Builds (-O2, no sanitizers) and runs, in one go:
# - bench/wrapper_bench.cpp: tf_shm.hpp's lookups by name and by pair against the Rust calls
#   they wrap, on the same arena (the wrapper's own cost, C++ − Rust);
# - bench/tf2_buffer_bench.cpp: tf_shm::Tf2Buffer against ROS 2 Jazzy's tf2::BufferCore. Needs
#   what tests/run.sh's tf2 test needs (the ROS environment of scripts/ros-env.sh with tf2
#   installed, or TF_SHM_TF2_PREFIX; tf2_ros's headers installed or in $TF_SHM_ROS_SOURCES).
# With --instructions, instead counts the instructions of one lookup of each wrapper_bench arm
# under callgrind (load-independent): the difference of a run of 20 000 and one of 10 000
# lookups, divided by 10 000.
# With --tail, instead counts the instructions of tf_shm_tail_poll per transform
# (bench/tail_bench.c, callgrind inclusive: 400 messages of 50 transforms minus 200).
# With --fanout, only builds bench/fanout_consumer.cpp (scripts/fanout.sh's C++ arms CL and CT)
# into $out/fanout_consumer, against the same tf2 as tf2_buffer_bench, and runs nothing.
set -euo pipefail
cd "$(dirname "$0")/../../.."
crate=crates/tf_shm_c
rel=${CARGO_TARGET_DIR:-$PWD/target}/release
out=$rel/tf_shm_c_tests
mkdir -p "$out"
# Sets tf2_cxx: g++ -O2 with tf2's, tf2_ros's and the ROS message headers; its link arguments
# (libtf_shm_c, libtf2, librcutils, RPATH) go after the sources and -o.
find_tf2() {
  local prefixes="${TF_SHM_TF2_PREFIX:-}:${CMAKE_PREFIX_PATH:-}:${AMENT_PREFIX_PATH:-}" p d
  tf2= tf2_ros= ros=
  for p in ${prefixes//:/ }; do
    [ -z "$tf2" ] && [ -f "$p/lib/libtf2.so" ] && [ -d "$p/include/tf2/tf2" ] && tf2=$p
    [ -z "$tf2_ros" ] && [ -f "$p/include/tf2_ros/tf2_ros/async_buffer_interface.h" ] && tf2_ros=$p/include/tf2_ros
    [ -z "$ros" ] && [ -d "$p/include/geometry_msgs/geometry_msgs" ] && [ -f "$p/lib/librcutils.so" ] && ros=$p
  done
  [ -z "$tf2_ros" ] && tf2_ros=${TF_SHM_ROS_SOURCES:?no tf2_ros headers: set TF_SHM_ROS_SOURCES}/geometry2/tf2_ros/include
  [ -n "$tf2" ] && [ -n "$ros" ] || { echo "bench: no ROS 2 tf2 / geometry_msgs found" >&2; exit 2; }
  tf2_cxx=(g++ -std=c++17 -O2 -Wall -Wextra -I$crate/include -isystem "$tf2/include/tf2" -isystem "$tf2_ros")
  for d in "$ros"/include/*/; do tf2_cxx+=(-isystem "$d"); done
  tf2_link=("$rel/libtf_shm_c.so" "$tf2/lib/libtf2.so" "$ros/lib/librcutils.so"
    "-Wl,--disable-new-dtags,-rpath,$rel:$tf2/lib:$ros/lib" -lpthread -lm)
}
if [ "${1:-}" = --fanout ]; then
  cargo build --release -p tf_shm_c
  find_tf2
  "${tf2_cxx[@]}" $crate/bench/fanout_consumer.cpp -o "$out/fanout_consumer" "${tf2_link[@]}"
  exit 0
fi
cargo build --release -p tf_shm_c -p tf_shm_c_testkit
g++ -std=c++17 -O2 -Wall -Wextra -I$crate/include $crate/bench/wrapper_bench.cpp \
  -o "$out/wrapper_bench" "$rel/libtf_shm_c.so" "$rel/libtf_shm_c_testkit.so" "-Wl,-rpath,$rel" \
  -lpthread -lm
if [ "${1:-}" = --tail ]; then
  gcc -std=c11 -O2 -Wall -Wextra -I$crate/include -I$crate/tests $crate/bench/tail_bench.c \
    -o "$out/tail_bench" "$rel/libtf_shm_c.so" "$rel/libtf_shm_c_testkit.so" \
    "-Wl,-rpath,$rel" -lpthread -lm
  ir() {
    local f
    f=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$f" "$out/tail_bench" "$1" >/dev/null 2>&1
    callgrind_annotate --inclusive=yes "$f" 2>/dev/null |
      awk '/tf_shm_tail_poll / {gsub(",", "", $1); print $1; exit}'
    rm -f "$f"
  }
  a=$(ir 200) b=$(ir 400)
  echo "tf_shm_tail_poll: $(( (b - a) / 10000 )) instructions per transform (callgrind)"
  exit 0
fi
if [ "${1:-}" = --instructions ]; then
  ir() {
    local f
    f=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$f" "$out/wrapper_bench" count "$@" >/dev/null 2>&1
    callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
    rm -f "$f"
  }
  printf '%-22s %10s %10s %8s %10s %10s %8s %10s %8s   (instructions per lookup, callgrind)\n' \
    lookup "C++ names" Rust "C++−Rust" "C++ pair" Rust "C++−Rust" "C call" "C−Rust"
  cases=("depth 3, interpolated" "depth 3, time 0" "depth 1, interpolated" "depth 1, time 0")
  for c in 0 1 2 3; do
    per=()
    for arm in 0 1 2 3 4; do
      a=$(ir $arm $c 10000) b=$(ir $arm $c 20000)
      per+=($(( (b - a) / 10000 )))
    done
    printf '%-22s %10d %10d %+8d %10d %10d %+8d %10d %+8d\n' "${cases[$c]}" "${per[0]}" \
      "${per[1]}" $((per[0] - per[1])) "${per[2]}" "${per[3]}" $((per[2] - per[3])) "${per[4]}" \
      $((per[4] - per[1]))
  done
  exit 0
fi
"$out/wrapper_bench"
echo
find_tf2
"${tf2_cxx[@]}" $crate/bench/tf2_buffer_bench.cpp -o "$out/tf2_buffer_bench" \
  "$rel/libtf_shm_c_testkit.so" "${tf2_link[@]}"
"$out/tf2_buffer_bench"
