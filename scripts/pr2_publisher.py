#!/usr/bin/env python3
"""Publish the PR2's TF tree over ROS 2 as robot_state_publisher would, on a deterministic trajectory.

Run in the project's ROS environment (rclpy + our tf2_msgs):

    scripts/ros-env.sh run python3 scripts/pr2_publisher.py [--stamp-base 1000] [--duration 10]
        [--log FILE] [--rate-scale 1.0] [--urdf PATH]

* Fixed joints: one TFMessage on /tf_static at start (keep-last 1, reliable, transient-local,
  like tf2_ros's StaticTransformBroadcaster), stamped with the stamp base.
* Moving joints: one TFMessage on /tf every tick k (100 Hz), stamped base + k * 10 ms, with
  q_j(k) = mid_j + 0.45 * range_j * sin(2 pi f_j t_k + phase_j), t_k = k * 0.01 s: smooth, inside
  the limits. Mimic joints follow their master (multiplier * q + offset), as
  joint_state_publisher does. Continuous joints use range 2 pi around 0.
* map -> odom (slow drift) and odom -> base_footprint (a circle of radius 1 m) at 50 Hz (even k),
  in their own TFMessage on /tf.
* URDF `floating` and `planar` joints (the PR2 has none) get a fixed default pose: the joint
  origin, i.e. zero motion, published on /tf like the other moving joints.

Stamps are synthetic (integer ns; --stamp-base defaults to now, taken once the node exists, so
tick k goes out at its stamp up to this loop's scheduling), so every published transform is a
function of k alone; --log writes each one as a JSON line before it is published:
{"parent", "child", "stamp_ns", "t": [x, y, z], "q": [x, y, z, w], "static": bool}.
--rate-scale multiplies the wall-clock rate only (stamps keep their 10 ms step).
Stops after --duration seconds of stamps (default: never) or on SIGINT/SIGTERM, exit status 0.
"""

import argparse
import json
import math
import os
import signal
import sys
import time
import xml.etree.ElementTree as ET

TICK_NS = 10_000_000  # 100 Hz
MOVING = ("revolute", "continuous", "prismatic")
DEFAULT_POSE = ("floating", "planar")


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def quat_rotate(q, v):
    p = quat_mul(quat_mul(q, (v[0], v[1], v[2], 0.0)), (-q[0], -q[1], -q[2], q[3]))
    return p[:3]


def quat_axis_angle(axis, angle):
    s = math.sin(angle / 2.0)
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2.0))


def quat_rpy(r, p, y):
    """URDF rpy: R = Rz(y) Ry(p) Rx(r)."""
    return quat_mul(
        quat_mul(quat_axis_angle((0, 0, 1), y), quat_axis_angle((0, 1, 0), p)),
        quat_axis_angle((1, 0, 0), r),
    )


def floats(text, default):
    return tuple(float(v) for v in text.split()) if text else default


class Joint:
    """One URDF joint: origin, axis, type, limits, mimic."""

    def __init__(self, el):
        self.name = el.get("name")
        self.type = el.get("type")
        self.parent = el.find("parent").get("link")
        self.child = el.find("child").get("link")
        origin = el.find("origin")
        xyz = floats(origin.get("xyz"), (0.0, 0.0, 0.0)) if origin is not None else (0.0,) * 3
        rpy = floats(origin.get("rpy"), (0.0, 0.0, 0.0)) if origin is not None else (0.0,) * 3
        self.xyz, self.rot = xyz, quat_rpy(*rpy)
        axis = el.find("axis")
        a = floats(axis.get("xyz") if axis is not None else None, (1.0, 0.0, 0.0))
        n = math.sqrt(sum(c * c for c in a))
        self.axis = tuple(c / n for c in a)
        limit = el.find("limit")
        lo = float(limit.get("lower", 0.0)) if limit is not None else 0.0
        hi = float(limit.get("upper", 0.0)) if limit is not None else 0.0
        if self.type == "continuous" or (self.type in MOVING and lo >= hi):
            lo, hi = -math.pi, math.pi
        self.lower, self.upper = lo, hi
        mimic = el.find("mimic")
        self.mimic = (
            None
            if mimic is None
            else (
                mimic.get("joint"),
                float(mimic.get("multiplier", 1.0)),
                float(mimic.get("offset", 0.0)),
            )
        )

    def pose(self, q):
        """(translation, quaternion) of child in parent at joint position q."""
        if self.type in ("revolute", "continuous"):
            return self.xyz, quat_mul(self.rot, quat_axis_angle(self.axis, q))
        if self.type == "prismatic":
            d = quat_rotate(self.rot, tuple(c * q for c in self.axis))
            return tuple(o + c for o, c in zip(self.xyz, d)), self.rot
        return self.xyz, self.rot  # fixed; floating/planar at their default pose


def load_urdf(path):
    joints = [Joint(el) for el in ET.parse(path).getroot().findall("joint")]
    for j in joints:
        if j.type not in MOVING + DEFAULT_POSE + ("fixed",):
            raise SystemExit(f"pr2_publisher: joint {j.name} has unknown type {j.type!r}")
    return joints


