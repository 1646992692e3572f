//! tf2 `LinearMath` semantics (docs/tf2-semantics.md §3.1, §4.2, §6.4).

use proptest::prelude::*;
use tf_shm::math::*;
use tf_shm::Transform;

fn close4(a: Quat, b: Quat, tol: f64) -> bool {
    (0..4).all(|i| (a[i] - b[i]).abs() < tol)
}

fn close3(a: Vec3, b: Vec3, tol: f64) -> bool {
    (0..3).all(|i| (a[i] - b[i]).abs() < tol)
}

fn z_rot(deg: f64) -> Quat {
    let h = (deg / 2.0).to_radians();
    [0.0, 0.0, h.sin(), h.cos()]
}

#[test]
fn slerp_takes_the_short_arc_170_to_minus_170() {
    let q = slerp(&z_rot(170.0), &z_rot(-170.0), 0.5);
    // 180° about z, in the older sample's hemisphere.
    assert!(close4(q, [0.0, 0.0, 1.0, 0.0], 1e-12), "{q:?}");
    let q = slerp(&z_rot(170.0), &z_rot(-170.0), 0.75);
    // 185° = −175°, expressed with the older sample's sign: (0, 0, sin 92.5°, cos 92.5°).
    assert!(close4(q, z_rot(185.0), 1e-12), "{q:?}");
}

#[test]
fn slerp_zero_angle_returns_older_unchanged() {
    let a = [0.0, 0.0, 0.6, 0.8];
    let neg = [-0.0, -0.0, -0.6, -0.8];
    assert_eq!(slerp(&a, &neg, 0.5), a);
    let twice = [0.0, 0.0, 1.2, 1.6];
    assert_eq!(slerp(&twice, &a, 0.3), twice);
}

#[test]
fn slerp_does_not_renormalise() {
    let a = [0.0, 0.0, 0.0, 2.0];
    let b = z_rot(90.0);
    let q = slerp(&a, &b, 0.5);
    // θ = acos(2·cos 45° / 2) = 45°; weights sin(22.5°)/sin(45°) on both, no normalisation,
    // so the norm-2 endpoint pulls the result (it is not the 45° rotation).
    let k = 22.5f64.to_radians().sin() / 45f64.to_radians().sin();
    let expected = [0.0, 0.0, b[2] * k, 2.0 * k + b[3] * k];
    assert!(close4(q, expected, 1e-15), "{q:?}");
    assert!(quat_length2(&q) > 1.5);
}

/// Inputs off unit length whose norms' product is 1 (|a| = 1000, |b| = 1/1000) are tf2's
/// formula exactly, not the series: the series assumes unit inputs, and would scale the
/// result unlike tf2's (found by review: 3.5e-10 off at a factor of 10⁶).
#[test]
fn slerp_of_non_unit_inputs_is_tf2s_formula() {
    for (scale, deg) in [(1e3, 0.01), (1e6, 0.01), (1e3, 2.0), (1.0 + 1e-9, 0.05)] {
        let a = z_rot(10.0).map(|v| v * scale);
        let b = z_rot(10.0 + deg).map(|v| v / scale);
        for r in [0.0, 0.25, 0.5, 1.0] {
            assert_eq!(
                slerp(&a, &b, r),
                slerp_tf2(&a, &b, r),
                "scale {scale}, {deg}°, r {r}"
            );
        }
    }
}

#[test]
fn rotate_scales_by_norm_squared() {
    assert_eq!(
        quat_rotate(&[0.0, 0.0, 0.0, 2.0], &[1.0, 0.0, 0.0]),
        [4.0, 0.0, 0.0]
    );
    let v = quat_rotate(&z_rot(90.0), &[1.0, 0.0, 0.0]);
    assert!(close3(v, [0.0, 1.0, 0.0], 1e-15));
}

