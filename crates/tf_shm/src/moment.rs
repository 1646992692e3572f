//! One moment per query: every answer is tf2's after some prefix of the writer's inserts,
//! and no reader ever waits for the writer.
//!
//! A tf2_ros `Buffer` holds one mutex around each `setTransform` and each query. Here readers
//! take no lock. The arena keeps two copies of everything the writer changes (the frame table
//! and the rings; names and the name index are written once and shared), and one word, the
//! *latch*, says which copy is whole (the Linux kernel's `seqcount_latch`):
//!
//! * **Writer** — a moment is one `set_transform` outside a batch, one batch (the bridge makes
//!   one per received `TFMessage`, so a whole message becomes visible at once, which tf2, adding
//!   a message one transform at a time, does not give) or one `clear()`. [`begin`] makes the
//!   latch odd (readers go to copy 1, which holds the previous moment) and the writer changes
//!   copy 0; [`publish`] makes it even (readers go to copy 0, which now holds this moment) and
//!   the writer makes the same changes to copy 1. Each store of the latch is Release and is
//!   followed by a Release fence, so every change of a copy is ordered after the latch store
//!   that sent readers away from it, and before the one that sends them back.
//! * **Reader** — loads the latch (Acquire) as `s` and runs the query on copy `s & 1` (the
//!   view's `CopyView`: every access of the query to the copied records goes to it); then
//!   (Acquire fence) loads the latch again. Unchanged, the writer did not touch that copy
//!   meanwhile (it changes a copy only after a latch store that sends readers away from it),
//!   and the copy was whole when the read began (the Acquire load): the query read one moment.
//!   Otherwise the writer has moved on, and the query is read again at once: some copy is
//!   always whole, so there is nothing to wait for. A wrapper of a view (a cache-time limit,
//!   the handover store) runs its query inside the view's moment and reads through the view's
//!   own calls, each on the copy the latch names at it: validated as one, they too read copy
//!   `s & 1` only (the latch only grows).
//!
//! A lookup that overlaps no latch store pays two loads and a compare. One that does reads
//! again; every read again means the writer made progress (it changed the latch), so reads
//! never starve while the writer sleeps, is preempted or is dead. A writer SIGKILLed
//! mid-moment leaves the latch naming the copy that holds the last complete moment, and
//! readers answer from that moment forever. Read again counts are in
//! [`crate::fast_path::Declines`] (`moment_retry`).

use crate::fast_path::declined;
use crate::sync::{fence, AtomicU64, Ordering};

/// Starts the writer's next moment: readers go to copy 1, the writer may change copy 0.
/// Writer only.
pub(crate) fn begin(latch: &AtomicU64) {
    let s = latch.load(Ordering::Relaxed);
    debug_assert!(s & 1 == 0, "a moment begun twice");
    latch.store(s.wrapping_add(1), Ordering::Release);
    fence(Ordering::Release);
}

/// Makes the moment visible: readers go to copy 0 (now holding it), the writer may change
/// copy 1 (to the same). Writer only.
pub(crate) fn publish(latch: &AtomicU64) {
    let s = latch.load(Ordering::Relaxed);
    debug_assert!(s & 1 == 1, "a moment published that was not begun");
    latch.store(s.wrapping_add(1), Ordering::Release);
    fence(Ordering::Release);
}

/// Runs `query` until one run read one moment (see the module doc), and returns that run's
/// answer.
#[inline(always)]
pub(crate) fn read<R>(latch: &AtomicU64, mut query: impl FnMut(u64) -> R) -> R {
    let s = Start::now(latch);
    let r = query(s.0);
    if s.holds(latch) {
        return r;
    }
    // Dropped first, so that the answer and the one read again can share the return slot.
    drop(r);
    // Through a `dyn`: the query's one direct call, above, is the one worth inlining.
    read_again(latch, &mut query)
}

/// A read's start: the latch when it began (see [`read`]).
#[derive(Clone, Copy)]
pub(crate) struct Start(u64);

impl Start {
    /// Starts a read.
    #[inline(always)]
    pub(crate) fn now(latch: &AtomicU64) -> Start {
        Start(latch.load(Ordering::Acquire))
    }

    /// The start of a read that began when the latch was `latch`.
    #[inline(always)]
    pub(crate) fn at(latch: u64) -> Start {
        Start(latch)
    }

    /// The latch's value at the start: the copy to read is `latch() & 1`.
    #[inline(always)]
    pub(crate) fn latch(self) -> u64 {
        self.0
    }