def trajectory(joints, k):
    """Joint positions at tick k (deterministic; mimic joints follow their master)."""
    t = k * 0.01
    q = {}
    for i, j in enumerate(joints):
        if j.type in MOVING and j.mimic is None:
            mid, half = (j.lower + j.upper) / 2.0, (j.upper - j.lower) / 2.0
            q[j.name] = mid + 0.9 * half * math.sin(2 * math.pi * (0.05 + 0.005 * i) * t + 0.7 * i)
    for j in joints:
        if j.mimic is not None:
            master, mult, off = j.mimic
            q[j.name] = mult * q.get(master, 0.0) + off
    return q


def base_motion(k):
    """map -> odom and odom -> base_footprint at tick k."""
    t = k * 0.01
    drift = (
        (0.1 + 0.02 * math.sin(0.05 * t), -0.05 + 0.01 * t / 60.0, 0.0),
        quat_axis_angle((0, 0, 1), 0.02 * math.sin(0.1 * t)),
    )
    w = 0.2  # rad/s on a 1 m circle
    circle = (
        (math.cos(w * t), math.sin(w * t), 0.0),
        quat_axis_angle((0, 0, 1), w * t + math.pi / 2),
    )
    return [("map", "odom") + drift, ("odom", "base_footprint") + circle]


class Publisher:
    """rclpy node with a /tf and a /tf_static publisher and the JSON-lines log."""

    def __init__(self, log_path):
        import rclpy
        from geometry_msgs.msg import TransformStamped
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from rclpy.signals import SignalHandlerOptions
        from tf2_msgs.msg import TFMessage

        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)  # main() handles signals
        self.rclpy, self.TFMessage, self.TS = rclpy, TFMessage, TransformStamped
        self.node = rclpy.create_node("pr2_publisher")
        self.tf = self.node.create_publisher(
            TFMessage,
            "/tf",
            QoSProfile(
                depth=100,
                reliability=ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.VOLATILE,
            ),
        )
        self.tf_static = self.node.create_publisher(
            TFMessage,
            "/tf_static",
            QoSProfile(
                depth=1,
                reliability=ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.TRANSIENT_LOCAL,
            ),
        )
        # Open for the publisher's life: close() closes it.
        self.log = open(log_path, "w") if log_path else None  # noqa: SIM115

    def send(self, items, stamp_ns, static):
        """items: [(parent, child, xyz, quat)]; logs them, then publishes one TFMessage."""
        msgs = []
        for parent, child, xyz, quat in items:
            m = self.TS()
            m.header.frame_id, m.child_frame_id = parent, child
            m.header.stamp.sec, m.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
            tr, ro = m.transform.translation, m.transform.rotation
            tr.x, tr.y, tr.z = xyz
            ro.x, ro.y, ro.z, ro.w = quat
            msgs.append(m)
        if self.log:
            self.log.write(
                "".join(
                    json.dumps(
                        {
                            "parent": p,
                            "child": c,
                            "stamp_ns": stamp_ns,
                            "t": list(t),
                            "q": list(q),
                            "static": static,
                        }
                    )
                    + "\n"
                    for p, c, t, q in items
                )
            )
            self.log.flush()
        (self.tf_static if static else self.tf).publish(self.TFMessage(transforms=msgs))

    def close(self):
        if self.log:
            self.log.close()
        self.node.destroy_node()
        self.rclpy.try_shutdown()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--urdf",
        default=os.environ.get("TF_SHM_PR2_URDF"),
        help="URDF file (default: $TF_SHM_PR2_URDF)",
    )
    ap.add_argument(
        "--stamp-base",
        type=float,
        default=None,
        help="stamp of tick 0, s (default: now, to the microsecond)",
    )
    ap.add_argument(
        "--duration", type=float, default=None, help="seconds of stamps (default: forever)"
    )
    ap.add_argument("--log", help="write every published transform to this JSON-lines file")
    ap.add_argument("--rate-scale", type=float, default=1.0, help="wall-clock rate multiplier")
    args = ap.parse_args()
    if not args.urdf:
        ap.error("no URDF: give --urdf or set TF_SHM_PR2_URDF")
    joints = load_urdf(args.urdf)
    ticks = None if args.duration is None else round(args.duration * 100)

    pub = Publisher(args.log)
    # "Now" once the node exists: rclpy's import and init take ~0.3 s, and a base taken before
    # them put every stamp that far behind the wall clock (tf_shm monitor's delay).
    base_ns = (
        round(args.stamp_base * 1e6) * 1000
        if args.stamp_base is not None
        else time.time_ns() // 1000 * 1000
    )
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(True))
    fixed = [(j.parent, j.child) + j.pose(0.0) for j in joints if j.type == "fixed"]
    moving = [j for j in joints if j.type != "fixed"]
    pub.send(fixed, base_ns, True)
    print(
        f"pr2_publisher: {len(fixed)} static, {len(moving)} moving joints; "
        f"stamps from {base_ns / 1e9:.6f} s",
        flush=True,
    )

    period = TICK_NS / 1e9 / args.rate_scale
    start = time.monotonic()
    k = 0
    while not stop and (ticks is None or k <= ticks):
        stamp = base_ns + k * TICK_NS
        q = trajectory(joints, k)
        pub.send([(j.parent, j.child) + j.pose(q.get(j.name, 0.0)) for j in moving], stamp, False)
        if k % 2 == 0:
            pub.send(base_motion(k), stamp, False)
        k += 1
        delay = start + k * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    pub.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
