"""Answer lookups with ROS 2 Jazzy's tf2_ros.Buffer, fed a pr2_publisher.py log.

Run with the ROS environment's Python (scripts/ros-env.sh: tf2_ros, tf2_py, rclpy). Reads a JSON
scenario on stdin:
  {"cache_time_s": 10.0, "log": "path/to/log.jsonl", "queries": [[target, source, time_ns], ...]}
and writes one JSON list on stdout, one answer per query:
  {"s": stamp_ns, "t": [x, y, z], "q": [x, y, z, w]}  or  {"e": "ExceptionClass: text"}
The log's transforms go in as the publisher sent them (tf2 normalises the quaternion itself);
times are whole nanoseconds, as tf2 keeps them.
"""

import json
import sys

import tf2_ros
from geometry_msgs.msg import TransformStamped
from rclpy.duration import Duration
from rclpy.time import Time

NS = 1_000_000_000


def main():
    scenario = json.load(sys.stdin)
    buffer = tf2_ros.Buffer(cache_time=Duration(nanoseconds=int(scenario["cache_time_s"] * NS)))
    msg = TransformStamped()
    with open(scenario["log"]) as log:
        for line in log:
            if not line.endswith("\n"):
                break  # a line cut by the publisher's exit was never published
            r = json.loads(line)
            msg.header.frame_id, msg.child_frame_id = r["parent"], r["child"]
            msg.header.stamp = Time(nanoseconds=r["stamp_ns"]).to_msg()
            t, q = msg.transform.translation, msg.transform.rotation
            t.x, t.y, t.z = r["t"]
            q.x, q.y, q.z, q.w = r["q"]
            if r["static"]:
                buffer.set_transform_static(msg, "pr2_publisher")
            else:
                buffer.set_transform(msg, "pr2_publisher")
    answers = []
    for target, source, time_ns in scenario["queries"]:
        try:
            ts = buffer.lookup_transform(target, source, Time(nanoseconds=time_ns))
        except tf2_ros.TransformException as exc:
            answers.append({"e": f"{type(exc).__name__}: {exc}"})
            continue
        t, q = ts.transform.translation, ts.transform.rotation
        answers.append(
            {
                "s": ts.header.stamp.sec * NS + ts.header.stamp.nanosec,
                "t": [t.x, t.y, t.z],
                "q": [q.x, q.y, q.z, q.w],
            }
        )
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
