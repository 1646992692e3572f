"""Fan-out benchmark, arm PA: one Python node listening with tf2_ros, as a ROS 2 user's does.

An rclpy node with ROS 2 Jazzy's ``tf2_ros.Buffer`` and ``tf2_ros.TransformListener`` (its /tf
and /tf_static subscriptions, QoS and callback, into tf2_py's C++ BufferCore). A 100 Hz timer
looks up the given pairs at time 0 with ``Buffer.lookup_transform``.

    fanout_listener.py --pairs odom:link_50,... [--secs S] [--skip S0] [--name NAME]

Runs in the project's ROS environment (scripts/ros-env.sh); prints one JSON line on stderr:
lookups that succeeded and failed after the first S0 seconds.
"""

import argparse
import json
import sys
import time

import rclpy
import tf2_ros
from rclpy.node import Node
from rclpy.time import Time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--secs", type=float, default=60.0)
    ap.add_argument("--skip", type=float, default=0.0)
    ap.add_argument("--name", default="py_listener")
    args = ap.parse_args()
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",")]

    rclpy.init()
    node = Node(args.name)
    buffer = tf2_ros.Buffer()
    listener = tf2_ros.TransformListener(buffer, node)
    start = time.monotonic()
    tally = {"ok": 0, "err": 0, "first_err": ""}
    zero = Time()

    def on_timer():
        counting = time.monotonic() - start >= args.skip
        for target, source in pairs:
            try:
                buffer.lookup_transform(target, source, zero)
                ok = True
            except tf2_ros.TransformException as e:
                ok = False
                if counting and not tally["first_err"]:
                    tally["first_err"] = str(e)
            if counting:
                tally["ok" if ok else "err"] += 1

    node.create_timer(0.01, on_timer)
    end = start + args.secs
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=max(0.0, min(0.1, end - time.monotonic())))
    sys.stderr.write(
        json.dumps(
            {
                "arm": "PA",
                "lookups_ok": tally["ok"],
                "lookups_err": tally["err"],
                "first_err": tally["first_err"],
            }
        )
        + "\n"
    )
    listener.unregister()
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
