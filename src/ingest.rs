//! From received transforms to the arena: tf2's `setTransform` through the writer, with
//! refusals logged once per frame and reason and then rate-limited, as tf2 logs them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tf_shm::validate::TransformInput;
use tf_shm::{ArenaWriter, SetTransformError, WriteStatus};

/// The authority tf2_ros's C++ `TransformListener` passes for every sample (docs/tf2-semantics.md §7).
pub const AUTHORITY: &str = "Authority undetectable";

/// Repeats of one (frame, reason) are summarised at most this often.
const REPEAT_LOG_PERIOD: Duration = Duration::from_secs(10);
/// Distinct (frame, reason) pairs remembered; past this, repeats are logged every time the
/// period allows, whatever the pair (keeps a flood of random names from growing memory).
const MAX_TRACKED: usize = 10_000;

struct Seen {
    last_logged: Instant,
    suppressed: u64,
}

/// Counts of what happened to samples, for the periodic summary.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub stored: u64,
    pub duplicates: u64,
    pub refused: u64,
    pub history_cut: u64,
}

/// Applies samples to the writer and logs what tf2 would log.
#[derive(Default)]
pub struct Ingest {
    seen: HashMap<(String, &'static str), Seen>,
    pub counts: Counts,
}

impl Ingest {
    /// tf2's `setTransform(t, AUTHORITY, is_static)`.
    pub fn apply(&mut self, writer: &mut ArenaWriter, t: &TransformInput<'_>, is_static: bool) {
        match writer.set_transform(t, AUTHORITY, is_static) {
            Ok(WriteStatus::Stored) => self.counts.stored += 1,
            Ok(WriteStatus::DuplicateDropped) => self.counts.duplicates += 1,
            Ok(WriteStatus::DroppedHistoryFull) => {
                self.counts.refused += 1;
                self.report(t.child_frame_id, "HISTORY_FULL", || {
                    format!(
                        "frame \"{}\": sample older than its whole (full) history dropped; raise \
                         memory_budget_mb or max_rate_hz",
                        t.child_frame_id
                    )
                });
            }
            Ok(WriteStatus::StoredHistoryCut) => {
                self.counts.stored += 1;
                self.counts.history_cut += 1;
                self.report(t.child_frame_id, "HISTORY_CUT", || {
                    format!(
                        "frame \"{}\": history shorter than the cache time (ring pool exhausted \
                         or rate above max_rate_hz); raise memory_budget_mb or max_rate_hz",
                        t.child_frame_id
                    )
                });
            }
            Err(SetTransformError::Refused(r)) => {
                self.counts.refused += 1;
                for reason in &r.reasons {
                    self.report(t.child_frame_id, reason.code.as_str(), || {
                        reason.message.clone()
                    });
                }
            }
            Err(SetTransformError::Capacity(c)) => {
                self.counts.refused += 1;
                self.report(t.child_frame_id, "CAPACITY", || c.to_string());
            }
        }
    }

    /// Logs the first occurrence of (frame, reason) at once, repeats at most every
    /// `REPEAT_LOG_PERIOD` with how many were suppressed.
    fn report(&mut self, frame: &str, reason: &'static str, text: impl FnOnce() -> String) {
        let now = Instant::now();
        let key = (frame.to_string(), reason);
        match self.seen.get_mut(&key) {
            Some(seen) if now.duration_since(seen.last_logged) < REPEAT_LOG_PERIOD => {
                seen.suppressed += 1;
            }
            Some(seen) => {
                tracing::warn!(
                    code = reason,
                    "{} ({} more since last report)",
                    text(),
                    seen.suppressed
                );
                seen.last_logged = now;
                seen.suppressed = 0;
            }
            None => {
                tracing::warn!(code = reason, "{}", text());
                if self.seen.len() < MAX_TRACKED {
                    self.seen.insert(
                        key,
                        Seen {
                            last_logged: now,
                            suppressed: 0,
                        },
                    );
                }
            }
        }
    }
}
