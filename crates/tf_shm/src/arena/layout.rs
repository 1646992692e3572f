//! The arena's shared records: `repr(C)`, offsets const-asserted, geometry hashed.
//!
//! ```text
//! 0            Header (HEADER_SIZE bytes)
//! index_off    AtomicU32 × index_capacity                     open-addressed name → id
//! names_off    AtomicU64 × names_words                        frame and authority names
//! frames_off   copy 0:  FrameRecord × (max_frames + 1)       (id 0 unused: "no parent")
//! pool_off              rings, bump-allocated, never reused:  RingHeader | stamps: AtomicI64 × cap | Slot × cap
//! + copy_stride copy 1: the same
//! ```
//! The frame table and the rings are kept twice, so that one copy is always whole while the
//! writer changes the other (`crate::moment`); the index and the names are written once per
//! frame and shared. Everything is atomics, so a reader racing the writer (or a hostile
//! writer) is never a data race. Values that come from shared memory are untrusted: readers
//! bounds-check each use.

use crate::sync::{AtomicI64, AtomicU32, AtomicU64};

/// `b"TFSHMAR1"` read as a little-endian u64.
pub const MAGIC: u64 = u64::from_le_bytes(*b"TFSHMAR1");
/// Bumped whenever a record's meaning changes without its geometry changing.
pub const FORMAT_VERSION: u32 = 5;
/// Bytes reserved for the header (the struct is smaller; the rest is zero).
pub const HEADER_SIZE: usize = 4096;
/// Alignment of every region and ring.
pub const ALIGN: usize = 64;
/// Longest frame or authority name accepted, bytes.
pub const MAX_NAME_LEN: usize = 1024;
/// Number of refusal counters in the header (see `RefusalCounter`).
pub const REFUSAL_COUNTERS: usize = 8;

/// Arena header. Fields up to `copy_stride` are written once at creation; the rest belong to
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
    /// `/tf_static` publishers in the ROS graph, seen there for a while, from which the bridge
    /// has received nothing (whatever they sent is not in the arena); set by the bridge, 0 for
    /// any other owner.
    pub static_publishers_unheard: AtomicU64,
    /// Bytes from copy 0 to copy 1 (`frames_off` and `pool_off` of copy 1 are this much
    /// further).
    pub copy_stride: AtomicU64,
    pub _reserved1: AtomicU64,
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
    /// Futex word bumped after every accepted sample and every change of `waiting`: waiting
    /// consumers sleep on it (FUTEX_WAIT needs only read access to the mapping).
    pub notify: AtomicU32,
    pub _reserved2: AtomicU32,
    /// One bit per participant slot that is waiting for data, set and cleared by the owner's
    /// rendezvous server on the consumer's request; the writer calls FUTEX_WAKE only when a
    /// bit is set, so its fast path makes no syscall while nobody waits.
    pub waiting: [AtomicU64; WAITING_WORDS],
    /// Messages the bridge received from ROS but could not hand to the writer (its intake
    /// queue was full), since creation. Counted by the bridge; a message holds any number of
    /// transforms.
    pub messages_lost: AtomicU64,
    /// Wall-clock time the writer declared the arena ready (caught up after its start: what a
    /// consumer of an earlier arena waits for before it swaps), ns since the Unix epoch;
    /// 0 while not ready.
    pub ready_unix_ns: AtomicI64,
    /// The moment latch (`crate::moment`): twice the number of moments begun, plus one while
    /// the writer changes copy 0. Readers read copy `latch & 1`, which is whole.
    pub latch: AtomicU64,
    pub _reserved3: AtomicU64,
    /// What the writer changes of each copy besides its frame records and rings.
    pub copies: [CopyHeader; 2],
}

/// What the writer changes of one copy besides its frame records and rings (in the header,
/// where a reader finds it with no bounds check of its own).
#[repr(C)]
pub struct CopyHeader {
    /// One past the highest published frame id; stored with Release after the frame is whole.
    pub frame_count: AtomicU32,
    pub _reserved: AtomicU32,
    /// Bumped by `clear()`: rings of an older generation read as empty.
    pub clear_generation: AtomicU64,
    /// Bytes of the copy's pool handed out.
    pub pool_used: AtomicU64,
    pub _pad: [AtomicU64; 5],
}

