#!/usr/bin/env python3
"""Bags for tf_shm_bag's tests, written by the reference MCAP tools, and tf2's answers for them.

Run with the py-tools venv that scripts/test.sh makes (/usr/bin/python3 -m venv
--system-site-packages, + PyPI's `mcap` and `mcap-ros2-support`), so this one interpreter has the
reference MCAP reader/writer and Debian's tf2 (python3-tf2, tf2 0.7.6):

    bag_reference.py --urdf pr2.urdf --out DIR [--seconds 4] [--queries 4000] [--seed 1]
        [--bags-only]

--bags-only writes the bags and not expect*.json: any Python with `mcap` and `mcap-ros2-support`
then does, without tf2 (the README's bag examples replay these bags).

Traffic: the PR2 demo's (scripts/pr2_publisher.py: its URDF walk and trajectory, imported), with
stamps from 1000 s (every stamp then survives tf2_py's double seconds exactly), received 1 ms
after its stamp (log time), plus a frame `tray` that changes parent between the grippers every
second (re-parenting). Written into DIR:

  pr2_zstd.mcap, pr2_lz4.mcap, pr2_plain.mcap   the same messages; chunks zstd / lz4 / none
  short.mcap          the first second only (loop and record round-trip tests)
  wrong_schema.mcap   /tf with schema geometry_msgs/msg/PoseStamped
  wrong_encoding.mcap /tf with TFMessage schema but message encoding "json"
  no_tf.mcap          only /chatter (std_msgs/msg/String)
  undecodable.mcap    valid TF messages, then one /tf message of 7 garbage bytes
  reset.mcap          a simulation reset: 1.5 s of the traffic with /clock (rosgraph_msgs/msg/
                      Clock, = the stamps, every tick before its /tf), then /tf_static re-sent,
                      /clock and the /tf stamps start over at 1000 s with other motion for 1 s;
                      receive times go on increasing (the recorder's wall clock)
  reset_noclock.mcap  the same without /clock
  expect.json         queries and tf2's answers: tf2 fed the messages of pr2_zstd.mcap as read
                      back by mcap_ros2's reader (statics first, then /tf in file order)
  expect_reset.json   the same for reset.mcap, as a use_sim_time tf2_ros node holds it after
                      `ros2 bag play`: tf2_ros's Buffer clears (BufferCore::clear, statics kept)
                      when /clock jumps back (any backward step: tf2_ros/buffer.h's jump
                      threshold); cache time 10 s; queries also at time 0 (latest)

expect*.json: {"reference", "cache_time_s", "clears", "frames",
               "queries": [[target, source, time_ns], ...],
               "answers": [{"s": stamp_ns, "t": [x,y,z], "q": [x,y,z,w]} or {"e": exception
                           class name}, ...]}
Query times: every 10th recorded stamp and random times in between (multiples of 1 us), from
before the first stamp to after the last, between random frame pairs.
"""

import argparse
import json
import math
import os
import random
import sys

from mcap.writer import CompressionType
from mcap.writer import Writer as RawWriter
from mcap_ros2.reader import read_ros2_messages
from mcap_ros2.writer import Writer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tf_shm", "tests", "reference"))
import pr2_publisher as pr2

NS = 1_000_000_000
BASE_NS = 1000 * NS
LATENCY_NS = 1_000_000

TF_DEF = """geometry_msgs/TransformStamped[] transforms
================================================================================
MSG: geometry_msgs/TransformStamped
std_msgs/Header header
string child_frame_id
Transform transform
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
================================================================================
MSG: geometry_msgs/Transform
Vector3 translation
Quaternion rotation
================================================================================
MSG: geometry_msgs/Vector3
float64 x
float64 y
float64 z
================================================================================
MSG: geometry_msgs/Quaternion
float64 x 0
float64 y 0
float64 z 0
float64 w 1
"""


