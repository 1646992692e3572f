//! Quaternion and transform arithmetic exactly as tf2's `LinearMath` (Bullet-derived) does it,
//! in `f64`, with the same operation order, so results agree with tf2 to the last bit wherever
//! the platform's `sin`/`acos` agree (glibc on both sides). The one exception is [`slerp`]
//! between close rotations, evaluated by series: equal to tf2's formula up to rounding.
//!
//! Quaternions are `[x, y, z, w]`, vectors `[x, y, z]`, matrices row-major `[[f64; 3]; 3]`.
//! Nothing here normalises behind the caller's back: tf2 does not either, so a non-unit
//! quaternion scales what it rotates by `|q|²` ([`quat_rotate`]) until something passes it
//! through a matrix ([`canonicalize`]).

use crate::sample::Transform;

/// `[x, y, z, w]`.
pub type Quat = [f64; 4];
/// `[x, y, z]`.
pub type Vec3 = [f64; 3];
/// Row-major 3×3 matrix (`m[row][col]`), as tf2's `Matrix3x3::m_el`.
pub type Mat3 = [[f64; 3]; 3];

/// The identity rotation.
pub const QUAT_IDENTITY: Quat = [0.0, 0.0, 0.0, 1.0];
/// The identity matrix.
pub const MAT3_IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// 4-D dot product (`Quaternion::dot`).
#[inline]
pub fn quat_dot(a: &Quat, b: &Quat) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

/// `|q|²` (`Quaternion::length2`).
#[inline]
pub fn quat_length2(q: &Quat) -> f64 {
    quat_dot(q, q)
}