/// Words of `Header::waiting`: one bit per participant slot.
pub const WAITING_WORDS: usize = 4;

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

/// Per-frame record in the frame table: 256 bytes, so that every record starts a cache line
/// (the table is 64-byte aligned). The first line holds what the writer changes with every
/// sample and what a lookup reads of each link (`kind`, `ring`, `changes`): one line per
/// record per sample or link, where three were.
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
    /// Changes of this frame's link: every stored sample (with a kind switch) and every
    /// history pruned by a sample that was then not stored. Added to with release ordering
    /// after the change is visible: readers that keep a time-0 answer give it again while this
    /// count is unchanged.
    pub changes: AtomicU64,
    /// Samples accepted for this frame.
    pub accepted: AtomicU64,
    /// Wall-clock time of the newest accepted sample, ns since the Unix epoch.
    pub last_write_unix_ns: AtomicI64,
    /// Authority of the newest sample, encoded like `name`; 0 = none.
    pub authority: AtomicU64,
    /// Parent of the newest accepted sample (for tools; lookups use per-sample parents).
    pub last_parent: AtomicU32,
    pub _reserved: AtomicU32,
    /// Times the parent differed from the previous accepted sample's.
    pub parent_changes: AtomicU64,
    /// Wall-clock time of the last parent change, ns since the Unix epoch.
    pub last_parent_change_unix_ns: AtomicI64,
    pub _pad1: [AtomicU64; 6],
    /// The static sample (`KIND_STATIC`).
    pub static_slot: Slot,
    pub _pad2: [AtomicU64; 6],
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
    /// `CopyHeader::clear_generation` the contents belong to; any other value reads as empty.
    pub generation: AtomicU64,
    /// One past the highest logical index the writer has started to write: stored *before*
    /// the slot is touched, so readers detect reuse of a slot they read (lap detection).
    pub claim: AtomicU64,
    /// The oldest and the newest stamp of `tail..head`, and `(head − tail − 1) / (newest −
    /// oldest)` samples per ns as a fraction with 64 bits after the point, rounded up (0
    /// below two samples): where a uniform rate puts a time, from this line alone. A hint the
    /// writer keeps after each store: a reader's guess from it is checked by the slots' own
    /// stamps, so a stale hint costs a step, never an answer.
    pub oldest_stamp: AtomicI64,
    pub newest_stamp: AtomicI64,
    pub samples_per_ns: AtomicU64,
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

/// One field of a shared record: the single table both the offset asserts and
/// [`layout_hash`] are made from, so a field the asserts know is a field the hash covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The record's type name.
    pub record: &'static str,
    /// The field's name.
    pub name: &'static str,
    /// Byte offset inside the record.
    pub offset: usize,
    /// Size, bytes.
    pub size: usize,
}

/// Lists every field of every shared record, in order, with its offset and type. For each
/// record it asserts at compile time that each field sits at its listed offset with its listed
/// type, and that the fields tile the record with no gap: a field added, removed, moved or
/// resized without its row here does not compile.
macro_rules! shared_records {
    ($($record:ident { $($field:ident : $ty:ty = $off:expr,)* })*) => {
        /// Every field of every shared record (`Header`, `FrameRecord`, `Slot`, `RingHeader`, `CopyHeader`).
        pub const FIELDS: &[Field] = &[$($(Field {
            record: stringify!($record),
            name: stringify!($field),
            offset: $off,
            size: std::mem::size_of::<$ty>(),
        },)*)*];

        #[cfg(not(loom))]
        const _: () = {
            use std::mem::{offset_of, size_of};
            $(
                // Type check: each listed type is the field's type.
                #[allow(dead_code, non_snake_case)]
                fn $record(r: &$record) { $(let _: &$ty = &r.$field;)* }
                let mut end = 0;
                $(
                    assert!(offset_of!($record, $field) == $off);
                    assert!($off == end, "a field is missing from the table, or padding");
                    end = $off + size_of::<$ty>();
                )*
                assert!(end == size_of::<$record>(), "fields do not cover the record");
            )*
        };
    };
}

