//! From a TFMessage to the arena: tf2's `setTransform` for each of its transforms, with the
//! authority tf2_ros's C++ `TransformListener` passes, and counts of what happened.

use std::collections::BTreeMap;

use tf_shm::validate::TransformInput;
use tf_shm::{ArenaWriter, CapacityError, SetTransformError, WriteStatus};

use crate::msg::TfMessage;

/// The authority tf2_ros's C++ `TransformListener` passes for every sample (as the bridge).
pub const AUTHORITY: &str = "Authority undetectable";

/// Refusal texts kept for the summary; later ones are only counted.
const KEPT_REFUSALS: usize = 20;

/// What happened to the transforms fed so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Stored (including those stored with a history cut short).
    pub stored: u64,
    /// Dropped as tf2 drops a sample equal in stamp to one it has.
    pub duplicates: u64,
    /// Refused by tf2's rules or for lack of room in the arena.
    pub refused: u64,
    /// Stored, but the frame's history is shorter than the cache time.
    pub history_cut: u64,
    /// Refusals per reason ([`reason_text`] says what each means): tf2's codes
    /// (`TF_OLD_DATA`, `TF_SELF_TRANSFORM`, ...; a transform failing several checks counts
    /// under each), `HISTORY_FULL`, and the arena's capacity limits (`FRAME_TABLE_FULL`,
    /// `NAMES_FULL`, `NAME_TOO_LONG`, `RING_POOL_EXHAUSTED`).
    pub refused_by: BTreeMap<&'static str, u64>,
}

/// Why [`Counts::duplicates`] were dropped: the one reason tf2 drops a sample silently.
pub const DUPLICATE_REASON: &str =
    "equal in stamp, parent and transform to a sample the frame holds (tf2 drops it, no warning)";

/// What a key of [`Counts::refused_by`] means, in a few words.
pub fn reason_text(key: &str) -> &'static str {
    match key {
        "TF_OLD_DATA" => "older than the frame's newest sample minus the cache time",
        "TF_SELF_TRANSFORM" => "parent and child frame are the same",
        "TF_NO_CHILD_FRAME_ID" => "empty child frame",
        "TF_NO_FRAME_ID" => "empty parent frame",
        "TF_NAN_INPUT" => "NaN in the translation or rotation",
        "TF_DENORMALIZED_QUATERNION" => "rotation not a unit quaternion",
        "HISTORY_FULL" => "older than the whole of a full history that cannot grow",
        "FRAME_TABLE_FULL" => "no room for another frame (raise --max-frames)",
        "NAMES_FULL" => "no room for another frame name (raise --max-frames)",
        "NAME_TOO_LONG" => "frame name too long",
        "RING_POOL_EXHAUSTED" => {
            "no memory left for the frame's history (raise --memory-budget-mb)"
        }
        _ => "refused",
    }
}

fn capacity_key(c: &CapacityError) -> &'static str {
    match c {
        CapacityError::FrameTableFull { .. } => "FRAME_TABLE_FULL",
        CapacityError::NamesFull { .. } => "NAMES_FULL",
        CapacityError::NameTooLong { .. } => "NAME_TOO_LONG",
        CapacityError::RingPoolExhausted { .. } => "RING_POOL_EXHAUSTED",
    }
}

/// Applies messages to a writer.
#[derive(Debug, Default)]
pub struct Feed {
    /// Counts so far.
    pub counts: Counts,
    /// The first refusals, as text naming the frame and the reason.
    pub refusals: Vec<String>,
}

impl Feed {
    /// Writes every transform of `msg`; refusals are counted and the first kept as text.
    pub fn apply(&mut self, writer: &mut ArenaWriter, msg: &TfMessage, is_static: bool) {
        for t in &msg.transforms {
            let (p, q) = (&t.transform.translation, &t.transform.rotation);
            let input = TransformInput {
                frame_id: &t.header.frame_id,
                child_frame_id: &t.child_frame_id,
                stamp: t.header.stamp.to_ns(),
                translation: [p.x, p.y, p.z],
                rotation: [q.x, q.y, q.z, q.w],
            };
            match writer.set_transform(&input, AUTHORITY, is_static) {
                Ok(WriteStatus::Stored) => self.counts.stored += 1,
                Ok(WriteStatus::DuplicateDropped) => self.counts.duplicates += 1,
                Ok(WriteStatus::StoredHistoryCut) => {
                    self.counts.stored += 1;
                    self.counts.history_cut += 1;
                }
                Ok(WriteStatus::DroppedHistoryFull) => self.refuse(&["HISTORY_FULL"], || {
                    format!(
                        "frame \"{}\": sample older than its whole (full) history dropped",
                        t.child_frame_id
                    )
                }),
                Err(SetTransformError::Refused(r)) => {
                    let keys: Vec<&'static str> = r.codes().map(|c| c.as_str()).collect();
                    self.refuse(&keys, || {
                        r.reasons
                            .iter()
                            .map(|x| x.message.clone())
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                }
                Err(SetTransformError::Capacity(c)) => self.refuse(&[capacity_key(&c)], || {
                    format!("frame \"{}\": {c}", t.child_frame_id)
                }),
            }
        }
    }

    fn refuse(&mut self, keys: &[&'static str], text: impl FnOnce() -> String) {
        self.counts.refused += 1;
        for &k in keys {
            *self.counts.refused_by.entry(k).or_default() += 1;
        }
        if self.refusals.len() < KEPT_REFUSALS {
            self.refusals.push(text());
        }
    }
}
