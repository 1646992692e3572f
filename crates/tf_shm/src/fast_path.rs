//! Counters of this thread's fast paths that declined: each fast read answers the common case
//! and hands everything else to a slower read that answers every case, so a fast path that
//! stopped answering would only show as lost speed. These counters make it visible (tests
//! assert them; a tool may print them). Counting costs nothing on the fast paths themselves:
//! only a decline increments.

use std::cell::Cell;

/// How many times each fast path declined on this thread since the last [`reset_declines`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Declines {
    /// The walk's one-attempt link read at a time ≠ 0 (`ring::interpolate_at`, or a static
    /// slot) that declined, so the link was read through the general reader (by design at a
    /// link's newest or oldest stamp, outside its history, across a parent change).
    pub fused_link: u64,
    /// The general reader's bracket search (`ring::read_bracket`) that found no bracket
    /// (time 0, a newest stamp, outside the history, or a racing writer).
    pub bracket: u64,
    /// The newest-sample read (`ring::read_newest`) that declined (an empty ring or a racing
    /// writer), so the history was read as a snapshot.
    pub newest: u64,
    /// A lookup whose result the close reads could not decide (within rounding of one of the
    /// ROS 2 round trip's sign decisions, non-finite, or a large translation cancelling above
    /// a fork), walked again with tf2's slerp on every link.
    pub sign_decision: u64,
    /// At time 0, a link the walk read again because the latest common time did not keep its
    /// newest sample (every link the walk reads at time 0 is one the latest common time read,
    /// up to 16 links, unless a link's parent at that time is not its newest parent; a store
    /// without the transform at hand keeps none).
    pub kept_newest: u64,
    /// At time 0, a lookup through a [`crate::FramePair`] (also the names API's cached one)
    /// that walked because it held no answer kept from an earlier time-0 lookup with every
    /// count it was read from unchanged: by design the pair's first time-0 lookup in an arena,
    /// every one after a sample was stored for a frame of its chain, and every one of a chain
    /// of more than 16 links (see [`crate::FramePair`]).
    pub kept_answer: u64,
    /// A lookup by name that found this thread's cache of resolved pairs in use further up
    /// the stack or already gone (thread teardown), so it walked by name.
    pub names_cache: u64,
    /// A query read again because the writer moved the moment latch while it read
    /// (`crate::moment`): by design only while the writer writes, and never a wait.
    pub moment_retry: u64,
    /// A tail's read of what a frame stored since its last poll
    /// ([`crate::ArenaView::frame_history_since`]) that read the whole history: by design
    /// when a sample landed among older stamps, one was dropped before the read, or the
    /// frame switched kind.
    pub history_since: u64,
}

thread_local! {
    static DECLINES: Cell<Declines> = const { Cell::new(Declines {
        fused_link: 0,
        bracket: 0,
        newest: 0,
        sign_decision: 0,
        kept_newest: 0,
        kept_answer: 0,
        names_cache: 0,
        moment_retry: 0,
        history_since: 0,
    }) };
}

/// This thread's decline counts.
pub fn declines() -> Declines {
    DECLINES.with(Cell::get)
}

/// Sets this thread's decline counts to zero.
pub fn reset_declines() {
    DECLINES.with(|d| d.set(Declines::default()));
}

/// Counts one decline (out of line: the fast paths stay as they were).
#[cold]
#[inline(never)]
pub(crate) fn declined(kind: fn(&mut Declines) -> &mut u64) {
    let _ = DECLINES.try_with(|d| {
        let mut v = d.get();
        *kind(&mut v) += 1;
        d.set(v);
    });
}
