#!/usr/bin/env bash
# Runs every tf_shm benchmark and writes docs/benchmarks.md.
#
#   scripts/bench.sh            # everything, ~10 min on the 2-core dev machine
#   ROUNDS=9 scripts/bench.sh   # more alternating rounds in the comparison
#   FANOUT_WINDOW=20 scripts/bench.sh   # shorter fan-out windows (default 30 s; ~5 min in all)
#
# Steps: install what is missing (Debian: libtf2-dev for the tf2 arm, a C++ compiler,
# python3 for the report), build in release with thin LTO and one codegen unit (the setting
# tf_tree's docs ask for, applied to every arm alike) in a separate target dir so the
# workspace's normal release build is not invalidated, then
#   1. the zero-allocation test (crates/tf_shm/tests/alloc_free.rs),
#   2. the criterion benches of tf_shm (crates/tf_shm/benches/lookup.rs),
#   3. the side-by-side comparison (crates/tf_shm_bench: tf_shm, tf2 BufferCore, tf_tree; and
#      the C++ rows: tf_shm.hpp over the C ABI of crates/tf_shm_c against tf2 BufferCore),
#   4. bridge ingest and DDS -> visible latency (scripts/latency.sh),
#   5. fan-out: per-process r2r listeners vs tf_shm_bridge + tf_shm consumers (scripts/fanout.sh),
#   6. Python: per-lookup cost of tf_shm.Buffer vs tf2_py (crates/tf_shm_py/bench/lookup.py) and
#      the fan-out with Python consumers (scripts/fanout.sh --arms "PA PB"),
#   7. bag replay throughput and memory (scripts/bag_bench.sh),
# and assemble the report. Nothing here asserts on timings. Steps 4 and 5 run ROS 2 (the
# environment of scripts/ros-env.sh) in a loopback-only network namespace, so they need root;
# without root they are skipped and the report says so. They build the bridge with the
# workspace's normal release profile in target/ (not target/bench: r2r is not rebuilt with LTO).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
t_start=$(date +%s)
out=docs/benchmarks.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- dependencies ----
need=()
[ -f /usr/include/tf2/buffer_core.h ] || need+=(libtf2-dev)
command -v c++ >/dev/null || need+=(g++)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    echo "installing: ${need[*]}" >&2
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

# ---- build ----
export CARGO_TARGET_DIR="$root/target/bench"
export CARGO_PROFILE_RELEASE_LTO=thin
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
export CARGO_PROFILE_BENCH_LTO=thin
export CARGO_PROFILE_BENCH_CODEGEN_UNITS=1
echo "building (release, thin LTO) …" >&2
cargo build --release -p tf_shm_bench
cargo test --release -p tf_shm --test alloc_free --no-run
cargo bench -p tf_shm --bench lookup --no-run
cargo build --release -p tf_shm --example wait_latency

load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- 1. allocations ----
echo "alloc_free test …" >&2
if cargo test --release -p tf_shm --test alloc_free -- --test-threads=1 >"$work/alloc.txt" 2>&1; then
    alloc_result="passed"
else
    alloc_result="**FAILED**"
fi

# ---- 2. criterion ----
echo "criterion benches …" >&2
rm -rf "$CARGO_TARGET_DIR/criterion"
cargo bench -p tf_shm --bench lookup -- --noplot >"$work/criterion.txt" 2>&1
python3 - "$CARGO_TARGET_DIR/criterion" >"$work/criterion.md" <<'PY'
import json, os, sys, collections
root = sys.argv[1]
rows = collections.defaultdict(dict)   # (group, function) -> {param: ns}
for dirpath, _, files in os.walk(root):
    if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
        continue
    b = json.load(open(os.path.join(dirpath, "benchmark.json")))
    e = json.load(open(os.path.join(dirpath, "estimates.json")))
    rows[(b["group_id"], b["function_id"])][b["value_str"]] = e["median"]["point_estimate"]
def ns(v):
    return f"{v/1000:.1f} µs" if v >= 10000 else f"{v:.0f}"
look = {k: v for k, v in rows.items() if k[0].startswith("lookup/")}
print("| mapping | query | API | depth 1 | depth 3 | depth 8 | depth 15 |")
print("|---|---|---|---:|---:|---:|---:|")
order = {"in-process": 0, "other-process": 1, "interp": 0, "exact": 1, "time0": 2, "pair": 0, "names": 1}
for (g, f) in sorted(look, key=lambda k: (order.get(k[0].split("/")[1], 9), order.get(k[0].split("/")[2], 9), order.get(k[1], 9))):
    _, mapping, kind = g.split("/")
    d = look[(g, f)]
    print(f"| {mapping} | {kind} | {f} | " + " | ".join(ns(d[x]) if x in d else "—" for x in ["1", "3", "8", "15"]) + " |")
