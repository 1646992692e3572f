#!/usr/bin/env bash
# Replay throughput of `tf_shm replay --as-fast-as-possible` and its memory on bags of
# increasing size (streaming: peak RSS must not grow with the bag), plus the reference Python
# reader's speed on the same file for scale. Prints a markdown section (scripts/bench.sh puts
# it into docs/benchmarks.md). Nothing here asserts on timings.
#
#   scripts/bag_bench.sh [ROUNDS]        # default 3 rounds per bag; ~1-2 min
#
# Bags: crates/tf_shm_bag/examples/make_bench_bag.rs (50 dynamic frames in one TFMessage per
# 10 ms tick, 4 statics; zstd chunks), 1 M and 5 M dynamic transforms. Builds in
# $CARGO_TARGET_DIR (default target/).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
tdir=${CARGO_TARGET_DIR:-target}
work=$(mktemp -d)
export TF_SHM_RUNTIME_DIR="$work/run"
trap 'rm -rf "$work"' EXIT

cargo build --release -q -p tf_shm_cli
cargo build --release -q -p tf_shm_bag --example make_bench_bag
for n in 1000000 5000000; do
    "$tdir/release/examples/make_bench_bag" "$work/bag_$n.mcap" "$n" >/dev/null
done

# One replay: its --json summary plus the child's CPU time and peak RSS (getrusage).
measure() {
    python3 - "$tdir/release/tf_shm" "$1" <<'PY'
import json, resource, subprocess, sys, time
t0 = time.monotonic()
out = subprocess.run([sys.argv[1], "--json", "replay", "--as-fast-as-possible", "-q", sys.argv[2]],
                     check=True, capture_output=True, text=True).stdout
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
# JSON lines: the last is the end_of_bag event with the summary.
d = json.loads(out.splitlines()[-1])
d.update(wall_s=wall, cpu_s=ru.ru_utime + ru.ru_stime, maxrss_kb=ru.ru_maxrss)
print(json.dumps(d))
PY
}

for n in 1000000 5000000; do
    for ((r = 0; r < rounds; r++)); do
        measure "$work/bag_$n.mcap" | sed "s/^{/{\"n\": $n, \"bytes\": $(stat -c %s "$work/bag_$n.mcap"), /"
    done
done >"$work/runs.jsonl"

# The reference reader (PyPI mcap-ros2-support) decoding the 1 M bag, when its venv exists.
py=${TF_SHM_PY_TOOLS:-$HOME/.cache/tf_shm/py-tools}/bin/python3
ref=""
if [ -x "$py" ]; then
    ref=$(env -u PYTHONPATH "$py" - "$work/bag_1000000.mcap" <<'PY'
import sys, time
from mcap_ros2.reader import read_ros2_messages
t0 = time.process_time()
n = sum(len(m.ros_msg.transforms) for m in read_ros2_messages(sys.argv[1], log_time_order=False))
print(n, time.process_time() - t0)
PY
)
fi

python3 - "$work/runs.jsonl" "$ref" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
ref, load = sys.argv[2], sys.argv[3]
print("| bag (dynamic transforms) | file | check pass | replay pass | replay transforms/s (wall) | end to end transforms/s (CPU) | peak RSS |")
print("|---|---:|---:|---:|---:|---:|---:|")
for n in sorted({r["n"] for r in runs}):
    rs = [r for r in runs if r["n"] == n]
    med = lambda k: statistics.median(r[k] for r in rs)
    print(f"| {n/1e6:.0f} M | {rs[0]['bytes']/2**20:.1f} MiB | {med('scan_s'):.2f} s | {med('elapsed_s'):.2f} s | "
          f"{med('transforms_per_s')/1e6:.2f} M | {n/med('cpu_s')/1e6:.2f} M | {max(r['maxrss_kb'] for r in rs)/1024:.0f} MiB |")
one = [r for r in runs if r["n"] == 1000000]
cpu = statistics.median(r["cpu_s"] for r in one)
print()
print(f"Medians of {len(one)} runs per bag; load average at the end: {load} (the machine is shared, so")
print("wall-clock rates vary with other work; the CPU column is utime+stime of the replay process).")
print("*check pass*: the first read of the whole file (container, CRCs, every TF message decoded)")
print("before anything is served; *replay pass*: the second read, writing every transform through")
print("`set_transform` into the shared arena (64 MiB, 10 s cache time, pruning). Goal: ≥ 1 M")
print(f"transforms/s. Ratio to the goal, replay pass: {statistics.median(r['transforms_per_s'] for r in one)/1e6:.2f}; "
      f"end to end per CPU second: {1000000/cpu/1e6:.2f}.")
if ref:
    n, secs = ref.split()
    py_rate = int(n) / float(secs)
    print(f"Reference: PyPI `mcap-ros2-support` decodes the 1 M bag at {py_rate/1e6:.3f} M transforms/s")
    print(f"(CPU); `tf_shm replay` end to end (both passes, arena writes included) is {(1000000/cpu)/py_rate:.0f}× that.")
PY
