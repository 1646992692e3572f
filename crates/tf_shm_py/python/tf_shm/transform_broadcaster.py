"""``tf_shm.transform_broadcaster``: tf2_ros's ``TransformBroadcaster``.

Broadcasting is publishing on ``/tf`` over DDS, whoever listens (the bridge receives it like any
publisher's). This is tf_shm's own copy of tf2_ros's few lines, with its QoS (depth 100), rather
than a re-export of tf2_ros's class, so it is one class whether tf2_ros is installed or not; a
test checks it publishes what tf2_ros's does, with the same QoS.
"""

from __future__ import annotations

from typing import Any


def _as_list(transform: Any) -> list[Any]:
    if isinstance(transform, list):
        return transform
    if hasattr(transform, "__iter__"):
        return list(transform)
    return [transform]


class TransformBroadcaster:
    """tf2_ros's ``TransformBroadcaster(node, qos=None)``: publishes ``TFMessage`` s on
    ``/tf`` (``qos``: a QoSProfile or a depth; default depth 100, tf2_ros's)."""

    def __init__(self, node: Any, qos: Any = None) -> None:
        from rclpy.qos import QoSProfile
        from tf2_msgs.msg import TFMessage

        if qos is None:
            qos = QoSProfile(depth=100)
        self._msg = TFMessage
        self.pub_tf = node.create_publisher(TFMessage, "/tf", qos)

    def sendTransform(self, transform: Any) -> None:
        """Publishes a ``TransformStamped`` or a list (any iterable) of them."""
        self.pub_tf.publish(self._msg(transforms=_as_list(transform)))


__all__ = ["TransformBroadcaster"]
