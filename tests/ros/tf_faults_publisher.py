"""Publishers for the bridge's fault tests (rclpy, run in the project's ROS environment).

  statics N   N latched /tf_static publishers (one node each, as one static_transform_publisher
              per sensor mount), child frames static_0 .. static_{N-1} under base_link; prints
              "up" once all are created, then spins until killed.
  burst N     waits until a subscriber of /tf is matched, then 1 s, then publishes N /tf
              messages back to back (one transform each, child burst_i under origin, all
              stamped now); prints "sent N", then stays up until killed.
  held N      waits until a subscriber of /tf is matched, publishes one /tf message (child
              held_lead under origin), prints "lead sent", then waits for a line on stdin and
              publishes N /tf messages back to back (children held_0 .. held_{N-1}); prints
              "sent N", then stays up until killed.
  volatile_static N
              one /tf_static publisher with tf2_ros's latched QoS (node latched_static_pub, child
              latched_static under base_link) and N whose durability is volatile (nodes
              volatile_static_pub_I, children volatile_static_I), each publishing once; prints
              "up", then spins until killed.
  live HZ     /tf map -> base_link at HZ with x = stamp_s mod 100, y = 0.5, rotation about z of
              (stamp_s mod 10) rad; /tf_static base_link -> sensor (0.1, 0.2, 0.3) latched;
              prints "up", then publishes until killed.

Stamps are the wall clock (ns), so consumers can check the value from the stamp.
"""

import math
import sys
import time

import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

TF_QOS = QoSProfile(
    depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
)
STATIC_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


def transform(parent, child, stamp_ns, xyz, yaw=0.0):
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.header.stamp.sec, t.header.stamp.nanosec = divmod(stamp_ns, 10**9)
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
    t.transform.rotation.z, t.transform.rotation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return t


def say(line):
    print(line, flush=True)


def statics(n):
    nodes = []
    for i in range(n):
        node = rclpy.create_node(f"static_pub_{i}")
        pub = node.create_publisher(TFMessage, "/tf_static", STATIC_QOS)
        pub.publish(
            TFMessage(
                transforms=[
                    transform("base_link", f"static_{i}", time.time_ns(), (0.01 * i, 0.0, 0.0))
                ]
            )
        )
        nodes.append((node, pub))
    say("up")
    while True:
        time.sleep(1)


def static_one(i):
    """One latched broadcaster of `base_link -> static_<i>` in a process of its own (as one
    static_transform_publisher per sensor)."""
    node = rclpy.create_node(f"static_pub_{i}")
    pub = node.create_publisher(TFMessage, "/tf_static", STATIC_QOS)
    pub.publish(
        TFMessage(
            transforms=[transform("base_link", f"static_{i}", time.time_ns(), (0.01 * i, 0.0, 0.0))]
        )
    )
    say("up")
    while True:
        time.sleep(1)


def volatile_static(n):
    volatile = QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
    )
    nodes = []
    for name, child, qos in [("latched_static_pub", "latched_static", STATIC_QOS)] + [
        (f"volatile_static_pub_{i}", f"volatile_static_{i}", volatile) for i in range(n)
    ]:
        node = rclpy.create_node(name)
        pub = node.create_publisher(TFMessage, "/tf_static", qos)
        pub.publish(
            TFMessage(transforms=[transform("base_link", child, time.time_ns(), (0.1, 0.0, 0.0))])
        )
        nodes.append((node, pub))
    say("up")
    while True:
        time.sleep(1)


def matched_tf_publisher(node_name):
    """A /tf publisher with tf2_ros's QoS, returned 1 s after a subscriber matched it."""
    node = rclpy.create_node(node_name)
    pub = node.create_publisher(TFMessage, "/tf", TF_QOS)
    while pub.get_subscription_count() < 1:
        time.sleep(0.05)
    time.sleep(1.0)
    return node, pub


def send_back_to_back(pub, prefix, n):
    """Publishes n /tf messages back to back (children {prefix}_0 .. {prefix}_{n-1} under origin,
    one stamp, x = i), prints "sent n", then stays up until killed."""
    now = time.time_ns()
    for i in range(n):
        pub.publish(
            TFMessage(transforms=[transform("origin", f"{prefix}_{i}", now, (float(i), 0.0, 0.0))])
        )
    say(f"sent {n}")
    while True:
        time.sleep(1)


def burst(n):
    _node, pub = matched_tf_publisher("burst_pub")
    send_back_to_back(pub, "burst", n)


def held(n):
    _node, pub = matched_tf_publisher("held_pub")
    pub.publish(
        TFMessage(transforms=[transform("origin", "held_lead", time.time_ns(), (0.0, 0.0, 0.0))])
    )
    say("lead sent")
    sys.stdin.readline()
    send_back_to_back(pub, "held", n)


def live(hz):
    node = rclpy.create_node("live_pub")
    tf = node.create_publisher(TFMessage, "/tf", TF_QOS)
    st = node.create_publisher(TFMessage, "/tf_static", STATIC_QOS)
    st.publish(
        TFMessage(transforms=[transform("base_link", "sensor", time.time_ns(), (0.1, 0.2, 0.3))])
    )
    say("up")
    period = 1.0 / hz
    next_t = time.monotonic()
    while True:
        stamp = time.time_ns()
        s = stamp / 1e9
        tf.publish(
            TFMessage(
                transforms=[transform("map", "base_link", stamp, (s % 100.0, 0.5, 0.0), s % 10.0)]
            )
        )
        next_t += period
        time.sleep(max(0.0, next_t - time.monotonic()))


def main():
    mode, arg = sys.argv[1], int(sys.argv[2])
    rclpy.init()
    {
        "statics": statics,
        "static_one": static_one,
        "burst": burst,
        "held": held,
        "live": live,
        "volatile_static": volatile_static,
    }[mode](arg)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
