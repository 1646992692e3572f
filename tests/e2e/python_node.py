"""An rclpy node that reads TF through tf_shm.Buffer, for tests/e2e/test_python.py.

Reads a JSON list of [target, source, time_ns] on stdin, waits (up to 30 s) until the arena can
answer the first one at time 0, then writes one JSON line per query: the TransformStamped's
fields, or the exception's class and text.
"""

import json
import sys

import rclpy
from rclpy.node import Node
from rclpy.time import Time
from tf_shm import Buffer, TransformException, TransformListener


def main():
    queries = json.load(sys.stdin)
    rclpy.init()
    node = Node("tf_shm_python_consumer")
    buffer = Buffer(node=node)
    TransformListener(buffer, node)
    target, source, _ = queries[0]
    if not buffer.can_transform(
        target, source, Time(), timeout=rclpy.duration.Duration(seconds=30)
    ):
        print(json.dumps({"error": "arena never answered " + f"{target} <- {source}"}))
        return 1
    for target, source, time_ns in queries:
        try:
            t = buffer.lookup_transform(target, source, Time(nanoseconds=time_ns))
        except TransformException as e:
            print(json.dumps({"e": f"{type(e).__name__}: {e}"}))
            continue
        tr, q = t.transform.translation, t.transform.rotation
        print(
            json.dumps(
                {
                    "type": f"{type(t).__module__}.{type(t).__name__}",
                    "frame_id": t.header.frame_id,
                    "child_frame_id": t.child_frame_id,
                    "stamp_ns": t.header.stamp.sec * 1_000_000_000 + t.header.stamp.nanosec,
                    "translation_m": [tr.x, tr.y, tr.z],
                    "rotation_xyzw": [q.x, q.y, q.z, q.w],
                }
            )
        )
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