shared_records! {
    Header {
        magic: AtomicU64 = 0,
        format_version: AtomicU32 = 8,
        header_size: AtomicU32 = 12,
        layout_hash: AtomicU64 = 16,
        arena_size: AtomicU64 = 24,
        instance_uuid: [AtomicU64; 2] = 32,
        boot_id: [AtomicU64; 2] = 48,
        created_unix_ns: AtomicI64 = 64,
        cache_time_ns: AtomicI64 = 72,
        max_frames: AtomicU32 = 80,
        index_capacity: AtomicU32 = 84,
        names_words: AtomicU64 = 88,
        frames_off: AtomicU64 = 96,
        index_off: AtomicU64 = 104,
        names_off: AtomicU64 = 112,
        pool_off: AtomicU64 = 120,
        pool_size: AtomicU64 = 128,
        max_ring_capacity: AtomicU32 = 136,
        initial_ring_capacity: AtomicU32 = 140,
        owner_pid: AtomicU32 = 144,
        _reserved0: AtomicU32 = 148,
        static_publishers_unheard: AtomicU64 = 152,
        copy_stride: AtomicU64 = 160,
        _reserved1: AtomicU64 = 168,
        names_used: AtomicU64 = 176,
        accepted_total: AtomicU64 = 184,
        refusals: [AtomicU64; REFUSAL_COUNTERS] = 192,
        status: AtomicU64 = 256,
        last_write_unix_ns: AtomicI64 = 264,
        clears_total: AtomicU64 = 272,
        notify: AtomicU32 = 280,
        _reserved2: AtomicU32 = 284,
        waiting: [AtomicU64; WAITING_WORDS] = 288,
        messages_lost: AtomicU64 = 320,
        ready_unix_ns: AtomicI64 = 328,
        latch: AtomicU64 = 336,
        _reserved3: AtomicU64 = 344,
        copies: [CopyHeader; 2] = 352,
    }
    CopyHeader {
        frame_count: AtomicU32 = 0,
        _reserved: AtomicU32 = 4,
        clear_generation: AtomicU64 = 8,
        pool_used: AtomicU64 = 16,
        _pad: [AtomicU64; 5] = 24,
    }
    Slot {
        seq: AtomicU64 = 0,
        stamp: AtomicI64 = 8,
        parent: AtomicU64 = 16,
        words: [AtomicU64; 7] = 24,
    }
    FrameRecord {
        name: AtomicU64 = 0,
        kind: AtomicU32 = 8,
        flags: AtomicU32 = 12,
        ring: AtomicU64 = 16,
        changes: AtomicU64 = 24,
        accepted: AtomicU64 = 32,
        last_write_unix_ns: AtomicI64 = 40,
        authority: AtomicU64 = 48,
        last_parent: AtomicU32 = 56,
        _reserved: AtomicU32 = 60,
        parent_changes: AtomicU64 = 64,
        last_parent_change_unix_ns: AtomicI64 = 72,
        _pad1: [AtomicU64; 6] = 80,
        static_slot: Slot = 128,
        _pad2: [AtomicU64; 6] = 208,
    }
    RingHeader {
        head: AtomicU64 = 0,
        tail: AtomicU64 = 8,
        epoch: AtomicU64 = 16,
        generation: AtomicU64 = 24,
        claim: AtomicU64 = 32,
        oldest_stamp: AtomicI64 = 40,
        newest_stamp: AtomicI64 = 48,
        samples_per_ns: AtomicU64 = 56,
    }
}

#[cfg(not(loom))]
const _: () = {
    use std::mem::{align_of, size_of};
    assert!(size_of::<Header>() <= HEADER_SIZE);
    assert!(size_of::<FrameRecord>() == 256);
    assert!(size_of::<RingHeader>() == 64);
    assert!(size_of::<CopyHeader>() == 64);
    assert!(align_of::<FrameRecord>() == 8);
};

