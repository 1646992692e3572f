//! The arena's shared records: `repr(C)`, offsets const-asserted, geometry hashed.
//!
//! ```text
//! 0            Header (HEADER_SIZE bytes)
//! frames_off   FrameRecord × max_frames                       (id 0 unused: "no parent")
//! index_off    AtomicU32 × index_capacity                     open-addressed name → id
//! names_off    AtomicU64 × names_words                        frame and authority names
//! pool_off     rings, bump-allocated, never reused:  RingHeader | stamps: AtomicI64 × cap | Slot × cap
//! ```
//! Everything is atomics, so a reader racing the writer (or a hostile writer) is never a data
//! race. Values that come from shared memory are untrusted: readers bounds-check each use.

use crate::sync::{AtomicI64, AtomicU32, AtomicU64};

/// `b"TFSHMAR1"` read as a little-endian u64.
pub const MAGIC: u64 = u64::from_le_bytes(*b"TFSHMAR1");
/// Bumped whenever a record's meaning changes without its geometry changing.
pub const FORMAT_VERSION: u32 = 2;
/// Bytes reserved for the header (the struct is smaller; the rest is zero).
pub const HEADER_SIZE: usize = 4096;
/// Alignment of every region and ring.
pub const ALIGN: usize = 64;
/// Longest frame or authority name accepted, bytes.
pub const MAX_NAME_LEN: usize = 1024;
/// Number of refusal counters in the header (see `RefusalCounter`).
pub const REFUSAL_COUNTERS: usize = 8;

/// Arena header. Fields above `frame_count` are written once at creation; the rest belong to
/// the single writer.
#[repr(C)]
pub struct Header {
    pub magic: AtomicU64,
    pub format_version: AtomicU32,
    pub header_size: AtomicU32,
    pub layout_hash: AtomicU64,
    pub arena_size: AtomicU64,
    pub instance_uuid: [AtomicU64; 2],
    pub boot_id: [AtomicU64; 2],
    /// Wall-clock creation time, ns since the Unix epoch.
    pub created_unix_ns: AtomicI64,
    pub cache_time_ns: AtomicI64,
    pub max_frames: AtomicU32,
    pub index_capacity: AtomicU32,
    pub names_words: AtomicU64,
    pub frames_off: AtomicU64,
    pub index_off: AtomicU64,
    pub names_off: AtomicU64,
    pub pool_off: AtomicU64,
    pub pool_size: AtomicU64,
    pub max_ring_capacity: AtomicU32,
    pub initial_ring_capacity: AtomicU32,
    pub owner_pid: AtomicU32,
    pub _reserved0: AtomicU32,
    /// One past the highest published frame id; stored with Release after the frame is whole.
    pub frame_count: AtomicU32,
    pub _reserved1: AtomicU32,
    /// Bumped by `clear()`: rings of an older generation read as empty.
    pub clear_generation: AtomicU64,
    /// Bytes of the pool handed out.
    pub pool_used: AtomicU64,
    /// Words of the names region handed out.
    pub names_used: AtomicU64,
    /// Samples accepted since creation.
    pub accepted_total: AtomicU64,
    /// Refused samples, per `RefusalCounter`.
    pub refusals: [AtomicU64; REFUSAL_COUNTERS],
    /// `STATUS_*` bits: capacity problems the writer met.
    pub status: AtomicU64,
    /// Wall-clock time of the last accepted sample, ns since the Unix epoch.
    pub last_write_unix_ns: AtomicI64,
    /// Number of `clear()` calls (time jumps).
    pub clears_total: AtomicU64,
    /// Messages the bridge received from ROS but could not hand to the writer (its intake
    /// queue was full), since creation. Counted by the bridge; a message holds any number of
    /// transforms.
    pub messages_lost: AtomicU64,
    /// Wall-clock time the writer declared the arena ready (caught up after its start: what a
    /// consumer of an earlier arena waits for before it swaps), ns since the Unix epoch;
    /// 0 while not ready.
    pub ready_unix_ns: AtomicI64,
}

