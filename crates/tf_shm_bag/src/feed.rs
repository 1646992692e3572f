//! From a TFMessage to the arena: tf2's `setTransform` for each of its transforms, with the
//! authority tf2_ros's C++ `TransformListener` passes, and counts of what happened.

use tf_shm::validate::TransformInput;
use tf_shm::{ArenaWriter, SetTransformError, WriteStatus};

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
                Ok(WriteStatus::DroppedHistoryFull) => self.refuse(|| {
                    format!(
                        "frame \"{}\": sample older than its whole (full) history dropped",
                        t.child_frame_id
                    )
                }),
                Err(SetTransformError::Refused(r)) => self.refuse(|| {
                    r.reasons
                        .iter()
                        .map(|x| x.message.clone())
                        .collect::<Vec<_>>()
                        .join("; ")
                }),
                Err(SetTransformError::Capacity(c)) => {
                    self.refuse(|| format!("frame \"{}\": {c}", t.child_frame_id))
                }
            }
        }
    }

    fn refuse(&mut self, text: impl FnOnce() -> String) {
        self.counts.refused += 1;
        if self.refusals.len() < KEPT_REFUSALS {
            self.refusals.push(text());
        }
    }
}
