//! tf2 ROS 2 Jazzy's `setTransform` checks (docs/tf2-semantics.md §2, §7): what a transform must satisfy before
//! it is stored, and the exact console line tf2 logs for each refusal.
//!
//! ROS 2 first builds a `tf2::Transform` from the message, i.e. passes the quaternion through a
//! rotation matrix and back ([`crate::math::canonicalize`]), and runs the checks on that. So any
//! finite non-zero quaternion is accepted and stored normalised and sign-canonicalised; a zero
//! (or infinite) one turns into NaNs and fails both `TF_NAN_INPUT` and
//! `TF_DENORMALIZED_QUATERNION`. Infinite translations pass (tf2 tests only `isnan`).
//!
//! ```
//! use tf_shm::validate::{validate, TransformInput, RefusalCode};
//! let ok = validate(&TransformInput {
//!     frame_id: "/map", child_frame_id: "odom", stamp: 1_000_000_000,
//!     translation: [1.0, 0.0, 0.0], rotation: [0.0, 0.0, 0.0, 2.0],
//! }, "Authority undetectable").unwrap();
//! assert_eq!(ok.parent, "map");
//! assert_eq!(ok.transform.rotation, [0.0, 0.0, 0.0, 1.0]);
//!
//! let bad = validate(&TransformInput {
//!     frame_id: "map", child_frame_id: "map", stamp: 0,
//!     translation: [0.0; 3], rotation: [0.0; 4],
//! }, "me").unwrap_err();
//! assert_eq!(bad.codes().collect::<Vec<_>>(), [
//!     RefusalCode::SelfTransform, RefusalCode::NanInput, RefusalCode::DenormalizedQuaternion,
//! ]);
//! ```

use std::fmt;

use crate::math::{c_fixed6, canonicalize};
use crate::sample::Transform;
use crate::time::display_time;

/// tf2's `QUATERNION_NORMALIZATION_TOLERANCE`, written `10e-3` upstream.
const QUATERNION_NORMALIZATION_TOLERANCE: f64 = 10e-3;

/// A transform as received (`geometry_msgs/TransformStamped`, flattened).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransformInput<'a> {
    /// `header.frame_id` (the parent), as received.
    pub frame_id: &'a str,
    /// `child_frame_id`, as received.
    pub child_frame_id: &'a str,
    /// `header.stamp` in ns.
    pub stamp: i64,
    /// `[x, y, z]`, metres.
    pub translation: [f64; 3],
    /// `[x, y, z, w]`, any norm.
    pub rotation: [f64; 4],
}

/// A transform that passed every check, in the form ROS 2 stores it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Validated<'a> {
    /// Parent with one leading `/` stripped.
    pub parent: &'a str,
    /// Child with one leading `/` stripped.
    pub child: &'a str,
    /// ns, unchanged.
    pub stamp: i64,
    /// Translation unchanged; rotation normalised and sign-canonicalised (matrix round trip).
    pub transform: Transform,
}

/// tf2's refusal codes (the prefix of each log line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefusalCode {
    /// Parent equals child (after stripping).
    SelfTransform,
    /// Empty child.
    NoChildFrameId,
    /// Empty parent.
    NoFrameId,
    /// A NaN in the translation or the (round-tripped) rotation.
    NanInput,
    /// `|(w² + x² + y² + z²) − 1| ≥ 0.01` after the round trip (practically: zero quaternion).
    DenormalizedQuaternion,
    /// Older than the frame's history allows (`TimeCache::insertData` refused it).
    OldData,
}

impl RefusalCode {
    /// The code as tf2 prints it, e.g. `"TF_SELF_TRANSFORM"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RefusalCode::SelfTransform => "TF_SELF_TRANSFORM",
            RefusalCode::NoChildFrameId => "TF_NO_CHILD_FRAME_ID",
            RefusalCode::NoFrameId => "TF_NO_FRAME_ID",
            RefusalCode::NanInput => "TF_NAN_INPUT",
            RefusalCode::DenormalizedQuaternion => "TF_DENORMALIZED_QUATERNION",
            RefusalCode::OldData => "TF_OLD_DATA",
        }
    }
}

impl fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One failed check: its code and the line tf2 ROS 2 logs for it (error level, except
/// `TF_OLD_DATA` which tf2 logs as a warning).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    /// Which check.
    pub code: RefusalCode,
    /// tf2's exact log text.
    pub message: String,
}

/// Every check a transform failed, in tf2's order (self, no child, no parent, NaN,
/// denormalised); tf2 logs each and drops the transform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// At least one reason.
    pub reasons: Vec<Reason>,
}

impl Refusal {
    /// The codes, in order.
    pub fn codes(&self) -> impl Iterator<Item = RefusalCode> + '_ {
        self.reasons.iter().map(|r| r.code)
    }

    /// A `TF_OLD_DATA` refusal carrying `message` (build it with [`old_data_message`]).
    pub fn old_data(message: String) -> Refusal {
        Refusal {
            reasons: vec![Reason {
                code: RefusalCode::OldData,
                message,
            }],
        }
    }
}

