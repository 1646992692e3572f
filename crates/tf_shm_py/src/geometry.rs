//! The arithmetic of `Buffer.transform()`: what tf2_geometry_msgs gives for each message type,
//! with tf2's own matrix routines (`tf_shm::math`). A transform arrives as
//! `((x, y, z), (qx, qy, qz, qw))` = `T_target_source`.

use pyo3::prelude::*;
use tf_shm::math::{mat_vec, matrix_from_quat, MatTransform};
use tf_shm::Transform;

type V3 = (f64, f64, f64);
type Q = (f64, f64, f64, f64);

fn tf((t, q): (V3, Q)) -> Transform {
    Transform {
        translation: [t.0, t.1, t.2],
        rotation: [q.0, q.1, q.2, q.3],
    }
}

fn v3(v: [f64; 3]) -> V3 {
    (v[0], v[1], v[2])
}

/// `T·p`: tf2_geometry_msgs' `do_transform_point` (rotation through the matrix of the
/// normalised quaternion, then the translation).
#[pyfunction]
pub fn transform_point(transform: (V3, Q), point: V3) -> V3 {
    let m = MatTransform::from_transform(&tf(transform));
    let r = mat_vec(&m.basis, &[point.0, point.1, point.2]);
    v3([r[0] + m.origin[0], r[1] + m.origin[1], r[2] + m.origin[2]])
}

/// `R·v`: tf2_geometry_msgs' `do_transform_vector3` (rotation only).
#[pyfunction]
pub fn transform_vector(transform: (V3, Q), vector: V3) -> V3 {
    let t = tf(transform);
    v3(mat_vec(
        &matrix_from_quat(&t.rotation),
        &[vector.0, vector.1, vector.2],
    ))
}

/// `T·pose`: tf2_geometry_msgs' `do_transform_pose` — position `T·p`, orientation from the
/// product of the matrices, sign chosen so that `w ≥ 0` as the Python tf2_geometry_msgs does.
#[pyfunction]
pub fn transform_pose(transform: (V3, Q), position: V3, orientation: Q) -> (V3, Q) {
    let pose = tf((position, orientation));
    let r = MatTransform::from_transform(&tf(transform))
        .mul(&MatTransform::from_transform(&pose))
        .to_transform();
    let mut q = r.rotation;
    if q[3] < 0.0 {
        q = [-q[0], -q[1], -q[2], -q[3]];
    }
    (v3(r.translation), (q[0], q[1], q[2], q[3]))
}

/// `T·T_in`: tf2_geometry_msgs' (C++) `doTransform` of a `TransformStamped`, through
/// `tf2::Transform` products.
#[pyfunction]
pub fn compose_transforms(transform: (V3, Q), other: (V3, Q)) -> (V3, Q) {
    let r = MatTransform::from_transform(&tf(transform))
        .mul(&MatTransform::from_transform(&tf(other)))
        .to_transform();
    let q = r.rotation;
    (v3(r.translation), (q[0], q[1], q[2], q[3]))
}