/// Hamilton product `a·b` (tf2's `operator*(Quaternion, Quaternion)`): applies `b` first.
#[inline]
pub fn quat_mul(a: &Quat, b: &Quat) -> Quat {
    let [ax, ay, az, aw] = *a;
    let [bx, by, bz, bw] = *b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by + ay * bw + az * bx - ax * bz,
        aw * bz + az * bw + ax * by - ay * bx,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// Conjugate `(−x, −y, −z, w)`, which is what tf2's `Quaternion::inverse` returns (no division
/// by `|q|²`).
#[inline]
pub fn quat_inverse(q: &Quat) -> Quat {
    [-q[0], -q[1], -q[2], q[3]]
}

/// tf2's `quatRotate(q, v)` = vector part of `q·v·conj(q)`; scales by `|q|²` for non-unit `q`.
#[inline(always)]
pub fn quat_rotate(q: &Quat, v: &Vec3) -> Vec3 {
    let [qx, qy, qz, qw] = *q;
    let [vx, vy, vz] = *v;
    // `Quaternion * Vector3`.
    let t = [
        qw * vx + qy * vz - qz * vy,
        qw * vy + qz * vx - qx * vz,
        qw * vz + qx * vy - qy * vx,
        -qx * vx - qy * vy - qz * vz,
    ];
    // `t *= q.inverse()` (`Quaternion::operator*=`).
    let [ix, iy, iz, iw] = quat_inverse(q);
    let [tx, ty, tz, tw] = t;
    [
        tw * ix + tx * iw + ty * iz - tz * iy,
        tw * iy + ty * iw + tz * ix - tx * iz,
        tw * iz + tz * iw + tx * iy - ty * ix,
    ]
}

/// Component-wise sum (`Vector3::operator+`).
#[inline]
pub fn vec_add(a: &Vec3, b: &Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// Component-wise negation (`-Vector3`; turns `0.0` into `-0.0` as tf2 does).
#[inline]
pub fn vec_neg(a: &Vec3) -> Vec3 {
    [-a[0], -a[1], -a[2]]
}

/// Linear interpolation `(1−r)·a + r·b` (`Vector3::setInterpolate3`), for translations.
#[inline]
pub fn lerp(a: &Vec3, b: &Vec3, r: f64) -> Vec3 {
    let s = 1.0 - r;
    [
        s * a[0] + r * b[0],
        s * a[1] + r * b[1],
        s * a[2] + r * b[2],
    ]
}

/// tf2's `acos`, clamped to `[−1, 1]` first (`tf2Acos`).
#[inline]
fn tf2_acos(x: f64) -> f64 {
    // NaN passes through, as in tf2's comparisons.
    x.clamp(-1.0, 1.0).acos()
}

/// tf2's `Quaternion::slerp(a, b, r)` (docs/tf2-semantics.md §3.1): half angle
/// `θ = acos(clamp(|a·b| / sqrt(|a|²|b|²)))`; `θ == 0` returns `a` unchanged (sign and norm
/// included); otherwise `(a·sin((1−r)θ) ± b·sin(rθ)) / sin θ`, taking `−b` when `a·b < 0`
/// (short arc). No renormalisation. `r` = 0 at `a`, 1 at `b`.
///
/// Consecutive samples of a link are usually close (θ < 0.1 rad): there, and for `r` in
/// `[0, 1]`, the two weights `sin(kθ)/sin θ` are evaluated by series in `x = 1 − cos θ` (no
/// `acos`, no `sin`): below x = 1e-6 (0.16°) one two-term series in x, above it the Taylor
/// series in θ² with θ² from the series of `acos(1 − x)²`. All are truncated far below one
/// ulp, so the result differs from tf2's formula by rounding only (≤ 1e-15, about 4 ulp, per
/// component: ≤ 8e-16 over the 10⁶ pairs of `tests/tf2_math.rs`, 8.9e-16 the worst of 2×10⁷
/// in a review). Wider angles, `r` outside `[0, 1]`, either input off unit length by 1e-12 or
/// more, and NaN inputs take tf2's formula literally ([`slerp_tf2`]).
// Always inlined: the common case (samples < 0.16° apart) is a few dozen flops, which a
// call would cost as much as; the rest is out of line (`slerp_rest`).
#[inline(always)]
pub fn slerp(a: &Quat, b: &Quat, r: f64) -> Quat {
    // Summed pairwise (a shorter dependent chain than tf2's left-to-right sum): the two orders
    // differ by an ulp, which moves x below by ~1e-16 and the weights by ~1e-23. tf2's own
    // order is used where the last bit decides (θ == 0, in `slerp_rest`).
    let d = (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3]);
    let (la, lb) = (quat_length2(a), quat_length2(b));
    // Stored rotations are unit to a few ulp: then 1/sqrt(|a|²|b|²) = 1.5 − 0.5·|a|²|b|² to
    // < 1e-30, and c is tf2's |a·b| / sqrt(|a|²|b|²) without its sqrt and division (latency,
    // not flops, is what a lookup waits for). Either input off unit length (even with a unit
    // product, which would scale the result unlike tf2's) takes tf2's formula.
    let c = d.abs() * (1.5 - 0.5 * (la * lb));
    // x = 1 − cos θ, exact (Sterbenz) for c ≥ 0.5.
    let x = 1.0 - c;
    if !((la - 1.0).abs() < 1e-12
        && (lb - 1.0).abs() < 1e-12
        && (1e-12..1e-6).contains(&x)
        && (0.0..=1.0).contains(&r))
    {
        let ([a0, a1, a2, a3], [b0, b1, b2, b3]) = (*a, *b);
        return slerp_rest(a0, a1, a2, a3, b0, b1, b2, b3, r);
    }
    // Rotations of < 0.16° between samples (most links at 100 Hz and faster):
    // sin(kθ)/sin θ = k·(1 + (1 − k²)·(x/3)·(1 + (4 − k²)·x/10)) + O(x³), within 2e-20
    // (checked at 50 digits); one short chain after x.
    let (w0, w1) = tiny_angle_weights(x, r);
    let w1 = if d < 0.0 { -w1 } else { w1 };
    weighted_sum(a, w0, b, w1)
}

/// `a·w0 + b·w1`, component-wise.
#[inline(always)]
fn weighted_sum(a: &Quat, w0: f64, b: &Quat, w1: f64) -> Quat {
    [
        a[0] * w0 + b[0] * w1,
        a[1] * w0 + b[1] * w1,
        a[2] * w0 + b[2] * w1,
        a[3] * w0 + b[3] * w1,
    ]
}

/// The weights `sin((1 − r)θ)/sin θ` and `sin(rθ)/sin θ` for `x = 1 − cos θ < 1e-6` (see
/// [`slerp`]). At r = +0 (a query at a sample's own stamp inside the history: tf2's ratio is
/// +0) the series gives exactly 1 and +0 (`k·m` is 0 for k = 1 and for k = 0); they are
/// returned as constants, a branch the interpolated case predicts, so that an exact stamp
/// waits for no weight polynomial.
#[inline(always)]
fn tiny_angle_weights(x: f64, r: f64) -> (f64, f64) {
    if r.to_bits() == 0 {
        return (1.0, 0.0);
    }
    series_weights(x, r)
}

/// [`tiny_angle_weights`] by its series alone.
#[inline(always)]
fn series_weights(x: f64, r: f64) -> (f64, f64) {
    let x3 = x * (1.0 / 3.0);
    let x10 = x * 0.1;
    let w = |k: f64| {
        let k2 = k * k;
        let m = 1.0 - k2;
        let n = 4.0 - k2;
        k + (k * m) * (x3 * (1.0 + n * x10))
    };
    (w(1.0 - r), w(r))
}

/// [`slerp`] outside its inlined case: rotations within an ulp or two of tf2's θ == 0, the
/// series between 1e-6 ≤ x < 5e-3 (θ ≈ 0.1 rad), and tf2's formula for everything else.
/// The inputs come in registers, one by one: a caller holding them in registers (a link
/// just read from its ring) then stores nothing to memory on its hot path for a call it
/// does not make.
// Cold: laid out away from the inlined case, whose register allocation it then leaves
// alone (a call here costs the same either way).
#[allow(clippy::too_many_arguments)]
#[cold]
#[inline(never)]
fn slerp_rest(
    a0: f64,
    a1: f64,
    a2: f64,
    a3: f64,
    b0: f64,
    b1: f64,
    b2: f64,
    b3: f64,
    r: f64,
) -> Quat {
    let (a, b) = (&[a0, a1, a2, a3], &[b0, b1, b2, b3]);
    let d = (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3]);
    let (la, lb) = (quat_length2(a), quat_length2(b));
    let l = la * lb;
    let mut x = 1.0 - d.abs() * (1.5 - 0.5 * l);
    if !((la - 1.0).abs() < 1e-12
        && (lb - 1.0).abs() < 1e-12
        && x < SMALL_ANGLE_X
        && (0.0..=1.0).contains(&r))
    {
        return slerp_tf2(a, b, r);
    }
    if x < 1e-12 {
        // Within an ulp or two of tf2's decision θ == 0 (c rounded to 1): take its c exactly.
        let c = quat_dot(a, b).abs() / l.sqrt();
        if c >= 1.0 {
            return *a;
        }
        x = 1.0 - c;
    }
    let k0 = 1.0 - r;
    let (w0, w1) = if x < 1e-6 {
        tiny_angle_weights(x, r)
    } else {
        // sin(kθ)/sin θ = k · (sin(kθ)/(kθ)) · (θ/sin θ), all three even series in u = θ².
        let u = acos_sq_series(x);
        let t = theta_over_sin_series(u);
        (
            k0 * sin_over_x_series(k0 * k0 * u) * t,
            r * sin_over_x_series(r * r * u) * t,
        )
    };
    let w1 = if d < 0.0 { -w1 } else { w1 };
    weighted_sum(a, w0, b, w1)
}

