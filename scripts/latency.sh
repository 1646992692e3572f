#!/usr/bin/env bash
# DDS -> visible-to-a-reader latency of tf_shm_bridge, and its ingest rate without DDS.
#
#   scripts/latency.sh [--rate HZ] [--count N]    # default 500 Hz, 3000 samples (~6 s)
#
# In a loopback-only network namespace (root; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST too):
# tf_shm_bridge on a fresh runtime dir, an rclpy publisher sending lat_parent -> lat_child on /tf
# stamped with its wall clock just before each publish, and
# crates/tf_shm/examples/latency_probe.rs polling the arena (every 20 us) for new stamps.
# Prints two JSON lines on stdout: {"ingest_transforms", "per_s_wall", ...} (ArenaWriter alone,
# PR2-shaped stream) and {"samples", "p50_us", "p99_us", "p999_us", ...} (publish -> visible:
# includes rclpy serialisation and DDS transit, so it bounds DDS-receive -> visible from above).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${CARGO_TARGET_DIR:-$root/target}/release
rate=500 count=3000
[[ ${1:-} == --in-netns ]] && { inner=1; shift; } || inner=0
while (($#)); do
  case $1 in
    --rate) rate=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    *) echo "usage: $0 [--rate HZ] [--count N]" >&2; exit 2 ;;
  esac
done

if ((!inner)); then
  [[ $EUID == 0 ]] || { echo "latency.sh: needs root (loopback-only network namespace)" >&2; exit 1; }
  eval "$(bash "$root/scripts/ros-env.sh" env)"
  (cd "$root" && cargo build -q --release -p tf_shm_bridge &&
    cargo build -q --release -p tf_shm --example latency_probe) >&2
  "$bin/examples/latency_probe" ingest
  exec unshare -n "$0" --in-netns --rate "$rate" --count "$count"
fi

ip link set lo up
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export TF_SHM_RUNTIME_DIR
TF_SHM_RUNTIME_DIR=$(mktemp -d)
pids=()
names=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # SIGTERM first; one that has not exited 10 s later is named and killed, so a hang in a
  # shutdown is reported instead of hanging the caller.
  for ((i = 0; i < 100; i++)); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if kill -0 "${pids[$i]}" 2>/dev/null; then
      echo "latency.sh: ${names[$i]} did not exit 10 s after SIGTERM; killed" >&2
      kill -KILL "${pids[$i]}" 2>/dev/null || true
    fi
  done
  wait 2>/dev/null || true
  rm -rf "$TF_SHM_RUNTIME_DIR"
}
trap cleanup EXIT

"$bin/tf_shm_bridge" --log-level warn >&2 & pids+=($!) names+=(tf_shm_bridge)
python3 - "$rate" >&2 <<'PY' & pids+=($!) names+=("the rclpy publisher")
import sys, time
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from geometry_msgs.msg import TransformStamped
from tf2_msgs.msg import TFMessage

rclpy.init()
node = rclpy.create_node("latency_pub")
pub = node.create_publisher(TFMessage, "/tf", QoSProfile(
    depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE))
m = TransformStamped()
m.header.frame_id, m.child_frame_id = "lat_parent", "lat_child"
m.transform.rotation.w = 1.0
period, due = 1.0 / float(sys.argv[1]), time.monotonic()
try:
    while rclpy.ok():  # rclpy's own SIGTERM/SIGINT handler ends the context
        m.header.stamp.sec, m.header.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
        pub.publish(TFMessage(transforms=[m]))
        due += period
        time.sleep(max(0.0, due - time.monotonic()))
except Exception:  # publish racing the shutdown
    pass
PY
"$bin/examples/latency_probe" latency --count "$count" \
  --timeout $((count / rate + 40))
