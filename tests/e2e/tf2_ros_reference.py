"""Reference and graph probe of tests/e2e/test_tf2_ros_opt_in.py: a plain tf2_ros node (tf2_ros's
own Buffer, 120 s of history, and TransformListener; never run with TF_SHM_TF2_ROS) that prints
``{"ready": true}`` once it holds a transform (with arguments ``TARGET SOURCE``: once it can
transform that pair), then listens until its stdin brings one JSON
object::

    {"queries": [[target, source, sec, nanosec], ...],
     "nodes": [names that must be in the graph], "subscribers": [names that must subscribe /tf]}

It then waits (up to 15 s) until every name of "nodes" is a node of the graph and every name of
"subscribers" subscribes /tf, and prints one JSON line: the graph's node names, the names of the
nodes subscribing /tf and /tf_static (rclpy's graph API), and tf2's answer to every query
(``lookup_transform`` at that stamp: translation x, y, z and rotation x, y, z, w, or the error).
"""

import json
import sys
import time

import rclpy
import tf2_ros
from rclpy.duration import Duration
from rclpy.time import Time


def main():
    assert tf2_ros.Buffer.__module__ == "tf2_ros.buffer", "the reference must be tf2_ros's own"
    rclpy.init()
    node = rclpy.create_node("tf2_reference")
    buffer = tf2_ros.Buffer(cache_time=Duration(seconds=120))
    listener = tf2_ros.TransformListener(buffer, node, spin_thread=True)
    # Ready once it holds a transform — with TARGET SOURCE given, once it can transform that
    # pair (a static alone is not enough): every answer of that pair the test takes from then on
    # has a stamp this buffer holds too.
    pair = sys.argv[1:3]
    while (
        not buffer.can_transform(pair[0], pair[1], Time())
        if pair
        else buffer.all_frames_as_yaml().strip() in ("", "[]")
    ):
        time.sleep(0.05)
    print(json.dumps({"ready": True}), flush=True)
    request = json.loads(sys.stdin.read())

    def graph():
        names = sorted(n for n, _ in node.get_node_names_and_namespaces())
        subs = {
            topic: sorted(i.node_name for i in node.get_subscriptions_info_by_topic(topic))
            for topic in ("/tf", "/tf_static")
        }
        return names, subs

    end = time.monotonic() + 15
    while True:
        names, subs = graph()
        if (
            set(request["nodes"]) <= set(names)
            and set(request["subscribers"]) <= set(subs["/tf"])
            or time.monotonic() > end
        ):
            break
        time.sleep(0.2)
    time.sleep(1.0)  # discovery of anything else (a hooked node's subscription, were there one)
    names, subs = graph()
    answers = []
    for target, source, sec, nanosec in request["queries"]:
        try:
            t = buffer.lookup_transform(target, source, Time(seconds=sec, nanoseconds=nanosec))
        except tf2_ros.TransformException as e:
            answers.append({"error": f"{type(e).__name__}: {e}"})
            continue
        tr, q = t.transform.translation, t.transform.rotation
        answers.append({"xyz": [tr.x, tr.y, tr.z], "xyzw": [q.x, q.y, q.z, q.w]})
    print(json.dumps({"nodes": names, "subscribers": subs, "answers": answers}), flush=True)
    listener.unregister()
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
