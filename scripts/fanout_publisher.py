#!/usr/bin/env python3
"""The fan-out benchmark's TF source (scripts/fanout.sh): a 50-frame tree at 100 Hz.

    scripts/ros-env.sh run python3 scripts/fanout_publisher.py [--rate 100]

* /tf: every tick, ONE TFMessage with the 50 dynamic transforms odom -> link_01 and
  link_{i//2} -> link_i (i = 2..50; a binary tree, depth up to 6), all stamped with the wall
  clock, small smooth motions.
* /tf_static: once at start (keep-last 1, reliable, transient-local, like tf2_ros's
  StaticTransformBroadcaster): sensor_0..3 under link_50, link_41, link_33, link_26.
Runs until SIGINT/SIGTERM.
"""

import argparse
import math
import time

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from geometry_msgs.msg import TransformStamped
from tf2_msgs.msg import TFMessage

N_DYNAMIC = 50
STATICS = (("link_50", "sensor_0"), ("link_41", "sensor_1"), ("link_33", "sensor_2"),
           ("link_26", "sensor_3"))


def name(i):
    return "odom" if i == 0 else f"link_{i:02d}"


def tf(parent, child, xyz, yaw):
    m = TransformStamped()
    m.header.frame_id, m.child_frame_id = parent, child
    m.transform.translation.x, m.transform.translation.y, m.transform.translation.z = xyz
    m.transform.rotation.z, m.transform.rotation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=100.0)
    a = ap.parse_args()
    rclpy.init()
    node = rclpy.create_node("fanout_publisher")
    pub = node.create_publisher(TFMessage, "/tf", QoSProfile(
        depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE))
    spub = node.create_publisher(TFMessage, "/tf_static", QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    statics = [tf(p, c, (0.05, 0.0, 0.1), 0.0) for p, c in STATICS]
    sec, nsec = divmod(time.time_ns(), 1_000_000_000)
    for m in statics:
        m.header.stamp.sec, m.header.stamp.nanosec = sec, nsec
    spub.publish(TFMessage(transforms=statics))

    msgs = [tf(name(i // 2), name(i), (0.1, 0.05 * (i % 3), 0.2), 0.0)
            for i in range(1, N_DYNAMIC + 1)]  # i // 2 == 0 for link_01: odom
    period, due, k = 1.0 / a.rate, time.monotonic(), 0
    try:
        while rclpy.ok():  # rclpy's own SIGTERM/SIGINT handler ends the context
            sec, nsec = divmod(time.time_ns(), 1_000_000_000)
            for i, m in enumerate(msgs):
                yaw = 0.3 * math.sin(0.01 * k + i)
                m.header.stamp.sec, m.header.stamp.nanosec = sec, nsec
                m.transform.rotation.z, m.transform.rotation.w = math.sin(yaw / 2), math.cos(yaw / 2)
            pub.publish(TFMessage(transforms=msgs))
            k += 1
            due += period
            time.sleep(max(0.0, due - time.monotonic()))
    except Exception:  # publish racing the shutdown
        pass


if __name__ == "__main__":
    main()
