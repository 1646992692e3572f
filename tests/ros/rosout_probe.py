"""rclpy node for tests/ros/test_bridge_logging.py: publishes a transform with a NaN on /tf until
a WARN from LOGGER mentioning CHILD_FRAME arrives on /rosout; prints that Log message as JSON.
Exits 1 if none came within the timeout."""

import argparse
import json
import sys
import time

import rclpy
from geometry_msgs.msg import TransformStamped
from rcl_interfaces.msg import Log
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--logger", required=True)
    ap.add_argument("--child-frame", required=True)
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()

    rclpy.init()
    node = rclpy.create_node("rosout_probe")
    got = []

    def on_log(m):
        if m.name == a.logger and m.level == Log.WARN and a.child_frame in m.msg:
            got.append(
                {
                    "name": m.name,
                    "level": m.level,
                    "msg": m.msg,
                    "file": m.file,
                    "line": m.line,
                    "function": m.function,
                }
            )

    # /rosout's own QoS (rcl: reliable, transient local): a warning sent before we matched is
    # still delivered.
    qos = QoSProfile(
        depth=1000,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    node.create_subscription(Log, "/rosout", on_log, qos)
    pub = node.create_publisher(TFMessage, "/tf", 100)
    t = TransformStamped()
    t.header.frame_id = "world"
    t.header.stamp.sec = 1
    t.child_frame_id = a.child_frame
    t.transform.translation.x = float("nan")
    t.transform.rotation.w = 1.0
    end = time.monotonic() + a.timeout
    while not got and time.monotonic() < end:
        pub.publish(TFMessage(transforms=[t]))  # volatile /tf: repeat until matched
        rclpy.spin_once(node, timeout_sec=0.2)
    node.destroy_node()
    rclpy.shutdown()
    if not got:
        print(
            f"no WARN from {a.logger} mentioning {a.child_frame} on /rosout in {a.timeout} s",
            file=sys.stderr,
        )
        return 1
    print(json.dumps(got[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