/// A frame could not be created: the frame table is full.
pub const STATUS_FRAME_TABLE_FULL: u64 = 1 << 0;
/// The names region is full.
pub const STATUS_NAMES_FULL: u64 = 1 << 1;
/// The ring pool could not grow a ring (some history is shorter than the cache time) or
/// could not give a new frame its first ring.
pub const STATUS_POOL_EXHAUSTED: u64 = 1 << 2;

/// Frame has no cache (seen only as a parent).
pub const KIND_NONE: u32 = 0;
/// Frame holds one static sample (`/tf_static`).
pub const KIND_STATIC: u32 = 1;
/// Frame holds a time-sorted history (`/tf`).
pub const KIND_DYNAMIC: u32 = 2;

/// The frame's history was cut shorter than the cache time (ring could not grow).
pub const FRAME_HISTORY_SHORT: u32 = 1 << 0;
/// A dynamic frame could not get a ring at all; its samples are being refused.
pub const FRAME_NO_RING: u32 = 1 << 1;

/// One transform sample under a seqlock: `seq` is odd while the writer rewrites it.
#[repr(C)]
pub struct Slot {
    pub seq: AtomicU64,
    pub stamp: AtomicI64,
    pub parent: AtomicU64,
    /// `x, y, z, qx, qy, qz, qw` as `f64::to_bits`.
    pub words: [AtomicU64; 7],
}

/// Per-frame record in the frame table.
#[repr(C)]
pub struct FrameRecord {
    /// Name: word offset in the names region (low 32 bits) and length in bytes (high 32).
    /// Written before the frame is published, never changed.
    pub name: AtomicU64,
    /// `KIND_*`.
    pub kind: AtomicU32,
    /// `FRAME_*` bits.
    pub flags: AtomicU32,
    /// Ring descriptor: `(pool offset / ALIGN) << 8 | log2(capacity)`; 0 = no ring.
    pub ring: AtomicU64,
    /// Authority of the newest sample, encoded like `name`; 0 = none.
    pub authority: AtomicU64,
    /// Samples accepted for this frame.
    pub accepted: AtomicU64,
    /// Wall-clock time of the newest accepted sample, ns since the Unix epoch.
    pub last_write_unix_ns: AtomicI64,
    /// Times the parent differed from the previous accepted sample's.
    pub parent_changes: AtomicU64,
    /// Wall-clock time of the last parent change, ns since the Unix epoch.
    pub last_parent_change_unix_ns: AtomicI64,
    /// Parent of the newest accepted sample (for tools; lookups use per-sample parents).
    pub last_parent: AtomicU32,
    pub _reserved: [AtomicU32; 3],
    /// The static sample (`KIND_STATIC`).
    pub static_slot: Slot,
    pub _pad: [AtomicU64; 6],
}

/// Header of one ring in the pool; followed by `stamps` and `slots`, `capacity` of each.
///
/// Logical indices grow forever; physical = logical & (capacity − 1). Valid samples are the
/// logical range `tail..head`, oldest first.
#[repr(C)]
pub struct RingHeader {
    /// One past the newest sample's logical index.
    pub head: AtomicU64,
    /// Logical index of the oldest valid sample (tf2's pruning and full-ring drops).
    pub tail: AtomicU64,
    /// Odd while a reordering insert rewrites slots in place.
    pub epoch: AtomicU64,
    /// `Header::clear_generation` the contents belong to; any other value reads as empty.
    pub generation: AtomicU64,
    /// One past the highest logical index the writer has started to write: stored *before*
    /// the slot is touched, so readers detect reuse of a slot they read (lap detection).
    pub claim: AtomicU64,
    pub _pad: [AtomicU64; 3],
}

/// Size of one ring with `capacity` samples, bytes (a multiple of `ALIGN`).
pub const fn ring_bytes(capacity: usize) -> usize {
    let raw = std::mem::size_of::<RingHeader>()
        + capacity * (std::mem::size_of::<AtomicI64>() + std::mem::size_of::<Slot>());
    raw.div_ceil(ALIGN) * ALIGN
}

/// Encodes a ring descriptor.
pub fn ring_descriptor(pool_offset: usize, capacity: usize) -> u64 {
    debug_assert!(pool_offset.is_multiple_of(ALIGN) && capacity.is_power_of_two());
    ((pool_offset / ALIGN) as u64) << 8 | capacity.trailing_zeros() as u64
}