/// Largest `1 − cos θ` that [`slerp`] evaluates by series (θ ≈ 0.1 rad); the truncation
/// errors below are bounded for this `x`.
const SMALL_ANGLE_X: f64 = 5e-3;

/// `c0 + c1·x + … + c5·x⁵` in Estrin's form (three independent pairs, then two steps):
/// half the dependent latency of Horner's.
#[inline]
fn poly5(x: f64, c: [f64; 6]) -> f64 {
    let x2 = x * x;
    let x4 = x2 * x2;
    (c[0] + c[1] * x) + x2 * (c[2] + c[3] * x) + x4 * (c[4] + c[5] * x)
}

/// `acos(1 − x)²` for `0 < x < 5e-3`: `2·Σ (2x)ⁿ / (n²·C(2n, n))`, six terms (the seventh is
/// < 2e-17 of the sum).
#[inline]
fn acos_sq_series(x: f64) -> f64 {
    // 2x + x²/3 + 4x³/45 + x⁴/35 + 16x⁵/1575 + 8x⁶/2079.
    x * poly5(
        x,
        [
            2.0,
            1.0 / 3.0,
            4.0 / 45.0,
            1.0 / 35.0,
            16.0 / 1575.0,
            8.0 / 2079.0,
        ],
    )
}

/// `sin(√u) / √u` for `0 ≤ u ≤ 0.011`: `Σ (−u)ⁿ / (2n+1)!`, six terms (the next is < 1e-21).
#[inline]
fn sin_over_x_series(u: f64) -> f64 {
    poly5(
        u,
        [
            1.0,
            -1.0 / 6.0,
            1.0 / 120.0,
            -1.0 / 5_040.0,
            1.0 / 362_880.0,
            -1.0 / 39_916_800.0,
        ],
    )
}

