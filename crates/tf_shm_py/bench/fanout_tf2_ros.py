"""Fan-out benchmark, arms PR and PH: one ordinary tf2_ros Python node, knowing nothing of
tf_shm: ``tf2_ros.Buffer()`` + ``tf2_ros.TransformListener(buffer, node)`` and a 100 Hz timer
looking up the given pairs at time 0 with ``Buffer.lookup_transform``.

Arm PR runs it as it is (tf2_ros's listener subscribes /tf and /tf_static in every process);
arm PH runs the same file with TF_SHM_TF2_ROS=1 in a Python where the tf_shm wheel is installed
(its .pth hook), next to one tf_shm_bridge: its Buffer and TransformListener are then tf_shm's.

    fanout_tf2_ros.py --pairs odom:link_50,... [--secs S] [--skip S0] [--name NAME] [--arm PR]

Runs in the project's ROS environment (scripts/ros-env.sh); prints one JSON line on stderr:
lookups that succeeded and failed after the first S0 seconds, and the module of the Buffer class
the node got (``tf2_ros.buffer`` or tf_shm's).
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
    ap.add_argument("--name", default="tf2_ros_listener")
    ap.add_argument("--arm", default="PR")
    args = ap.parse_args()
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",")]

    rclpy.init()
    node = Node(args.name)
    buffer = tf2_ros.Buffer()
    listener = tf2_ros.TransformListener(buffer, node)
    start = time.monotonic()
    tally = {"ok": 0, "err": 0, "first_err": ""}
    latest = Time()

    def on_timer():
        counting = time.monotonic() - start >= args.skip
        for target, source in pairs:
            try:
                buffer.lookup_transform(target, source, latest)
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
    report = {
        "arm": args.arm,
        "lookups_ok": tally["ok"],
        "lookups_err": tally["err"],
        "first_err": tally["first_err"],
        "buffer": type(buffer).__module__,
    }
    sys.stderr.write(json.dumps(report) + "\n")
    listener.unregister()
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