CLOCK_DEF = """builtin_interfaces/Time clock
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""

RESET_FIRST_S = 1.5
RESET_SECOND_S = 1.0
# Motion of the second pass: the trajectory from this tick on, so it differs from the first.
RESET_TICK_OFFSET = 37
CLOCK = "/clock"


def clock_msg(stamp):
    sec, nsec = divmod(stamp, NS)
    return {"clock": {"sec": sec, "nanosec": nsec}}


def tf_msg(items, stamp):
    sec, nsec = divmod(stamp, NS)
    return {
        "transforms": [
            {
                "header": {"stamp": {"sec": sec, "nanosec": nsec}, "frame_id": p},
                "child_frame_id": c,
                "transform": {
                    "translation": {"x": t[0], "y": t[1], "z": t[2]},
                    "rotation": {"x": q[0], "y": q[1], "z": q[2], "w": q[3]},
                },
            }
            for p, c, t, q in items
        ]
    }


def traffic(urdf, seconds, tick_offset=0, clock=False, log_shift=0):
    """[(topic, log_time, items, stamp)] in receive order; /clock messages (items None, stamp =
    the clock) before each tick's /tf when `clock`; motion from tick `tick_offset`; receive
    times `log_shift` later than stamp + latency."""
    joints = pr2.load_urdf(urdf)
    fixed = [(j.parent, j.child) + j.pose(0.0) for j in joints if j.type == "fixed"]
    moving = [j for j in joints if j.type != "fixed"]
    out = [("/tf_static", BASE_NS + log_shift, fixed, BASE_NS)]
    for k in range(int(seconds * 100) + 1):
        stamp = BASE_NS + k * pr2.TICK_NS
        if clock:
            out.append((CLOCK, stamp + log_shift, None, stamp))
        q = pr2.trajectory(moving, k + tick_offset)
        log = stamp + LATENCY_NS + log_shift
        out.append(
            (
                "/tf",
                log,
                [(j.parent, j.child) + j.pose(q.get(j.name, 0.0)) for j in moving],
                stamp,
            )
        )
        if k % 2 == 0:
            m = k + tick_offset
            out.append(("/tf", log, pr2.base_motion(m), stamp))
            holder = "l_gripper_palm_link" if (k // 100) % 2 == 0 else "r_gripper_palm_link"
            a = 0.3 * math.sin(m * 0.02)
            tray = (
                holder,
                "tray",
                (0.1, 0.02 * math.cos(k * 0.03), 0.0),
                (0.0, math.sin(a / 2), 0.0, math.cos(a / 2)),
            )
            out.append(("/tf", log, [tray], stamp))
    return out


def reset_traffic(urdf, clock):
    """A simulation reset: the first pass, then the statics again and a second pass whose clock
    and stamps start over, received 50 ms after the first pass's last message."""
    first = traffic(urdf, RESET_FIRST_S, clock=clock)
    shift = first[-1][1] + 50_000_000 - BASE_NS
    second = traffic(urdf, RESET_SECOND_S, RESET_TICK_OFFSET, clock, shift)
    return first + second


def write_bag(path, msgs, compression, chunk_size=256 * 1024):
    with open(path, "wb") as f:
        w = Writer(f, chunk_size=chunk_size, compression=compression)
        schema = w.register_msgdef("tf2_msgs/msg/TFMessage", TF_DEF)
        clock_schema = w.register_msgdef("rosgraph_msgs/msg/Clock", CLOCK_DEF)
        for seq, (topic, log_time, items, stamp) in enumerate(msgs):
            w.write_message(
                topic,
                clock_schema if topic == CLOCK else schema,
                clock_msg(stamp) if topic == CLOCK else tf_msg(items, stamp),
                log_time=log_time,
                publish_time=log_time,
                sequence=seq,
            )
        w.finish()


def raw_bag(path, schema_name, schema_data, topic, encoding, payloads):
    with open(path, "wb") as f:
        w = RawWriter(f, compression=CompressionType.ZSTD)
        w.start(profile="ros2", library="bag_reference.py")
        sid = w.register_schema(schema_name, "ros2msg", schema_data.encode())
        cid = w.register_channel(topic, encoding, sid)
        for i, data in enumerate(payloads):
            w.add_message(
                cid, log_time=BASE_NS + i * NS, publish_time=BASE_NS + i * NS, data=data, sequence=i
            )
        w.finish()


def bad_bags(out, good_payloads):
    raw_bag(
        os.path.join(out, "wrong_schema.mcap"),
        "geometry_msgs/msg/PoseStamped",
        "std_msgs/Header header\ngeometry_msgs/Pose pose\n",
        "/tf",
        "cdr",
        good_payloads[:2],
    )
    raw_bag(
        os.path.join(out, "wrong_encoding.mcap"),
        "tf2_msgs/msg/TFMessage",
        TF_DEF,
        "/tf",
        "json",
        [b'{"transforms": []}'],
    )
    # std_msgs/String "hello" in CDR.
    raw_bag(
        os.path.join(out, "no_tf.mcap"),
        "std_msgs/msg/String",
        "string data\n",
        "/chatter",
        "cdr",
        [b"\x00\x01\x00\x00\x06\x00\x00\x00hello\x00"],
    )
    raw_bag(
        os.path.join(out, "undecodable.mcap"),
        "tf2_msgs/msg/TFMessage",
        TF_DEF,
        "/tf",
        "cdr",
        good_payloads[:3] + [b"\x00\x01\x00\x00\xff\xff\xff"],
    )


def payloads_of(path):
    from mcap.reader import make_reader

    with open(path, "rb") as f:
        return [m.data for _, _, m in make_reader(f).iter_messages(topics=["/tf"])][:3]


def normalised(q):
    n = math.sqrt(sum(c * c for c in q))
    return [c / n for c in q]