/// Decodes a ring descriptor into (pool offset, capacity). Unchecked: callers bound-check.
pub fn decode_ring_descriptor(desc: u64) -> (u64, u32) {
    (
        (desc >> 8).saturating_mul(ALIGN as u64),
        (desc & 0xff) as u32,
    )
}

/// Encodes a name reference (word offset, byte length).
pub fn name_ref(word_off: u32, len: u32) -> u64 {
    u64::from(word_off) | u64::from(len) << 32
}

/// Decodes a name reference into (word offset, byte length).
pub fn decode_name_ref(r: u64) -> (u32, u32) {
    (r as u32, (r >> 32) as u32)
}

#[cfg(not(loom))]
mod asserts {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    const _: () = assert!(size_of::<Header>() <= HEADER_SIZE);
    const _: () = assert!(offset_of!(Header, magic) == 0);
    const _: () = assert!(offset_of!(Header, format_version) == 8);
    const _: () = assert!(offset_of!(Header, layout_hash) == 16);
    const _: () = assert!(offset_of!(Header, arena_size) == 24);
    const _: () = assert!(offset_of!(Header, instance_uuid) == 32);
    const _: () = assert!(offset_of!(Header, boot_id) == 48);
    const _: () = assert!(offset_of!(Header, cache_time_ns) == 72);
    const _: () = assert!(offset_of!(Header, pool_size) == 128);
    const _: () = assert!(offset_of!(Header, owner_pid) == 144);
    const _: () = assert!(offset_of!(Header, frame_count) == 152);
    const _: () = assert!(offset_of!(Header, clear_generation) == 160);
    const _: () = assert!(offset_of!(Header, refusals) == 192);
    const _: () = assert!(offset_of!(Header, status) == 256);
    const _: () = assert!(offset_of!(Header, clears_total) == 272);
    const _: () = assert!(offset_of!(Header, messages_lost) == 280);
    const _: () = assert!(offset_of!(Header, ready_unix_ns) == 288);
    const _: () = assert!(size_of::<Header>() == 296);

    const _: () = assert!(size_of::<Slot>() == 80);
    const _: () = assert!(offset_of!(Slot, stamp) == 8);
    const _: () = assert!(offset_of!(Slot, parent) == 16);
    const _: () = assert!(offset_of!(Slot, words) == 24);

    const _: () = assert!(offset_of!(FrameRecord, kind) == 8);
    const _: () = assert!(offset_of!(FrameRecord, ring) == 16);
    const _: () = assert!(offset_of!(FrameRecord, authority) == 24);
    const _: () = assert!(offset_of!(FrameRecord, last_parent) == 64);
    const _: () = assert!(offset_of!(FrameRecord, static_slot) == 80);
    const _: () = assert!(size_of::<FrameRecord>() == 208);
    const _: () = assert!(size_of::<RingHeader>() == 64);
    const _: () = assert!(offset_of!(RingHeader, epoch) == 16);
    const _: () = assert!(offset_of!(RingHeader, claim) == 32);
    const _: () = assert!(align_of::<FrameRecord>() == 8);
}

/// A hash over the record geometry: joiners refuse an arena whose hash differs from theirs.
pub fn layout_hash() -> u64 {
    #[cfg(not(loom))]
    {
        use std::mem::{offset_of, size_of};
        let geometry: [u64; 14] = [
            size_of::<Header>() as u64,
            HEADER_SIZE as u64,
            size_of::<FrameRecord>() as u64,
            offset_of!(FrameRecord, static_slot) as u64,
            size_of::<Slot>() as u64,
            offset_of!(Slot, words) as u64,
            size_of::<RingHeader>() as u64,
            offset_of!(Header, frame_count) as u64,
            offset_of!(Header, refusals) as u64,
            REFUSAL_COUNTERS as u64,
            ALIGN as u64,
            MAX_NAME_LEN as u64,
            offset_of!(Header, messages_lost) as u64,
            offset_of!(Header, ready_unix_ns) as u64,
        ];
        geometry.iter().fold(0xcbf2_9ce4_8422_2325, |h, &v| {
            v.to_le_bytes()
                .iter()
                .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
        })
    }
    #[cfg(loom)]
    {
        0
    }
}
