//! The arena's memory — a shared mapping of the memfd, or heap memory for in-process use — and
//! the only place raw pointers become references to shared records.

#![allow(unsafe_code)] // raw pointers into the mapping become references here, and only here

use std::ptr::NonNull;
use std::sync::Arc;

use super::layout::{FrameRecord, Header, RingHeader, Slot, ALIGN, HEADER_SIZE};
use crate::sync::{AtomicI64, AtomicU32, AtomicU64};

/// What keeps the memory alive.
enum Backing {
    /// A mapping of the memfd (read-write for the writer, read-only for consumers).
    Mapped(#[allow(dead_code)] memmap2::MmapRaw),
    /// Process-local zeroed memory (tests, in-process buffers).
    Heap(#[allow(dead_code)] HeapBlock),
}

/// Zeroed, `ALIGN`-aligned heap memory. `alloc_zeroed` gets untouched pages from the kernel
/// lazily, so a large in-memory arena costs only what is used, and is made in microseconds.
struct HeapBlock {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Drop for HeapBlock {
    fn drop(&mut self) {
        // SAFETY: `ptr` was returned by `alloc_zeroed(self.layout)` and is freed only here.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// A contiguous, 64-byte-aligned block of arena memory, possibly shared with other processes.
/// Accessors return references to atomic records only, after bounds and alignment checks.
pub(crate) struct Region {
    /// Never null (so that a reference made from it needs no null test).
    base: NonNull<u8>,
    len: usize,
    writable: bool,
    _backing: Backing,
}

// SAFETY: the region is only ever accessed through atomic types, so sharing it across threads
// cannot introduce data races; the backing keeps the memory alive for the region's lifetime.
unsafe impl Send for Region {}
// SAFETY: as above: all access is through `&Atomic*`.
unsafe impl Sync for Region {}

impl Region {
    /// Zeroed heap memory of `len` bytes.
    pub(crate) fn heap(len: usize) -> Arc<Region> {
        let layout = std::alloc::Layout::from_size_align(len.max(ALIGN), ALIGN)
            .expect("arena size fits a Layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(base) = NonNull::new(ptr) else {
            std::alloc::handle_alloc_error(layout);
        };
        Arc::new(Region {
            base,
            len,
            writable: true,
            _backing: Backing::Heap(HeapBlock { ptr, layout }),
        })
    }

    /// A mapping; `writable` says whether the mapping was made with write access.
    pub(crate) fn mapped(map: memmap2::MmapRaw, writable: bool) -> Arc<Region> {
        Arc::new(Region {
            base: NonNull::new(map.as_mut_ptr()).expect("a mapping is never at address 0"),
            len: map.len(),
            writable,
            _backing: Backing::Mapped(map),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_writable(&self) -> bool {
        self.writable
    }

    /// A reference to a `T` at byte `off`, or `None` when it would not lie inside the region
    /// or would be misaligned. `T` must be one of the shared record types (all atomics).
    #[inline]
    fn at<T: SharedRecord>(&self, off: u64) -> Option<&T> {
        let off = usize::try_from(off).ok()?;
        let end = off.checked_add(std::mem::size_of::<T>())?;
        if end > self.len || off % std::mem::align_of::<T>() != 0 {
            return None;
        }
        // SAFETY: `off..end` lies inside the live region (checked above), the address is
        // aligned for `T` (base is page- or ALIGN-aligned, offset checked), and `T` consists
        // only of atomics, for which every bit pattern is valid and concurrent access is
        // defined. A read-only mapping is only ever loaded from (writers use `writable` regions).
        Some(unsafe { self.base.add(off).cast::<T>().as_ref() })
    }

    /// A slice of `n` `T`s at byte `off`, bounds- and alignment-checked like [`Region::at`].
    fn slice<T: SharedRecord>(&self, off: u64, n: usize) -> Option<&[T]> {
        let off = usize::try_from(off).ok()?;
        let bytes = n.checked_mul(std::mem::size_of::<T>())?;
        let end = off.checked_add(bytes)?;
        if end > self.len || off % std::mem::align_of::<T>() != 0 {
            return None;
        }
        // SAFETY: as in `at`: in bounds, aligned, all-atomic element type.
        Some(unsafe { std::slice::from_raw_parts(self.base.add(off).cast::<T>().as_ptr(), n) })
    }

    #[inline]
    pub(crate) fn header(&self) -> Option<&Header> {
        if self.len < HEADER_SIZE {
            return None;
        }
        self.at(0)
    }

    /// The frame table's first `n` records (`n` = max frames + 1: id 0 is unused).
    #[inline]
    pub(crate) fn frames(&self, frames_off: u64, n: usize) -> Option<&[FrameRecord]> {
        self.slice(frames_off, n)
    }

    #[inline]
    pub(crate) fn frame(&self, frames_off: u64, id: u32) -> Option<&FrameRecord> {
        let off = (id as u64).checked_mul(std::mem::size_of::<FrameRecord>() as u64)?;
        self.at(frames_off.checked_add(off)?)
    }

    pub(crate) fn u32s(&self, off: u64, n: usize) -> Option<&[AtomicU32]> {
        self.slice(off, n)
    }

    pub(crate) fn u64s(&self, off: u64, n: usize) -> Option<&[AtomicU64]> {
        self.slice(off, n)
    }

    /// The ring at byte `off` with `capacity` samples: header, stamps, slots, ending at or
    /// before byte `limit` (its pool's end). One bounds and alignment check covers all three
    /// (a lookup resolves a ring per link).
    #[inline]
    pub(crate) fn ring(&self, off: u64, capacity: usize, limit: u64) -> Option<RingRef<'_>> {
        const HEADER: usize = std::mem::size_of::<RingHeader>();
        const PER_SAMPLE: usize = std::mem::size_of::<AtomicI64>() + std::mem::size_of::<Slot>();
        // Every part is made of 8-byte atomics and starts a multiple of 8 bytes after `off`.
        const _: () = assert!(HEADER.is_multiple_of(8) && std::mem::align_of::<Slot>() == 8);
        let off = usize::try_from(off).ok()?;
        let end = capacity
            .checked_mul(PER_SAMPLE)
            .and_then(|b| b.checked_add(HEADER))
            .and_then(|b| b.checked_add(off))?;
        if end > self.len || end as u64 > limit || !off.is_multiple_of(8) {
            return None;
        }
        let stamps_off = off + HEADER;
        let slots_off = stamps_off + capacity * std::mem::size_of::<AtomicI64>();
        // SAFETY: `off..end` lies inside the live region and holds the header, then
        // `capacity` stamps, then `capacity` slots (sizes summed above); every part is
        // 8-aligned (base is ALIGN-aligned, `off` checked, sizes multiples of 8) and made
        // only of atomics, valid for any bits and for concurrent access (as in `at`).
        unsafe {
            Some(RingRef {
                header: self.base.add(off).cast::<RingHeader>().as_ref(),
                stamps: std::slice::from_raw_parts(
                    self.base.add(stamps_off).cast::<AtomicI64>().as_ptr(),
                    capacity,
                ),
                slots: std::slice::from_raw_parts(
                    self.base.add(slots_off).cast::<Slot>().as_ptr(),
                    capacity,
                ),
            })
        }
    }
}

/// Borrowed parts of one ring.
#[derive(Clone, Copy)]
pub(crate) struct RingRef<'a> {
    pub header: &'a RingHeader,
    pub stamps: &'a [AtomicI64],
    pub slots: &'a [Slot],
}

/// Marker for types made only of atomics (valid for any bits, shareable).
///
/// # Safety
/// Implementors must be `repr(C)` or primitive atomics containing nothing but atomics.
pub(crate) unsafe trait SharedRecord {}
// SAFETY: each of these is repr(C) (or a primitive atomic) made only of atomics.
unsafe impl SharedRecord for Header {}
// SAFETY: as above.
unsafe impl SharedRecord for FrameRecord {}
// SAFETY: as above.
unsafe impl SharedRecord for RingHeader {}

// SAFETY: as above.
unsafe impl SharedRecord for Slot {}
// SAFETY: primitive atomic.
unsafe impl SharedRecord for AtomicU64 {}
// SAFETY: primitive atomic.
unsafe impl SharedRecord for AtomicU32 {}
// SAFETY: primitive atomic.
unsafe impl SharedRecord for AtomicI64 {}