#[test]
fn matrix_to_quaternion_can_give_negative_w() {
    // 150° about −x: trace < 0, the largest diagonal is m[0][0] → x made positive, w < 0.
    let (s, c) = (75f64.to_radians().sin(), 75f64.to_radians().cos());
    let q = canonicalize(&[-s, 0.0, 0.0, c]);
    assert!(close4(q, [s, 0.0, 0.0, -c], 1e-15), "{q:?}");
    // Under 120° with w > 0 the sign is kept.
    let q = canonicalize(&z_rot(100.0));
    assert!(close4(q, z_rot(100.0), 1e-15));
}

#[test]
fn lerp_is_setinterpolate3() {
    assert_eq!(
        lerp(&[0.0, 2.0, -4.0], &[1.0, 4.0, 4.0], 0.25),
        [0.25, 2.5, -2.0]
    );
}

fn arb_quat() -> impl Strategy<Value = Quat> {
    prop::array::uniform4(-1.0f64..1.0).prop_filter("non-zero", |q| quat_length2(q) > 1e-3)
}

fn arb_unit() -> impl Strategy<Value = Quat> {
    arb_quat().prop_map(|q| {
        let n = quat_length2(&q).sqrt();
        [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
    })
}

fn arb_transform() -> impl Strategy<Value = Transform> {
    (prop::array::uniform3(-100.0f64..100.0), arb_unit()).prop_map(|(translation, rotation)| {
        Transform {
            translation,
            rotation,
        }
    })
}

proptest! {
    #[test]
    fn canonicalize_is_plus_or_minus_the_normalised_input(q in arb_quat()) {
        let n = quat_length2(&q).sqrt();
        let u = [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
        let c = canonicalize(&q);
        let neg = [-u[0], -u[1], -u[2], -u[3]];
        prop_assert!(close4(c, u, 1e-12) || close4(c, neg, 1e-12), "{:?} vs {:?}", c, u);
        // Idempotent up to rounding.
        prop_assert!(close4(canonicalize(&c), c, 1e-12));
    }

    #[test]
    fn inverse_cancels(t in arb_transform()) {
        let id = accumulate(&inverse(&t), &t);
        prop_assert!(close3(id.translation, [0.0; 3], 1e-9));
        prop_assert!(close4(canonicalize(&id.rotation), QUAT_IDENTITY, 1e-12));
        let id = inverse_times(&t, &t);
        prop_assert!(close3(id.translation, [0.0; 3], 1e-9));
        prop_assert!(close4(canonicalize(&id.rotation), QUAT_IDENTITY, 1e-12));
    }

    #[test]
    fn accumulate_is_associative_and_matches_matrices(
        a in arb_transform(), b in arb_transform(), c in arb_transform(), v in prop::array::uniform3(-10.0f64..10.0)
    ) {
        let left = accumulate(&a, &accumulate(&b, &c));
        let right = accumulate(&accumulate(&a, &b), &c);
        prop_assert!(close3(left.translation, right.translation, 1e-9));
        prop_assert!(close4(canonicalize(&left.rotation), canonicalize(&right.rotation), 1e-12));
        // a∘b as quaternions equals a·b as tf2::Transform matrices.
        let m = MatTransform::from_transform(&a).mul(&MatTransform::from_transform(&b));
        let q = accumulate(&a, &b);
        let p1 = vec_add(&quat_rotate(&q.rotation, &v), &q.translation);
        let p2 = vec_add(&mat_vec(&m.basis, &v), &m.origin);
        prop_assert!(close3(p1, p2, 1e-9));
        prop_assert!(close4(m.to_transform().rotation, canonicalize(&q.rotation), 1e-12));
    }

    #[test]
    fn slerp_endpoints_and_hemisphere(a in arb_unit(), b in arb_unit()) {
        let start = slerp(&a, &b, 0.0);
        prop_assert!(close4(start, a, 1e-9));
        let end = slerp(&a, &b, 1.0);
        let nb = [-b[0], -b[1], -b[2], -b[3]];
        prop_assert!(close4(end, b, 1e-6) || close4(end, nb, 1e-6));
        let mid = slerp(&a, &b, 0.5);
        prop_assert!(quat_dot(&mid, &a) >= -1e-12);
    }
}

/// Knuth's MMIX LCG: deterministic inputs for the rounding comparison below.
struct Lcg(u64);

impl Lcg {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn sym(&mut self) -> f64 {
        2.0 * self.unit() - 1.0
    }
}

/// `slerp` takes a series for close rotations and tf2's formula otherwise; both must give
/// tf2's `Quaternion::slerp` up to rounding, on both sides of the switch (θ ≈ 0.1 rad), for
/// either sign of `b`, and for non-unit inputs (tf2 divides by the norms, never renormalises).
#[test]
fn slerp_equals_tf2_formula_up_to_rounding() {
    let mut rng = Lcg(7);
    let (mut worst, mut series, mut formula) = (0.0f64, 0, 0);
    for i in 0..1_000_000 {
        let mut a = [rng.sym(), rng.sym(), rng.sym(), rng.sym()];
        let n = quat_length2(&a).sqrt();
        a.iter_mut().for_each(|v| *v /= n);
        // A rotation of up to 0.25 rad (half angle 0.125) about a random axis; a third of the
        // draws at most 1e-3 rad, the rates of real joints sampled at 100 Hz–1 kHz.
        // Every seventh: at most 1e-8 rad, around tf2's own cut to "θ == 0, return a".
        let max = if i % 7 == 0 {
            1e-8
        } else if i % 3 == 0 {
            1e-3
        } else {
            0.25
        };
        let angle = max * rng.unit();
        let axis = [rng.sym(), rng.sym(), rng.sym()];
        let an = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
        let (s, c) = (angle / 2.0).sin_cos();
        let delta = [axis[0] / an * s, axis[1] / an * s, axis[2] / an * s, c];
        let mut b = quat_mul(&delta, &a);
        if i % 2 == 1 {
            b.iter_mut().for_each(|v| *v = -*v);
        }
        if i % 5 == 0 {
            b.iter_mut().for_each(|v| *v *= 1.0 + 1e-7);
        }
        let r = rng.unit();
        let got = slerp(&a, &b, r);
        let want = slerp_tf2(&a, &b, r);
        let err = (0..4).map(|k| (got[k] - want[k]).abs()).fold(0.0, f64::max);
        worst = worst.max(err);
        if 1.0 - quat_dot(&a, &b).abs() / (quat_length2(&a) * quat_length2(&b)).sqrt() < 5e-3 {
            series += 1;
        } else {
            formula += 1;
        }
    }
    assert!(
        series > 350_000 && formula > 100_000,
        "{series} / {formula}"
    );
    assert!(
        worst <= 8e-16,
        "largest difference from tf2's formula: {worst:e}"
    );
}

/// Lookup results skip the matrix round trip: same quaternion to rounding, and the *same sign*
/// (not merely the same rotation), including near the round trip's decisions (trace 0, equal
/// diagonal elements) and for inputs off unit length.
#[test]
fn canonicalize_unit_equals_the_matrix_round_trip() {
    let mut rng = Lcg(11);
    let mut worst = 0.0f64;
    for i in 0..1_000_000 {
        let mut q = [rng.sym(), rng.sym(), rng.sym(), rng.sym()];
        match i % 4 {
            // |w| = |q|/2 exactly (trace 0), or two equal components.
            0 => q[3] = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt() / 3f64.sqrt(),
            1 => q[1] = q[0] * if i % 8 == 1 { -1.0 } else { 1.0 },
            _ => {}
        }
        let n = quat_length2(&q).sqrt();
        q.iter_mut().for_each(|v| *v /= n);
        if i % 16 == 3 {
            q.iter_mut().for_each(|v| *v *= 1.5);
        }
        let (got, want) = (canonicalize_unit(&q), canonicalize(&q));
        let err = (0..4).map(|k| (got[k] - want[k]).abs()).fold(0.0, f64::max);
        worst = worst.max(err);
    }
    assert!(
        worst <= 1e-15,
        "largest difference from the round trip: {worst:e}"
    );
}
