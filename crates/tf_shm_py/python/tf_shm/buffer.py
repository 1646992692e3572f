"""``tf_shm.Buffer``: tf2_ros's Python ``Buffer``, answered from the shared arena."""

from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Any

from . import _native
from ._messages import Flat, make_result
from .buffer_interface import BufferInterface

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


_warned_cache_time = False


def _warn_cache_time(requested_ns: int, have_ns: int) -> None:
    """Once per process: a history longer than the arena's was asked for."""
    global _warned_cache_time
    if _warned_cache_time or requested_ns <= have_ns:
        return
    _warned_cache_time = True
    warnings.warn(
        f"tf_shm.Buffer: cache_time of {requested_ns / 1e9:.3f} s asked for, but the bridge "
        f"keeps {have_ns / 1e9:.3f} s of history; lookups older than that raise tf2's "
        "ExtrapolationException. Start tf_shm_bridge with the parameter cache_time "
        "(seconds) set to at least that.",
        RuntimeWarning,
        stacklevel=3,
    )


class Buffer(BufferInterface):
    """tf2_ros's ``Buffer``, reading transforms from the tf_shm arena of a ROS domain.

    The arena is filled by ``tf_shm_bridge``, which subscribes to ``/tf`` and ``/tf_static``
    once per host: this buffer needs no listener and no DDS. Answers are tf2's (ROS 2 Jazzy):
    the same values, interpolation, time 0 ("latest"), error classes and texts. Where tf2_ros is
    importable it is a ``tf2_ros.BufferInterface`` and ``transform()`` uses tf2_ros's
    ``TransformRegistration`` (see :mod:`tf_shm.buffer_interface`).

    Every result maps points in the source frame into the target frame (``T_target_source``);
    translations are in metres, quaternions ordered x, y, z, w. Times and durations are accepted
    as ``rclpy.time.Time`` / ``rclpy.duration.Duration``, ``builtin_interfaces.msg.Time`` /
    ``Duration``, ``int`` nanoseconds or ``float`` seconds (converted as rclpy does,
    ``int(s * 1e9)``); time 0 means the latest common time.

    Made before a bridge serves, the buffer is an empty tf2 buffer (``LookupException``,
    ``can_transform`` false, waits wait) and joins the bridge within ~20 ms of its serving, as
    a tf2_ros buffer is empty until its listener hears data (:attr:`joined` tells which).

    :param cache_time: tf2's cache time. Shorter than the arena's history: applied, lookups
        answer as a tf2_ros buffer of that cache time (older data pruned as tf2's ``TimeCache``
        prunes, relative to each frame's second newest stamp: tf2's
        ``ExtrapolationException`` with tf2's text; such a buffer skips the arena's fast
        paths). Zero and negative are kept as tf2 keeps them: a frame then holds its newest
        sample and those at its second newest stamp (zero), or only its newest (negative). Longer: accepted with a ``RuntimeWarning`` (once per process) naming the
        bridge's ``cache_time`` parameter; lookups older than the arena's history raise tf2's
        ``ExtrapolationException``, as a tf2 buffer whose data was pruned.
    :param node: used for wake-ups only: a coroutine awaiting :meth:`lookup_transform_async`
        or :meth:`wait_for_transform_async` in an executor spinning this node is woken through
        a guard condition of the node in a ``ReentrantCallbackGroup`` of its own.
        ``TransformListener(buffer, node)`` hands its node over the same way. The buffer offers
        no ``tf2_frames`` service: the bridge serves it for every process.
    :param domain: ROS domain of the arena; default ``$ROS_DOMAIN_ID``, else 0.
    :param name: arena name, when a bridge was started with a non-default one.
    :param open_timeout: ``None`` (default): never wait, never fail for a missing bridge (see
        above). Else wait up to that long for a bridge (``0``: not at all) and raise
        ``tf_shm.OpenError`` if none serves (GIL released while waiting).
    :raises tf_shm.OpenError: the arena cannot be joined (another tf_shm version, permissions;
        the text says why), or with ``open_timeout`` no bridge serves in time.
    """

    def __init__(
        self,
        cache_time: DurationLike | None = None,
        node: Any = None,
        *,
        domain: int | None = None,
        name: str | None = None,
        open_timeout: DurationLike | None = None,
    ) -> None:
        BufferInterface.__init__(self)
        self._native = _native.NativeBuffer(domain, name, open_timeout, cache_time)
        self._wake_lock = threading.Lock()
        self._guard: Any = None
        self._node: Any = None
        if cache_time is not None:
            self._check_cache_time(_native.to_ns(cache_time))
        if node is not None:
            self._use_node(node)
        # The hot-loop lookup is the native method itself: no Python frame in between.
        self.lookup_transform_tuple = self._native.lookup_pair

    def _check_cache_time(self, requested_ns: int) -> None:
        if self._native.joined:
            _warn_cache_time(requested_ns, self._native.cache_time_ns)
            return

        # Not joined yet: check once the bridge serves (its history is known then). The thread
        # holds the buffer weakly and ends with it, so a buffer that never joins is still freed.
        import weakref

        buffer = weakref.ref(self)

        def check_when_joined() -> None:
            import time

            while True:
                b = buffer()
                if b is None:
                    return
                if b._native.joined:
                    _warn_cache_time(requested_ns, b._native.cache_time_ns)
                    return
                del b
                time.sleep(0.05)

        threading.Thread(target=check_when_joined, name="tf_shm-cache-time", daemon=True).start()

    @property
    def joined(self) -> bool:
        """Whether the buffer has joined a bridge's arena (False while it waits for the first
        bridge and answers as an empty tf2 buffer)."""
        return self._native.joined

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
        """tf2's ``allFramesAsYAML()``: every frame's parent, rate, latest stamp, buffer length.
        The broadcaster of what the bridge stored is ``'default_authority'``, as tf2_ros's
        Python ``TransformListener`` records it (the bridge records tf2_ros C++'s
        ``'Authority undetectable'``)."""
        return self._native.all_frames_as_yaml(0).replace(
            "  broadcaster: 'Authority undetectable'\n", "  broadcaster: 'default_authority'\n"
        )

    def all_frames_as_string(self) -> str:
        """tf2's ``allFramesAsString()``: one line per frame, ``Frame child exists with parent
        parent.``"""
        return self._native.all_frames_as_string()

    # -- tf2_py's BufferCore methods --------------------------------------------------------

    def lookup_transform_core(self, target_frame: str, source_frame: str, time: TimeLike) -> Any:
        """tf2_py's ``lookup_transform_core``: :meth:`lookup_transform` without a wait."""
        r = self._native.lookup_transform(target_frame, source_frame, time, None)
        return make_result(target_frame, source_frame, r)

    def lookup_transform_full_core(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
    ) -> Any:
        """tf2_py's ``lookup_transform_full_core``: :meth:`lookup_transform_full` without a
        wait."""
        r = self._native.lookup_transform_full(
            target_frame, target_time, source_frame, source_time, fixed_frame, None
        )
        return make_result(target_frame, source_frame, r)

    def can_transform_core(
        self, target_frame: str, source_frame: str, time: TimeLike
    ) -> tuple[bool, str]:
        """tf2_py's ``can_transform_core``: ``(True, "")`` or ``(False, tf2's error text)``."""
        return self._native.can_transform(target_frame, source_frame, time, None)

    def can_transform_full_core(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
    ) -> tuple[bool, str]:
        """tf2_py's ``can_transform_full_core``, as :meth:`can_transform_core`."""
        return self._native.can_transform_full(
            target_frame, target_time, source_frame, source_time, fixed_frame, None
        )

    def _frameExists(self, frame_id: str) -> bool:
        """tf2_py's ``_frameExists``: whether the frame is known (``"NO_PARENT"`` is, as in
        tf2)."""
        return self._native.frame_exists(frame_id)

    def _getFrameStrings(self) -> list[str]:
        """tf2_py's ``_getFrameStrings``: every known frame name (also those only seen as a
        parent), in the order tf2 assigned their ids."""
        return self._native.frame_names()

    def _chain(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
    ) -> list[str]:
        """tf2_py's ``_chain`` (tf2's ``_chainAsVector``): the frames the two-time lookup
        walks through, source side first, as tf2 lists and prunes them. Unknown names are not
        validated (tf2's id 0: a ``ConnectivityException`` naming ``NO_PARENT``, or at time 0 a
        ``LookupException`` without text); otherwise tf2's lookup exceptions and texts."""
        return self._native.chain(target_frame, target_time, source_frame, source_time, fixed_frame)

    def _allFramesAsDot(self, time: TimeLike = None) -> str:
        """tf2_py's ``_allFramesAsDot``: the frame tree as a Graphviz ``digraph`` in tf2's
        text; with ``time`` (the time of recording) each edge also says how old its newest
        transform is. The broadcaster of what the bridge stored is ``default_authority``, as
        in :meth:`all_frames_as_yaml`."""
        now = 0 if time is None else _native.to_ns(time)
        return self._native.all_frames_as_dot(now).replace(
            "Broadcaster: Authority undetectable\\n", "Broadcaster: default_authority\\n"
        )

    def lookupVelocityCore(
        self,
        tracking_frame: str,
        observation_frame: str,
        time: TimeLike,
        averaging_interval: DurationLike,
    ) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """tf2_py's ``lookupVelocityCore`` (tf2's ``lookupVelocity``): the velocity of
        ``tracking_frame``'s origin relative to ``observation_frame``, in its axes, averaged
        over ``averaging_interval`` around ``time``: ``((vx, vy, vz), (wx, wy, wz))`` in m/s
        and rad/s, tf2's arithmetic literally. Raises tf2's lookup exceptions."""
        return self._native.lookup_velocity(
            tracking_frame,
            observation_frame,
            observation_frame,
            (0.0, 0.0, 0.0),
            tracking_frame,
            time,
            averaging_interval,
        )

    def lookupVelocityFullCore(
        self,
        tracking_frame: str,
        observation_frame: str,
        reference_frame: str,
        reference_point: tuple[float, float, float],
        reference_point_frame: str,
        time: TimeLike,
        averaging_interval: DurationLike,
        /,
    ) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """tf2_py's ``lookupVelocityFullCore`` (positional arguments, as tf2_py's): as
        :meth:`lookupVelocityCore`, expressed in ``reference_frame`` about
        ``reference_point`` (metres, in ``reference_point_frame``), with tf2's re-referencing
        (``tf2::Vector3``'s element-wise ``out_rot * delta``)."""
        return self._native.lookup_velocity(
            tracking_frame,
            observation_frame,
            reference_frame,
            tuple(reference_point),
            reference_point_frame,
            time,
            averaging_interval,
        )

    # -- waiting, futures ------------------------------------------------------------------

    def wait_for_transform_async(self, target_frame: str, source_frame: str, time: TimeLike) -> Any:
        """A future that completes with :meth:`lookup_transform`'s result once the transform
        is available (an ``rclpy.task.Future`` where rclpy is importable, else a
        ``concurrent.futures.Future``). Waits on a daemon thread with the GIL released;
        cancelling the future ends the wait. A coroutine awaiting it in an rclpy executor is
        resumed through a guard condition of the Buffer's ``node`` or its listener's node
        (see :meth:`_use_node`)."""
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
        try:
            from rclpy.task import Future

            fut = Future()
        except ImportError:
            from concurrent.futures import Future

            fut = Future()
            fut.set_running_or_notify_cancel()

        def run() -> None:
            try:
                # Waits a second at a time (GIL released) so a cancelled future ends it; at
                # the interpreter's exit a wait begun after the exit hook answers at once and
                # this loop ends (one in progress then parks this daemon thread for good).
                while not fut.done() and not ready(1.0):
                    if _native.interpreter_exiting():
                        return
                if not fut.done():
                    fut.set_result(result())
            except BaseException as e:  # noqa: BLE001 - handed to the future's owner
                if not fut.done():
                    fut.set_exception(e)
            self._wake()

        if ready(0):
            fut.set_result(result())
        else:
            threading.Thread(target=run, name="tf_shm-wait", daemon=True).start()
        return fut

    def _use_node(self, node: Any, group: Any = None) -> None:
        """Wake-ups through ``node``: a guard condition in ``group`` (a new
        ``ReentrantCallbackGroup`` if None). tf2_ros's futures complete inside the listener's
        subscription callbacks, which wake the executor; ours complete on a thread of their
        own, so they trigger this guard. Its group must be one no running callback holds: a
        coroutine awaiting the future in the node's default (mutually exclusive) group would
        keep a guard of that group out of the executor's wait set. The first node given is
        kept (a listener's node when the buffer had none)."""
        if not hasattr(node, "create_guard_condition"):
            return
        with self._wake_lock:
            if self._guard is not None:
                return
            if group is None:
                from rclpy.callback_groups import ReentrantCallbackGroup

                group = ReentrantCallbackGroup()
            self._node = node
            self._guard = node.create_guard_condition(lambda: None, callback_group=group)

    def _wake(self) -> None:
        """After a future completed on its waiting thread: the guard condition (see
        :meth:`_use_node`). Without a node nothing is triggered;
        ``spin_until_future_complete(future)`` wakes by itself (it waits on the future)."""
        guard = self._guard
        if guard is not None:
            # A destroyed node or context: nothing to wake.
            with contextlib.suppress(Exception):
                guard.trigger()

    # -- what a shared buffer does not do --------------------------------------------------

    def clear(self) -> None:
        """tf2_ros's ``Buffer.clear()`` (tf2's ``BufferCore::clear``) for this buffer only:
        afterwards its lookups hold no dynamic transform received before the call, and answer
        from the ones received after it, as a cleared tf2 buffer fed them would; static
        transforms stay, as tf2's do. The arena is shared: other buffers, in this process or
        others, are not affected. A transform received after the call whose stamp is not newer
        than its frame's newest before the call stays hidden (the arena does not record arrival
        order across stamps); transforms arriving in time order, as on /tf, answer as tf2's.
        Raises ``TransformException`` when the arena is damaged."""
        self._native.clear()

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


__all__ = ["Buffer"]