print()
print("| writer | frames | ns / set_transform | writes/s |")
print("|---|---:|---:|---:|")
for (g, f), d in sorted(rows.items()):
    if g != "writer":
        continue
    for p in sorted(d, key=int):
        print(f"| {f} | {p} | {d[p]:.0f} | {1e9/d[p]/1e6:.2f} M |")
PY

# ---- 3. comparison ----
echo "comparison (tf_shm / tf2 / tf_tree) …" >&2
cmp_args=(--rounds "${ROUNDS:-7}" --ms "${MS:-25}" --queries 1024 --thread-secs "${THREAD_SECS:-1}")
"$CARGO_TARGET_DIR/release/tf_shm_bench" "${cmp_args[@]}" >"$work/compare.md"

# ---- 3b. waits ----
echo "waits (wake latency, CPU while waiting) …" >&2
waits_load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"$CARGO_TARGET_DIR/release/examples/wait_latency" "${WAIT_SAMPLES:-3000}" >"$work/waits.md"
waits_load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- 4. and 5.: the ROS bridge (root: loopback-only network namespace) ----
fanout_window=${FANOUT_WINDOW:-30}
fanout_warmup=${FANOUT_WARMUP:-5}
ros_steps() {
    env -u CARGO_PROFILE_RELEASE_LTO -u CARGO_PROFILE_RELEASE_CODEGEN_UNITS \
        -u CARGO_PROFILE_BENCH_LTO -u CARGO_PROFILE_BENCH_CODEGEN_UNITS \
        CARGO_TARGET_DIR="$root/target" "$@"
}
latency_result=skipped fanout_result=skipped
if [ "$(id -u)" = 0 ]; then
    echo "bridge ingest and latency (scripts/latency.sh) …" >&2
    if ros_steps scripts/latency.sh >"$work/latency.jsonl" 2>"$work/latency.err"; then
        latency_result=ok
    else
        latency_result=failed
        tail -5 "$work/latency.err" >&2
    fi
    echo "fan-out (scripts/fanout.sh, 2 × 4 runs of ${fanout_warmup} + ${fanout_window} s) …" >&2
    fanout_load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    if ros_steps scripts/fanout.sh --window "$fanout_window" --warmup "$fanout_warmup" \
        >"$work/fanout.jsonl" 2>"$work/fanout.err"; then
        fanout_result=ok
    else
        fanout_result=failed
        tail -5 "$work/fanout.err" >&2
    fi
    fanout_load_after=$(cut -d' ' -f1-3 /proc/loadavg)
else
    echo "not root: skipping scripts/latency.sh and scripts/fanout.sh (network namespace)" >&2
fi

# ---- 6. Python ----
echo "Python: wheel, lookups (tf_shm.Buffer vs tf2_py), fan-out with Python consumers …" >&2
pylookup_result=failed pyfanout_result=skipped
if ros_steps scripts/py-wheel.sh >/dev/null; then
    if PYTHONPATH="$root/target/py-site" /usr/bin/python3 crates/tf_shm_py/bench/lookup.py \
            --env "Debian python3, ROS 1 messages" >"$work/pylookup.jsonl" &&
        (eval "$(scripts/ros-env.sh env)" &&
            PYTHONPATH="$root/target/py-site:$PYTHONPATH" python3 crates/tf_shm_py/bench/lookup.py \
                --no-tf2 --env "ROS 2 env, rosidl messages") >>"$work/pylookup.jsonl"; then
        pylookup_result=ok
    fi
    if [ "$(id -u)" = 0 ]; then
        if PYTHONPATH="$root/target/py-site" ros_steps scripts/fanout.sh --arms "PA PB" \
            --window "$fanout_window" --warmup "$fanout_warmup" \
            >"$work/pyfanout.jsonl" 2>"$work/pyfanout.err"; then
            pyfanout_result=ok
        else
            pyfanout_result=failed
            tail -5 "$work/pyfanout.err" >&2
        fi
    fi
fi

# ---- 7. bag replay ----
echo "bag replay (scripts/bag_bench.sh) …" >&2
if scripts/bag_bench.sh >"$work/bag.md"; then
    bag_result=ok
else
    bag_result=failed
fi

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
t_end=$(date +%s)