/// `√u / sin(√u)` for `0 ≤ u ≤ 0.011`: `1 + u/6 + 7u²/360 + 31u³/15120 + 127u⁴/604800 +
/// 73u⁵/3421440` (the next term is < 4e-18).
#[inline]
fn theta_over_sin_series(u: f64) -> f64 {
    poly5(
        u,
        [
            1.0,
            1.0 / 6.0,
            7.0 / 360.0,
            31.0 / 15_120.0,
            127.0 / 604_800.0,
            73.0 / 3_421_440.0,
        ],
    )
}

/// tf2's `Quaternion::slerp` reproduced literally (same operations, same order), with the
/// platform's `acos` and `sin`. [`slerp`] is this for wide angles.
pub fn slerp_tf2(a: &Quat, b: &Quat, r: f64) -> Quat {
    // angleShortestPath(b) / 2; the ×2 then ÷2 is exact, kept for fidelity.
    let s = (quat_length2(a) * quat_length2(b)).sqrt();
    let d = quat_dot(a, b);
    let full = if d < 0.0 {
        let nb = [-b[0], -b[1], -b[2], -b[3]];
        tf2_acos(quat_dot(a, &nb) / s) * 2.0
    } else {
        tf2_acos(d / s) * 2.0
    };
    let theta = full / 2.0;
    if theta == 0.0 {
        return *a;
    }
    let inv = 1.0 / theta.sin();
    let s0 = ((1.0 - r) * theta).sin();
    let s1 = (r * theta).sin();
    if d < 0.0 {
        [
            (a[0] * s0 + -b[0] * s1) * inv,
            (a[1] * s0 + -b[1] * s1) * inv,
            (a[2] * s0 + -b[2] * s1) * inv,
            (a[3] * s0 + -b[3] * s1) * inv,
        ]
    } else {
        [
            (a[0] * s0 + b[0] * s1) * inv,
            (a[1] * s0 + b[1] * s1) * inv,
            (a[2] * s0 + b[2] * s1) * inv,
            (a[3] * s0 + b[3] * s1) * inv,
        ]
    }
}

/// Rotation matrix of `q` (Bullet's `Matrix3x3::setRotation`): divides by `|q|²`, so any
/// non-zero `q` gives a proper rotation; a zero `q` gives NaNs (tf2 asserts only in debug).
pub fn matrix_from_quat(q: &Quat) -> Mat3 {
    let [x, y, z, w] = *q;
    let d = quat_length2(q);
    let s = 2.0 / d;
    let (xs, ys, zs) = (x * s, y * s, z * s);
    let (wx, wy, wz) = (w * xs, w * ys, w * zs);
    let (xx, xy, xz) = (x * xs, x * ys, x * zs);
    let (yy, yz, zz) = (y * ys, y * zs, z * zs);
    [
        [1.0 - (yy + zz), xy - wz, xz + wy],
        [xy + wz, 1.0 - (xx + zz), yz - wx],
        [xz - wy, yz + wx, 1.0 - (xx + yy)],
    ]
}

