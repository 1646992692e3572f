"""Per-lookup cost from Python: tf_shm.Buffer against tf2's own Python binding.

Run by scripts/bench.sh (step "Python lookups"). With Debian's /usr/bin/python3 (python3-tf2,
ROS 1) it times three arms on the same depth-3 chain of dynamic links (100 Hz over 10 s per
link, identical samples):

  tf2_py    tf2_py.BufferCore.lookup_transform_core (the C++ BufferCore under tf2_ros's Python
            Buffer), returning its geometry_msgs/TransformStamped;
  message   tf_shm.Buffer.lookup_transform, returning a geometry_msgs TransformStamped;
  tuple     tf_shm.Buffer.lookup_transform_tuple, returning a plain tuple.

With --no-tf2 (the ROS 2 environment, where results are rosidl messages and tf2_py is not
installable) it times the two tf_shm arms only. Queries: 1024 off-grid times cycled
(interpolated) and time 0. Every arm's answers are first checked against tf2_py's (1e-9,
rotations up to sign). Prints one JSON object per (arm, query kind): median ns of thread CPU time
per call over alternating rounds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time

NS = 1_000_000_000
HZ = 100
SECONDS = 10
DEPTH = 3
FRAMES = [f"c{i}" for i in range(DEPTH + 1)]


def sample(link: int, k: int):
    """Link ``link``'s k-th sample: a wandering translation and yaw."""
    a = 0.05 * k + link
    yaw = 0.3 * math.sin(0.01 * k + link)
    return (
        (math.cos(a), math.sin(a), 0.1 * link),
        (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)),
    )


def stamps():
    return [NS + k * (NS // HZ) for k in range(SECONDS * HZ + 1)]


def query_times():
    lo, hi = stamps()[0], stamps()[-1]
    return [lo + 3_217 * 1000 + (hi - lo - 10 * NS // HZ) * i // 1024 for i in range(1024)]


def fill_arena(arena) -> None:
    for k, s in enumerate(stamps()):
        for link in range(DEPTH):
            t, q = sample(link, k)
            arena.set_transform(FRAMES[link], FRAMES[link + 1], s, t, q)


def tf2_core():
    import rospy
    import tf2_py
    from geometry_msgs.msg import TransformStamped

    core = tf2_py.BufferCore(rospy.Duration(SECONDS + 1))
    m = TransformStamped()
    for k, s in enumerate(stamps()):
        for link in range(DEPTH):
            t, q = sample(link, k)
            m.header.frame_id, m.child_frame_id = FRAMES[link], FRAMES[link + 1]
            m.header.stamp = rospy.Time(s // NS, s % NS)
            tr, ro = m.transform.translation, m.transform.rotation
            tr.x, tr.y, tr.z = t
            ro.x, ro.y, ro.z, ro.w = q
            core.set_transform(m, "bench")
    return core


def per_call_ns(fn, args_list, rounds, reps):
    """Median thread-CPU ns per call of fn(*args) over ``rounds`` rounds."""
    out = []
    for _ in range(rounds):
        start = time.thread_time_ns()
        for _ in range(reps):
            for a in args_list:
                fn(*a)
        out.append((time.thread_time_ns() - start) / (reps * len(args_list)))
    return statistics.median(out)


def close(a, b):
    (t1, q1), (t2, q2) = a, b
    dt = max(abs(x - y) for x, y in zip(t1, t2))
    dq = abs(abs(sum(x * y for x, y in zip(q1, q2))) - 1.0)
    return dt <= 1e-9 and dq <= 1e-9


def msg_tf(m):
    t, q = m.transform.translation, m.transform.rotation
    return ((t.x, t.y, t.z), (q.x, q.y, q.z, q.w))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-tf2", action="store_true", help="tf_shm arms only (ROS 2 env)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--env", default="", help="label of the Python environment")
    args = ap.parse_args()

    rt = tempfile.mkdtemp(prefix="tf_shm_pybench_")
    os.environ["TF_SHM_RUNTIME_DIR"] = rt
    import tf_shm
    from tf_shm._testing import Arena

    arena = Arena(rt, memory_budget_bytes=16 << 20)
    fill_arena(arena)
    buf = tf_shm.Buffer(open_timeout=0)
    target, source = FRAMES[0], FRAMES[-1]
    times = query_times()

    arms = {
        "message": (buf.lookup_transform, lambda t: t),
        "tuple": (buf.lookup_transform_tuple, lambda t: t),
    }
    if not args.no_tf2:
        import rospy

        core = tf2_core()
        arms["tf2_py"] = (core.lookup_transform_core, lambda t: rospy.Time(t // NS, t % NS))
        # Agreement: every arm answers what tf2 answers, at every query time and at time 0.
        for t in [*times, 0]:
            want = msg_tf(core.lookup_transform_core(target, source, rospy.Time(t // NS, t % NS)))
            got = msg_tf(buf.lookup_transform(target, source, t))
            r = buf.lookup_transform_tuple(target, source, t)
            assert close(got, want), (t, got, want)
            assert close(((r[1], r[2], r[3]), (r[4], r[5], r[6], r[7])), want), (t, r, want)

    kinds = {"interpolated": times, "time 0": [0] * 64}
    results = {}
    for kind, ts in kinds.items():
        prepared = {
            name: [(target, source, conv(t)) for t in ts] for name, (_, conv) in arms.items()
        }
        reps = args.reps if kind == "interpolated" else args.reps * 16
        acc = {name: [] for name in arms}
        for _ in range(args.rounds):  # alternate arms, one round each at a time
            for name, (fn, _) in arms.items():
                acc[name].append(per_call_ns(fn, prepared[name], 1, reps))
        for name in arms:
            results[(name, kind)] = statistics.median(acc[name])
    result_type = type(buf.lookup_transform(target, source, 0))
    for (name, kind), ns in results.items():
        print(
            json.dumps(
                {
                    "env": args.env,
                    "arm": name,
                    "query": kind,
                    "ns": round(ns, 1),
                    "result": f"{result_type.__module__}.{result_type.__name__}"
                    if name == "message"
                    else ("tuple" if name == "tuple" else "ROS 1 genpy TransformStamped"),
                    "python": sys.version.split()[0],
                }
            )
        )
    arena.close()


if __name__ == "__main__":
    main()
