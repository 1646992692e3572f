#!/usr/bin/env bash
# The bridge before and after, in one run (issue 33), in a loopback-only network namespace
# (root; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST too, so no DDS traffic leaves the machine):
#
#  1. CPU per message at the fan-out workload (examples/fanout_publisher.rs: 50 dynamic frames
#     in one TFMessage every 10 ms, 4 statics): both bridges run at the same time on the same
#     publisher (each with its own runtime dir and arena), so both see the same machine load;
#     CPU time is the sum over the bridge's threads of /proc/PID/task/*/schedstat (ns on CPU)
#     over a window of W s = W x 100 messages, repeated R times.
#  2. Fresh data after a restart: tests/ros/tf_faults_publisher.py live 100 (/tf at 100 Hz, one
#     latched static); old and new, K times each, in turn: SIGKILL the bridge, start the same
#     binary at once, and time kill -> a fresh consumer (crates/tf_shm/examples/restart_probe.rs
#     --receipt-after) sees a /tf stamp newer than the kill. The new bridge's start-up timeline
#     (its "start-up:" log line) splits that time into phases.
#
#   scripts/bridge_bench.sh [--old BIN] [--new BIN] [--window S] [--reps R] [--restarts K]
#                           [--old-profile XML] [--new-profile XML]
#     defaults: target/old/tf_shm_bridge, target/release/tf_shm_bridge, 20, 5, 10, none, none
#   --reps 0 measures restarts only. --old-profile/--new-profile: a Fast DDS XML profile for that
#   arm's bridge processes only (FASTRTPS_DEFAULT_PROFILES_FILE in the bridge's environment; the
#   publisher and every other participant keep Fast DDS's defaults); `@ID@` in it becomes a DDS
#   participant id that cycles through 20..27 from one start to the next, so a restarted
#   bridge never takes its SIGKILLed predecessor's id (and with it its ports), e.g.
#   scripts/bridge_restart_profile.xml.
#
# The old binary: the bridge of commit cfcc03c, e.g.
#   git worktree add /tmp/bridge-old cfcc03c && (cd /tmp/bridge-old &&
#     eval "$(scripts/ros-env.sh env)" && cargo build --release -p tf_shm_bridge --bins) &&
#   mkdir -p target/old && cp /tmp/bridge-old/target/release/tf_shm_bridge target/old/
# Stdout: one JSON line per measurement; stderr: progress, then a Markdown summary.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${CARGO_TARGET_DIR:-$root/target}/release
old=$root/target/old/tf_shm_bridge new=$bin/tf_shm_bridge window=20 reps=5 restarts=10 inner=0
old_profile='' new_profile=''
while (($#)); do
  case $1 in
    --in-netns) inner=1; shift ;;
    --old) old=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --restarts) restarts=$2; shift 2 ;;
    --old-profile) old_profile=$(realpath "$2"); shift 2 ;;
    --new-profile) new_profile=$(realpath "$2"); shift 2 ;;
    *) echo "usage: $0 [--old BIN] [--new BIN] [--window S] [--reps R] [--restarts K]" >&2; exit 2 ;;
  esac
done
args=(--old "$old" --new "$new" --window "$window" --reps "$reps" --restarts "$restarts")
[[ -n $old_profile ]] && args+=(--old-profile "$old_profile")
[[ -n $new_profile ]] && args+=(--new-profile "$new_profile")

if ((!inner)); then
  [[ $EUID == 0 ]] || { echo "bridge_bench.sh: needs root (loopback-only network namespace)" >&2; exit 1; }
  [[ -x $old ]] || { echo "bridge_bench.sh: no old bridge at $old (see the header)" >&2; exit 1; }
  eval "$(bash "$root/scripts/ros-env.sh" env)"
  (cd "$root" && cargo build -q --release -p tf_shm_bridge --bins --example fanout_publisher &&
    cargo build -q --release -p tf_shm --example restart_probe) >&2
  results=$(mktemp)
  trap 'rm -f "$results"' EXIT
  unshare -n "$0" --in-netns "${args[@]}" | tee "$results"
  python3 "$root/scripts/bridge_bench_table.py" <"$results" >&2
  exit
