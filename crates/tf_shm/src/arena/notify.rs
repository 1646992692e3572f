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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::arena::{Arena, ArenaConfig};
    use crate::validate::TransformInput;
    use crate::writer::ArenaWriter;

    fn write(w: &mut ArenaWriter, child: &str, stamp: i64) {
        let t = TransformInput {
            frame_id: "map",
            child_frame_id: child,
            stamp,
            translation: [0.0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        w.set_transform(&t, "test", false).unwrap();
    }

    fn small() -> ArenaConfig {
        ArenaConfig {
            memory_budget_bytes: 1 << 20,
            max_frames: 16,
            ..ArenaConfig::default()
        }
    }

    #[test]
    fn every_stored_sample_and_clear_notifies_refusals_do_not() {
        let (mut w, view) = Arena::in_memory(&small()).unwrap();
        let h = view.header();
        let n0 = seen(h);
        write(&mut w, "a", 1);
        write(&mut w, "b", 1);
        assert_eq!(seen(h), n0 + 2);
        // Refused (older than the cache time) and duplicate samples change nothing to wait for.
        write(&mut w, "a", 1);
        let old = TransformInput {
            frame_id: "map",
            child_frame_id: "a",
            stamp: -100_000_000_000,
            translation: [0.0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        let _ = w.set_transform(&old, "test", false);
        assert_eq!(seen(h), n0 + 2);
        w.clear();
        assert_eq!(seen(h), n0 + 3);
    }

    #[test]
    fn a_batch_notifies_once_at_its_end_even_when_it_panics() {
        let (mut w, view) = Arena::in_memory(&small()).unwrap();
        let h = view.header();
        let n0 = seen(h);
        w.batch(|w| {
            for k in 0..10 {
                write(w, "a", 1 + k);
                w.batch(|w| write(w, "b", 1 + k));
            }
            assert_eq!(seen(h), n0, "held inside the batch");
        });
        assert_eq!(seen(h), n0 + 1);
        w.batch(|_| {});
        assert_eq!(seen(h), n0 + 1, "an empty batch notifies nothing");
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            w.batch(|w| {
                write(w, "a", 100);
                panic!("in the batch");
            })
        }));
        assert!(caught.is_err());
        assert_eq!(seen(h), n0 + 2);
        write(&mut w, "a", 101);
        assert_eq!(seen(h), n0 + 3, "no batch left open");
    }

    #[test]
    fn waiting_bits_are_set_and_cleared_per_participant() {
        let (_w, view) = Arena::in_memory(&small()).unwrap();
        let h = view.header();
        set_waiting(h, 200, true);
        assert_eq!(h.waiting[3].load(Ordering::SeqCst), 1 << (200 - 192));
        set_waiting(h, 5, true);
        set_waiting(h, 200, false);
        assert_eq!(h.waiting[3].load(Ordering::SeqCst), 0);
        assert_eq!(h.waiting[0].load(Ordering::SeqCst), 1 << 5);
        set_waiting(h, 5, false);
        assert!(h.waiting.iter().all(|w| w.load(Ordering::SeqCst) == 0));
        // Out of range: ignored, not a panic.
        set_waiting(h, 4096, true);
        assert!(h.waiting.iter().all(|w| w.load(Ordering::SeqCst) == 0));
    }
}