impl fmt::Display for Refusal {
    /// The log lines, one per reason, joined with `\n`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.reasons.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            f.write_str(&r.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Refusal {}

/// Strips one leading `/` (tf2's `stripSlash`).
pub fn strip_slash(name: &str) -> &str {
    name.strip_prefix('/').unwrap_or(name)
}

/// The text a C `%s` prints: up to the first NUL.
fn c_str(s: &str) -> &str {
    s.split('\0').next().unwrap_or("")
}

/// tf2 ROS 2's `setTransform` validation. `authority` only appears in messages (the C++
/// `TransformListener` passes `"Authority undetectable"`). Allocates only when refusing.
///
/// # Errors
/// [`Refusal`] listing every failing check with tf2's log line.
#[inline]
pub fn validate<'a>(t: &TransformInput<'a>, authority: &str) -> Result<Validated<'a>, Refusal> {
    let parent = strip_slash(t.frame_id);
    let child = strip_slash(t.child_frame_id);
    let p = t.translation;
    let q = canonicalize(&t.rotation);

    // Same operand order as tf2 (w first) and `< tol` so that NaN fails.
    let norm2 = q[3] * q[3] + q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
    let normalized = (norm2 - 1.0).abs() < QUATERNION_NORMALIZATION_TOLERANCE;
    let failed = Failed {
        self_transform: child == parent,
        no_child: child.is_empty(),
        no_parent: parent.is_empty(),
        // Every value tested, no early exit: the common answer (none) takes no branch per value.
        nan: p
            .iter()
            .chain(q.iter())
            .fold(false, |any, v| any | v.is_nan()),
        denormalized: !normalized,
    };
    if !failed.any() {
        return Ok(Validated {
            parent,
            child,
            stamp: t.stamp,
            transform: Transform {
                translation: p,
                rotation: q,
            },
        });
    }
    Err(refusal(failed, authority, child, &p, &q))
}

/// The checks a transform failed (at least one).
#[derive(Clone, Copy)]
struct Failed {
    self_transform: bool,
    no_child: bool,
    no_parent: bool,
    nan: bool,
    denormalized: bool,
}

impl Failed {
    #[inline(always)]
    fn any(self) -> bool {
        self.self_transform | self.no_child | self.no_parent | self.nan | self.denormalized
    }
}

/// tf2's log lines for the checks `f` failed, in tf2's order.
#[cold]
#[inline(never)]
fn refusal(f: Failed, authority: &str, child: &str, p: &[f64; 3], q: &[f64; 4]) -> Refusal {
    let (a, c) = (c_str(authority), c_str(child));
    let mut reasons = Vec::new();
    let mut push = |code, message| reasons.push(Reason { code, message });
    if f.self_transform {
        push(
            RefusalCode::SelfTransform,
            format!(
                "TF_SELF_TRANSFORM: Ignoring transform from authority \"{a}\" with frame_id and  \
                 child_frame_id \"{c}\" because they are the same"
            ),
        );
    }
    if f.no_child {
        push(
            RefusalCode::NoChildFrameId,
            format!(
                "TF_NO_CHILD_FRAME_ID: Ignoring transform from authority \"{a}\" because \
                 child_frame_id not set "
            ),
        );
    }
    if f.no_parent {
        push(
            RefusalCode::NoFrameId,
            format!(
                "TF_NO_FRAME_ID: Ignoring transform with child_frame_id \"{c}\"  from authority \
                 \"{a}\" because frame_id not set"
            ),
        );
    }
    if f.nan {
        push(
            RefusalCode::NanInput,
            format!(
                "TF_NAN_INPUT: Ignoring transform for child_frame_id \"{c}\" from authority \
                 \"{a}\" because of a nan value in the transform ({} {} {}) ({} {} {} {})",
                c_fixed6(p[0]),
                c_fixed6(p[1]),
                c_fixed6(p[2]),
                c_fixed6(q[0]),
                c_fixed6(q[1]),
                c_fixed6(q[2]),
                c_fixed6(q[3])
            ),
        );
    }
    if f.denormalized {
        push(
            RefusalCode::DenormalizedQuaternion,
            format!(
                "TF_DENORMALIZED_QUATERNION: Ignoring transform for child_frame_id \"{c}\" from \
                 authority \"{a}\" because of an invalid quaternion in the transform \
                 ({} {} {} {})",
                c_fixed6(q[0]),
                c_fixed6(q[1]),
                c_fixed6(q[2]),
                c_fixed6(q[3])
            ),
        );
    }
    Refusal { reasons }
}

/// tf2 ROS 2's `TF_OLD_DATA` warning for `frame` (the stripped child) at `stamp` ns: two lines,
/// the second pointing at the wiki.
pub fn old_data_message(frame: &str, stamp: i64, authority: &str) -> String {
    format!(
        "TF_OLD_DATA ignoring data from the past for frame {} at time {} according to authority \
         {}\nPossible reasons are listed at http://wiki.ros.org/tf/Errors%20explained",
        c_str(frame),
        display_time(stamp),
        c_str(authority)
    )
}