fi

ip link set lo up
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
logs=$(mktemp -d)
pids=()
declare -A cur=()
cleanup() {
  for p in "${pids[@]}" "${cur[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$logs"
}
trap cleanup EXIT

# ns on CPU of every thread of a process.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {print s + 0}'; }

# 1. CPU per message, both bridges at once.
"$bin/examples/fanout_publisher" & pids+=($!)
for rep in $(seq "$reps"); do
  mkdir -p "$logs/old" "$logs/new"
  TF_SHM_RUNTIME_DIR=$logs/old "$old" --log-level warn 2>"$logs/old.log" & po=$!
  TF_SHM_RUNTIME_DIR=$logs/new "$new" --log-level warn 2>"$logs/new.log" & pn=$!
  pids+=($po $pn)
  sleep 5
  o0=$(cpu_ns $po) n0=$(cpu_ns $pn) w0=$(date +%s%N)
  sleep "$window"
  o1=$(cpu_ns $po) n1=$(cpu_ns $pn) w1=$(date +%s%N)
  kill $po $pn; wait $po $pn 2>/dev/null || true
  msgs=$(((w1 - w0) / 10000000))
  for which in old new; do
    if [[ $which == old ]]; then d=$((o1 - o0)); else d=$((n1 - n0)); fi
    echo "{\"kind\": \"cpu\", \"bridge\": \"$which\", \"rep\": $rep, \"messages\": $msgs, \"cpu_ns\": $d, \"wall_ns\": $((w1 - w0))}"
  done
  echo "cpu rep $rep of $reps done" >&2
done
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
pids=()

# 2. Fresh data after a restart, old and new in turn.
arms=(old new)
declare -A starts=()
start_bridge() { # arm log
  local b=$new profile=$new_profile
  [[ $1 == old ]] && b=$old profile=$old_profile
  local env=()
  if [[ -n $profile ]]; then
    local n=${starts[$1]:-0}
    starts[$1]=$((n + 1))
    sed "s/@ID@/$((20 + n % 8))/" "$profile" >"$logs/profile_$1.$n.xml"
    env=(FASTRTPS_DEFAULT_PROFILES_FILE="$logs/profile_$1.$n.xml")
  fi
  env "${env[@]}" TF_SHM_RUNTIME_DIR="$logs/rs_$1" "$b" 2>"$2" &
  cur[$1]=$!
}
python3 "$root/tests/ros/tf_faults_publisher.py" live 100 >"$logs/pub.log" 2>&1 & pids+=($!)
for arm in "${arms[@]}"; do
  mkdir -p "$logs/rs_$arm"
  start_bridge "$arm" "$logs/rs_$arm.0.log"
done
sleep 8
probe=$bin/examples/restart_probe
for k in $(seq "$restarts"); do
  for arm in "${arms[@]}"; do
    kill -9 "${cur[$arm]}"; wait "${cur[$arm]}" 2>/dev/null || true
    killed=$(date +%s%N)
    start_bridge "$arm" "$logs/rs_$arm.$k.log"
    receipt=$(TF_SHM_RUNTIME_DIR=$logs/rs_$arm timeout 30 "$probe" --receipt-after "$killed" |
      tail -1)
    # Let the new bridge finish its start-up (and its timeline line) before the next kill.
    sleep 3
    timeline=$(grep -o 'start-up: .*' "$logs/rs_$arm.$k.log" | head -1 || true)
    python3 -c '
import json, sys
killed, receipt, timeline, arm, k = sys.argv[1:]
r = json.loads(receipt)["receipt_unix_ns"] if receipt.startswith("{") else None
print(json.dumps({"kind": "restart", "bridge": arm, "k": int(k), "killed_unix_ns": int(killed),
                  "fresh_ms": (r - int(killed)) / 1e6 if r else None, "timeline": timeline}))
' "$killed" "$receipt" "$timeline" "$arm" "$k"
  done
  echo "restart $k of $restarts done" >&2
done
