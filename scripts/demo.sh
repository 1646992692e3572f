#!/usr/bin/env bash
# See tf_shm work: tf_shm_bridge serving a PR2 published over ROS 2, read by `tf_shm` (no ROS).
#
#   scripts/demo.sh [--duration SEC]     # Ctrl-C stops everything; --duration for non-interactive runs
#
# Sets up the ROS 2 environment (scripts/ros-env.sh setup, a no-op once done), builds the release
# binaries, then, in a loopback-only network namespace (needs root; DDS never leaves the machine)
# with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, runs the bridge, scripts/pr2_publisher.py and a
# live `tf_shm echo map r_gripper_tool_frame`, after printing `tf_shm tree` once.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${CARGO_TARGET_DIR:-$root/target}/release
duration=
[[ ${1:-} == --in-netns ]] && { inner=1; shift; } || inner=0
while (($#)); do
  case $1 in
    --duration) duration=$2; shift 2 ;;
    *) echo "usage: $0 [--duration SEC]" >&2; exit 2 ;;
  esac
done

if ((!inner)); then
  [[ $EUID == 0 ]] || { echo "demo.sh: needs root for the loopback-only network namespace" >&2; exit 1; }
  "$root/scripts/ros-env.sh" setup
  eval "$("$root/scripts/ros-env.sh" env)"
  echo "demo: building (release) …" >&2
  (cd "$root" && cargo build -q --release -p tf_shm_bridge -p tf_shm_cli)
  exec unshare -n "$0" --in-netns ${duration:+--duration "$duration"}
fi

ip link set lo up
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST TF_SHM_RUNTIME_DIR NO_COLOR=${NO_COLOR:-}
work=$(mktemp -d /tmp/tf_shm-demo.XXXXXX)
TF_SHM_RUNTIME_DIR=$work/rt
mkdir -m 700 "$TF_SHM_RUNTIME_DIR"
pids=()
cleanup() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "demo: stopped; logs in $work" >&2
}
trap cleanup EXIT
trap 'exit 0' INT TERM

echo "demo: bridge, PR2 publisher (logs in $work); TF_SHM_RUNTIME_DIR=$TF_SHM_RUNTIME_DIR" >&2
"$bin/tf_shm_bridge" --ros-args --params-file "$root/config/tf_shm_bridge.yaml" >"$work/bridge.log" 2>&1 &
pids+=($!)
python3 "$root/scripts/pr2_publisher.py" >"$work/publisher.log" 2>&1 &
pids+=($!)

# DDS matching takes 0.1–3 s: wait (bounded) until the gripper's chain resolves.
for _ in $(seq 150); do
  "$bin/tf_shm" lookup map r_gripper_tool_frame >/dev/null 2>&1 && break
  sleep 0.2
done
"$bin/tf_shm" tree
echo
if [[ -n $duration ]]; then
  "$bin/tf_shm" echo map r_gripper_tool_frame --count "$duration"
else
  "$bin/tf_shm" echo map r_gripper_tool_frame
fi
