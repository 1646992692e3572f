"""``Buffer.transform``'s per-type step: the arithmetic is Rust's (``_native``), the message
handling here. Types are recognised by their fields, so ROS 1 and ROS 2 message classes both
work."""

from typing import Any

from . import _native
from ._messages import Flat


def _header(tf_result: Any) -> Any:
    return tf_result.header if hasattr(tf_result, "header") else None


def apply(obj: Any, tf_result: Any, r: Flat) -> Any:
    """``obj`` moved by the lookup answer ``r`` (``T_target_source``), with the transform's
    header, as tf2_geometry_msgs' ``do_transform_*``."""
    t = ((r[1], r[2], r[3]), (r[4], r[5], r[6], r[7]))
    out = type(obj)()
    header = _header(tf_result)
    if header is None:
        raise TypeError(
            "tf_shm.Buffer.transform needs geometry_msgs (no message classes are importable)"
        )
    if hasattr(obj, "point"):
        p = obj.point
        out.point.x, out.point.y, out.point.z = _native.transform_point(t, (p.x, p.y, p.z))
    elif hasattr(obj, "vector"):
        v = obj.vector
        out.vector.x, out.vector.y, out.vector.z = _native.transform_vector(t, (v.x, v.y, v.z))
    elif hasattr(obj, "pose") and hasattr(obj.pose, "position"):
        p, q = obj.pose.position, obj.pose.orientation
        pos, rot = _native.transform_pose(t, (p.x, p.y, p.z), (q.x, q.y, q.z, q.w))
        out.pose.position.x, out.pose.position.y, out.pose.position.z = pos
        o = out.pose.orientation
        o.x, o.y, o.z, o.w = rot
    elif hasattr(obj, "transform") and hasattr(obj, "child_frame_id"):
        a, b = obj.transform.translation, obj.transform.rotation
        pos, rot = _native.compose_transforms(t, ((a.x, a.y, a.z), (b.x, b.y, b.z, b.w)))
        tr = out.transform
        tr.translation.x, tr.translation.y, tr.translation.z = pos
        tr.rotation.x, tr.rotation.y, tr.rotation.z, tr.rotation.w = rot
        out.child_frame_id = obj.child_frame_id
    else:
        raise TypeError(
            "tf_shm.Buffer.transform supports PointStamped, PoseStamped, Vector3Stamped and "
            "TransformStamped, not " + type(obj).__name__
        )
    out.header = header
    return out
