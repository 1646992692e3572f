//! One moment per query: every answer is tf2's after some prefix of the writer's inserts.
//!
//! A tf2_ros `Buffer` holds one mutex around each `setTransform` and each query. Here readers
//! take no lock; instead the writer numbers its *moments* and every query validates that it
//! read one:
//!
//! * **Writer** — a moment is one `set_transform` outside a batch, one batch (the bridge makes
//!   one per received `TFMessage`, so a whole message becomes visible at once, which tf2, adding
//!   a message one transform at a time, does not give) or one `clear()`. It stores
//!   `moment_begun = m` (then a Release fence) before its first store, and `moment_done = m`
//!   (Release) after its last.
//! * **Reader** — loads `moment_done` (Acquire) as `c`, runs the query, then (Acquire fence)
//!   loads `moment_begun`: equal to `c`, no store of a later moment was seen (each is ordered
//!   after its moment's `moment_begun` by the writer's fence) and every store of moment `c` and
//!   before was (the Acquire load), so the query read the arena as moment `c` left it: one
//!   tf2 answer. Otherwise the query is read again, with [`crate::ring::Backoff`] while a moment
//!   is being made.
//!
//! A lookup that overlaps no moment pays two loads and a compare. One that overlaps one waits
//! for the writer to finish that moment (one message's inserts, microseconds) and reads again.
//! A writer that stays inside one moment past the read deadline (stalled, or SIGKILLed
//! mid-message) leaves readers answering *without* the check, as before it existed: each link
//! still reads consistently under its own seqlock, but a query may mix the last complete
//! moment with part of the unfinished one. That moment is remembered per mapping, so later
//! queries do not wait again until the writer moves on. Counted in
//! [`crate::fast_path::Declines`] (`moment_retry`, `moment_stalled`).

use std::sync::atomic::AtomicU64 as LocalU64;

use crate::arena::layout::Header;
use crate::fast_path::declined;
use crate::ring::Backoff;
use crate::sync::{fence, AtomicU64, Ordering};

/// The protocol's two words: the arena header's `moment_begun` and `moment_done`.
#[derive(Clone, Copy)]
pub(crate) struct Moments<'a> {
    pub(crate) begun: &'a AtomicU64,
    pub(crate) done: &'a AtomicU64,
}

impl<'a> Moments<'a> {
    /// The words of `h`.
    #[inline(always)]
    pub(crate) fn of(h: &'a Header) -> Moments<'a> {
        Moments {
            begun: &h.moment_begun,
            done: &h.moment_done,
        }
    }
}

/// Starts the writer's next moment; returns its number. Writer only.
pub(crate) fn begin(h: Moments<'_>) -> u64 {
    let m = h.done.load(Ordering::Relaxed).wrapping_add(1);
    h.begun.store(m, Ordering::Relaxed);
    // Every store of the moment comes after `moment_begun` for a reader that sees it.
    fence(Ordering::Release);
    m
}

/// Completes moment `m` (from [`begin`]). Writer only.
pub(crate) fn end(h: Moments<'_>, m: u64) {
    h.done.store(m, Ordering::Release);
}

/// Runs `query` until one run read one moment of `h`'s writer (see the module doc), and
/// returns that run's answer. `stalled` is the mapping's memory of a moment the writer stayed
/// in past the deadline.
#[inline(always)]
pub(crate) fn read<R>(h: Moments<'_>, stalled: &LocalU64, mut query: impl FnMut() -> R) -> R {
    let c = h.done.load(Ordering::Acquire);
    let r = query();
    fence(Ordering::Acquire);
    if h.begun.load(Ordering::Relaxed) == c {
        return r;
    }
    // Dropped first, so that the answer and the one read again can share the return slot.
    drop(r);
    // Through a `dyn`: the query's one direct call, above, is the one worth inlining.
    again(h, stalled, &mut query)
}

/// A read's start: the last complete moment when it began (see [`read`]).
#[derive(Clone, Copy)]
pub(crate) struct Begun(u64);

impl Begun {
    /// Starts a read.
    #[inline(always)]
    pub(crate) fn now(h: Moments<'_>) -> Begun {
        Begun(h.done.load(Ordering::Acquire))
    }