/// Quaternion of a rotation matrix (Bullet's `Matrix3x3::getRotation`, docs/tf2-semantics.md §6.4): trace > 0
/// gives `w > 0`; otherwise the component of the largest diagonal element is made positive,
/// so `w` may be negative for rotations of 120° or more.
pub fn quat_from_matrix(m: &Mat3) -> Quat {
    let trace = m[0][0] + m[1][1] + m[2][2];
    let mut temp = [0.0f64; 4];
    if trace > 0.0 {
        let mut s = (trace + 1.0).sqrt();
        temp[3] = s * 0.5;
        s = 0.5 / s;
        temp[0] = (m[2][1] - m[1][2]) * s;
        temp[1] = (m[0][2] - m[2][0]) * s;
        temp[2] = (m[1][0] - m[0][1]) * s;
    } else {
        let i = if m[0][0] < m[1][1] {
            if m[1][1] < m[2][2] {
                2
            } else {
                1
            }
        } else if m[0][0] < m[2][2] {
            2
        } else {
            0
        };
        let j = (i + 1) % 3;
        let k = (i + 2) % 3;
        let mut s = (m[i][i] - m[j][j] - m[k][k] + 1.0).sqrt();
        temp[i] = s * 0.5;
        s = 0.5 / s;
        temp[3] = (m[k][j] - m[j][k]) * s;
        temp[j] = (m[j][i] + m[i][j]) * s;
        temp[k] = (m[k][i] + m[i][k]) * s;
    }
    temp
}

/// The matrix round trip ROS 2 applies to stored samples and one-time lookup results:
/// normalised, sign-canonicalised as in [`quat_from_matrix`].
#[inline]
pub fn canonicalize(q: &Quat) -> Quat {
    quat_from_matrix(&matrix_from_quat(q))
}

/// [`canonicalize`] for a quaternion that is unit to rounding (the product of stored, unit
/// samples: every lookup result), without the matrix: `±q/|q|` with the sign the matrix round
/// trip picks, `w > 0` when the trace is positive (`3w² > x² + y² + z²`), else the largest of
/// `|x|, |y|, |z|` positive. Equal to [`canonicalize`] up to rounding (a few ulp). Inputs that
/// are not near unit, or that lie within rounding of one of the round trip's decisions (where
/// only the exact operations decide the sign), take [`canonicalize`] itself.
#[inline]
pub fn canonicalize_unit(q: &Quat) -> Quat {
    canonicalize_clear(q).unwrap_or_else(|| canonicalize(q))
}

/// [`canonicalize_unit`] where the sign is clear: `None` for an input off unit length, or
/// where the input's last bits could decide the sign.
///
/// The round trip makes positive the component it computes first: `w` when the trace is
/// positive, else the one with the largest square (ties broken by its comparison order). Where
/// rounding could change that choice — the trace within 1e-9 of 0, or squares within 1e-9 of
/// the largest — the sign is still clear when every component the trip could choose has the
/// same sign (a rotation about z alone, `x = y = 0`, ties x with y but always chooses z; a
/// rotation about `(1, 0, 1)` ties x with z, which share their sign).
#[inline(always)]
pub(crate) fn canonicalize_clear(q: &Quat) -> Option<Quat> {
    let [x, y, z, w] = *q;
    let (xx, yy, zz, ww) = (x * x, y * y, z * z, w * w);
    let d = (xx + yy) + (zz + ww);
    // (A NaN input gets no vote below, and is declined there.)
    if (d - 1.0).abs() >= 1e-12 {
        return None;
    }
    // 1/sqrt(d) to < 1e-30 for |d − 1| < 1e-12.
    let inv = 1.5 - 0.5 * d;
    const MARGIN: f64 = 1e-9;
    let trace = 3.0 * ww - (xx + yy + zz);
    let top = xx.max(yy).max(zz);
    // +1 or −1 once a candidate has voted; NaN once two disagree or one is zero (or NaN).
    let mut sign = 0.0f64;
    let mut vote = |c: f64| {
        let s = if c > 0.0 {
            1.0
        } else if c < 0.0 {
            -1.0
        } else {
            f64::NAN
        };
        sign = if sign == 0.0 || sign == s {
            s
        } else {
            f64::NAN
        };
    };
    if trace >= -MARGIN {
        vote(w);
    }
    if trace <= MARGIN {
        for (c, cc) in [(x, xx), (y, yy), (z, zz)] {
            if cc >= top - MARGIN {
                vote(c);
            }
        }
    }
    if sign.abs() != 1.0 {
        return None;
    }
    let scale = sign * inv;
    Some([x * scale, y * scale, z * scale, w * scale])
}

