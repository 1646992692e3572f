//! Atomics used by shared records: std's, or loom's when model-checking the ring (`--cfg loom`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicI64, AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicI64, AtomicU32, AtomicU64, Ordering};