# ---- report ----
# Hand-written analysis between the notes markers survives re-runs.
notes=""
if [ -f "$out" ]; then
    notes=$(sed -n '/^<!-- notes:begin -->$/,/^<!-- notes:end -->$/p' "$out")
fi
if [ -z "$notes" ]; then
    notes=$'<!-- notes:begin -->\n(No hand-written analysis yet.)\n<!-- notes:end -->'
fi

model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cores=$(nproc)
{
    echo "# Benchmarks"
    echo
    echo "Generated by \`scripts/bench.sh\` — do not edit by hand except between the notes markers."
    echo
    echo "## Machine and run"
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| date | $(date -u '+%Y-%m-%d %H:%M UTC') |"
    echo "| CPU | $model, $cores cores ($(lscpu | sed -n 's/^Hypervisor vendor: *//p' | sed 's/^/virtualised: /;s/^virtualised: $/bare metal/')) |"
    echo "| kernel | $(uname -r) |"
    echo "| rustc | $(rustc --version) |"
    echo "| tf2 | libtf2-dev $(dpkg-query -W -f='${Version}' libtf2-dev 2>/dev/null || echo '?') (ROS 1 BufferCore), g++ $(c++ -dumpfullversion) -O2 shim |"
    echo "| tf_tree | 0.0.9 from crates.io, \`LerpSlerp\` on every edge |"
    echo "| build | release, \`lto = \"thin\"\`, \`codegen-units = 1\` (env overrides, all arms alike) |"
    echo "| load average | before: $load_before — after: $load_after (other work shares this machine; see notes) |"
    echo "| wall time | $((t_end - t_start)) s for the whole script |"
    echo
    echo "Commands (what \`scripts/bench.sh\` runs):"
    echo
    echo '```sh'
    echo "CARGO_TARGET_DIR=target/bench CARGO_PROFILE_RELEASE_LTO=thin CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \\"
    echo "  cargo test --release -p tf_shm --test alloc_free -- --test-threads=1"
    echo "cargo bench -p tf_shm --bench lookup -- --noplot        # same env"
    echo "target/bench/release/tf_shm_bench ${cmp_args[*]}"
    echo "scripts/latency.sh                                     # as root; builds in target/"
    echo "scripts/fanout.sh --window $fanout_window --warmup $fanout_warmup              # as root; builds in target/"
    echo "scripts/py-wheel.sh                                    # the tf_shm wheel -> target/py-site"
    echo "PYTHONPATH=target/py-site /usr/bin/python3 crates/tf_shm_py/bench/lookup.py"
    echo "PYTHONPATH=target/py-site:\$PYTHONPATH python3 crates/tf_shm_py/bench/lookup.py --no-tf2   # ROS env"
    echo "PYTHONPATH=target/py-site scripts/fanout.sh --arms \"PA PB\" --window $fanout_window --warmup $fanout_warmup"
    echo "scripts/bag_bench.sh                                   # same env as the first lines"
    echo '```'
    echo
    echo "## tf_shm alone (criterion)"
    echo
    echo "Chains \`c0 → … → cN\`, every link dynamic, 100 Hz over 10 s (1001 samples per link);"
    echo "\`T_c0_cN\` at 1024 cycled times: off-grid (*interp*), exact stamps, time 0. *pair* ="
    echo "\`lookup_pair\` (resolved ids), *names* = \`lookup_transform\`. *other-process*: the"
    echo "arenas are created and written by a second process; the bench maps them \`PROT_READ\`"
    echo "through \`/proc/<pid>/fd/<n>\` + \`Arena::attach\`. Median ns of **CPU time** per lookup"
    echo "(a thread-CPU-time criterion measurement: other processes' time slices are not counted)."
    echo
    cat "$work/criterion.md"
    echo
    echo "Allocations: \`crates/tf_shm/tests/alloc_free.rs\` (counting global allocator) asserts"
    echo "0 heap allocations over 2000 successful \`lookup_transform\` and \`lookup_pair\` calls per"
    echo "chain (depths 1/3/8/15, in-process and through a read-only mapping; interpolated, exact"
    echo "and time-0 queries; both directions; through a static link) and over 2000"
    echo "\`set_transform\` calls on existing dynamic and static frames: **$alloc_result**."
    echo
    echo "## Side by side: tf_shm, tf2, tf_tree"
    echo
    echo "Scenarios: chains of depth 1, 3, 8, 15 (all links dynamic) and a 200-frame random tree"
    echo "(a quarter of its links static, 64 frame pairs across branches); 100 Hz over 10 s per"
    echo "dynamic link, identical samples in every arm. Times are thread CPU time per lookup,"
    echo "so a measurement preempted by other processes is not charged their time slice."
    echo
    cat "$work/compare.md"
    echo
    echo "## Bridge ingest and DDS → visible latency"
    echo
    if [ "$latency_result" = ok ]; then
        echo "\`scripts/latency.sh\`: *ingest* is \`ArenaWriter::set_transform\` alone (no DDS) on an"
        echo "in-memory arena with the default configuration, fed a PR2-shaped stream (51 statics, 30"
        echo "joints per 10 ms tick, 2 base transforms every other tick) for 120 s of stamps, so the 10 s"
        echo "cache is pruning. *Latency*: an rclpy publisher stamps \`lat_parent → lat_child\` with its"
        echo "wall clock just before each publish at 500 Hz; \`latency_probe\` polls the arena every"
        echo "20 µs through \`tf_shm::open()\`. It includes rclpy serialisation and DDS transit, so it"
        echo "bounds DDS receive → visible from above."
        echo
        python3 - "$work/latency.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ing = next(r for r in rows if "ingest_transforms" in r)
lat = next(r for r in rows if "samples" in r)
print("| bridge write path (no DDS) | transforms | transforms/s (wall) | transforms/s (CPU) | ns/transform (CPU) |")
print("|---|---:|---:|---:|---:|")
print(f"| `ArenaWriter::set_transform` | {ing['ingest_transforms']} | {ing['per_s_wall']/1e6:.2f} M | "
      f"{ing['per_s_cpu']/1e6:.2f} M | {ing['ns_per_transform_cpu']:.0f} |")
print()
print("| publish → visible to a reader | samples | p50 | p90 | p99 | p99.9 | max |")
print("|---|---:|---:|---:|---:|---:|---:|")
print(f"| rclpy → DDS → tf_shm_bridge → arena → `lookup_pair` | {lat['samples']} | "
      + " | ".join(f"{lat[k]:.0f} µs" for k in ("p50_us", "p90_us", "p99_us", "p999_us", "max_us")) + " |")
PY
    else
        echo "**Not measured in this run** ($latency_result: \`scripts/latency.sh\` needs root for its"
        echo "loopback-only network namespace). No numbers are given, and none are estimated."
    fi
    echo
    echo "## Fan-out: N consumers of one TF tree"
    echo
    if [ "$fanout_result" = ok ]; then
        echo "\`scripts/fanout.sh\`: N consumer processes each need TF for a 50-frame tree at 100 Hz."
        echo "Source: \`examples/fanout_publisher.rs\` (an r2r node, as a C++ robot_state_publisher would be;"
        echo "the 50 dynamic transforms of a binary tree under \`odom\` in one TFMessage per 10 ms tick on /tf"
        echo "with tf2_ros's QoS, 4 statics once on /tf_static, transient-local). Every"
        echo "consumer looks up the same 8 pairs (leaf↔root, across branches, static↔static) at time 0"
        echo "at 100 Hz. **A** (\`examples/fanout_listener.rs\`, what tf2_ros listeners do): N r2r"
        echo "nodes, each subscribing /tf (keep-last 100, reliable, volatile) and /tf_static (keep-last"
        echo "100, reliable, transient-local) and writing every transform into its own private"
        echo "\`Arena::in_memory\` buffer (tf2's rules, 256 frames in 16 MiB, sized for this workload:"
        echo "a heap arena is resident in full); one thread. **B**: one \`tf_shm_bridge\` (defaults: 64"
        echo "MiB shared arena) and N \`examples/fanout_consumer.rs\` (no ROS, \`tf_shm::open()\`)."
        echo "All ROS processes in one loopback-only network namespace, Fast DDS, localhost discovery."
        echo "After a ${fanout_warmup} s warm-up, a ${fanout_window} s window: CPU = utime+stime of every process of the"
        echo "arm (\`/proc/<pid>/stat\`) from window start to end, in % of one core; PSS = sum of"
        echo "\`/proc/<pid>/smaps_rollup\` at window end. **The publisher is included in both arms.**"
        echo "Lookups are counted inside the window. Load average before the step: $fanout_load_before, after:"
        echo "$fanout_load_after (one run per cell: this is a shared machine)."
        echo
        scripts/fanout.sh --table <"$work/fanout.jsonl"
    else
        echo "**Not measured in this run** ($fanout_result: \`scripts/fanout.sh\` needs root for its"
        echo "loopback-only network namespace). No numbers are given, and none are estimated."
    fi
    echo
    echo "## Python: tf_shm.Buffer against tf2_ros's Python stack"
    echo
    if [ "$pylookup_result" = ok ]; then
        echo "\`crates/tf_shm_py/bench/lookup.py\`: a depth-3 chain of dynamic links (100 Hz over 10 s each,"
        echo "identical samples in every arm); \`T_c0_c3\` at 1024 cycled off-grid times (*interpolated*)"
        echo "and at time 0. Median ns of thread CPU time per call (alternating rounds), including the"
        echo "Python loop (~40–60 ns). *tf2_py*: \`tf2_py.BufferCore.lookup_transform_core\` (Debian's"
        echo "python3-tf2, the C++ BufferCore under tf2_ros's Python Buffer), returning its"
        echo "TransformStamped; *message*: \`tf_shm.Buffer.lookup_transform\` returning a TransformStamped;"
        echo "*tuple*: \`Buffer.lookup_transform_tuple\`. Every answer was checked against tf2_py's first"
        echo "(1e-9, rotations up to sign). tf2_py exists here only for Debian's Python (ROS 1 genpy"
        echo "messages); in the ROS 2 environment (rosidl messages) the ratio is against that same tf2_py."
        echo
        python3 - "$work/pylookup.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ref = {r["query"]: r["ns"] for r in rows if r["arm"] == "tf2_py"}
print("| Python | arm | returns | interpolated, ns | × faster than tf2_py | time 0, ns | × faster than tf2_py |")
print("|---|---|---|---:|---:|---:|---:|")
for env in dict.fromkeys(r["env"] for r in rows):
    for arm in ("tf2_py", "message", "tuple"):
        by = {r["query"]: r for r in rows if r["env"] == env and r["arm"] == arm}
        if not by:
            continue
        cells = []
        for q in ("interpolated", "time 0"):
            cells += [f"{by[q]['ns']:.0f}", f"**{ref[q] / by[q]['ns']:.1f}**" if arm != "tf2_py" else "1"]
        print(f"| {env} | {arm} | {by['interpolated']['result']} | " + " | ".join(cells) + " |")
PY
    else
        echo "**Not measured in this run** (the wheel build or the lookup script failed)."
    fi
    echo
    if [ "$pyfanout_result" = ok ]; then
        echo "Fan-out with Python consumers (\`scripts/fanout.sh --arms \"PA PB\"\`): same source, tree, pairs,"
        echo "rate, warm-up and window as the fan-out above. **PA**: N rclpy nodes, each with ROS 2 Jazzy's"
        echo "\`tf2_ros.Buffer\` and \`tf2_ros.TransformListener\` (its /tf and /tf_static subscriptions and"
        echo "callback into tf2_py's C++ BufferCore), lookups with \`Buffer.lookup_transform\`."
        echo "**PB**: one \`tf_shm_bridge\` and N Python processes calling"
        echo "\`tf_shm.Buffer.lookup_transform\` (rosidl TransformStamped results)."
        echo
        scripts/fanout.sh --table <"$work/pyfanout.jsonl"
    else
        echo "Fan-out with Python consumers: **not measured in this run** ($pyfanout_result)."
    fi
    echo
    echo "## Bag replay: \`tf_shm replay --as-fast-as-possible\`"
    echo
    if [ "$bag_result" = ok ]; then
        echo "\`scripts/bag_bench.sh\`:"
        echo
        cat "$work/bag.md"
    else
        echo "**Not measured in this run** (\`scripts/bag_bench.sh\` failed; see its output)."
    fi
    echo "## Waits that wake on data"
    echo
    echo "\`crates/tf_shm/examples/wait_latency.rs\`: an owner process writes map→base every 3–4 ms with"
    echo "its monotonic write time in the translation; a consumer process (\`tf_shm::Open\`, read-only"
    echo "mapping) calls \`lookup_transform_timeout\` for each new stamp and records return time −"
    echo "write time (wake-up, re-check and lookup included). The waiter sleeps on the arena's futex"
    echo "word; the writer calls FUTEX_WAKE only while a waiting bit is set. A waiting thread also"
    echo "wakes every 200 ms to notice an arena swap that raced with its sleep. Load average before:"
    echo "$waits_load_before, after: $waits_load_after (shared machine)."
    echo
    cat "$work/waits.md"
    echo
    echo "## Analysis (hand-written; kept across re-runs)"
    echo
    echo "$notes"
} >"$out"
echo "wrote $out in $((t_end - t_start)) s" >&2
