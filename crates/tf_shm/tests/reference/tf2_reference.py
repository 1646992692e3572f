#!/usr/bin/python3
"""Differential reference for tf_shm: random tf2 scenarios answered by a real tf2 BufferCore.

Generates scenarios from a seed, runs each through ROS 1 tf2's BufferCore (Debian 12's
python3-tf2, tf2 0.7.6, via tf2_py; run with /usr/bin/python3) and writes one JSON file with
the scenarios and the answers ROS 2 Jazzy's tf2 gives, which is what tf_shm implements.
`crates/tf_shm/tests/differential.rs` replays the scenarios into tf_shm and compares.

Usage: tf2_reference.py --seed S --count N --out FILE [--regressions DIR] [--jobs J]
Exit status 3 means the Debian tf2 packages are missing.

Output format (times are integer nanoseconds; every one survives tf2_py's double-seconds
conversion exactly: multiples of 1 us below 1e5 s):

  {"format": 1, "reference": "...", "seed": S, "count": N,
   "summary": {"scenarios", "inserts", "queries", "compared", "excluded": {cat: n},
               "derived": {cat: n}},
   "scenarios": [{"name", "cache_time_ns", "ops": [...], "expect": [...]}, ...]}

  ops, applied in order to one fresh buffer:
    ["insert", parent, child, stamp, [tx,ty,tz], [qx,qy,qz,qw], is_static, authority]
    ["clear"]
    ["lookup", target, source, time]
    ["lookup_full", target, target_time, source, source_time, fixed]
    ["can", target, source, time]
    ["can_full", target, target_time, source, source_time, fixed]
    ["lct", target, source]                                  (latest common time)
  expect[i] answers ops[i]:
    insert: {"ok": bool} (setTransform's return in ROS 2);  clear: null
    lookup*: {"s": stamp, "t": [...], "q": [...]} or {"e": class, "m": text}
    can*: {"ok": true} or {"ok": false, "m": text, "e": class-or-null}
    lct: {"s": time} or {"e": class, "m": text}
    excluded: {"x": category} (ROS 1 cannot serve as reference; nothing to compare)
    optional "d": category when the answer was derived through a variant buffer (below).

Rotations in ops are deliberately not unit length (4-decimal values, sometimes scaled): ROS 2
normalises every stored quaternion, so tf2 ROS 1 is fed the normalised quaternion.

ROS 1 vs ROS 2 (docs/tf2-semantics.md §12), each handled explicitly:
  converted mechanically:
    * extrapolation class -> Forward/Backward/NoData subclass, read from the text;
    * texts: "<gap>s " dropped, times printed %.6f, empty-cache text kept empty (Jazzy);
    * InvalidArgument wording (`Invalid argument "X" passed to F - in tf2 ...`);
    * canTransform strings for bad names (`Invalid frame ID "X" passed to canTransform
      argument A - ...`, first bad argument, each argument fully checked in turn);
    * get_latest_common_time: tf_shm mirrors tf2_py's by-name getLatestCommonTime. A name
      its _validateFrameId refuses keeps its class, with the text converted to ROS 2 wording;
      a failed walk raises the base TransformException, whose C++ code is
      TF2_CONNECTIVITY_ERROR -> ConnectivityException;
    * quaternion normalisation (see above); result signs are compared up to sign.
  derived through variant buffers (a ROS 1 buffer replaying a rewritten history that is, for
  the query at hand, equivalent to ROS 2's state); counted in summary.derived:
    * "repeated_stamp": ROS 2 keeps every different sample with an equal stamp (newest-first
      list, later arrivals in front) and reads the first received one for t < stamp and for an
      exact match of the oldest stamp (read from the list's back), the last received one
      otherwise (t > stamp, exact matches elsewhere, time 0); ROS 1 keeps the first. The
      variant inserts the sample ROS 2 would read in place of the first. A frame whose ROS 2
      samples all share one stamp fails "into the future/past" where ROS 1's single sample
      fails "only time ... is in the buffer"; that text is converted (or the query excluded
      when another single-sample link could have written the same text).
    * "static_dynamic_switch": ROS 2 replaces a frame's cache when an insert has the other kind
      (history lost); the variant drops that frame's earlier inserts (their parent names stay
      registered through a dummy child).
  excluded (summary.excluded; differential.rs fails when more than 5% are excluded):
    * "prune_order": ROS 2 prunes before inserting, so after a forward jump larger than the
      cache time it still holds samples ROS 1 dropped; a query is excluded when a walk could
      read such a frame earlier than ROS 1's oldest sample of it (or at any other time when
      ROS 1 kept a single sample).
    * "repeated_stamp": a two-time query whose halves need different variants, or a time-0
      half whose variant is not the all-latest one.
"""

import argparse
import json
import math
import multiprocessing
import os
import random
import re
import sys
import tempfile

try:
    import rospy  # noqa: F401  (tf2_py needs rospy's message machinery loaded)
    import tf2_py
    from geometry_msgs.msg import TransformStamped
except ImportError as exc:  # pragma: no cover - environment problem
    sys.stderr.write(
        f"tf2_reference: cannot import Debian's tf2 ({exc}).\n"
        "Install it: apt-get install -y python3-tf2 python3-geometry-msgs, and run with "
        "/usr/bin/python3.\n"
    )
    sys.exit(3)