/// The constants the shared geometry depends on beyond the records' fields, hashed with them.
const GEOMETRY_CONSTANTS: [(&str, u64); 5] = [
    ("HEADER_SIZE", HEADER_SIZE as u64),
    ("ALIGN", ALIGN as u64),
    ("MAX_NAME_LEN", MAX_NAME_LEN as u64),
    ("REFUSAL_COUNTERS", REFUSAL_COUNTERS as u64),
    ("WAITING_WORDS", WAITING_WORDS as u64),
];

/// FNV-1a over `fields` (record, name, offset, size of each) and `constants`.
fn hash_of(fields: &[Field], constants: &[(&str, u64)]) -> u64 {
    fn eat(h: u64, bytes: &[u8]) -> u64 {
        bytes
            .iter()
            .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    }
    let mut h = 0xcbf2_9ce4_8422_2325;
    for f in fields {
        // Names end with a 0 byte so that ("ab", "c") and ("a", "bc") differ.
        h = eat(h, f.record.as_bytes());
        h = eat(h, &[0]);
        h = eat(h, f.name.as_bytes());
        h = eat(h, &[0]);
        h = eat(h, &(f.offset as u64).to_le_bytes());
        h = eat(h, &(f.size as u64).to_le_bytes());
    }
    for (name, v) in constants {
        h = eat(h, name.as_bytes());
        h = eat(h, &[0]);
        h = eat(h, &v.to_le_bytes());
    }
    h
}

/// A hash over every shared record's fields (name, offset, size) and the geometry constants:
/// joiners refuse an arena whose hash differs from theirs, so two builds that disagree on any
/// field's place (even two same-size fields swapped) never share an arena.
pub fn layout_hash() -> u64 {
    hash_of(FIELDS, &GEOMETRY_CONSTANTS)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_record_whole() {
        use std::mem::size_of;
        for (record, size) in [
            ("Header", size_of::<Header>()),
            ("Slot", size_of::<Slot>()),
            ("FrameRecord", size_of::<FrameRecord>()),
            ("RingHeader", size_of::<RingHeader>()),
            ("CopyHeader", size_of::<CopyHeader>()),
        ] {
            let covered: usize = FIELDS
                .iter()
                .filter(|f| f.record == record)
                .map(|f| f.size)
                .sum();
            assert_eq!(covered, size, "{record}");
        }
    }

    #[test]
    fn every_field_and_constant_moves_the_hash() {
        let base = layout_hash();
        for i in 0..FIELDS.len() {
            let mut moved = FIELDS.to_vec();
            moved[i].offset += 8;
            assert_ne!(
                hash_of(&moved, &GEOMETRY_CONSTANTS),
                base,
                "{:?}",
                FIELDS[i]
            );
            let mut resized = FIELDS.to_vec();
            resized[i].size += 8;
            assert_ne!(
                hash_of(&resized, &GEOMETRY_CONSTANTS),
                base,
                "{:?}",
                FIELDS[i]
            );
        }
        for i in 0..GEOMETRY_CONSTANTS.len() {
            let mut c = GEOMETRY_CONSTANTS;
            c[i].1 += 1;
            assert_ne!(hash_of(FIELDS, &c), base, "{}", c[i].0);
        }
    }

    #[test]
    fn swapping_two_same_size_fields_changes_the_hash() {
        let base = layout_hash();
        let mut swaps = 0;
        for i in 0..FIELDS.len() {
            for j in i + 1..FIELDS.len() {
                let (a, b) = (FIELDS[i], FIELDS[j]);
                if a.record != b.record || a.size != b.size {
                    continue;
                }
                let mut swapped = FIELDS.to_vec();
                swapped[i].offset = b.offset;
                swapped[j].offset = a.offset;
                assert_ne!(
                    hash_of(&swapped, &GEOMETRY_CONSTANTS),
                    base,
                    "{}.{} <-> {}",
                    a.record,
                    a.name,
                    b.name
                );
                swaps += 1;
            }
        }
        assert!(swaps > 100, "only {swaps} same-size pairs");
    }
}