    /// Whether the copy read since [`Start::now`] held one moment throughout.
    #[inline(always)]
    pub(crate) fn holds(self, latch: &AtomicU64) -> bool {
        fence(Ordering::Acquire);
        latch.load(Ordering::Relaxed) == self.0
    }
}

/// [`read`] for a caller whose first run, between [`Start::now`] and [`Start::holds`], did not
/// hold: reads again, at once, until a run holds.
#[cold]
#[inline(never)]
pub(crate) fn read_again<R>(latch: &AtomicU64, query: &mut dyn FnMut(u64) -> R) -> R {
    loop {
        declined(|d| &mut d.moment_retry);
        let s = Start::now(latch);
        let r = query(s.0);
        if s.holds(latch) {
            return r;
        }
    }
}

/// One run of `query` and whether it read one moment: what [`read`] does first, for tests that
/// pause the writer between its stores.
#[cfg(test)]
pub(crate) fn try_once<R>(latch: &AtomicU64, query: impl FnOnce(u64) -> R) -> Option<R> {
    let s = Start::now(latch);
    let r = query(s.0);
    s.holds(latch).then_some(r)
}

/// Two words kept in two copies, written as the writer writes a moment and read as the
/// view reads them: the protocol alone, for the model check and the stopped-writer test.
#[cfg(test)]
mod model {
    use super::*;

    pub(super) struct Shared {
        pub(super) latch: AtomicU64,
        /// `[copy][word]`.
        pub(super) words: [[AtomicU64; 2]; 2],
    }

    /// One moment storing `v` in both words.
    pub(super) fn moment(w: &Shared, v: u64) {
        begin(&w.latch);
        for word in &w.words[0] {
            word.store(v, Ordering::Relaxed);
        }
        publish(&w.latch);
        for word in &w.words[1] {
            word.store(v, Ordering::Relaxed);
        }
    }

    /// Both words from copy `k & 1`, `k` the latch at the read's start, as a query on a
    /// `CopyView` reads them.
    pub(super) fn read_copy(s: &Shared, k: u64) -> (u64, u64) {
        let copy = &s.words[(k & 1) as usize];
        (
            copy[0].load(Ordering::Relaxed),
            copy[1].load(Ordering::Relaxed),
        )
    }
}

/// Model check of the protocol's orderings: run with
/// `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p tf_shm --release --lib moment::loom_model`.
/// A writer makes two moments, each storing two words in each copy that a reader must see
/// together (as two links of one message: the answer of no moment is one word of each); every
/// read that validates saw one moment. (That a writer stopped anywhere leaves a read that
/// validates is the plain test `tests::a_writer_stopped_anywhere_leaves_a_whole_copy`.)
#[cfg(all(test, loom))]
mod loom_model {
    use super::model::*;
    use super::*;
    use loom::sync::Arc;

    #[test]
    fn a_validated_read_saw_one_moment() {
        loom::model(|| {
            let s = Arc::new(Shared {
                latch: AtomicU64::new(0),
                words: Default::default(),
            });
            let w = s.clone();
            let writer = loom::thread::spawn(move || {
                for v in 1..=2 {
                    moment(&w, v);
                }
            });
            if let Some((a, b)) = try_once(&s.latch, |k| read_copy(&s, k)) {
                assert_eq!(a, b, "a validated read mixed two moments");
            }
            writer.join().unwrap();
            // After the writer: the last moment, validated.
            assert_eq!(try_once(&s.latch, |k| read_copy(&s, k)), Some((2, 2)));
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::model::*;
    use super::*;

    #[test]
    fn a_writer_stopped_anywhere_leaves_a_whole_copy() {
        // The writer stops (as if killed) after `stop` of its stores; the reader then reads in
        // one attempt and must validate the last moment the writer published, or the one
        // before it was published.
        for stop in 0..=6 {
            {
                let s = Shared {
                    latch: AtomicU64::new(0),
                    words: Default::default(),
                };
                moment(&s, 1);
                let mut n = 0;
                let mut step = |f: &dyn Fn()| {
                    if n < stop {
                        f();
                    }
                    n += 1;
                };
                step(&|| begin(&s.latch));
                step(&|| s.words[0][0].store(2, Ordering::Relaxed));
                step(&|| s.words[0][1].store(2, Ordering::Relaxed));
                step(&|| publish(&s.latch));
                step(&|| s.words[1][0].store(2, Ordering::Relaxed));
                step(&|| s.words[1][1].store(2, Ordering::Relaxed));
                let r = try_once(&s.latch, |k| read_copy(&s, k));
                let expected = if stop >= 4 { (2, 2) } else { (1, 1) };
                assert_eq!(r, Some(expected), "writer stopped after {stop} stores");
            }
        }
    }
}
