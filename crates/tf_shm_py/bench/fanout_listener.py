"""Fan-out benchmark, arm PA: one Python node listening as tf2_ros's Python TransformListener.

tf2_ros's Python package is not installable here, so this is its listener written out: an
rclpy node subscribing /tf (keep-last 100, reliable, volatile) and /tf_static (keep-last 100,
reliable, transient-local), whose callback loops over the message's transforms in Python and
hands each to the C++ BufferCore through tf2_py's ``set_transform`` (Debian's python3-tf2, ROS 1:
each transform is converted to the ROS 1 message type it takes). A 100 Hz timer looks up the
given pairs at time 0 with ``lookup_transform_core`` (what tf2_ros's ``lookup_transform`` calls).

    fanout_listener.py --pairs odom:link_50,... [--secs S] [--skip S0] [--name NAME]

Runs in the project's ROS environment (scripts/ros-env.sh); prints one JSON line on stderr:
lookups that succeeded and failed after the first S0 seconds.
"""

import argparse
import json
import sys
import time

# ROS 1's tf2_py and its genpy messages first, then ROS 2's packages of the same names: tf2_py
# keeps the ROS 1 modules it imported; rclpy gets ROS 2's.
_saved = list(sys.path)
sys.path.insert(0, "/usr/lib/python3/dist-packages")
import rospy
import tf2_py
from geometry_msgs.msg import TransformStamped as Ros1TransformStamped

for _m in [m for m in sys.modules if m.split(".")[0] in ("geometry_msgs", "std_msgs")]:
    del sys.modules[_m]
sys.path[:] = _saved

import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage


def to_ros1(t):
    """The ROS 1 TransformStamped tf2_py's set_transform takes, from a ROS 2 one."""
    m = Ros1TransformStamped()
    m.header.frame_id = t.header.frame_id
    m.header.stamp = rospy.Time(t.header.stamp.sec, t.header.stamp.nanosec)
    m.child_frame_id = t.child_frame_id
    a, b = t.transform.translation, m.transform.translation
    b.x, b.y, b.z = a.x, a.y, a.z
    a, b = t.transform.rotation, m.transform.rotation
    b.x, b.y, b.z, b.w = a.x, a.y, a.z, a.w
    return m


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
    core = tf2_py.BufferCore(rospy.Duration(10))

    def on_tf(msg):
        for t in msg.transforms:
            core.set_transform(to_ros1(t), "default_authority")

    def on_tf_static(msg):
        for t in msg.transforms:
            core.set_transform_static(to_ros1(t), "default_authority")

    reliable = {"reliability": ReliabilityPolicy.RELIABLE, "history": HistoryPolicy.KEEP_LAST}
    node.create_subscription(TFMessage, "/tf", on_tf, QoSProfile(depth=100, **reliable))
    node.create_subscription(
        TFMessage,
        "/tf_static",
        on_tf_static,
        QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL, **reliable),
    )
    start = time.monotonic()
    tally = {"ok": 0, "err": 0, "first_err": ""}
    zero = rospy.Time(0)

    def on_timer():
        counting = time.monotonic() - start >= args.skip
        for target, source in pairs:
            try:
                core.lookup_transform_core(target, source, zero)
                ok = True
            except tf2_py.TransformException as e:
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
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
