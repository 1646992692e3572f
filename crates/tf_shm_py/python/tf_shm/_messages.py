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


def _ros2(msgs: Any, time_cls: Any) -> Callable[[str, str, Flat], Any]:
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


def _ros1(msgs: Any, time_cls: Any) -> Callable[[str, str, Flat], Any]:
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
        return _ros2(msgs, time_cls)
    return _ros1(msgs, time_cls)


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
