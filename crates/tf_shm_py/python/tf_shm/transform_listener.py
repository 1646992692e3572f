"""``tf_shm.transform_listener``: tf2_ros's ``TransformListener`` with its contract, minus the
DDS subscriptions: ``tf_shm_bridge`` subscribes to /tf and /tf_static once per host and the
:class:`tf_shm.Buffer` reads what it stores."""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any


class BridgeSubscription:
    """What :attr:`TransformListener.tf_sub` / ``tf_static_sub`` hold: no DDS subscription (the
    bridge has the one subscription of the host), but the attributes code reads from tf2_ros's
    (``topic_name``, ``qos_profile``, ``msg_type``, ``callback``, ``callback_group``), so a node
    that logs, inspects or ``node.destroy_subscription()``-s them keeps working (rclpy returns
    False for it: it is not one of the node's subscriptions). ``handle`` is None."""

    handle = None

    def __init__(self, topic: str, qos: Any, msg_type: Any, group: Any) -> None:
        self.topic_name = topic
        self.topic = topic
        self.qos_profile = qos
        self.msg_type = msg_type
        self.callback = lambda msg: None
        self.callback_group = group
        self.event_handlers: list[Any] = []

    def destroy(self) -> None:
        """Nothing to destroy."""

    def __repr__(self) -> str:
        return f"<tf_shm BridgeSubscription {self.topic_name!r}: served by tf_shm_bridge>"


def _qos(given: Any, transient: bool) -> Any:
    """tf2_ros's listener QoS: depth 100, KEEP_LAST, VOLATILE (/tf) or TRANSIENT_LOCAL
    (/tf_static), unless given (a QoSProfile or a depth)."""
    try:
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile
    except ImportError:
        return given
    if given is None:
        durability = DurabilityPolicy.TRANSIENT_LOCAL if transient else DurabilityPolicy.VOLATILE
        return QoSProfile(depth=100, durability=durability, history=HistoryPolicy.KEEP_LAST)
    if isinstance(given, int):
        return QoSProfile(depth=given)
    return given


def _resolved(node: Any, topic: str) -> str:
    """``topic`` as ``node`` would subscribe to it (its namespace and remaps applied), as the
    topic name of tf2_ros's subscription reads."""
    resolve = getattr(node, "resolve_topic_name", None)
    if resolve is None:
        return topic
    name = resolve(topic)
    return name if isinstance(name, str) else topic


def _say_remapped(node: Any, tf: str, tf_static: str) -> None:
    """A node whose /tf or /tf_static is remapped would hear another tree through tf2_ros;
    the arena holds what its bridge subscribes to, which this process cannot see: said once,
    at error level, as reading the wrong robot's tree must not pass silently."""
    if (tf, tf_static) == ("/tf", "/tf_static"):
        return
    logger = getattr(node, "get_logger", None)
    if logger is None:
        return
    logger().error(
        f"tf_shm: this node subscribes to TF as {tf} and {tf_static} (remapped), but "
        "tf_shm.Buffer answers from the arena it opened (TF_SHM_NAME, default 'default'), "
        "which holds what that arena's tf_shm_bridge subscribes to (its tf_topic and "
        "tf_static_topic parameters, /tf and /tf_static by default), not these topics. Run a "
        f"bridge with tf_topic:={tf} tf_static_topic:={tf_static} and its own arena_name, and "
        "this node with TF_SHM_NAME set to it; or run this node without TF_SHM_TF2_ROS."
    )


def _wake_on_data(buffer_ref: Any, stop: threading.Event) -> None:
    """The executor wake-ups tf2_ros's listener subscriptions give: each time the bridge
    stores a message (the buffer's data token moves), the buffer's guard condition on the node
    is triggered, so an executor waiting in ``spin_once()`` returns as it would after running
    tf2_ros's /tf callback. Sleeps on the arena's futex (GIL released); ends with the listener
    or the buffer, and when the interpreter exits (``wait_for_data`` answers None then)."""
    buffer = buffer_ref()
    if buffer is None:
        return
    native = buffer._native
    del buffer
    token = native.data_token()
    while not stop.is_set():
        new = native.wait_for_data(token, 0.5)
        buffer = buffer_ref()
        if buffer is None or new is None:
            return
        if new != token:
            token = new
            buffer._wake()
        del buffer


