//! One transform as `tf2_echo` shows it: stamp, translation, quaternion, roll/pitch/yaw in
//! radians and degrees, and the homogeneous 4×4 matrix; as text with units, or as JSON.

use serde::Serialize;

use crate::out::{json_matrix, json_nums};
use tf_shm::math::{matrix_from_quat, Mat3};
use tf_shm::TransformStamped;

/// What `echo` and `lookup` print for one successful lookup. In JSON, a non-finite number
/// (tf2 answers NaN or ±∞ when values overflow) is the string `"NaN"`, `"Infinity"` or
/// `"-Infinity"` (see [`crate::out::JsonNum`]), never `null`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TransformReport {
    /// Target frame (`header.frame_id`).
    pub target: String,
    /// Source frame (`child_frame_id`).
    pub source: String,
    /// Stamp of the result, ns.
    pub stamp_ns: i64,
    /// Stamp of the result, s.
    pub stamp_s: f64,
    /// Translation `[x, y, z]`, m.
    #[serde(serialize_with = "json_nums")]
    pub translation_m: [f64; 3],
    /// Rotation as a quaternion `[x, y, z, w]`.
    #[serde(serialize_with = "json_nums")]
    pub rotation_xyzw: [f64; 4],
    /// Roll, pitch, yaw about fixed x, y, z (tf2's `Matrix3x3::getRPY`), rad.
    #[serde(serialize_with = "json_nums")]
    pub rpy_rad: [f64; 3],
    /// The same in degrees.
    #[serde(serialize_with = "json_nums")]
    pub rpy_deg: [f64; 3],
    /// Homogeneous matrix, row-major; translation in the last column, m.
    #[serde(serialize_with = "json_matrix")]
    pub matrix: [[f64; 4]; 4],
}

impl TransformReport {
    /// The report of a lookup's answer.
    pub fn new(t: &TransformStamped<'_>) -> TransformReport {
        let q = t.transform.rotation;
        let p = t.transform.translation;
        let m = matrix_from_quat(&q);
        let rpy = rpy_from_matrix(&m);
        let mut matrix = [[0.0; 4]; 4];
        for r in 0..3 {
            matrix[r][..3].copy_from_slice(&m[r]);
            matrix[r][3] = p[r];
        }
        matrix[3][3] = 1.0;
        TransformReport {
            target: t.frame_id.to_owned(),
            source: t.child_frame_id.to_owned(),
            stamp_ns: t.stamp,
            stamp_s: t.stamp as f64 / 1e9,
            translation_m: p,
            rotation_xyzw: q,
            rpy_rad: rpy,
            rpy_deg: rpy.map(f64::to_degrees),
            matrix,
        }
    }

    /// tf2_echo's layout with units written, `digits` decimals:
    ///
    /// ```text
    /// At time 12.500000000 s
    /// - Translation: [1.000, 2.000, 0.000] m
    /// - Rotation: in Quaternion (xyzw) [0.000, 0.000, 0.707, 0.707]
    /// - Rotation: in RPY (radian) [0.000, -0.000, 1.571]
    /// - Rotation: in RPY (degree) [0.000, -0.000, 90.000]
    /// - Matrix:
    ///    0.000 -1.000  0.000  1.000
    ///    ...
    /// ```
    pub fn to_text(&self, digits: usize) -> String {
        let list = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.digits$}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut s = format!("At time {} s\n", crate::out::stamp(self.stamp_ns));
        s += &format!("- Translation: [{}] m\n", list(&self.translation_m));
        s += &format!(
            "- Rotation: in Quaternion (xyzw) [{}]\n",
            list(&self.rotation_xyzw)
        );
        s += &format!(
            "- Rotation: in RPY (radian) [{}] rad\n",
            list(&self.rpy_rad)
        );
        s += &format!(
            "- Rotation: in RPY (degree) [{}] deg\n",
            list(&self.rpy_deg)
        );
        s += "- Matrix (translation column in m):\n";
        let cells: Vec<Vec<String>> = self
            .matrix
            .iter()
            .map(|r| r.iter().map(|x| format!("{x:.digits$}")).collect())
            .collect();
        let w = cells.iter().flatten().map(String::len).max().unwrap_or(0);
        for r in cells {
            for c in r {
                s += &format!(" {c:>w$}");
            }
            s += "\n";
        }
        s
    }
}

/// Roll, pitch, yaw (rad) of a rotation matrix exactly as tf2's `Matrix3x3::getRPY` (its
/// `getEulerYPR` with solution 1): at the gimbal lock (|m[2][0]| ≥ 1) yaw is 0 and roll takes
/// the whole rotation about x.
pub fn rpy_from_matrix(m: &Mat3) -> [f64; 3] {
    let half_pi = std::f64::consts::FRAC_PI_2;
    if m[2][0].abs() >= 1.0 {
        let delta = m[2][1].atan2(m[2][2]);
        let pitch = if m[2][0] < 0.0 { half_pi } else { -half_pi };
        [delta, pitch, 0.0]
    } else {
        let pitch = -m[2][0].asin();
        let c = pitch.cos();
        let roll = (m[2][1] / c).atan2(m[2][2] / c);
        let yaw = (m[1][0] / c).atan2(m[0][0] / c);
        [roll, pitch, yaw]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tf_shm::Transform;

    fn report(q: [f64; 4]) -> TransformReport {
        TransformReport::new(&TransformStamped {
            stamp: 1_500_000_000,
            frame_id: "a",
            child_frame_id: "b",
            transform: Transform {
                translation: [1.0, 2.0, 3.0],
                rotation: q,
            },
        })
    }

    #[test]
    fn rpy_of_single_axis_rotations() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let r = report([0.0, 0.0, h, h]);
        assert!((r.rpy_rad[2] - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert!((r.rpy_deg[2] - 90.0).abs() < 1e-9);
        let r = report([h, 0.0, 0.0, h]);
        assert!((r.rpy_deg[0] - 90.0).abs() < 1e-9);
        let r = report([0.0, 0.5_f64.sin(), 0.0, 0.5_f64.cos()]);
        assert!((r.rpy_rad[1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn json_names_non_finite_values() {
        let mut r = report([0.0, 0.0, 0.0, 1.0]);
        r.translation_m = [f64::INFINITY, f64::NAN, 1.0];
        r.matrix[0][3] = f64::NEG_INFINITY;
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(
            j["translation_m"],
            serde_json::json!(["Infinity", "NaN", 1.0])
        );
        assert_eq!(j["matrix"][0][3], "-Infinity");
        assert_eq!(j["rotation_xyzw"], serde_json::json!([0.0, 0.0, 0.0, 1.0]));
    }

    #[test]
    fn gimbal_lock_puts_everything_in_roll() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let r = report([0.0, h, 0.0, h]);
        assert!((r.rpy_rad[1] - std::f64::consts::FRAC_PI_2).abs() < 1e-6);
    }

    #[test]
    fn text_has_units_and_matrix() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let t = report([0.0, 0.0, h, h]).to_text(3);
        assert!(t.starts_with("At time 1.500000000 s\n- Translation: [1.000, 2.000, 3.000] m\n"));
        assert!(
            t.contains("- Rotation: in RPY (degree) [0.000, -0.000, 90.000] deg\n"),
            "{t}"
        );
        assert!(t.contains("\n  0.000 -1.000  0.000  1.000\n"), "{t}");
        assert!(t.ends_with("\n  0.000  0.000  0.000  1.000\n"), "{t}");
    }
}