/// Row `r` of `m` dotted with `v` (`Vector3::dot`).
#[inline]
fn row_dot(r: &[f64; 3], v: &Vec3) -> f64 {
    r[0] * v[0] + r[1] * v[1] + r[2] * v[2]
}

/// `m·v` (`operator*(Matrix3x3, Vector3)`).
#[inline]
pub fn mat_vec(m: &Mat3, v: &Vec3) -> Vec3 {
    [row_dot(&m[0], v), row_dot(&m[1], v), row_dot(&m[2], v)]
}

/// `a·b` (`operator*(Matrix3x3, Matrix3x3)`, via Bullet's `tdotx/y/z`).
pub fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let tdot = |col: usize, v: &[f64; 3]| b[0][col] * v[0] + b[1][col] * v[1] + b[2][col] * v[2];
    [
        [tdot(0, &a[0]), tdot(1, &a[0]), tdot(2, &a[0])],
        [tdot(0, &a[1]), tdot(1, &a[1]), tdot(2, &a[1])],
        [tdot(0, &a[2]), tdot(1, &a[2]), tdot(2, &a[2])],
    ]
}

/// Accumulates one link into a chain the way tf2's walk does (`TransformAccum::accum`):
/// `p ← R(q_link)·p + p_link`, `q ← q_link·q`. `acc` is `T_top_frame` so far; the result is
/// `T_parent_frame` for the link's parent.
#[inline]
pub fn accumulate(link: &Transform, acc: &Transform) -> Transform {
    Transform {
        translation: vec_add(
            &quat_rotate(&link.rotation, &acc.translation),
            &link.translation,
        ),
        rotation: quat_mul(&link.rotation, &acc.rotation),
    }
}

/// Inverse as tf2's walk computes it (`finalize`): `q' = conj(q)`, `p' = R(q')·(−p)`.
#[inline]
pub fn inverse(t: &Transform) -> Transform {
    let q = quat_inverse(&t.rotation);
    Transform {
        translation: quat_rotate(&q, &vec_neg(&t.translation)),
        rotation: q,
    }
}

/// `G⁻¹·S` exactly as tf2's `FullPath` finalize: `q = conj(q_G)·q_S`,
/// `p = R(conj q_G)·p_S + R(conj q_G)·(−p_G)`.
#[inline(always)]
pub fn inverse_times(g: &Transform, s: &Transform) -> Transform {
    let inv = inverse(g);
    Transform {
        translation: vec_add(
            &quat_rotate(&inv.rotation, &s.translation),
            &inv.translation,
        ),
        rotation: quat_mul(&inv.rotation, &s.rotation),
    }
}

/// `inverse_times(&Transform::IDENTITY, s)` with the identity's inverse worked out, for an
/// `s` with a finite translation: tf2's `FullPath` finalize when the target pass composed
/// nothing (a root target). The rotation of a finite translation by the identity's conjugate
/// `(-0, -0, -0, 1)` and the addition of its (+0) translation keep every nonzero component
/// and make every zero +0, which is `c + 0.0`; the rotation product is kept literally (its
/// zeros' signs depend on the other components, and it is the same for any input).
#[inline(always)]
pub(crate) fn identity_inverse_times(s: &Transform) -> Transform {
    Transform {
        translation: s.translation.map(|c| c + 0.0),
        rotation: quat_mul(&[-0.0, -0.0, -0.0, 1.0], &s.rotation),
    }
}

