//! Data notification: the writer bumps `Header::notify` after each accepted sample, and
//! consumers waiting for a transform sleep on it with FUTEX_WAIT (a shared futex on the memfd
//! mapping, which needs only read access).
//!
//! Consumers cannot write the arena, so they announce a wait through their rendezvous
//! connection, and the owner's server sets their slot's bit in `Header::waiting`. The writer
//! calls FUTEX_WAKE only when a bit is set: while nobody waits, a write costs one atomic add
//! and four loads, no syscall.
//!
//! No lost wake-up: the writer bumps `notify` then reads `waiting`; the server sets a bit then
//! bumps `notify` and wakes; a waiter reads `notify`, then checks for its transform, then sleeps
//! only if `notify` still holds what it read. All of these are sequentially consistent, so
//! either the writer sees the waiter's bit (and wakes it), or the waiter's read of `notify`
//! comes after the writer's bump (and its check sees the sample), or the server's later bump
//! and wake end the sleep.

use std::time::Duration;

use super::layout::Header;
use crate::sync::Ordering;

/// Marks a sample (or a clear) published: wakes the waiters, if any. Writer side, after the
/// sample's Release stores.
#[inline]
pub(crate) fn published(h: &Header) {
    h.notify.fetch_add(1, Ordering::SeqCst);
    if h.waiting.iter().any(|w| w.load(Ordering::SeqCst) != 0) {
        wake_all(h);
    }
}

/// Sets or clears participant `slot`'s waiting bit, then bumps and wakes, so a waiter that
/// went to sleep before its bit was visible to the writer re-checks. Owner side.
pub(crate) fn set_waiting(h: &Header, slot: u32, waiting: bool) {
    let Some(word) = h.waiting.get(slot as usize / 64) else {
        return;
    };
    let bit = 1u64 << (slot % 64);
    if waiting {
        word.fetch_or(bit, Ordering::SeqCst);
    } else {
        word.fetch_and(!bit, Ordering::SeqCst);
    }
    h.notify.fetch_add(1, Ordering::SeqCst);
    wake_all(h);
}

/// The current notification count; read it before checking for the awaited data.
pub(crate) fn seen(h: &Header) -> u32 {
    h.notify.load(Ordering::SeqCst)
}

/// Sleeps until `Header::notify` differs from `seen`, a wake, or `timeout` (a spurious
/// return is possible; callers re-check).
pub(crate) fn sleep(h: &Header, seen: u32, timeout: Duration) {
    #[cfg(not(loom))]
    {
        use rustix::thread::futex;
        let ts = rustix::time::Timespec {
            tv_sec: timeout.as_secs().min(i64::MAX as u64) as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        // EAGAIN (the word already moved), EINTR and ETIMEDOUT all mean: look again.
        let _ = futex::wait(&h.notify, futex::Flags::empty(), seen, Some(&ts));
    }
    #[cfg(loom)]
    {
        let _ = (h, seen, timeout);
    }
}

/// Wakes every process sleeping on this arena's word (FUTEX_WAKE needs only read access, so
/// a consumer can wake its own waiters on a read-only mapping).
pub(crate) fn wake_all(h: &Header) {
    #[cfg(not(loom))]
    {
        use rustix::thread::futex;
        let _ = futex::wake(&h.notify, futex::Flags::empty(), i32::MAX as u32);
    }
    #[cfg(loom)]
    {
        let _ = h;
    }
}
