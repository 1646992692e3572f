#!/usr/bin/python3
"""Answer lookups with Debian's tf2 (ROS 1 BufferCore via tf2_py), fed a pr2_publisher.py log.

Run with /usr/bin/python3 (python3-tf2). Reads a JSON scenario on stdin:
  {"cache_time_s": 10.0, "log": "path/to/log.jsonl", "queries": [[target, source, time_ns], ...]}
and writes one JSON list on stdout, one answer per query:
  {"s": stamp_ns, "t": [x, y, z], "q": [x, y, z, w]}  or  {"e": "ExceptionClass: text"}
Times must be whole microseconds below 1e5 s, so tf2_py's double seconds are exact.
"""

import json
import math
import sys

import rospy  # noqa: F401  (tf2_py needs rospy's message machinery loaded)
import tf2_py
from geometry_msgs.msg import TransformStamped

NS = 1_000_000_000


class Stamp:
    """tf2_py only calls to_sec() on the times it is given."""

    def __init__(self, ns):
        if ns % 1000 or ns >= 10**14:
            raise SystemExit(f"tf2_ref: time {ns} ns is not exact through double seconds")
        self.sec = ns / 1e9

    def to_sec(self):
        return self.sec


def main():
    scenario = json.load(sys.stdin)
    core = tf2_py.BufferCore(Stamp(int(scenario["cache_time_s"] * NS)))
    msg = TransformStamped()
    with open(scenario["log"]) as log:
        for line in log:
            if not line.endswith("\n"):
                break  # a line cut by the publisher's exit was never published
            r = json.loads(line)
            msg.header.frame_id, msg.child_frame_id = r["parent"], r["child"]
            msg.header.stamp = Stamp(r["stamp_ns"])
            t, q = msg.transform.translation, msg.transform.rotation
            t.x, t.y, t.z = r["t"]
            n = math.sqrt(sum(c * c for c in r["q"]))  # ROS 2 normalises on insert
            q.x, q.y, q.z, q.w = (c / n for c in r["q"])
            (core.set_transform_static if r["static"] else core.set_transform)(msg, "pr2_publisher")
    answers = []
    for target, source, time_ns in scenario["queries"]:
        try:
            ts = core.lookup_transform_core(target, source, Stamp(time_ns))
        except tf2_py.TransformException as exc:
            answers.append({"e": f"{type(exc).__name__}: {exc}"})
            continue
        t, q = ts.transform.translation, ts.transform.rotation
        answers.append(
            {
                "s": ts.header.stamp.secs * NS + ts.header.stamp.nsecs,
                "t": [t.x, t.y, t.z],
                "q": [q.x, q.y, q.z, q.w],
            }
        )
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