def reference(bag, queries_n, seed, cache_s=3600, follow_clock=False, latest_every=0):
    """tf2 fed `bag` as read back by mcap_ros2 (statics first, then the rest in file order),
    with a clear at each backward step of /clock when `follow_clock`; `queries_n` lookups
    between random frames (every `latest_every`-th at time 0, the latest)."""
    # The differential test's reference module: Debian's tf2 imported as it needs, and its
    # Stamp (tf2_py only calls to_sec() on the times it is given).
    from tf2_reference import Stamp, TransformStamped, ns_of, tf2_py

    core = tf2_py.BufferCore(Stamp(cache_s * NS))
    msgs = [(m.channel.topic, m.ros_msg) for m in read_ros2_messages(bag, log_time_order=False)]
    frames, stamps = set(), []
    ordered = [m for m in msgs if m[0] == "/tf_static"] + [m for m in msgs if m[0] != "/tf_static"]
    clock, clears = None, 0
    for topic, msg in ordered:
        if topic == CLOCK:
            now = msg.clock.sec * NS + msg.clock.nanosec
            # tf2_ros's Buffer: a jump callback with min_backward -1 ns clears on any step back.
            if follow_clock and clock is not None and now < clock:
                core.clear()
                clears += 1
                stamps = []
            clock = now
            continue
        for t in msg.transforms:
            m = TransformStamped()
            m.header.frame_id, m.child_frame_id = t.header.frame_id, t.child_frame_id
            ns = t.header.stamp.sec * NS + t.header.stamp.nanosec
            m.header.stamp = Stamp(ns)
            tr, ro = t.transform.translation, t.transform.rotation
            m.transform.translation.x, m.transform.translation.y = tr.x, tr.y
            m.transform.translation.z = tr.z
            # ROS 2 normalises on insert; ROS 1 stores as given.
            q = normalised([ro.x, ro.y, ro.z, ro.w])
            r = m.transform.rotation
            r.x, r.y, r.z, r.w = q
            if topic == "/tf_static":
                core.set_transform_static(m, "bag")
            else:
                core.set_transform(m, "bag")
                stamps.append(ns)
            frames.update((t.header.frame_id, t.child_frame_id))
    frames = sorted(frames)
    # Query times around what the buffer holds (after the last clear, if any).
    stamps = sorted(set(stamps))
    rng = random.Random(seed)
    queries = []
    for i in range(queries_n):
        a, b = rng.choice(frames), rng.choice(frames)
        if latest_every and i % latest_every == 0:
            t = 0
        elif i % 2 == 0:
            t = stamps[(i * 10) % len(stamps)]
        else:
            t = rng.randrange(stamps[0] - NS // 5, stamps[-1] + NS // 5, 1000)
        queries.append([a, b, t])
    answers = []
    for a, b, t in queries:
        try:
            r = core.lookup_transform_core(a, b, Stamp(t))
            tr, ro = r.transform.translation, r.transform.rotation
            answers.append(
                {"t": [tr.x, tr.y, tr.z], "q": [ro.x, ro.y, ro.z, ro.w], "s": ns_of(r.header.stamp)}
            )
        except tf2_py.TransformException as e:
            answers.append({"e": type(e).__name__})
    return {
        "reference": "tf2 0.7.6 (ROS 1 BufferCore, Debian python3-tf2) "
        f"fed {os.path.basename(bag)} read by mcap_ros2"
        + (f", cleared at {clears} backward /clock jumps" if follow_clock else ""),
        "cache_time_s": cache_s,
        "clears": clears,
        "frames": frames,
        "queries": queries,
        "answers": answers,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--urdf", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--queries", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bags-only", action="store_true", help="write no expect*.json (needs no tf2)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    msgs = traffic(args.urdf, args.seconds)
    for name, comp in (
        ("zstd", CompressionType.ZSTD),
        ("lz4", CompressionType.LZ4),
        ("plain", CompressionType.NONE),
    ):
        write_bag(os.path.join(args.out, f"pr2_{name}.mcap"), msgs, comp)
    short = [m for m in msgs if m[3] < BASE_NS + NS]
    write_bag(os.path.join(args.out, "short.mcap"), short, CompressionType.ZSTD)
    bad_bags(args.out, payloads_of(os.path.join(args.out, "pr2_plain.mcap")))
    for name, clock in (("reset.mcap", True), ("reset_noclock.mcap", False)):
        write_bag(
            os.path.join(args.out, name), reset_traffic(args.urdf, clock), CompressionType.ZSTD
        )
    if args.bags_only:
        print(f"bag_reference: {len(msgs)} messages; bags in {args.out}")
        return 0
    ref = reference(os.path.join(args.out, "pr2_zstd.mcap"), args.queries, args.seed)
    with open(os.path.join(args.out, "expect.json"), "w") as f:
        json.dump(ref, f)
    reset = reference(
        os.path.join(args.out, "reset.mcap"),
        args.queries // 2,
        args.seed,
        cache_s=10,
        follow_clock=True,
        latest_every=10,
    )
    with open(os.path.join(args.out, "expect_reset.json"), "w") as f:
        json.dump(reset, f)
    print(
        f"bag_reference: {len(msgs)} messages, {len(ref['frames'])} frames, "
        f"{len(ref['queries'])} queries ({sum(1 for a in ref['answers'] if 't' in a)} answered)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
