"""Markdown summary of scripts/bridge_bench.sh's JSON lines (stdin)."""

import json
import re
import statistics
import sys

rows = [json.loads(line) for line in sys.stdin if line.startswith("{")]
cpu = [r for r in rows if r["kind"] == "cpu"]
restarts = [r for r in rows if r["kind"] == "restart"]


def us_per_msg(r):
    return r["cpu_ns"] / r["messages"] / 1e3


def pct(r):
    return 100.0 * r["cpu_ns"] / r["wall_ns"]


if cpu:
    print(
        "| rep | old: µs CPU / message | new: µs CPU / message | new/old | old: % of a core | new: % of a core |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
by_rep = {}
for r in cpu:
    by_rep.setdefault(r["rep"], {})[r["bridge"]] = r
ratios = []
for rep, d in sorted(by_rep.items()):
    if "old" in d and "new" in d:
        o, n = d["old"], d["new"]
        ratios.append(us_per_msg(n) / us_per_msg(o))
        print(
            f"| {rep} | {us_per_msg(o):.0f} | {us_per_msg(n):.0f} | {ratios[-1]:.2f} | "
            f"{pct(o):.2f} | {pct(n):.2f} |"
        )
for which in ("old", "new"):
    v = [us_per_msg(r) for r in cpu if r["bridge"] == which]
    p = [pct(r) for r in cpu if r["bridge"] == which]
    if v:
        print(
            f"| median {which} | {statistics.median(v):.0f} µs (min {min(v):.0f}, max {max(v):.0f}) "
            f"| | | {statistics.median(p):.2f} % | |"
        )
if ratios:
    print(
        f"\nnew/old CPU per message: median {statistics.median(ratios):.2f} "
        f"(min {min(ratios):.2f}, max {max(ratios):.2f}) over {len(ratios)} runs side by side"
    )

PHASES = ("context", "node", "arena", "subscribed", "tf_publisher_seen", "first_tf", "first_static")


def phases(r):
    """ms from the kill to each phase's end, from the bridge's start-up line."""
    t = r.get("timeline") or ""
    m = re.search(r"main at (\d+) unix ns", t)
    if not m:
        return {}
    main = (int(m.group(1)) - r["killed_unix_ns"]) / 1e6
    out = {"main": main}
    for name, ms in re.findall(r"(\w+) \+([\d.]+) ms", t):
        out[name] = main + float(ms)
    return out


print()
print("| bridge | restarts | fresh data after SIGKILL: p50 ms | max ms | all (ms) |")
print("|---|---:|---:|---:|---|")
for which in ("old", "new"):
    v = sorted(
        r["fresh_ms"] for r in restarts if r["bridge"] == which and r["fresh_ms"] is not None
    )
    missing = sum(1 for r in restarts if r["bridge"] == which and r["fresh_ms"] is None)
    if v:
        print(
            f"| {which} | {len(v)}{f' ({missing} without fresh data)' if missing else ''} | "
            f"**{statistics.median(v):.0f}** | {v[-1]:.0f} | {', '.join(f'{x:.0f}' for x in v)} |"
        )
print()
print("Start-up timelines, ms after the kill (median [min–max] over restarts):")
print()
print("| phase end | old | new |")
print("|---|---:|---:|")
ph = {
    w: [p for p in map(phases, (r for r in restarts if r["bridge"] == w)) if p]
    for w in ("old", "new")
}
for name in ("main",) + PHASES:
    cells = []
    for w in ("old", "new"):
        v = [p[name] for p in ph[w] if name in p]
        cells.append(f"{statistics.median(v):.0f} [{min(v):.0f}–{max(v):.0f}]" if v else "—")
    print(f"| {name} | {cells[0]} | {cells[1]} |")