/// A transform held as tf2's `tf2::Transform` holds it: a rotation matrix and an origin.
/// Used where tf2 composes with matrices (the two-time lookup, docs/tf2-semantics.md §6.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatTransform {
    /// Rotation matrix (row-major).
    pub basis: Mat3,
    /// Translation, metres.
    pub origin: Vec3,
}

impl MatTransform {
    /// The identity (`Transform::setIdentity`).
    pub const IDENTITY: MatTransform = MatTransform {
        basis: MAT3_IDENTITY,
        origin: [0.0; 3],
    };

    /// `tf2::Transform(q, p)`: the basis from [`matrix_from_quat`].
    pub fn from_transform(t: &Transform) -> MatTransform {
        MatTransform {
            basis: matrix_from_quat(&t.rotation),
            origin: t.translation,
        }
    }

    /// `self · other` (`tf2::Transform::operator*`): basis `B₁·B₂`, origin `B₁·o₂ + o₁`.
    pub fn mul(&self, other: &MatTransform) -> MatTransform {
        let rotated = mat_vec(&self.basis, &other.origin);
        MatTransform {
            basis: mat_mul(&self.basis, &other.basis),
            origin: [
                rotated[0] + self.origin[0],
                rotated[1] + self.origin[1],
                rotated[2] + self.origin[2],
            ],
        }
    }

    /// Back to quaternion form (`getRotation`, [`quat_from_matrix`]).
    pub fn to_transform(&self) -> Transform {
        Transform {
            translation: self.origin,
            rotation: quat_from_matrix(&self.basis),
        }
    }
}