    /// Whether everything read since [`Begun::now`] was one moment.
    #[inline(always)]
    pub(crate) fn holds(self, h: Moments<'_>) -> bool {
        fence(Ordering::Acquire);
        h.begun.load(Ordering::Relaxed) == self.0
    }
}

/// [`read`] for a caller that ran the first run itself between [`Begun::now`] and a
/// [`Begun::holds`] that failed: the runs after it.
#[cold]
#[inline(never)]
pub(crate) fn read_again<R>(h: Moments<'_>, stalled: &LocalU64, query: &mut dyn FnMut() -> R) -> R {
    again(h, stalled, query)
}

/// [`read`]'s first run overlapped a moment being made: reads again, once no moment is being
/// made, until a run validates; past the read deadline, answers without the check.
#[cold]
#[inline(never)]
fn again<R>(h: Moments<'_>, stalled: &LocalU64, query: &mut dyn FnMut() -> R) -> R {
    use std::sync::atomic::Ordering as Local;
    declined(|d| &mut d.moment_retry);
    let mut backoff = Backoff::new();
    loop {
        let c = h.done.load(Ordering::Acquire);
        let begun = h.begun.load(Ordering::Relaxed);
        if begun == c {
            let r = query();
            fence(Ordering::Acquire);
            if h.begun.load(Ordering::Relaxed) == c {
                return r;
            }
        } else if begun == stalled.load(Local::Relaxed) {
            declined(|d| &mut d.moment_stalled);
            return query();
        }
        if !backoff.wait() {
            stalled.store(h.begun.load(Ordering::Relaxed), Local::Relaxed);
            declined(|d| &mut d.moment_stalled);
            return query();
        }
    }
}

/// One run of `query` and whether it read one moment: what [`read`] does first, for tests that
/// pause the writer between its stores (a run that does not validate is never answered).
#[cfg(test)]
pub(crate) fn try_once<R>(h: Moments<'_>, query: impl FnOnce() -> R) -> Option<R> {
    let c = h.done.load(Ordering::Acquire);
    let r = query();
    fence(Ordering::Acquire);
    (h.begun.load(Ordering::Relaxed) == c).then_some(r)
}

/// Model check of the protocol's orderings: run with
/// `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p tf_shm --release --lib moment::loom_model`.
/// A writer makes two moments, each storing two words that a reader must see together (as two
/// links of one message: the answer of no moment is one word of each); every read that
/// validates saw one moment.
#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::sync::Arc;

    struct Shared {
        begun: AtomicU64,
        done: AtomicU64,
        a: AtomicU64,
        b: AtomicU64,
    }

    impl Shared {
        fn moments(&self) -> Moments<'_> {
            Moments {
                begun: &self.begun,
                done: &self.done,
            }
        }
    }

    #[test]
    fn a_validated_read_saw_one_moment() {
        loom::model(|| {
            let s = Arc::new(Shared {
                begun: AtomicU64::new(0),
                done: AtomicU64::new(0),
                a: AtomicU64::new(0),
                b: AtomicU64::new(0),
            });
            let w = s.clone();
            let writer = loom::thread::spawn(move || {
                for v in 1..=2 {
                    let m = begin(w.moments());
                    w.a.store(v, Ordering::Relaxed);
                    w.b.store(v, Ordering::Relaxed);
                    end(w.moments(), m);
                }
            });
            let read = try_once(s.moments(), || {
                (s.a.load(Ordering::Relaxed), s.b.load(Ordering::Relaxed))
            });
            if let Some((a, b)) = read {
                assert_eq!(a, b, "a validated read mixed two moments");
            }
            writer.join().unwrap();
            // After the writer: the last moment, validated.
            assert_eq!(
                try_once(s.moments(), || s.a.load(Ordering::Relaxed)),
                Some(2)
            );
        });
    }
}
