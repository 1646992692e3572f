"""Lookup results as messages: ``geometry_msgs.msg.TransformStamped`` (ROS 2's rosidl or
ROS 1's genpy classes) where geometry_msgs is importable, else :class:`TransformResult`.
geometry_msgs is imported on first use, so the package imports without ROS."""

from __future__ import annotations

import os
from typing import Any, Callable, NamedTuple, Tuple

NS_PER_S = 1_000_000_000

Flat = Tuple[int, float, float, float, float, float, float, float]


class TransformResult(NamedTuple):
    """A lookup's answer where geometry_msgs is not importable.

    ``translation`` (x, y, z) in metres and ``rotation`` (x, y, z, w) are ``T_target_source``:
    they map points in ``child_frame_id`` (the source) into ``frame_id`` (the target).
    ``stamp_ns`` is the requested time, or the latest common time for time 0, in ns.
    """

    stamp_ns: int
    frame_id: str
    child_frame_id: str
    translation: tuple[float, float, float]
    rotation: tuple[float, float, float, float]


def _plain(target: str, source: str, r: Flat) -> TransformResult:
    return TransformResult(r[0], target, source, (r[1], r[2], r[3]), (r[4], r[5], r[6], r[7]))


def _ros2_slow(msgs: Any, time_cls: Any) -> Callable[[str, str, Flat], Any]:
    ts, header, transform = msgs.TransformStamped, msgs.Header, msgs.Transform
    vector3, quaternion = msgs.Vector3, msgs.Quaternion

    def make(target: str, source: str, r: Flat) -> Any:
        sec, nanosec = divmod(r[0], NS_PER_S)
        return ts(
            header=header(stamp=time_cls(sec=sec, nanosec=nanosec), frame_id=target),
            child_frame_id=source,
            transform=transform(
                translation=vector3(x=r[1], y=r[2], z=r[3]),
                rotation=quaternion(x=r[4], y=r[5], z=r[6], w=r[7]),
            ),
        )

    return make


def _ros2_fast(msgs: Any, time_cls: Any) -> Callable[[str, str, Flat], Any]:
    """rosidl messages filled slot by slot: what their constructors store, without the
    per-field property calls (most of a lookup's cost). Used only after :func:`_resolve` has
    checked it builds messages equal to the constructors' on this installation."""
    ts, header, transform = msgs.TransformStamped, msgs.Header, msgs.Transform
    vector3, quaternion = msgs.Vector3, msgs.Quaternion
    check = ts()._check_fields  # the installation's ROS_PYTHON_CHECK_FIELDS choice
    new = object.__new__

    def make(target: str, source: str, r: Flat) -> Any:
        sec, nanosec = divmod(r[0], NS_PER_S)
        st = new(time_cls)
        st._check_fields, st._sec, st._nanosec = check, sec, nanosec
        h = new(header)
        h._check_fields, h._stamp, h._frame_id = check, st, target
        v = new(vector3)
        v._check_fields, v._x, v._y, v._z = check, r[1], r[2], r[3]
        q = new(quaternion)
        q._check_fields, q._x, q._y, q._z, q._w = check, r[4], r[5], r[6], r[7]
        tr = new(transform)
        tr._check_fields, tr._translation, tr._rotation = check, v, q
        m = new(ts)
        m._check_fields, m._header, m._child_frame_id, m._transform = check, h, source, tr
        return m

    return make


def _ros1_slow(msgs: Any, time_cls: Any) -> Callable[[str, str, Flat], Any]:
    ts, header, transform = msgs.TransformStamped, msgs.Header, msgs.Transform
    vector3, quaternion = msgs.Vector3, msgs.Quaternion

    def make(target: str, source: str, r: Flat) -> Any:
        sec, nanosec = divmod(r[0], NS_PER_S)
        return ts(
            header(0, time_cls(sec, nanosec), target),
            source,
            transform(vector3(r[1], r[2], r[3]), quaternion(r[4], r[5], r[6], r[7])),
        )

    return make


def _ros1_fast(msgs: Any, time_cls: Any) -> Callable[[str, str, Flat], Any]:
    """genpy messages filled slot by slot (checked against the constructors by
    :func:`_resolve`); negative stamps go through genpy's constructor, which refuses them."""
    ts, header, transform = msgs.TransformStamped, msgs.Header, msgs.Transform
    vector3, quaternion = msgs.Vector3, msgs.Quaternion
    slow = _ros1_slow(msgs, time_cls)
    new = object.__new__

    def make(target: str, source: str, r: Flat) -> Any:
        if r[0] < 0:
            return slow(target, source, r)
        st = new(time_cls)
        st.secs, st.nsecs = divmod(r[0], NS_PER_S)
        h = new(header)
        h.seq, h.stamp, h.frame_id = 0, st, target
        v = new(vector3)
        v.x, v.y, v.z = r[1], r[2], r[3]
        q = new(quaternion)
        q.x, q.y, q.z, q.w = r[4], r[5], r[6], r[7]
        tr = new(transform)
        tr.translation, tr.rotation = v, q
        m = new(ts)
        m.header, m.child_frame_id, m.transform = h, source, tr
        return m

    return make


def _checked(fast: Callable, slow: Callable) -> Callable[[str, str, Flat], Any]:
    """``fast`` where it builds what ``slow`` (the message constructors) builds, else ``slow``."""
    probe = (1_234_567_890_123, 0.5, -1.25, 3.0, 0.0, 0.6, 0.0, 0.8)
    try:
        a, b = fast("t", "s", probe), slow("t", "s", probe)
        agree = a == b and repr(a) == repr(b) and type(a) is type(b)
    except Exception:  # noqa: BLE001 - any mismatch: the constructors' way
        agree = False
    return fast if agree else slow


class _Msgs:
    """geometry_msgs' classes, gathered in one namespace."""

    def __init__(self) -> None:
        import geometry_msgs.msg as g

        self.TransformStamped = g.TransformStamped
        self.Transform = g.Transform
        self.Vector3 = g.Vector3
        self.Quaternion = g.Quaternion
        # The header class is whatever TransformStamped's header field holds.
        self.Header = type(g.TransformStamped().header)


def _resolve() -> Callable[[str, str, Flat], Any]:
    if os.environ.get("TF_SHM_PLAIN_RESULTS", "") not in ("", "0"):
        return _plain
    try:
        msgs = _Msgs()
    except Exception:  # noqa: BLE001 - no usable geometry_msgs: plain results
        return _plain
    stamp = msgs.Header().stamp
    time_cls = type(stamp)
    if hasattr(stamp, "nanosec"):
        return _checked(_ros2_fast(msgs, time_cls), _ros2_slow(msgs, time_cls))
    return _checked(_ros1_fast(msgs, time_cls), _ros1_slow(msgs, time_cls))


_make: Callable[[str, str, Flat], Any] | None = None


def make_result(target: str, source: str, r: Flat) -> Any:
    """The result object for a flat lookup answer."""
    global _make
    if _make is None:
        _make = _resolve()
    return _make(target, source, r)


def uses_messages() -> bool:
    """Whether results are geometry_msgs messages (else :class:`TransformResult`)."""
    global _make
    if _make is None:
        _make = _resolve()
    return _make is not _plain
