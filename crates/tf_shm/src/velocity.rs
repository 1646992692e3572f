//! tf2's `BufferCore::lookupVelocity` (tf2_py's `lookupVelocityCore` /
//! `lookupVelocityFullCore`): the twist of one frame seen from another, by finite
//! differences of two lookups, with tf2's arithmetic step for step.

use crate::error::TransformError;
use crate::math::{mat_mul, mat_vec, quat_from_matrix, Mat3, MatTransform, Vec3};
use crate::store::FrameStore;
use crate::time::to_sec;
use crate::walk::{latest_common_time_or_zero, lookup_raw};

/// A velocity as tf2's `geometry_msgs::msg::VelocityStamped` carries it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Velocity {
    /// `header.stamp`, ns: the middle of the averaging interval used.
    pub stamp: i64,
    /// Linear velocity x, y, z, m/s, in the reference frame.
    pub linear: Vec3,
    /// Angular velocity x, y, z, rad/s, in the reference frame.
    pub angular: Vec3,
}

/// tf2's `lookupVelocity(tracking, observation, time, averaging_interval)`: the velocity of
/// `tracking`'s origin relative to `observation`, in `observation`'s axes:
/// [`lookup_velocity_full`] with reference frame `observation` and reference point `tracking`'s
/// origin. Times in ns (`time` 0 is tf2's time zero, not "latest": see there).
///
/// # Errors
/// As [`lookup_velocity_full`].
pub fn lookup_velocity<S: FrameStore + ?Sized>(
    s: &S,
    tracking: &str,
    observation: &str,
    time: i64,
    averaging_interval: i64,
) -> Result<Velocity, TransformError> {
    lookup_velocity_full(
        s,
        tracking,
        observation,
        observation,
        [0.0; 3],
        tracking,
        time,
        averaging_interval,
    )
}

/// tf2's `lookupVelocity(tracking, observation, reference, reference_point,
/// reference_point_frame, time, averaging_interval)`, literally (ROS 2 Jazzy):
///
/// * the interval ends at `min(time + interval/2, latest common time of observation and
///   tracking)` (0 if that fails) and starts `interval` earlier, but not before 10 µs; times
///   go through tf2's `timeFromSec` (seconds as f64, rounded to ns), so an end of 0 is
///   "latest";
/// * the linear velocity is the change of `T_observation_tracking`'s origin over the interval,
///   the angular one its rotation's axis·angle over the interval (matrices as tf2 composes
///   them), both turned into `reference`'s axes at `time`, plus `ω × origin of
///   T_reference_tracking`;
/// * moved to `reference_point` (metres, in `reference_point_frame`) by tf2's
///   `out_rot * delta`, which is `tf2::Vector3`'s element-wise product (not a cross product:
///   tf2's result, reproduced).
///
/// # Errors
/// The errors of tf2's lookups in that order (each `lookupTransform`'s classes and texts):
/// observation←tracking at the start and the end, reference←tracking at `time`,
/// reference←reference_point_frame at `time`.
#[allow(clippy::too_many_arguments)]
pub fn lookup_velocity_full<S: FrameStore + ?Sized>(
    s: &S,
    tracking: &str,
    observation: &str,
    reference: &str,
    reference_point: Vec3,
    reference_point_frame: &str,
    time: i64,
    averaging_interval: i64,
) -> Result<Velocity, TransformError> {
    let latest = latest_common_time_or_zero(s, observation, tracking)?;
    let time_seconds = to_sec(time);
    // `std::chrono::duration<double>(interval).count()`: ns / 1e9 (not tf2's durationToSec).
    let interval = averaging_interval as f64 / 1e9;
    let end_time = std_min(time_seconds + interval * 0.5, to_sec(latest));
    let start_time = std_max(0.00001 + interval, end_time) - interval;
    let corrected_interval = end_time - start_time;

    let at = |target: &str, source: &str, t: f64| -> Result<MatTransform, TransformError> {
        let (_, raw) = lookup_raw(s, target, source, time_from_sec(t))?;
        Ok(MatTransform::from_transform(&raw))
    };
    let start = at(observation, tracking, start_time)?;
    let end = at(observation, tracking, end_time)?;

    let temp = mat_mul(&matrix_inverse(&start.basis), &end.basis);
    let q = quat_from_matrix(&temp);
    let o = mat_vec(&start.basis, &quat_axis(&q));
    let angle = 2.0 * q[3].clamp(-1.0, 1.0).acos();

    let delta = sub(&end.origin, &start.origin);
    let twist_vel = delta.map(|d| d / corrected_interval);
    let twist_rot = o.map(|c| c * (angle / corrected_interval));

    let inverse = at(reference, tracking, time_seconds)?;
    let out_rot = mat_vec(&inverse.basis, &twist_rot);
    let out_vel = add(
        &mat_vec(&inverse.basis, &twist_vel),
        &cross(&inverse.origin, &out_rot),
    );

    let point = |target: &str, source: &str, p: &Vec3| -> Result<Vec3, TransformError> {
        let t = at(target, source, time_seconds)?;
        Ok(add(&mat_vec(&t.basis, p), &t.origin))
    };
    let rp_orig = point(reference, tracking, &[0.0; 3])?;
    let rp_desired = point(reference, reference_point_frame, &reference_point)?;
    let delta = sub(&rp_desired, &rp_orig);
    let out_vel = add(
        &out_vel,
        &[
            out_rot[0] * delta[0],
            out_rot[1] * delta[1],
            out_rot[2] * delta[2],
        ],
    );

    Ok(Velocity {
        stamp: time_from_sec(start_time + interval * 0.5),
        linear: out_vel,
        angular: out_rot,
    })
}

