//! When a consumer whose owner died swaps to the new owner's arena.
//!
//! Swapping at once to a freshly created arena would answer "frame does not exist" until the
//! new bridge has received everything again; tf2_ros users never see that when a publisher
//! restarts, because their buffer keeps its data. So the consumer keeps the arena it has (its
//! owner is gone, its data stays valid) and, until the swap, answers from both arenas as one
//! buffer ([`crate::handover_store`]); it swaps when the new one holds, with data, every frame
//! the old one held with data; or, bounded, when the new one has been *ready* — declared by
//! its writer in the header ([`crate::ArenaWriter::declare_ready`]: it has received what it
//! must have first) — for `COVER_WAIT` (frames that are gone for good do not hold a consumer
//! back); or `MAX_HOLD` after joining, ready or not (a writer that never declares is still
//! followed).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::inspect::FrameKind;
use crate::sync::Ordering;
use crate::view::ArenaView;

/// Longest a ready new arena waits for the old arena's frames.
pub(crate) const COVER_WAIT: Duration = Duration::from_millis(500);
/// Longest a consumer keeps the old arena after joining a new one, ready or not (longer than
/// the bridge's own bound on declaring ready).
pub(crate) const MAX_HOLD: Duration = Duration::from_secs(8);

/// Frame names that had data in the old arena (computed once per handover).
pub(crate) struct Handover {
    wanted: Vec<String>,
    joined: Instant,
    ready_seen: Option<Instant>,
}

fn frames_with_data(view: &ArenaView) -> Vec<String> {
    view.frames()
        .map(|fs| {
            fs.into_iter()
                .filter(|f| match f.kind {
                    FrameKind::Static => true,
                    FrameKind::Dynamic => f.history.is_some(),
                    FrameKind::Root => false,
                })
                .map(|f| f.name)
                .collect()
        })
        // A damaged old arena has nothing worth waiting for.
        .unwrap_or_default()
}

/// Whether `view`'s writer declared it ready.
pub(crate) fn is_ready(view: &ArenaView) -> bool {
    view.header().ready_unix_ns.load(Ordering::Acquire) != 0
}

impl Handover {
    /// A new arena was joined at `now`, replacing `old`.
    pub fn new(old: &ArenaView, now: Instant) -> Handover {
        Handover {
            wanted: frames_with_data(old),
            joined: now,
            ready_seen: None,
        }
    }

    /// Whether to swap to `new` at `now`.
    pub fn swap_now(&mut self, new: &ArenaView, now: Instant) -> bool {
        if now.duration_since(self.joined) >= MAX_HOLD {
            return true;
        }
        if is_ready(new) {
            let ready_at = *self.ready_seen.get_or_insert(now);
            if now.duration_since(ready_at) >= COVER_WAIT {
                return true;
            }
        }
        let have: HashSet<String> = frames_with_data(new).into_iter().collect();
        self.wanted.iter().all(|f| have.contains(f))
    }
}
