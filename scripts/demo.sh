#!/usr/bin/env bash
# See tf_shm work: tf_shm_bridge serving a PR2 published over ROS 2, read by `tf_shm` (no ROS).
#
#   scripts/demo.sh [--duration SEC]     # Ctrl-C (or SIGINT/SIGTERM to this script) stops everything;
#                                        # --duration for non-interactive runs
#
# Sets up the ROS 2 environment (scripts/ros-env.sh setup, a no-op once done), builds the release
# binaries, then, in a loopback-only network namespace (needs root; DDS never leaves the machine)
# with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, runs the bridge, scripts/pr2_publisher.py and a
# live `tf_shm echo map r_gripper_tool_frame`, after printing `tf_shm tree` once.
#
# The bridge serves where a plain `tf_shm` looks (tf_shm::open()'s runtime dir: $TF_SHM_RUNTIME_DIR,
# else $XDG_RUNTIME_DIR/tf_shm, else /run/tf_shm), so `target/release/tf_shm tree` in a second
# terminal reads it. When a bridge already serves there, the demo serves from a private directory
# instead and prints the `export TF_SHM_RUNTIME_DIR=…` line to paste into that terminal.
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
  echo "demo: ROS 2 environment (scripts/ros-env.sh setup; the first time takes a few minutes) …" >&2
  "$root/scripts/ros-env.sh" setup >&2
  eval "$("$root/scripts/ros-env.sh" env)"
  # Not -q: the first build takes several minutes (7-10 on 2 cores), and cargo's progress
  # shows it is working.
  echo "demo: building tf_shm_bridge and tf_shm (cargo build --release; first time: several minutes) …" >&2
  (cd "$root" && cargo build --release -p tf_shm_bridge -p tf_shm_cli)
  exec unshare -n "$0" --in-netns ${duration:+--duration "$duration"}
fi

ip link set lo up
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST NO_COLOR=${NO_COLOR:-}
work=$(mktemp -d /tmp/tf_shm-demo.XXXXXX)
paste=
if "$bin/tf_shm" tree --json >/dev/null 2>&1; then
  # Another bridge serves the default arena: keep out of its way.
  export TF_SHM_RUNTIME_DIR=$work/rt
  mkdir -m 700 "$TF_SHM_RUNTIME_DIR"
  paste="export TF_SHM_RUNTIME_DIR=$TF_SHM_RUNTIME_DIR; "
  echo "demo: a bridge already serves the default arena; this demo serves from $TF_SHM_RUNTIME_DIR" >&2
fi

pids=()
# Every child gets SIGTERM (the bridge then unlinks its socket and exits 0), up to 5 s to end,
# then SIGKILL: the demo never leaves a process behind, nor waits forever on one.
stop_all() {
  trap - EXIT INT TERM
  local p alive
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 50); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "demo: stopped; logs in $work" >&2
}
trap stop_all EXIT
trap 'exit 0' INT TERM

echo "demo: bridge, PR2 publisher (logs in $work)" >&2
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
echo "demo: in another terminal: ${paste}$bin/tf_shm tree   (or echo, monitor, doctor; Ctrl-C here stops the demo)" >&2
# In the background and waited for, so that a signal to this script alone ends it at once (bash
# runs a trap only when its foreground command returns).
if [[ -n $duration ]]; then
  "$bin/tf_shm" echo map r_gripper_tool_frame --count "$duration" &
else
  "$bin/tf_shm" echo map r_gripper_tool_frame &
fi
pids+=($!)
wait "$!"
