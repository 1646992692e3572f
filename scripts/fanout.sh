#!/usr/bin/env bash
# Fan-out benchmark: N consumer processes each needing TF for a 50-frame tree at
# 100 Hz, two ways, in a loopback-only network namespace (root; ROS_AUTOMATIC_DISCOVERY_RANGE=
# LOCALHOST too, so no DDS traffic leaves the machine):
#
#   A  "per-process listeners" (what tf2_ros does): N examples/fanout_listener.rs, each an r2r node
#      subscribing /tf and /tf_static into its own private buffer;
#   B  one tf_shm_bridge + N examples/fanout_consumer.rs reading the shared arena (no ROS).
# With --arms "PA PB", the same for Python consumers (crates/tf_shm_py/bench/):
#   PA N rclpy nodes, each with ROS 2 Jazzy's tf2_ros.Buffer + TransformListener and
#      Buffer.lookup_transform (the same program as arm PR below);
#   PB one tf_shm_bridge + N Python processes using tf_shm.Buffer.lookup_transform (the tf_shm
#      package on PYTHONPATH, e.g. target/py-site as scripts/bench.sh installs it).
# With --arms "PR PH", unmodified tf2_ros nodes (crates/tf_shm_py/bench/fanout_tf2_ros.py:
# tf2_ros.Buffer + TransformListener, Buffer.lookup_transform), plain and opted in:
#   PR N of them as they are (each subscribes /tf and /tf_static);
#   PH one tf_shm_bridge + N of them with TF_SHM_TF2_ROS=1, run by $TF_SHM_PYTHON: a Python in
#      whose environment the tf_shm wheel is pip-installed (its .pth hook; README "Python nodes
#      without code changes").
# With --arms "CL CT", C++ consumers (crates/tf_shm_c/bench/fanout_consumer.cpp, built by
# crates/tf_shm_c/bench/run.sh --fanout against ROS 2 Jazzy's libtf2):
#   CL one tf_shm_bridge + N C++ processes, each a tf2::BufferCore filled by
#      tf_shm::TransformListener (tf2's own buffer and lookups, the arena instead of DDS);
#   CT one tf_shm_bridge + N C++ processes using tf_shm::Tf2Buffer's lookups (no private buffer).
#
# Both: examples/fanout_publisher.rs (an r2r node, as a C++ robot_state_publisher would be: 50
# dynamic frames in one TFMessage per 10 ms tick, 4 statics) and every consumer looking up the
# same 8 frame pairs at time 0 at 100 Hz.
# After a warm-up, total CPU time (the scheduler's exact runtime of every thread,
# /proc/<pid>/task/*/schedstat, window start to end) and total PSS (/proc/<pid>/smaps_rollup at
# window end) of every process of the arm, publisher included. The JSON also gives utime+stime
# (/proc/<pid>/stat) as cpu_pct_ticks: with tick accounting (CONFIG_TICK_CPU_ACCOUNTING) those
# charge each whole tick to the thread running at it, a sample that 100 Hz processes woken
# together by one message skew (the bridge read 2.0 % there and 1.3 % exactly, one run).
#
#   scripts/fanout.sh [--window S] [--warmup S] [--ns "1 2 4 8"] [--arms "A B"]
#                                       # defaults 30, 5, "1 2 4 8", "A B" ("PA PB": Python,
#                                       # "CL CT": C++)
#   scripts/fanout.sh --table < results.jsonl                      # Markdown table only
#
# Stdout: one JSON line per (N, arm); stderr: progress, then the Markdown table.
# Binaries come from ${CARGO_TARGET_DIR:-target}/release (the normal release profile).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${CARGO_TARGET_DIR:-$root/target}/release

