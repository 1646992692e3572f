//! From received transforms to the arena: tf2's `setTransform` through the writer, with
//! refusals logged once per frame and reason and then rate-limited, as tf2 logs them.

use std::time::{Duration, Instant};

use tf_shm::validate::TransformInput;
use tf_shm::{ArenaWriter, SetTransformError, WriteStatus};

use crate::ratelimit::RateLimiter;

/// The authority tf2_ros's C++ `TransformListener` passes for every sample (docs/tf2-semantics.md §7).
pub const AUTHORITY: &str = "Authority undetectable";

/// Repeats of one (frame, reason) are logged at most this often, and all of them together at
/// most `LOG_BUDGET` lines per period.
const REPEAT_LOG_PERIOD: Duration = Duration::from_secs(10);
/// Refusal lines per period in all (a flood of random names gets this many, then a summary).
const LOG_BUDGET: u32 = 20;
/// Distinct (frame, reason) pairs remembered (bounds memory under a flood of random names).
const MAX_TRACKED: usize = 10_000;

/// Counts of what happened to samples, for the periodic summary.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub stored: u64,
    pub duplicates: u64,
    pub refused: u64,
    pub history_cut: u64,
}

/// Applies samples to the writer and logs what tf2 would log.
pub struct Ingest {
    limiter: RateLimiter<(String, &'static str)>,
    pub counts: Counts,
}

impl Default for Ingest {
    fn default() -> Self {
        Ingest {
            limiter: RateLimiter::new(REPEAT_LOG_PERIOD, LOG_BUDGET, MAX_TRACKED),
            counts: Counts::default(),
        }
    }
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

    /// Logs a message that was not a TFMessage in XCDR1 or XCDR2 (rate-limited as refusals
    /// are).
    pub fn report_malformed(&mut self, e: &tf_shm::cdr::CdrError) {
        self.report("", "MALFORMED", || {
            format!("message dropped, not a TFMessage in XCDR1 or XCDR2: {e}")
        });
    }

    /// Logs (frame, reason) unless the rate limiter holds it back; a line after held-back
    /// repeats says how many.
    fn report(&mut self, frame: &str, reason: &'static str, text: impl FnOnce() -> String) {
        match self
            .limiter
            .check((frame.to_string(), reason), Instant::now())
        {
            Some(0) => tracing::warn!(code = reason, "{}", text()),
            Some(n) => tracing::warn!(code = reason, "{} ({n} more since last report)", text()),
            None => {}
        }
    }

    /// Logs how many refusal lines the overall budget held back, once per period.
    pub fn report_held_back(&mut self) {
        if let Some(n) = self.limiter.take_summary(Instant::now()) {
            tracing::warn!(
                "{n} more refused or capacity-limited transforms in the last {} s were not \
                 logged one by one; `tf_shm doctor` shows the counts per reason",
                REPEAT_LOG_PERIOD.as_secs()
            );
        }
    }
}