class TransformListener:
    """tf2_ros's ``TransformListener(buffer, node, *, spin_thread=False, qos=None,
    static_qos=None)``.

    * ``buffer`` and ``node`` are kept as attributes; the node is handed to the buffer for its
      futures' wake-ups (a guard condition in :attr:`group`), when the buffer had none.
    * ``group``: a ``ReentrantCallbackGroup``, as tf2_ros's.
    * ``tf_sub`` / ``tf_static_sub``: :class:`BridgeSubscription` s (no DDS subscription: the
      bridge listens for every process) with the topic names (the node's namespace and remaps
      applied) and QoS tf2_ros would subscribe with. A node whose /tf or /tf_static is
      remapped gets an error log: the arena holds what its bridge subscribes to, not the
      remapped topics (see the log's text).
    * ``spin_thread=False`` (tf2_ros's default): the node's executor is woken each time the
      bridge stores a message (a guard condition of the node, triggered from a thread that
      sleeps on the arena's futex), as tf2_ros's subscriptions wake it, so code that waits
      for a transform with ``rclpy.spin_once(node)`` returns when data arrives. Its cost at
      100 messages/s: ≈ 0.8 % of a core for the waiting thread and ≈ 3.5 % for rclpy's
      executor running each wake (tf2_ros's listener costs ≈ 40 % there, its executor's wakes
      included). ``TF_SHM_LISTENER_WAKES=0`` in the environment turns the wakes off, for
      nodes that never wait in ``spin_once`` (their lookups answer the same).
    * ``spin_thread=True``: as tf2_ros, the *node* is spun on a dedicated thread
      (``dedicated_listener_thread``) by its own ``SingleThreadedExecutor`` (``executor``), so
      its timers, subscriptions and services run there; both attributes exist only then, as in
      tf2_ros. Deleting the listener shuts that executor down and joins the thread.
    * ``unregister()``: as tf2_ros's, ends the listener's part (here: the tf subscriptions'
      stand-ins are dropped from the node, which never had them; nothing stops receiving).
    """

    def __init__(
        self,
        buffer: Any,
        node: Any,
        *,
        spin_thread: bool = False,
        qos: Any = None,
        static_qos: Any = None,
    ) -> None:
        self.buffer = buffer
        self.node = node
        try:
            from rclpy.callback_groups import ReentrantCallbackGroup

            self.group: Any = ReentrantCallbackGroup()
        except ImportError:
            self.group = None
        try:
            from tf2_msgs.msg import TFMessage
        except ImportError:
            TFMessage = None
        tf, tf_static = _resolved(node, "/tf"), _resolved(node, "/tf_static")
        self.tf_sub = BridgeSubscription(tf, _qos(qos, False), TFMessage, self.group)
        self.tf_static_sub = BridgeSubscription(
            tf_static, _qos(static_qos, True), TFMessage, self.group
        )
        _say_remapped(node, tf, tf_static)
        use_node = getattr(buffer, "_use_node", None)
        if use_node is not None and node is not None:
            use_node(node, self.group)
        wakes = os.environ.get("TF_SHM_LISTENER_WAKES", "1") != "0"
        if wakes and not spin_thread and node is not None and hasattr(buffer, "_native"):
            # The node's executor wakes when data arrives, as with tf2_ros's subscriptions
            # (code that waits with spin_once() needs it); with spin_thread the listener's own
            # executor has nothing to run for TF.
            import weakref

            self._wake_stop = threading.Event()
            threading.Thread(
                target=_wake_on_data,
                args=(weakref.ref(buffer), self._wake_stop),
                name="tf_shm-listener-wake",
                daemon=True,
            ).start()
        if spin_thread:
            from rclpy.executors import SingleThreadedExecutor

            self.executor = SingleThreadedExecutor()

            def run_func() -> None:
                self.executor.add_node(self.node)
                self.executor.spin()
                self.executor.remove_node(self.node)

            self.dedicated_listener_thread = threading.Thread(target=run_func)
            self.dedicated_listener_thread.start()

    def __del__(self) -> None:
        if hasattr(self, "_wake_stop"):
            self._wake_stop.set()
        if hasattr(self, "dedicated_listener_thread") and hasattr(self, "executor"):
            self.executor.shutdown()
            self.dedicated_listener_thread.join()
        self.unregister()

    def unregister(self) -> None:
        """tf2_ros's ``unregister``: destroys the tf subscriptions on the node; here that
        finds none (rclpy answers False), as the bridge holds the host's subscription; the
        node's executor is no longer woken when data arrives."""
        if hasattr(self, "_wake_stop"):
            self._wake_stop.set()
        node = getattr(self, "node", None)
        destroy = getattr(node, "destroy_subscription", None)
        if destroy is None:
            return
        for sub in (getattr(self, "tf_sub", None), getattr(self, "tf_static_sub", None)):
            if sub is not None:
                # A node already destroyed has nothing to destroy.
                with contextlib.suppress(Exception):
                    destroy(sub)


class StaticTransformListener(TransformListener):
    """A :class:`TransformListener` (tf_shm's own name for one a node builds only for static
    frames: the bridge serves both)."""


__all__ = ["TransformListener"]
