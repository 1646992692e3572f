"""``tf_shm.static_transform_broadcaster``: tf2_ros's ``StaticTransformBroadcaster`` (tf_shm's
own copy, for the reason given in :mod:`tf_shm.transform_broadcaster`)."""

from __future__ import annotations

from typing import Any

from .transform_broadcaster import _as_list


class StaticTransformBroadcaster:
    """tf2_ros's ``StaticTransformBroadcaster(node, qos=None)``: publishes on ``/tf_static``
    with depth 1, KEEP_LAST, TRANSIENT_LOCAL (tf2_ros's QoS), each time the whole set of static
    transforms sent so far (the first one sent per child frame, as tf2_ros keeps them)."""

    def __init__(self, node: Any, qos: Any = None) -> None:
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile
        from tf2_msgs.msg import TFMessage

        if qos is None:
            qos = QoSProfile(
                depth=1,
                durability=DurabilityPolicy.TRANSIENT_LOCAL,
                history=HistoryPolicy.KEEP_LAST,
            )
        self.pub_tf = node.create_publisher(TFMessage, "/tf_static", qos)
        self.net_message = TFMessage()
        self._child_frame_ids: set[str] = set()

    def sendTransform(self, transform: Any) -> None:
        """Adds a ``TransformStamped`` or a list of them (a child frame already sent keeps
        its first transform, as in tf2_ros) and publishes the whole set."""
        for t_in in _as_list(transform):
            if t_in.child_frame_id not in self._child_frame_ids:
                self._child_frame_ids.add(t_in.child_frame_id)
                self.net_message.transforms.append(t_in)
        self.pub_tf.publish(self.net_message)


__all__ = ["StaticTransformBroadcaster"]
