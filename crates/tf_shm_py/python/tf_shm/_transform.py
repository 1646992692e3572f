"""tf2_geometry_msgs' ``do_transform_*`` for where tf2_ros is not importable: the arithmetic is
Rust's (``_native``), the message handling here. Each takes the object and the
``TransformStamped`` (``T_target_source``) and returns a new object with the transform's header,
as tf2_geometry_msgs does."""

from __future__ import annotations

from typing import Any

from . import _native


def _tf(t: Any) -> tuple[tuple[float, float, float], tuple[float, float, float, float]]:
    a, b = t.transform.translation, t.transform.rotation
    return (a.x, a.y, a.z), (b.x, b.y, b.z, b.w)


def do_transform_point(obj: Any, t: Any) -> Any:
    out = type(obj)()
    p = obj.point
    out.point.x, out.point.y, out.point.z = _native.transform_point(_tf(t), (p.x, p.y, p.z))
    out.header = t.header
    return out


def do_transform_vector3(obj: Any, t: Any) -> Any:
    out = type(obj)()
    v = obj.vector
    out.vector.x, out.vector.y, out.vector.z = _native.transform_vector(_tf(t), (v.x, v.y, v.z))
    out.header = t.header
    return out


def _move_pose(src: Any, dst: Any, t: Any) -> None:
    p, q = src.position, src.orientation
    pos, rot = _native.transform_pose(_tf(t), (p.x, p.y, p.z), (q.x, q.y, q.z, q.w))
    dst.position.x, dst.position.y, dst.position.z = pos
    o = dst.orientation
    o.x, o.y, o.z, o.w = rot


def do_transform_pose_stamped(obj: Any, t: Any) -> Any:
    out = type(obj)()
    _move_pose(obj.pose, out.pose, t)
    out.header = t.header
    return out


def transform_covariance(cov: Any, t: Any) -> list[float]:
    """tf2_geometry_msgs' ``transform_covariance``: each 3×3 block of the 6×6 row-major
    covariance rotated as R · block · Rᵀ (R from the transform's quaternion)."""
    q = t.transform.rotation
    q0, q1, q2, q3 = q.w, q.x, q.y, q.z
    r = (
        (2 * (q0 * q0 + q1 * q1) - 1, 2 * (q1 * q2 - q0 * q3), 2 * (q1 * q3 + q0 * q2)),
        (2 * (q1 * q2 + q0 * q3), 2 * (q0 * q0 + q2 * q2) - 1, 2 * (q2 * q3 - q0 * q1)),
        (2 * (q1 * q3 - q0 * q2), 2 * (q2 * q3 + q0 * q1), 2 * (q0 * q0 + q3 * q3) - 1),
    )
    out = [0.0] * 36
    for br in (0, 3):
        for bc in (0, 3):
            block = [[cov[(br + i) * 6 + bc + j] for j in range(3)] for i in range(3)]
            rb = [
                [sum(r[i][k] * block[k][j] for k in range(3)) for j in range(3)] for i in range(3)
            ]
            for i in range(3):
                for j in range(3):
                    out[(br + i) * 6 + bc + j] = sum(rb[i][k] * r[j][k] for k in range(3))
    return out


def do_transform_pose_with_covariance_stamped(obj: Any, t: Any) -> Any:
    out = type(obj)()
    _move_pose(obj.pose.pose, out.pose.pose, t)
    out.pose.covariance = transform_covariance(obj.pose.covariance, t)
    out.header = t.header
    return out


def do_transform_polygon_stamped(obj: Any, t: Any) -> Any:
    from geometry_msgs.msg import Point32

    out = type(obj)()
    tf = _tf(t)
    for p in obj.polygon.points:
        x, y, z = _native.transform_point(tf, (p.x, p.y, p.z))
        out.polygon.points.append(Point32(x=x, y=y, z=z))
    out.header = t.header
    return out


def do_transform_transform_stamped(obj: Any, t: Any) -> Any:
    out = type(obj)()
    pos, rot = _native.compose_transforms(_tf(t), _tf(obj))
    tr = out.transform
    tr.translation.x, tr.translation.y, tr.translation.z = pos
    tr.rotation.x, tr.rotation.y, tr.rotation.z, tr.rotation.w = rot
    out.child_frame_id = obj.child_frame_id
    out.header = t.header
    return out


def register_builtin(registration: Any) -> None:
    """Adds the functions above to ``registration`` for geometry_msgs' classes (nothing where
    geometry_msgs is not importable: then there is nothing to transform)."""
    try:
        from geometry_msgs import msg
    except ImportError:
        return
    for name, fn in (
        ("PointStamped", do_transform_point),
        ("Vector3Stamped", do_transform_vector3),
        ("PoseStamped", do_transform_pose_stamped),
        ("PoseWithCovarianceStamped", do_transform_pose_with_covariance_stamped),
        ("PolygonStamped", do_transform_polygon_stamped),
        ("TransformStamped", do_transform_transform_stamped),
    ):
        registration.add(getattr(msg, name), fn)
