"""``tf_shm.Buffer``: tf2_ros's Python ``Buffer``, answered from the shared arena."""

from __future__ import annotations

import threading
from typing import Any

from . import _native, _transform
from ._errors import TransformException
from ._messages import Flat, make_result

# What every time / duration argument accepts: rclpy.time.Time / rclpy.duration.Duration,
# builtin_interfaces.msg.Time / Duration, int nanoseconds or float seconds.
TimeLike = Any
DurationLike = Any

_rclpy_time: Any = None


def _to_rclpy_time(ns: int) -> Any:
    """rclpy.time.Time(nanoseconds=ns) where rclpy is importable, else ``ns``."""
    global _rclpy_time
    if _rclpy_time is None:
        try:
            from rclpy.time import Time

            _rclpy_time = Time
        except ImportError:
            _rclpy_time = False
    return _rclpy_time(nanoseconds=ns) if _rclpy_time else ns


class Buffer:
    """tf2_ros's ``Buffer``, reading transforms from the tf_shm arena of a ROS domain.

    The arena is filled by ``tf_shm_bridge``, which subscribes to ``/tf`` and ``/tf_static``
    once per host: this buffer needs no listener and no DDS. Answers are tf2's (ROS 2 Jazzy):
    the same values, interpolation, time 0 ("latest"), error classes and texts.

    Every result maps points in the source frame into the target frame (``T_target_source``);
    translations are in metres, quaternions ordered x, y, z, w. Times and durations are accepted
    as ``rclpy.time.Time`` / ``rclpy.duration.Duration``, ``builtin_interfaces.msg.Time`` /
    ``Duration``, ``int`` nanoseconds or ``float`` seconds (converted as rclpy does,
    ``int(s * 1e9)``); time 0 means the latest common time.

    :param cache_time: tf2's cache time. The bridge owns the history, so this is only checked:
        longer than the arena's raises ``ValueError``.
    :param node: accepted for tf2_ros compatibility and unused (the bridge listens).
    :param domain: ROS domain of the arena; default ``$ROS_DOMAIN_ID``, else 0.
    :param name: arena name, when a bridge was started with a non-default one.
    :param open_timeout: how long to wait for a bridge to serve the domain (default 5 s; 0
        fails at once). The GIL is released while waiting.
    :raises tf_shm.OpenError: no bridge serves the domain within ``open_timeout``, or the arena
        cannot be opened (the text says why).
    """

    def __init__(
        self,
        cache_time: DurationLike | None = None,
        node: Any = None,
        *,
        domain: int | None = None,
        name: str | None = None,
        open_timeout: DurationLike = 5.0,
    ) -> None:
        self._native = _native.NativeBuffer(domain, name, open_timeout)
        if cache_time is not None:
            self._native.check_cache_time(_native.to_ns(cache_time))
        self._node = node
        self._guard: Any = None
        # The hot-loop lookup is the native method itself: no Python frame in between.
        self.lookup_transform_tuple = self._native.lookup_pair

    # -- lookups ---------------------------------------------------------------------------

    def lookup_transform(
        self,
        target_frame: str,
        source_frame: str,
        time: TimeLike,
        timeout: DurationLike = 0,
    ) -> Any:
        """``T_target_source`` at ``time``, as a ``geometry_msgs.msg.TransformStamped``
        (``header.frame_id`` = target, ``child_frame_id`` = source, ``header.stamp`` = the
        requested time, or the latest common time for time 0), or a
        :class:`tf_shm.TransformResult` where geometry_msgs is not importable.

        Waits up to ``timeout`` for the transform (GIL released), then raises what the plain
        lookup raises, as tf2_ros does: ``LookupException``, ``ConnectivityException``,
        ``ExtrapolationException``, ``InvalidArgumentException``; ``TransformException`` if the
        arena cannot be read.
        """
        r = self._native.lookup_transform(target_frame, source_frame, time, timeout)
        return make_result(target_frame, source_frame, r)

    def lookup_transform_full(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
        timeout: DurationLike = 0,
    ) -> Any:
        """tf2's two-time lookup: ``source_frame`` at ``source_time`` into ``target_frame`` at
        ``target_time``, through ``fixed_frame`` (taken as constant in time). The result's stamp
        is ``target_time`` (or the target side's latest common time for 0). Waits and raises as
        :meth:`lookup_transform`."""
        r = self._native.lookup_transform_full(
            target_frame, target_time, source_frame, source_time, fixed_frame, timeout
        )
        return make_result(target_frame, source_frame, r)

    def lookup_transform_tuple(self, target_frame: str, source_frame: str, time: TimeLike) -> Flat:
        """The hot-loop lookup: ``(stamp_ns, x, y, z, qx, qy, qz, qw)`` of ``T_target_source``
        (metres; quaternion x, y, z, w), no message built, no wait. The frame pair is resolved
        once and cached, so repeated calls skip name lookups. Raises as
        :meth:`lookup_transform`."""
        return self._native.lookup_pair(target_frame, source_frame, time)

    def can_transform(
        self,
        target_frame: str,
        source_frame: str,
        time: TimeLike,
        timeout: DurationLike = 0,
        return_debug_tuple: bool = False,
    ) -> bool | tuple[bool, str]:
        """Whether :meth:`lookup_transform` would succeed, after waiting up to ``timeout``
        (GIL released). With ``return_debug_tuple``, ``(ok, tf2's error text or "")`` as
        tf2_ros returns it. Never raises a tf2 error."""
        r = self._native.can_transform(target_frame, source_frame, time, timeout)
        return r if return_debug_tuple else r[0]

    def can_transform_full(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
        timeout: DurationLike = 0,
        return_debug_tuple: bool = False,
    ) -> bool | tuple[bool, str]:
        """Whether :meth:`lookup_transform_full` would succeed; as :meth:`can_transform`."""
        r = self._native.can_transform_full(
            target_frame, target_time, source_frame, source_time, fixed_frame, timeout
        )
        return r if return_debug_tuple else r[0]

    def get_latest_common_time(self, target_frame: str, source_frame: str) -> Any:
        """tf2's latest common time of the two frames: an ``rclpy.time.Time`` where rclpy is
        importable, else int ns. Raises as tf2_py does: ``InvalidArgumentException`` or
        ``LookupException`` for a bad or unknown name, else the base ``TransformException``
        with tf2's text (frames not connected, a loop)."""
        return _to_rclpy_time(self._native.get_latest_common_time(target_frame, source_frame))

    def all_frames_as_yaml(self) -> str:
        """tf2's ``allFramesAsYAML()``: every frame's parent, rate, latest stamp, buffer length."""
        return self._native.all_frames_as_yaml(0)

    def all_frames_as_string(self) -> str:
        """tf2's ``allFramesAsString()``: one line per frame, ``Frame child exists with parent
        parent.``"""
        return self._native.all_frames_as_string()

    # -- waiting, futures ------------------------------------------------------------------

    def wait_for_transform_async(self, target_frame: str, source_frame: str, time: TimeLike) -> Any:
        """A future that completes with :meth:`lookup_transform`'s result once the transform
        is available (an ``rclpy.task.Future`` where rclpy is importable, else a
        ``concurrent.futures.Future``). Waits on a daemon thread with the GIL released;
        cancelling the future ends the wait. A coroutine awaiting it in an rclpy executor is
        resumed through a guard condition of the Buffer's ``node`` (give one)."""
        return self._future(
            lambda w: self._native.can_transform(target_frame, source_frame, time, w)[0],
            lambda: self.lookup_transform(target_frame, source_frame, time),
        )

    def wait_for_transform_full_async(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
    ) -> Any:
        """As :meth:`wait_for_transform_async`, for the two-time lookup."""
        args = (target_frame, target_time, source_frame, source_time, fixed_frame)
        return self._future(
            lambda w: self._native.can_transform_full(*args, w)[0],
            lambda: self.lookup_transform_full(*args),
        )

    async def lookup_transform_async(
        self, target_frame: str, source_frame: str, time: TimeLike
    ) -> Any:
        """tf2_ros's coroutine: awaits :meth:`wait_for_transform_async` (in an rclpy
        executor), then returns the lookup."""
        return await self.wait_for_transform_async(target_frame, source_frame, time)

    async def lookup_transform_full_async(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
    ) -> Any:
        """The two-time :meth:`lookup_transform_async`."""
        return await self.wait_for_transform_full_async(
            target_frame, target_time, source_frame, source_time, fixed_frame
        )

    def _future(self, ready: Any, result: Any) -> Any:
        wake = self._waker()
        try:
            from rclpy.task import Future

            fut = Future()
        except ImportError:
            from concurrent.futures import Future

            fut = Future()
            fut.set_running_or_notify_cancel()

        def run() -> None:
            try:
                # Waits a second at a time (GIL released) so a cancelled future ends it.
                while not fut.done() and not ready(1.0):
                    pass
                if not fut.done():
                    fut.set_result(result())
            except BaseException as e:  # noqa: BLE001 - handed to the future's owner
                if not fut.done():
                    fut.set_exception(e)
            wake()

        if ready(0):
            fut.set_result(result())
        else:
            threading.Thread(target=run, name="tf_shm-wait", daemon=True).start()
        return fut

    def _waker(self) -> Any:
        """What wakes the node's executor after a future completed on the waiting thread.

        rclpy resumes a task awaiting a future only when its executor wakes up; tf2_ros's
        futures complete inside the listener's callbacks, ours on a thread of their own, so
        they trigger a guard condition of the ``node`` given to the Buffer. Without a node,
        ``spin_until_future_complete(future)`` still wakes (it waits on the future itself)."""
        if self._node is None or not hasattr(self._node, "create_guard_condition"):
            return lambda: None
        if self._guard is None:
            self._guard = self._node.create_guard_condition(lambda: None)
        return self._guard.trigger

    # -- transforming messages -------------------------------------------------------------

    def transform(
        self,
        object_stamped: Any,
        target_frame: str,
        timeout: DurationLike = 0,
        new_type: Any = None,
    ) -> Any:
        """``object_stamped`` expressed in ``target_frame``, at its own stamp, as
        tf2_geometry_msgs gives it: ``PointStamped``, ``PoseStamped``, ``Vector3Stamped``
        (rotated only) or ``TransformStamped`` (composed; keeps its ``child_frame_id``). The
        result's header is the transform's (target frame, the stamp used). Waits and raises as
        :meth:`lookup_transform`; ``TypeError`` for other types or a ``new_type`` conversion
        (not supported)."""
        if new_type is not None and new_type is not type(object_stamped):
            raise TypeError("tf_shm.Buffer.transform: new_type conversions are not supported")
        h = object_stamped.header
        r = self._native.lookup_transform(target_frame, h.frame_id, h.stamp, timeout)
        return _transform.apply(object_stamped, make_result(target_frame, h.frame_id, r), r)

    def transform_full(
        self,
        object_stamped: Any,
        target_frame: str,
        target_time: TimeLike,
        fixed_frame: str,
        timeout: DurationLike = 0,
        new_type: Any = None,
    ) -> Any:
        """As :meth:`transform`, through :meth:`lookup_transform_full` from the object's frame
        and stamp to ``target_frame`` at ``target_time`` via ``fixed_frame``."""
        if new_type is not None and new_type is not type(object_stamped):
            raise TypeError("tf_shm.Buffer.transform_full: new_type conversions are not supported")
        h = object_stamped.header
        r = self._native.lookup_transform_full(
            target_frame, target_time, h.frame_id, h.stamp, fixed_frame, timeout
        )
        return _transform.apply(object_stamped, make_result(target_frame, h.frame_id, r), r)

    # -- what a shared buffer does not do --------------------------------------------------

    def clear(self) -> None:
        """Unsupported: the buffer is shared and read-only; the bridge owns the history.
        Always raises ``NotImplementedError`` (restart or clear the bridge instead)."""
        raise NotImplementedError(
            "tf_shm.Buffer.clear(): the buffer is shared and read-only; tf_shm_bridge owns the "
            "history (restart the bridge to drop it)"
        )

    def set_transform(self, transform: Any, authority: str) -> None:
        """Unsupported: publish on /tf; the bridge writes the arena. Raises
        ``NotImplementedError``."""
        raise NotImplementedError(
            "tf_shm.Buffer.set_transform(): the buffer is read-only; publish on /tf and "
            "tf_shm_bridge stores it"
        )

    def set_transform_static(self, transform: Any, authority: str) -> None:
        """Unsupported: publish on /tf_static; the bridge writes the arena. Raises
        ``NotImplementedError``."""
        raise NotImplementedError(
            "tf_shm.Buffer.set_transform_static(): the buffer is read-only; publish on "
            "/tf_static and tf_shm_bridge stores it"
        )

    @property
    def cache_time_ns(self) -> int:
        """tf2's cache time of the arena (how much history the bridge keeps), ns."""
        return self._native.cache_time_ns

    @property
    def arena_swaps(self) -> int:
        """How many times the buffer followed a restarted bridge to its new arena (0 until then)."""
        return self._native.arena_swaps


__all__ = ["Buffer", "TransformException"]