REFERENCE = "tf2 0.7.6 (ROS 1 BufferCore, Debian python3-tf2), answers converted to ROS 2 Jazzy"
NS = 1000000000
US = 1000
SUFFIX = ", when looking up transform from frame ["


class HarnessError(Exception):
    """The harness's own model disagrees with tf2, or tf2 said something unparseable."""


class Stamp:
    """tf2_py only calls to_sec() on times it is given."""

    __slots__ = ("sec",)

    def __init__(self, ns):
        self.sec = ns / 1e9

    def to_sec(self):
        return self.sec


def ros1_ns(secs):
    """Integer ns that ros::Time::fromSec stores for a double."""
    s = math.floor(secs)
    return s * NS + math.floor((secs - s) * 1e9 + 0.5)


def check_time(ns):
    if ns < 0 or ros1_ns(ns / 1e9) != ns:
        raise HarnessError(f"time {ns} ns does not survive tf2_py's double conversion")


def strip_slash(name):
    return name[1:] if name.startswith("/") else name


def nums(v):
    """Numbers of an op; JSON has no NaN, so ops spell it "NaN"."""
    return [float("nan") if c == "NaN" else c for c in v]


def normalised(q):
    n = math.sqrt(sum(c * c for c in q))
    if n == 0.0 or not math.isfinite(n):
        return list(q)
    return [c / n for c in q]


# ---------------------------------------------------------------------------------------------
# Scenario generation


def rand_quat(rng):
    while True:
        q = [rng.gauss(0, 1) for _ in range(4)]
        n = math.sqrt(sum(c * c for c in q))
        if n > 1e-3:
            return [c / n for c in q]


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]


def small_rot(rng, max_angle):
    axis = rand_quat(rng)[:3]
    n = math.sqrt(sum(c * c for c in axis)) or 1.0
    ang = rng.uniform(0, max_angle)
    s = math.sin(ang / 2) / n
    return [axis[0] * s, axis[1] * s, axis[2] * s, math.cos(ang / 2)]


def wire_quat(rng, q):
    """What a publisher puts on the wire: 4 decimals, sometimes scaled or negated."""
    r = rng.random()
    scale = 1.0 if r < 0.7 else (rng.uniform(0.9, 1.1) if r < 0.9 else rng.uniform(0.2, 3.0))
    if rng.random() < 0.15:
        scale = -scale
    out = [round(c * scale, 4) for c in q]
    if all(c == 0.0 for c in out):
        out = [0.0, 0.0, 0.0, 1.0]
    return out


def r3(x):
    return round(x, 3)