/// `std::min(a, b)`: `b < a ? b : a`.
fn std_min(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// `std::max(a, b)`: `a < b ? b : a`.
fn std_max(a: f64, b: f64) -> f64 {
    if a < b {
        b
    } else {
        a
    }
}

/// tf2's `timeFromSec` (`durationFromSec`): whole seconds by `floor`, the rest rounded to ns,
/// each narrowed to `int32_t` as tf2 does; in ns.
pub fn time_from_sec(t_sec: f64) -> i64 {
    let mut sec = t_sec.floor() as i32;
    let mut nsec = ((t_sec - f64::from(sec)) * 1e9).round() as i32;
    sec = sec.wrapping_add(nsec / 1_000_000_000);
    nsec %= 1_000_000_000;
    i64::from(sec) * 1_000_000_000 + i64::from(nsec)
}

/// `tf2::Matrix3x3::inverse`: the adjugate over the determinant (not the transpose).
fn matrix_inverse(m: &Mat3) -> Mat3 {
    let cofac =
        |r1: usize, c1: usize, r2: usize, c2: usize| m[r1][c1] * m[r2][c2] - m[r1][c2] * m[r2][c1];
    let co = [cofac(1, 1, 2, 2), cofac(1, 2, 2, 0), cofac(1, 0, 2, 1)];
    let det = m[0][0] * co[0] + m[0][1] * co[1] + m[0][2] * co[2];
    let s = 1.0 / det;
    [
        [co[0] * s, cofac(0, 2, 2, 1) * s, cofac(0, 1, 1, 2) * s],
        [co[1] * s, cofac(0, 0, 2, 2) * s, cofac(0, 2, 1, 0) * s],
        [co[2] * s, cofac(0, 1, 2, 0) * s, cofac(0, 0, 1, 1) * s],
    ]
}

/// `tf2::Quaternion::getAxis`: `(x, y, z) / sqrt(1 − w²)`, or `(1, 0, 0)` below 10 ε.
fn quat_axis(q: &[f64; 4]) -> Vec3 {
    let s_squared = 1.0 - q[3] * q[3];
    if s_squared < 10.0 * f64::EPSILON {
        return [1.0, 0.0, 0.0];
    }
    let s = s_squared.sqrt();
    [q[0] / s, q[1] / s, q[2] / s]
}

fn add(a: &Vec3, b: &Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: &Vec3, b: &Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `tf2::Vector3::cross`.
fn cross(a: &Vec3, v: &Vec3) -> Vec3 {
    [
        a[1] * v[2] - a[2] * v[1],
        a[2] * v[0] - a[0] * v[2],
        a[0] * v[1] - a[1] * v[0],
    ]
}