/// Formats `v` as C's `printf("%f")` does (glibc): six decimals, `inf`/`-inf`, and `nan` or
/// `-nan` by the sign bit. tf2 prints rejected values this way in its warnings.
pub fn c_fixed6(v: f64) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else {
        format!("{v:.6}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constant weights at r = +0 are the series' own, bit for bit, over the whole range
    /// of x the series is used for.
    #[test]
    fn tiny_angle_weights_at_ratio_zero_are_the_series_bit_for_bit() {
        let mut x = 1e-300f64;
        while x < 1e-6 {
            for x in [x, x * 1.000_000_1, f64::from_bits(x.to_bits() + 1)] {
                let (w0, w1) = series_weights(std::hint::black_box(x), std::hint::black_box(0.0));
                let (c0, c1) = tiny_angle_weights(x, 0.0);
                assert_eq!(
                    (w0.to_bits(), w1.to_bits()),
                    (c0.to_bits(), c1.to_bits()),
                    "x = {x:e}"
                );
            }
            x *= 1.37;
        }
    }

    /// Every finite translation component, and any rotation (non-finite included): the
    /// identity's finalize worked out equals the literal one bit for bit.
    #[test]
    fn identity_inverse_times_is_inverse_times_of_the_identity_bit_for_bit() {
        let finite = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -2.5e-300,
            5e-324,
            3e300,
            -f64::MAX,
            std::f64::consts::FRAC_1_SQRT_2,
        ];
        let any = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        let mut n = 0u64;
        let mut pick = |values: &[f64]| {
            n = n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            values[(n >> 33) as usize % values.len()]
        };
        let all: Vec<f64> = finite.iter().chain(&any).copied().collect();
        let bits = |t: &Transform| {
            let mut b = [0u64; 7];
            for (o, v) in b.iter_mut().zip(t.translation.iter().chain(&t.rotation)) {
                *o = v.to_bits();
            }
            b
        };
        for k in 0..400_000 {
            // Half of the rotations with non-finite components too.
            let r = if k % 2 == 0 { &finite[..] } else { &all[..] };
            let s = Transform {
                translation: [pick(&finite), pick(&finite), pick(&finite)],
                rotation: [pick(r), pick(r), pick(r), pick(r)],
            };
            assert_eq!(
                bits(&identity_inverse_times(&s)),
                bits(&inverse_times(&Transform::IDENTITY, &s)),
                "{s:?}"
            );
        }
    }

    #[test]
    fn matrix_round_trip_normalises_and_fixes_sign() {
        let q = canonicalize(&[0.0, 0.0, 0.0, -2.0]);
        assert_eq!(q, [0.0, 0.0, 0.0, 1.0]);
        // 180° about z: trace = -1, largest diagonal is m[2][2] = 1 → z positive.
        let q = canonicalize(&[0.0, 0.0, -1.0, 0.0]);
        assert_eq!(q[2], 1.0);
    }

    /// Wherever `canonicalize_clear` answers, the exact round trip of the input and of inputs
    /// a few ulp away from it (what rounding elsewhere in a lookup could have produced) picks
    /// the same sign; it declines only where they could disagree. Inputs are drawn on and
    /// near the trip's decisions: ties between squares, the trace near 0.
    #[test]
    fn clear_signs_are_the_round_trips_under_rounding() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut uniform = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let normalise = |q: Quat| {
            let n = quat_length2(&q).sqrt();
            [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
        };
        // Per kind of input: (answered, declined).
        let mut counts = [(0, 0); 5];
        for i in 0..20_000 {
            let s = |u: f64| if u < 0.5 { -1.0 } else { 1.0 };
            let (a, b, c) = (uniform(), uniform(), uniform());
            let q = normalise(match i % 5 {
                // A rotation about z alone (x = y = 0): a yaw, past ±120° half the time.
                0 => [0.0, 0.0, a - 0.5, b - 0.5],
                // |x| = |z|, same or opposite signs: a rotation about (1, 0, ±1).
                1 => [a, 0.0, a * s(c), b - 0.5],
                // |x| = |y| = |z|, the trace near 0 (w² near 1/4).
                2 => [s(a) * 0.5, s(b) * 0.5, s(c) * 0.5, 0.5 * s(uniform())],
                // Two largest squares equal to a few ulp, of opposite signs.
                3 => [
                    a,
                    -a * (1.0 + (uniform() - 0.5) * 8.0 * f64::EPSILON),
                    0.3 * b,
                    0.3 * (c - 0.5),
                ],
                _ => [a - 0.5, b - 0.5, c - 0.5, uniform() - 0.5],
            });
            let Some(r) = canonicalize_clear(&q) else {
                counts[i % 5].1 += 1;
                continue;
            };
            counts[i % 5].0 += 1;
            for _ in 0..8 {
                let nudged = q.map(|v| v * (1.0 + (uniform() - 0.5) * 8.0 * f64::EPSILON));
                let exact = canonicalize(&nudged);
                assert!(
                    quat_dot(&exact, &r) > 0.0,
                    "{q:?}: clear {r:?}, round trip of {nudged:?} {exact:?}"
                );
            }
        }
        // Yaws are clear (but within 1e-9 of |w| = 1/2, where w and z may disagree: not
        // drawn here); so are rotations about (1, 0, 1), whose tied components share a sign.
        assert_eq!(counts[0].1, 0, "yaws declined: {counts:?}");
        assert!(counts[1].0 > 1000, "{counts:?}");
        // A yaw past 120° (x = y = 0, trace < 0) is clear.
        assert!(canonicalize_clear(&[0.0, 0.0, 0.9, -0.4358898943540674]).is_some());
        // A tie between x and z of opposite signs, trace < 0, is not.
        assert!(canonicalize_clear(&normalise([0.6, 0.0, -0.6, 0.2])).is_none());
    }

    #[test]
    fn printf_style() {
        assert_eq!(c_fixed6(f64::NAN), "nan");
        assert_eq!(c_fixed6(-f64::NAN), "-nan");
        assert_eq!(c_fixed6(f64::NEG_INFINITY), "-inf");
        assert_eq!(c_fixed6(1.5), "1.500000");
    }
}
