"""No-op listeners with tf2_ros's signatures: the bridge listens for every process, so
``from tf_shm import Buffer, TransformListener`` is the whole port of a node."""

from typing import Any


class TransformListener:
    """tf2_ros's ``TransformListener(buffer, node, *, spin_thread=False, qos=None,
    static_qos=None)``. Does nothing: ``tf_shm_bridge`` subscribes to /tf and /tf_static once
    per host and the :class:`tf_shm.Buffer` reads what it stores. No subscription, no thread."""

    def __init__(
        self,
        buffer: Any,
        node: Any = None,
        *,
        spin_thread: bool = False,
        qos: Any = None,
        static_qos: Any = None,
    ) -> None:
        self.buffer = buffer
        self.node = node

    def unregister(self) -> None:
        """Nothing to unregister."""

    def __del__(self) -> None:
        pass


class StaticTransformListener(TransformListener):
    """tf2_ros's ``StaticTransformListener``; a no-op for the same reason."""