class Stream:
    """One publisher's samples for one child frame."""

    def __init__(self, rng, child, parents, t0, dur, cache_ns, authority, cap, resend):
        self.rng = rng
        self.child = child
        self.authority = authority
        self.resend = resend
        # Gaps longer than the cache time are rare: they make ROS 1 prune differently.
        longest = min(1.5e9, dur, cache_ns * (1.5 if rng.random() < 0.1 else 0.7))
        period = int(math.exp(rng.uniform(math.log(1e6), math.log(longest))))
        period = max(US, period // US * US)
        start = t0
        if rng.random() < 0.3:
            start += rng.randrange(0, dur // 2 // US + 1) * US
        end = t0 + dur
        if rng.random() < 0.2:
            end = start + (end - start) * rng.randint(1, 3) // 4
        if (end - start) // period > cap:
            span = cap * period
            start += rng.randrange(0, (end - start - span) // US + 1) * US
            end = start + span
        jitter = rng.uniform(0, 0.3)
        stamps = set()
        t = start
        while t <= end:
            j = int(rng.uniform(-jitter, jitter) * period) // US * US
            if t + j > 0:
                stamps.add(t + j)
            t += period
        self.stamps = sorted(stamps)
        latency = rng.choice([0, period // 2, 3 * period, 200 * 1000 * US])
        self.latency = latency
        # Re-parenting: parent changes at a sample index (and maybe back later).
        self.parent_at = [parents[0]] * len(self.stamps)
        if len(parents) > 1 and len(self.stamps) > 2:
            k = rng.randrange(1, len(self.stamps))
            back = len(self.stamps)
            if rng.random() < 0.5:
                back = rng.randrange(k, back + 1)
            for i in range(k, back):
                self.parent_at[i] = parents[1]
        self.tr = [r3(rng.uniform(-5, 5)) for _ in range(3)]
        if rng.random() < 0.05:
            self.tr = [r3(rng.uniform(-3000, 3000)) for _ in range(3)]
        self.q = rand_quat(rng)

    def events(self):
        rng = self.rng
        out = []
        tr, q = list(self.tr), list(self.q)
        for i, st in enumerate(self.stamps):
            if rng.random() < 0.1:
                q = quat_mul(small_rot(rng, 3.0), q)  # large step: short-arc slerp matters
            else:
                q = quat_mul(small_rot(rng, 0.3), q)
            tr = [r3(c + rng.uniform(-0.5, 0.5)) for c in tr]
            arrival = st + (rng.randrange(0, self.latency // US + 1) * US if self.latency else 0)
            op = [
                "insert",
                self.parent_at[i],
                self.child,
                st,
                list(tr),
                wire_quat(rng, q),
                False,
                self.authority,
            ]
            out.append((arrival, op))
            if rng.random() < self.resend:
                # Re-sent later: an exact duplicate, or same stamp with other values.
                again = list(op)
                if rng.random() < 0.5:
                    again[4] = [r3(c + 1.0) for c in tr]
                    again[5] = wire_quat(rng, quat_mul(small_rot(rng, 1.0), q))
                out.append((arrival + rng.randrange(0, 500000) * US, again))
        return out


def gen_scenario(rng, name):
    cache_ns = rng.choice([10 * NS] * 6 + [NS, 2 * NS, NS // 2, 5 * NS, 30 * NS])
    dur = max(200 * 1000 * US, int(cache_ns * rng.uniform(0.3, 2.5)) // US * US)
    t0 = (dur + rng.randrange(NS, 20000 * NS)) // US * US
    n = rng.randint(2, 21)
    shape = rng.choice(["chain", "bushy", "bushy", "forest", "forest"])
    names = [f"f{i}" for i in range(n)]
    parent = [None]
    for i in range(1, n):
        if shape == "chain":
            parent.append(i - 1)
        elif shape == "bushy":
            parent.append(
                rng.randrange(max(0, i - 4), i) if rng.random() < 0.7 else rng.randrange(i)
            )
        else:
            parent.append(None if rng.random() < 0.2 else rng.randrange(i))
    events = []  # (arrival, op)
    linked = [i for i in range(1, n) if parent[i] is not None]
    budget = rng.randint(8, 50)  # dynamic samples per scenario, roughly
    cap = max(2, budget // max(1, len(linked)))
    resend = 0.15 if rng.random() < 0.08 else 0.0
    for i in linked:
        # Parents always have a lower index, so no sample history can ever form a loop.
        alt = rng.randrange(i) if i >= 2 else None
        if alt == parent[i]:
            alt = None
        if rng.random() < (0.2 if shape == "chain" else 0.3):
            st = 0 if rng.random() < 0.3 else t0 + rng.randrange(0, dur // US + 1) * US
            op = [
                "insert",
                names[parent[i]],
                names[i],
                st,
                [r3(rng.uniform(-5, 5)) for _ in range(3)],
                wire_quat(rng, rand_quat(rng)),
                True,
                "static_pub",
            ]
            events.append((t0 + rng.randrange(0, dur // US + 1) * US, op))
            if rng.random() < 0.15:
                p2 = names[alt] if alt is not None and rng.random() < 0.5 else names[parent[i]]
                op = [
                    "insert",
                    p2,
                    names[i],
                    rng.randrange(0, t0 // US) * US,
                    [r3(rng.uniform(-5, 5)) for _ in range(3)],
                    wire_quat(rng, rand_quat(rng)),
                    True,
                    "static_pub",
                ]
                events.append((t0 + rng.randrange(0, dur // US + 1) * US, op))
            continue
        parents = [names[parent[i]]]
        if alt is not None and rng.random() < 0.15:
            parents.append(names[alt])
        s = Stream(rng, names[i], parents, t0, dur, cache_ns, "pub_a", rng.randint(2, cap), resend)
        events.extend(s.events())
        if alt is not None and rng.random() < 0.07:
            b = Stream(
                rng, names[i], [names[alt]], t0, dur, cache_ns, "pub_b", rng.randint(2, cap), resend
            )
            if rng.random() < 0.5:
                b.stamps = sorted(set(b.stamps[: len(b.stamps) // 2] + s.stamps[::3]))
                b.parent_at = [names[alt]] * len(b.stamps)
            events.extend(b.events())
        if rng.random() < 0.1 and s.stamps:
            st = s.stamps[-1] - cache_ns - rng.randrange(1, NS // US) * US
            if st > 0:
                events.append(
                    (
                        s.stamps[-1] + US,
                        [
                            "insert",
                            names[parent[i]],
                            names[i],
                            st,
                            [0.0, 0.0, 1.0],
                            [0.0, 0.0, 0.0, 1.0],
                            False,
                            "late_pub",
                        ],
                    )
                )
    if linked and rng.random() < 0.05:
        # A frame switches kind (static <-> dynamic) mid-scenario.
        i = rng.choice(linked)
        was_static = any(op[2] == names[i] and op[6] for _, op in events)
        at = t0 + rng.randrange(0, dur // US + 1) * US
        for k in range(rng.randint(1, 4) if was_static else 1):
            events.append(
                (
                    at + k * 10 * 1000 * US,
                    [
                        "insert",
                        names[parent[i]],
                        names[i],
                        at + k * 10 * 1000 * US,
                        [1.0, 2.0, 3.0],
                        wire_quat(rng, rand_quat(rng)),
                        not was_static,
                        "switcher",
                    ],
                )
            )
    if rng.random() < 0.03:
        # A dynamic frame whose only data is stamped 0 (ignored by the latest common time).
        events.append(
            (
                t0,
                [
                    "insert",
                    names[0],
                    "z0",
                    0,
                    [0.5, 0.0, 0.0],
                    [0.0, 0.0, 0.0, 1.0],
                    False,
                    "zero_pub",
                ],
            )
        )
    if rng.random() < 0.05:
        at = t0 + rng.randrange(0, dur // US + 1) * US
        bad = [
            ["insert", "f1", "f1", at, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], False, "bad"],
            ["insert", "f0", "", at, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], False, "bad"],
            ["insert", "", "g1", at, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], False, "bad"],
            ["insert", "f0", "g2", at, ["NaN", 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], False, "bad"],
            ["insert", "f0", "g3", at, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], False, "bad"],
            ["insert", "/f0", "/g4", at, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], False, "slash"],
            ["insert", "/f0", "f0", at, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], True, "bad"],
        ]
        for op in rng.sample(bad, rng.randint(1, 3)):
            events.append((at, op))
    events.sort(key=lambda e: e[0])
    ops = [op for _, op in events]

    if len(ops) > 4 and rng.random() < 0.12:
        # clear() mid-stream, often followed by a bag loop (stamps jump back).
        k = rng.randrange(1, len(ops))
        shift = int(dur * rng.uniform(0.3, 1.0)) // US * US if rng.random() < 0.6 else 0
        for op in ops[k:]:
            if not op[6] and op[3] > shift:
                op[3] -= shift
        ops.insert(k, ["clear"])

    return {"name": name, "cache_time_ns": cache_ns, "ops": add_queries(rng, ops, names)}


def add_queries(rng, ops, names):
    """Interleave queries whose frames and times come from what was inserted so far."""
    out = []
    known = []
    stamps = []
    n_q = rng.randint(8, 30)
    p = n_q / (len(ops) + 1.0)
    for op in ops:
        out.append(op)
        if op[0] == "clear":
            stamps = []
        else:
            for nm in (strip_slash(op[1]), strip_slash(op[2])):
                if nm and nm not in known:
                    known.append(nm)
            if not op[6]:
                stamps.append(op[3])
        if known and rng.random() < p:
            out.append(make_query(rng, known, stamps))
    for _ in range(rng.randint(3, 10)):
        if known:
            out.append(make_query(rng, known, stamps))
    return out


def pick_time(rng, stamps):
    r = rng.random()
    if r < 0.15 or not stamps:
        return 0 if r < 0.15 or rng.random() < 0.5 else rng.randrange(1, 100000) * US
    lo, hi = min(stamps), max(stamps)
    if r < 0.35:
        return rng.choice(stamps)
    if r < 0.65:
        return lo + rng.randrange(0, (hi - lo) // US + 1) * US
    if r < 0.75:
        return hi + rng.randrange(1, NS // US) * US
    if r < 0.85:
        return max(0, lo - rng.randrange(1, NS // US) * US)
    if r < 0.92:
        return max(0, rng.choice(stamps) + rng.choice([-US, US]))
    return max(0, rng.randrange(lo // US // 2, hi // US * 2 + 2) * US)


def pick_frame(rng, known):
    r = rng.random()
    if r < 0.02:
        return "ghost"
    if r < 0.03:
        return ""
    if r < 0.04:
        return "/" + rng.choice(known)
    return rng.choice(known)


def make_query(rng, known, stamps):
    target = pick_frame(rng, known)
    source = target if rng.random() < 0.05 else pick_frame(rng, known)
    r = rng.random()
    if r < 0.45:
        return ["lookup", target, source, pick_time(rng, stamps)]
    if r < 0.6:
        return ["can", target, source, pick_time(rng, stamps)]
    if r < 0.78:
        return ["lct", target, source]
    tt = pick_time(rng, stamps)
    ts = tt if rng.random() < 0.2 else pick_time(rng, stamps)
    fixed = "f0" if rng.random() < 0.4 and "f0" in known else pick_frame(rng, known)
    return ["lookup_full" if r < 0.92 else "can_full", target, tt, source, ts, fixed]


# ---------------------------------------------------------------------------------------------
# ROS 2 model of the caches (stamps, arrival order, kinds): decides insert results and which
# variant buffer a query needs. tf2 ROS 1 cross-checks it wherever ROS 1 is a reference.


class FrameModel:
    def __init__(self, static):
        self.static = static
        self.entries = []  # ROS 2 samples: (stamp, op_index, value key)
        self.r1 = []  # stamps ROS 1 would hold (one per stamp, pruned after insert)
        self.switched = False


class Model:
    def __init__(self, cache_ns):
        self.cache = cache_ns
        self.frames = {}
        self.known = set()
        self.parents_ever = {}  # child -> every parent it ever had (upper bound of any walk)
        self.switches = {}  # child -> op index of its latest kind switch
        self.dup_groups = {}  # child -> [(stamp, first op, last op, at back)], repeated stamps
        self.one_stamp = {}  # child -> stamp, where ROS 2 holds 2+ samples all at one stamp
        self.divergent = {}  # child -> (ROS 1's oldest stamp, ROS 1 holds one sample) where
        # ROS 2 holds older ones

    @staticmethod
    def valid(parent, child, tr, q):
        if parent == child or not child or not parent:
            return False
        if any(math.isnan(c) for c in tr + q):
            return False
        return any(c != 0.0 for c in q)

    def insert(self, idx, op):
        """Apply op like ROS 2; returns (ros2_ok, ros1_ok or None when ROS 1 is no reference)."""
        parent, child = strip_slash(op[1]), strip_slash(op[2])
        stamp, tr, q, static = op[3], nums(op[4]), nums(op[5]), op[6]
        if not self.valid(parent, child, tr, q):
            return False, False
        self.known.update((parent, child))
        self.parents_ever.setdefault(child, set()).add(parent)
        f = self.frames.get(child)
        if f is None:
            f = self.frames[child] = FrameModel(static)
        elif f.static != static:
            f.static, f.entries, f.r1, f.switched = static, [], [], True
            self.switches[child] = idx
        if static:
            f.entries = [(stamp, idx, None)]
            self.refresh(child, f)
            return True, (None if f.switched else True)
        key = (parent, tuple(tr), tuple(normalised(q)))
        newest = max((e[0] for e in f.entries), default=None)
        if newest is not None and stamp < newest - self.cache:
            ok2 = False
        else:
            if newest is not None:  # ROS 2 prunes before inserting
                f.entries = [e for e in f.entries if e[0] + self.cache >= newest]
            if not any(e[0] == stamp and e[2] == key for e in f.entries):
                f.entries.append((stamp, idx, key))
            ok2 = True
        r1_newest = max(f.r1, default=None)
        if r1_newest is not None and stamp < r1_newest - self.cache:
            ok1 = False
        elif stamp in f.r1:
            ok1 = False  # TF_REPEATED_DATA
        else:
            f.r1.append(stamp)
            top = max(f.r1)
            f.r1 = [s for s in f.r1 if s + self.cache >= top]
            ok1 = True
        self.refresh(child, f)
        return ok2, (None if f.switched else ok1)

    def refresh(self, child, f):
        self.dup_groups.pop(child, None)
        self.one_stamp.pop(child, None)
        self.divergent.pop(child, None)
        if f.static or not f.entries:
            return
        by = {}
        for st, idx, _ in f.entries:
            by.setdefault(st, []).append(idx)
        oldest, newest = min(by), max(by)
        # tf2 reads an exact match of the oldest stamp from the back of its newest-first list,
        # i.e. the first received sample; every other exact match from the front.
        groups = [
            (st, min(v), max(v), st == oldest and st != newest)
            for st, v in by.items()
            if len(v) > 1
        ]
        if groups:
            self.dup_groups[child] = groups
            if len(by) == 1:
                self.one_stamp[child] = oldest
        if oldest < min(f.r1):
            self.divergent[child] = (min(f.r1), len(f.r1) == 1)

    def clear(self):
        for f in self.frames.values():
            if not f.static:
                f.entries, f.r1 = [], []
        self.dup_groups.clear()
        self.one_stamp.clear()
        self.divergent.clear()

    def groups(self):
        """(stamp, first op, last op) for every stamp holding several different samples."""
        return [g for gs in self.dup_groups.values() for g in gs]

    def divergent_oldest(self):
        """{frame: (ROS 1's oldest stamp, single)} for frames where ROS 2 holds older samples."""
        return self.divergent

    def walk_reach(self, names):
        """Every frame whose link a walk starting at `names` could read."""
        seen = set()
        todo = [n for n in names if n]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(self.parents_ever.get(n, ()))
        return seen


# ---------------------------------------------------------------------------------------------
# Driving tf2 ROS 1


_MSG = []


def make_msg(parent, child, stamp, tr, q):
    # One reused message: tf2_py copies the fields, and building genpy messages is slow.
    if not _MSG:
        _MSG.append(TransformStamped())
    m = _MSG[0]
    m.header.frame_id = parent
    m.child_frame_id = child
    m.header.stamp = Stamp(stamp)
    t = m.transform.translation
    t.x, t.y, t.z = nums(tr)
    r = m.transform.rotation
    r.x, r.y, r.z, r.w = normalised(nums(q))  # ROS 2 normalises on insert; ROS 1 stores as given
    return m


def r1_register(core, parent, idx):
    """Keeps `parent`'s name registered in ROS 1's buffer (a static placeholder child of it)."""
    r1_insert(
        core, parent, f"__reg_{idx}", 0, [0.0] * 3, [0.0, 0.0, 0.0, 1.0], True, "reg", check=False
    )


def r1_insert(core, parent, child, stamp, tr, q, static, authority, check=True):
    """Insert; returns (accepted, log text). Rejections are detected by tf2 writing to fd 2."""
    msg = make_msg(parent, child, stamp, tr, q)
    if not check:
        (core.set_transform_static if static else core.set_transform)(msg, authority)
        return None, ""
    before = os.fstat(2).st_size
    if static:
        core.set_transform_static(msg, authority)
    else:
        core.set_transform(msg, authority)
    after = os.fstat(2).st_size
    if after == before:
        return True, ""
    return False, os.pread(2, after - before, before).decode("utf-8", "replace")


def parse_ns(text):
    """Exact ns of a printed time ("12.500000000" or "12.500000")."""
    whole, _, frac = text.partition(".")
    return int(whole) * NS + int((frac + "000000000")[:9])


def ros2_time(text):
    """A ROS 1 '%.09f' time printed as ROS 2 does: '%.6f' of ns / 1e9."""
    return "%.6f" % (parse_ns(text) / 1e9)


EXTRA_RE = re.compile(
    r"^Lookup would require extrapolation (\S+)s into the (future|past)\.  "
    r"Requested time (\S+) but the (latest|earliest) data is at time (\S+)$"
)
ONE_RE = re.compile(
    r"^Lookup would require extrapolation at time (\S+), but only time (\S+) "
    r"is in the buffer$"
)
ONE2_RE = re.compile(
    r"^Lookup would require extrapolation at time (\S+), but only time (\S+) "
    r"is in the buffer(, when looking up transform from frame .*)$"
)
INVALID_EMPTY_RE = re.compile(
    r"^Invalid argument passed to (.+) in tf2 frame_ids cannot be "
    r"empty$"
)
INVALID_SLASH_RE = re.compile(
    r"^Invalid argument \"(.*)\" passed to (.+) in tf2 frame_ids "
    r"cannot start with a '/' like: $"
)


def convert_extrapolation(text):
    """ROS 1 extrapolation text -> (ROS 2 class, ROS 2 text)."""
    pos = text.find(SUFFIX)
    if pos < 0:
        raise HarnessError(f"extrapolation text without suffix: {text!r}")
    head, suffix = text[:pos], text[pos:]
    if head == "":
        return "NoDataForExtrapolationException", suffix
    m = EXTRA_RE.match(head)
    if m:
        cls = (
            "ForwardExtrapolationException"
            if m.group(2) == "future"
            else "BackwardExtrapolationException"
        )
        return cls, (
            f"Lookup would require extrapolation into the {m.group(2)}.  "
            f"Requested time {ros2_time(m.group(3))} but the "
            f"{m.group(4)} data is at time {ros2_time(m.group(5))}"
        ) + suffix
    m = ONE_RE.match(head)
    if m:
        return "NoDataForExtrapolationException", (
            f"Lookup would require extrapolation at time {ros2_time(m.group(1))}, "
            f"but only time {ros2_time(m.group(2))} is in the buffer"
        ) + suffix
    raise HarnessError(f"unknown extrapolation text: {text!r}")


def convert_error(cls, text):
    if cls == "ExtrapolationException":
        return convert_extrapolation(text)
    if cls == "InvalidArgumentException":
        m = INVALID_EMPTY_RE.match(text)
        if m:
            return cls, (
                f'Invalid argument "" passed to {m.group(1)} - in tf2 frame_ids cannot be empty'
            )
        m = INVALID_SLASH_RE.match(text)
        if m:
            return cls, (
                f'Invalid argument "{m.group(1)}" passed to {m.group(2)} - '
                "in tf2 frame_ids cannot start with a '/'"
            )
        raise HarnessError(f"unknown InvalidArgument text: {text!r}")
    if cls == "TransformException" and text.startswith("Could not find a connection"):
        return "ConnectivityException", text
    if cls in ("LookupException", "ConnectivityException"):
        return cls, text
    raise HarnessError(f"unexpected tf2 error {cls}: {text!r}")


def ns_of(t):
    return int(t.secs) * NS + int(t.nsecs)


def r1_call(fn):
    try:
        return True, fn()
    except tf2_py.TransformException as exc:
        return False, exc


def lookup_answer(ok, val):
    if not ok:
        cls, msg = convert_error(type(val).__name__, str(val))
        return {"e": cls, "m": msg}
    tr, ro = val.transform.translation, val.transform.rotation
    return {"s": ns_of(val.header.stamp), "t": [tr.x, tr.y, tr.z], "q": [ro.x, ro.y, ro.z, ro.w]}


def bad_name_reason(name, known):
    if name == "":
        return "in tf2 frame_ids cannot be empty"
    if name.startswith("/"):
        return "in tf2 frame_ids cannot start with a '/'"
    if name not in known:
        return "frame does not exist"
    return None


def can_answer(ok, msg, args, known):
    if ok:
        return {"ok": True}
    for arg, name in args:
        reason = bad_name_reason(name, known)
        if reason:
            if msg and not msg.startswith("canTransform:"):
                raise HarnessError(
                    f"tf2 failed canTransform on a walk ({msg!r}), the model on the name {name!r}"
                )
            return {
                "ok": False,
                "e": None,
                "m": f'Invalid frame ID "{name}" passed to canTransform argument {arg} - {reason}',
            }
    if msg.startswith("Could not find a connection"):
        return {"ok": False, "e": "ConnectivityException", "m": msg}
    cls, text = convert_extrapolation(msg)
    return {"ok": False, "e": cls, "m": text}


class Evaluator:
    """Runs one scenario through tf2, keeping variant buffers for the ROS 2-only cases."""

    def __init__(self, scen, stats):
        self.cache = scen["cache_time_ns"]
        self.ops = scen["ops"]
        self.stats = stats
        self.model = Model(self.cache)
        self.main = self.new_core()
        self.variants = {}

    def new_core(self):
        return tf2_py.BufferCore(Stamp(self.cache))

    # -- variants -------------------------------------------------------------------------

    def key_for(self, t):
        """Variant needed for reading every link at time t (0 = latest)."""
        drops = tuple(sorted(self.model.switches.items()))
        subs = tuple(
            sorted(
                (first, last)
                for st, first, last, at_back in self.model.groups()
                if t == 0 or st < t or (st == t and not at_back)
            )
        )
        return (drops, subs)

    def core_for(self, key, upto):
        if key == ((), ()):
            return self.main
        entry = self.variants.get(key)
        if entry is None:
            entry = self.variants[key] = [self.new_core(), 0]
        core, done = entry
        drops = dict(key[0])
        subs = dict(key[1])
        for idx in range(done, upto):
            op = self.ops[idx]
            if op[0] == "clear":
                core.clear()
            elif op[0] == "insert":
                parent, child = strip_slash(op[1]), strip_slash(op[2])
                src = self.ops[subs[idx]] if idx in subs else op
                if (
                    child in drops
                    and idx < drops[child]
                    and Model.valid(parent, child, nums(op[4]), nums(op[5]))
                ):
                    # History ROS 2 threw away; keep the parent's name registered.
                    r1_register(core, parent, idx)
                    continue
                # A substituted sample brings its own parent (two publishers) and values; the
                # replaced one's parent name must stay registered.
                r1_insert(core, src[1], op[2], op[3], src[4], src[5], op[6], op[7], check=False)
                if strip_slash(src[1]) != parent:
                    r1_register(core, parent, idx)
        entry[1] = upto
        return core

    # -- queries --------------------------------------------------------------------------

    def tag(self, key, out):
        cats = []
        if key[0]:
            cats.append("static_dynamic_switch")
        if key[1]:
            cats.append("repeated_stamp")
        for c in cats:
            self.stats["derived"][c] = self.stats["derived"].get(c, 0) + 1
        if cats:
            out["d"] = "+".join(cats)
        return out

    def exclude(self, cat):
        self.stats["excluded"][cat] = self.stats["excluded"].get(cat, 0) + 1
        return {"x": cat}

    def latest_common(self, idx, a, b):
        """ROS 2's latest common time of (a, b), or None if it fails."""
        core = self.core_for(self.key_for(0), idx)
        ok, val = r1_call(lambda: core.get_latest_common_time(a, b))
        return ns_of(val) if ok else None

    def pruned_away(self, frames, times):
        """Whether the query may read a prune-divergent frame where ROS 1's answer differs:
        below ROS 1's history, or anywhere but its stamp when ROS 1 kept a single sample."""
        divergent = self.model.divergent_oldest()
        if not divergent:
            return False
        reach = self.model.walk_reach(frames)
        return any(
            c in reach and t and (t < o or (single and t != o))
            for c, (o, single) in divergent.items()
            for t in times
        )

    def one_stamp_fix(self, out):
        """ROS 2 keeps both samples of a repeated stamp, so a frame holding only those fails
        "into the future/past"; ROS 1 (one sample) fails "only time ... is in the buffer"."""
        if not self.model.one_stamp or out.get("e") != "NoDataForExtrapolationException":
            return out
        m = ONE2_RE.match(out["m"])
        if not m:
            return out
        t_txt, s_txt, suffix = m.groups()
        hits = [c for c, st in self.model.one_stamp.items() if "%.6f" % (st / 1e9) == s_txt]
        if not hits:
            return out
        # The text does not name the link; give up if another link could have written it.
        others = [
            c
            for c, f in self.model.frames.items()
            if c not in self.model.one_stamp
            and not f.static
            and len(f.r1) == 1
            and "%.6f" % (f.r1[0] / 1e9) == s_txt
        ]
        if others or len(hits) > 1:
            return self.exclude("repeated_stamp")
        t_ns, s_ns = parse_ns(t_txt), parse_ns(s_txt)
        if t_ns > s_ns:
            out["e"] = "ForwardExtrapolationException"
            head = (
                f"Lookup would require extrapolation into the future.  Requested time {t_txt} but "
                f"the latest data is at time {s_txt}"
            )
        else:
            out["e"] = "BackwardExtrapolationException"
            head = (
                f"Lookup would require extrapolation into the past.  Requested time {t_txt} but "
                f"the earliest data is at time {s_txt}"
            )
        out["m"] = head + suffix
        return out

    def finish(self, key, out):
        """Last conversions of a query answer, then count it."""
        out = self.one_stamp_fix(out)
        if "x" in out:
            return out
        self.stats["compared"] += 1
        return self.tag(key, out)

    def query(self, idx, op):
        kind = op[0]
        self.stats["queries"] += 1
        if kind in ("lookup", "can"):
            target, source, t = op[1], op[2], op[3]
            check_time(t)
            t_eff = t
            if t == 0 and (self.model.groups() or self.model.divergent_oldest()):
                t_eff = self.latest_common(idx, target, source)
            if self.pruned_away([target, source], [t_eff]):
                return self.exclude("prune_order")
            key = self.key_for(t_eff if t_eff is not None else 0)
            at = t
            if t == 0 and t_eff and key != self.key_for(0):
                at = t_eff  # ROS 2 walks at the common time with that time's samples
            core = self.core_for(key, idx)
            if kind == "lookup":
                ok, val = r1_call(lambda: core.lookup_transform_core(target, source, Stamp(at)))
                out = lookup_answer(ok, val)
            else:
                ok, msg = core.can_transform_core(target, source, Stamp(at))
                out = can_answer(
                    ok, msg, [("target_frame", target), ("source_frame", source)], self.model.known
                )
            return self.finish(key, out)
        if kind == "lct":
            key = self.key_for(0)
            core = self.core_for(key, idx)
            ok, val = r1_call(lambda: core.get_latest_common_time(op[1], op[2]))
            if ok:
                out = {"s": ns_of(val)}
            elif type(val).__name__ in ("InvalidArgumentException", "LookupException"):
                # tf2_py's _validateFrameId("get_latest_common_time", name) refused a name, as
                # ROS 2's tf2_py (the only by-name getLatestCommonTime) does: same classes,
                # texts converted to ROS 2 wording.
                cls, msg = convert_error(type(val).__name__, str(val))
                out = {"e": cls, "m": msg}
            else:
                cls, msg = convert_error(type(val).__name__, str(val))
                out = {"e": cls, "m": msg}
            self.stats["compared"] += 1
            return self.tag(key, out)
        if kind in ("lookup_full", "can_full"):
            target, tt, source, ts, fixed = op[1:6]
            check_time(tt)
            check_time(ts)
            tt_eff = tt if tt else self.latest_common(idx, target, fixed)
            ts_eff = ts if ts else self.latest_common(idx, fixed, source)
            if self.pruned_away([target, source, fixed], [tt_eff, ts_eff]):
                return self.exclude("prune_order")
            k_t = self.key_for(tt_eff if tt_eff is not None else 0)
            k_s = self.key_for(ts_eff if ts_eff is not None else 0)
            if k_t != k_s or ((tt == 0 or ts == 0) and k_t != self.key_for(0)):
                return self.exclude("repeated_stamp")
            core = self.core_for(k_t, idx)
            if kind == "lookup_full":
                ok, val = r1_call(
                    lambda: core.lookup_transform_full_core(
                        target, Stamp(tt), source, Stamp(ts), fixed
                    )
                )
                out = lookup_answer(ok, val)
            else:
                ok, msg = core.can_transform_full_core(target, Stamp(tt), source, Stamp(ts), fixed)
                out = can_answer(
                    ok,
                    msg,
                    [("target_frame", target), ("source_frame", source), ("fixed_frame", fixed)],
                    self.model.known,
                )
            return self.finish(k_t, out)
        raise HarnessError(f"unknown op {op!r}")

    def run(self):
        expect = []
        for idx, op in enumerate(self.ops):
            if op[0] == "insert":
                check_time(op[3])
                ok2, ok1_model = self.model.insert(idx, op)
                ok1, log = r1_insert(self.main, op[1], op[2], op[3], op[4], op[5], op[6], op[7])
                if ok1_model is not None and ok1 != ok1_model:
                    raise HarnessError(
                        f"op {idx} {op!r}: model says ROS 1 "
                        f"{'accepts' if ok1_model else 'rejects'} it, tf2 "
                        f"{'accepted' if ok1 else 'rejected'} it ({log.strip()})"
                    )
                self.stats["inserts"] += 1
                expect.append({"ok": ok2})
            elif op[0] == "clear":
                self.model.clear()
                self.main.clear()
                expect.append(None)
            else:
                expect.append(self.query(idx, op))
        return expect


# ---------------------------------------------------------------------------------------------


def new_stats():
    return {
        "scenarios": 0,
        "inserts": 0,
        "queries": 0,
        "compared": 0,
        "excluded": {},
        "derived": {},
    }


def merge_stats(into, part):
    for k in ("scenarios", "inserts", "queries", "compared"):
        into[k] += part[k]
    for k in ("excluded", "derived"):
        for cat, n in part[k].items():
            into[k][cat] = into[k].get(cat, 0) + n


def evaluate(scen, stats):
    stats["scenarios"] += 1
    try:
        expect = Evaluator(scen, stats).run()
    except HarnessError as exc:
        raise HarnessError("scenario {}: {}\n{}".format(scen["name"], exc, json.dumps(scen)))
    out = dict(scen)
    out["expect"] = expect
    return out


def quiet_tf2_logs():
    """tf2 logs rejected inserts to fd 2; send them to a scratch file that r1_insert reads."""
    scratch = tempfile.TemporaryFile()  # noqa: SIM115 (returned: fd 2 of the whole run)
    saved = os.dup(2)
    os.dup2(scratch.fileno(), 2)
    sys.stderr = os.fdopen(saved, "w", buffering=1)
    return scratch


def work(job):
    seed, start, stop = job
    stats = new_stats()
    lines = []
    for i in range(start, stop):
        rng = random.Random(f"{seed}/{i}")
        scen = evaluate(gen_scenario(rng, f"seed {seed} #{i}"), stats)
        lines.append(json.dumps(scen, separators=(",", ":"), allow_nan=False))
    return lines, stats


def worker_init():
    global _SCRATCH
    _SCRATCH = quiet_tf2_logs()


def load_regressions(directory):
    scens = []
    if not directory or not os.path.isdir(directory):
        return scens
    for fn in sorted(os.listdir(directory)):
        if fn.endswith(".json"):
            with open(os.path.join(directory, fn)) as fh:
                data = json.load(fh)
            for k, scen in enumerate(data if isinstance(data, list) else [data]):
                scen = {
                    "name": f"regression {fn}#{k} {scen.get('name', '')}",
                    "cache_time_ns": scen.get("cache_time_ns", 10 * NS),
                    "ops": scen["ops"],
                }
                scens.append(scen)
    return scens


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--regressions", help="directory of fixed scenario files (no answers)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    opts = ap.parse_args()

    scratch = quiet_tf2_logs()
    stats = new_stats()
    lines = []
    try:
        for scen in load_regressions(opts.regressions):
            lines.append(json.dumps(evaluate(scen, stats), separators=(",", ":"), allow_nan=False))
        chunk = 250
        jobs = [(opts.seed, s, min(s + chunk, opts.count)) for s in range(0, opts.count, chunk)]
        if opts.jobs > 1 and len(jobs) > 1:
            with multiprocessing.get_context("fork").Pool(opts.jobs, worker_init) as pool:
                results = pool.map(work, jobs)
        else:
            results = [work(j) for j in jobs]
    except HarnessError as exc:
        sys.stderr.write(f"tf2_reference: harness error: {exc}\n")
        return 2
    for part_lines, part in results:
        lines.extend(part_lines)
        merge_stats(stats, part)
    head = {
        "format": 1,
        "reference": REFERENCE,
        "seed": opts.seed,
        "count": opts.count,
        "summary": stats,
    }
    with open(opts.out, "w") as fh:
        fh.write(json.dumps(head)[:-1] + ',\n"scenarios":[\n')
        fh.write(",\n".join(lines))
        fh.write("\n]}\n")
    scratch.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