table() {
  python3 -c "$(cat <<'PY'
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip().startswith("{")]
by = {(r["n"], r["arm"]): r for r in rows}
ns = sorted({r["n"] for r in rows})
mib = lambda k: f"{k / 1024:.1f}"
print("| N | arm | CPU, % of one core | publisher | bridge | consumers | PSS, MiB | publisher | bridge | consumers | lookups ok / failed after warm-up |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
labels = (("A", "A: N r2r listeners"), ("B", "B: bridge + N tf_shm"),
          ("PA", "PA: N rclpy tf2_ros listeners"), ("PB", "PB: bridge + N Python tf_shm"))
labels += (("PR", "PR: N tf2_ros nodes"), ("PH", "PH: bridge + N tf2_ros nodes, TF_SHM_TF2_ROS=1"))
labels += (("CL", "CL: bridge + N C++ tf2::BufferCore + tf_shm::TransformListener"),
           ("CT", "CT: bridge + N C++ tf_shm::Tf2Buffer"))
bridged = ("B", "PB", "PH", "CL", "CT")
for n in ns:
    for arm, label in labels:
        r = by.get((n, arm))
        if r is None:
            continue
        c, p = r["cpu_pct"], r["pss_kib_by_role"]
        bridge_c = f"{c['bridge']:.1f}" if arm in bridged else "—"
        bridge_p = mib(p["bridge"]) if arm in bridged else "—"
        print(f"| {n} | {label} | **{c['total']:.1f}** | {c['publisher']:.1f} | {bridge_c} | "
              f"{c['consumers']:.1f} | **{mib(r['pss_kib'])}** | {mib(p['publisher'])} | {bridge_p} | "
              f"{mib(p['consumers'])} | {r['lookups_ok']} / {r['lookups_err']} |")
cuts = [f"N = {r['n']} arm {r['arm']}: {r['history_cut']} stored with a cut history, {r['refused']} refused"
        for r in rows if r.get("history_cut") or r.get("refused")]
if cuts:
    print()
    print("Private buffers of arm A short of room (ring pool exhausted): " + "; ".join(cuts) + ".")
lost = [f"N = {r['n']} arm {r['arm']}" for r in rows if r.get("processes_lost")]
if lost:
    print()
    print("**Processes died during the window** in: " + ", ".join(lost) + ".")
print()
print("| N | arms y/x | CPU y/x | PSS y/x | consumers only: CPU y/x | consumers only: PSS y/x |")
print("|---:|---|---:|---:|---:|---:|")
for n, (x, y) in ((n, xy) for xy in (("A", "B"), ("PA", "PB"), ("PR", "PH"), ("A", "CL"), ("A", "CT")) for n in ns):
    a, b = by.get((n, x)), by.get((n, y))
    if a and b:
        ca, cb = a["cpu_pct"], b["cpu_pct"]
        pa, pb = a["pss_kib_by_role"], b["pss_kib_by_role"]
        print(f"| {n} | {y}/{x} | {cb['total'] / ca['total']:.2f} | {b['pss_kib'] / a['pss_kib']:.2f} | "
              f"{cb['consumers'] / ca['consumers']:.3f} | {pb['consumers'] / pa['consumers']:.3f} |")
PY
)"
}

window=30 warmup=5 ns="1 2 4 8" arms="A B" inner=0
while (($#)); do
  case $1 in
    --in-netns) inner=1; shift ;;
    --window) window=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --ns) ns=$2; shift 2 ;;
    --arms) arms=$2; shift 2 ;;
    --table) table; exit ;;
    *) echo "usage: $0 [--window S] [--warmup S] [--ns \"1 2 4 8\"] [--arms \"A B\"] | --table < results.jsonl" >&2; exit 2 ;;
  esac
done

if ((!inner)); then
  [[ $EUID == 0 ]] || { echo "fanout.sh: needs root (loopback-only network namespace)" >&2; exit 1; }
  eval "$(bash "$root/scripts/ros-env.sh" env)"
  (cd "$root" && cargo build -q --release -p tf_shm_bridge --bin tf_shm_bridge \
    --example fanout_publisher --example fanout_listener --example fanout_consumer) >&2
  if [[ " $arms " == *" CL "* || " $arms " == *" CT "* ]]; then
    bash "$root/crates/tf_shm_c/bench/run.sh" --fanout >&2
  fi
  results=$(mktemp)
  trap 'rm -f "$results"' EXIT
  unshare -n "$0" --in-netns --window "$window" --warmup "$warmup" --ns "$ns" --arms "$arms" |
    tee "$results"
  table <"$results" >&2
  exit
fi

ip link set lo up
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
pairs=odom:link_50,odom:sensor_0,link_50:link_41,sensor_0:sensor_1,link_02:link_03,odom:link_25
pairs+=,link_33:sensor_2,sensor_3:link_49
hz=$(getconf CLK_TCK)
logs=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$logs" "${TF_SHM_RUNTIME_DIR:-/nonexistent-tf-shm}"
}
trap cleanup EXIT

# utime+stime ticks of one process (all its threads); fields after the ")" of the comm.
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
# ns on CPU of one process: the sum over its threads of the scheduler's exact runtime.
runtime_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup"; }

