//! Atomics used by shared records: std's, or loom's when model-checking the ring (`--cfg loom`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicI64, AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicI64, AtomicU32, AtomicU64, Ordering};

/// Spin hint between seqlock retries.
#[cfg(loom)]
pub(crate) fn spin() {
    loom::thread::yield_now();
}
/// Spin hint between seqlock retries.
#[cfg(not(loom))]
pub(crate) fn spin() {
    std::hint::spin_loop();
}

/// How long a reader keeps retrying a seqlock held odd before reporting the frame as
/// contended: long enough for a writer preempted inside its critical window to be scheduled
/// again.
#[cfg(not(loom))]
pub(crate) const READ_DEADLINE: std::time::Duration = std::time::Duration::from_millis(200);

/// Test override of [`READ_DEADLINE`], ns; 0 = none.
#[cfg(not(loom))]
static READ_DEADLINE_OVERRIDE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The reader's deadline on a stuck seqlock (read only on the slow path, after the spins).
#[cfg(not(loom))]
pub(crate) fn read_deadline() -> std::time::Duration {
    match READ_DEADLINE_OVERRIDE.load(std::sync::atomic::Ordering::Relaxed) {
        0 => READ_DEADLINE,
        ns => std::time::Duration::from_nanos(ns),
    }
}

/// Shortens the readers' deadline on a stuck seqlock in this process, for tests that feed
/// damaged arenas (every read of a slot left odd waits the whole deadline). Not API.
#[doc(hidden)]
#[cfg(not(loom))]
pub fn set_read_deadline_for_tests(deadline: std::time::Duration) {
    let ns = u64::try_from(deadline.as_nanos())
        .unwrap_or(u64::MAX)
        .max(1);
    READ_DEADLINE_OVERRIDE.store(ns, std::sync::atomic::Ordering::Relaxed);
}