run() { # n arm
  local n=$1 arm=$2 role p i secs
  export TF_SHM_RUNTIME_DIR
  TF_SHM_RUNTIME_DIR=$(mktemp -d)
  secs=$(awk -v a="$warmup" -v b="$window" 'BEGIN {print a + b + 1.5}')
  local -A roles=()
  pids=()
  "$bin/examples/fanout_publisher" & pids+=($!); roles[$!]=publisher
  if [[ $arm == B || $arm == PB || $arm == PH || $arm == CL || $arm == CT ]]; then
    "$bin/tf_shm_bridge" --log-level warn 2>"$logs/bridge.log" & pids+=($!); roles[$!]=bridge
  fi
  local consumers=()
  for ((i = 0; i < n; i++)); do
    if [[ $arm == A ]]; then
      "$bin/examples/fanout_listener" --pairs "$pairs" --secs "$secs" --skip "$warmup" \
        --name "listener_$i" 2>"$logs/c$i.log" &
    elif [[ $arm == PA || $arm == PR || $arm == PH ]]; then
      local opt_in=(env -u TF_SHM_TF2_ROS python3)
      [[ $arm == PH ]] && opt_in=(env TF_SHM_TF2_ROS=1 "${TF_SHM_PYTHON:?arm PH needs TF_SHM_PYTHON}")
      "${opt_in[@]}" \
        "$root/crates/tf_shm_py/bench/fanout_tf2_ros.py" --pairs "$pairs" --secs "$secs" \
        --skip "$warmup" --name "tf2_ros_$i" --arm "$arm" 2>"$logs/c$i.log" &
    elif [[ $arm == CL || $arm == CT ]]; then
      "$bin/tf_shm_c_tests/fanout_consumer" --arm "$arm" --pairs "$pairs" --secs "$secs" \
        --skip "$warmup" 2>"$logs/c$i.log" &
    elif [[ $arm == PB ]]; then
      python3 "$root/crates/tf_shm_py/bench/fanout_consumer.py" --pairs "$pairs" --secs "$secs" \
        --skip "$warmup" 2>"$logs/c$i.log" &
    else
      "$bin/examples/fanout_consumer" --pairs "$pairs" --secs "$secs" --skip "$warmup" \
        2>"$logs/c$i.log" &
    fi
    pids+=($!); roles[$!]=consumers; consumers+=($!)
  done
  sleep "$warmup"
  local -A t0=() r0=()
  for p in "${pids[@]}"; do t0[$p]=$(ticks "$p"); r0[$p]=$(runtime_ns "$p"); done
  local w0 w1
  w0=$(date +%s.%N)
  sleep "$window"
  local -A cpu=([publisher]=0 [bridge]=0 [consumers]=0)
  local -A run_ns=([publisher]=0 [bridge]=0 [consumers]=0)
  local -A mem=([publisher]=0 [bridge]=0 [consumers]=0)
  local dead=0
  for p in "${pids[@]}"; do
    if [[ -r /proc/$p/stat ]] && [[ $(awk '{print $3}' "/proc/$p/stat") != Z ]]; then
      cpu[${roles[$p]}]=$((cpu[${roles[$p]}] + $(ticks "$p") - t0[$p]))
      run_ns[${roles[$p]}]=$((run_ns[${roles[$p]}] + $(runtime_ns "$p") - r0[$p]))
      mem[${roles[$p]}]=$((mem[${roles[$p]}] + $(pss "$p")))
    else
      dead=$((dead + 1))
    fi
  done
  w1=$(date +%s.%N)
  for p in "${consumers[@]}"; do wait "$p" || dead=$((dead + 1)); done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$TF_SHM_RUNTIME_DIR"
  python3 - "$n" "$arm" "$w0" "$w1" "$hz" "${cpu[publisher]}" "${cpu[bridge]}" \
    "${cpu[consumers]}" "${mem[publisher]}" "${mem[bridge]}" "${mem[consumers]}" "$dead" \
    "$logs" "${run_ns[publisher]}" "${run_ns[bridge]}" "${run_ns[consumers]}" <<'PY'
import glob, json, sys
n, arm, w0, w1, hz, tpub, tbri, tcon, mpub, mbri, mcon, dead, logs, pub, bri, con = sys.argv[1:]
secs, hz = float(w1) - float(w0), int(hz)
tpub, tbri, tcon, mpub, mbri, mcon = map(int, (tpub, tbri, tcon, mpub, mbri, mcon))
pub, bri, con = (int(x) / 1e9 for x in (pub, bri, con))
pct = lambda s: round(100.0 * s / secs, 2)
tick_pct = lambda t: round(100.0 * t / hz / secs, 2)
tot = {"lookups_ok": 0, "lookups_err": 0, "refused": 0, "history_cut": 0}
first_err, reports, buffers = "", 0, set()
for f in sorted(glob.glob(logs + "/c*.log")):
    for line in open(f):
        if line.startswith("{"):
            d = json.loads(line)
            reports += 1
            for k in tot:
                tot[k] += d.get(k, 0)
            first_err = first_err or d.get("first_err", "")
            buffers.add(d.get("buffer", ""))
print(json.dumps({"n": int(n), "arm": arm, "window_s": round(secs, 2),
                  "cpu_s": round(pub + bri + con, 3),
                  "cpu_pct": {"total": pct(pub + bri + con), "publisher": pct(pub),
                              "bridge": pct(bri), "consumers": pct(con)},
                  "cpu_pct_ticks": {"total": tick_pct(tpub + tbri + tcon),
                                    "publisher": tick_pct(tpub), "bridge": tick_pct(tbri),
                                    "consumers": tick_pct(tcon)},
                  "pss_kib": mpub + mbri + mcon,
                  "pss_kib_by_role": {"publisher": mpub, "bridge": mbri, "consumers": mcon},
                  **tot, "first_err": first_err, "consumer_reports": reports,
                  "consumer_buffers": sorted(b for b in buffers if b),
                  "processes_lost": int(dead)}), flush=True)
PY
  rm -f "$logs"/c*.log
}

for n in $ns; do
  for arm in $arms; do
    echo "fanout: N=$n arm $arm (${warmup} s warm-up, ${window} s window) …" >&2
    run "$n" "$arm"
  done
done
