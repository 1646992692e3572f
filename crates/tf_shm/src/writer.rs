//! The single writer: tf2's `setTransform` applied to the arena.
//!
//! Validation is tf2 ROS 2's ([`crate::validate`]); insertion follows `TimeCache::insertData`
//! ([`crate::history::insert_decision`]) on the frame's ring (the crate's `ring` module). Frames appear
//! at run time: a new name and its index entry are written (shared by both copies), then the
//! copy's record, and only then is the copy's frame count raised (Release), so readers never
//! see half a frame (an index entry past the count is skipped).
//!
//! Two copies (`crate::moment`): the writer makes each moment's changes to copy 0, publishes
//! the moment, then makes the same changes to copy 1, from a log of what it did to copy 0
//! (every step of which depends only on the copy's contents, which were equal before). Names
//! and the name index are written once, in the first pass, and shared by both copies.
//!
//! Ring growth: a dynamic frame starts with a small ring from the pool. When the ring is three
//! quarters full (the free quarter is the lag a reader of the oldest sample may have before its
//! slot is reused), the writer copies the history into a ring twice as large and publishes the new descriptor with one Release store. Old rings are
//! never reused, so a reader still on one reads a frozen, consistent history. When the pool is
//! exhausted (or the frame publishes faster than `max_rate_hz`), the ring keeps its size and
//! drops its oldest sample: the frame is flagged `FRAME_HISTORY_SHORT`, the arena
//! `STATUS_POOL_EXHAUSTED`, and every other frame keeps working.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::sync::Arc;

use arrayvec::ArrayVec;
use rustc_hash::FxBuildHasher;

use crate::arena::layout::*;
use crate::arena::region::{Region, RingRef};
use crate::arena::{
    boot_id, identity_of, memfd, names, notify, random_uuid, Arena, ArenaConfig, ConfigError,
    CreateError, Geometry, MAX_AUTHORITIES, MAX_AUTHORITY_LEN,
};
use crate::history::{insert_decision, InsertDecision};
use crate::ring::{write_slot, RingWriter};
use crate::sample::{FrameId, Sample};
use crate::sync::{AtomicU64, Ordering};
use crate::validate::{old_data_message, validate, Refusal, RefusalCode, TransformInput};
use crate::view::ArenaView;

/// What happened to an accepted sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteStatus {
    /// Stored.
    Stored,
    /// Equal in every field to a stored sample: dropped silently, as tf2 ROS 2 does.
    DuplicateDropped,
    /// Stored, but the frame's ring could not grow, so its oldest sample was dropped before
    /// the cache time (pool exhausted or rate above `max_rate_hz`).
    StoredHistoryCut,
    /// Not stored: the frame's ring is full and cannot grow, and the sample is older than
    /// every sample it keeps (tf2, with no size limit, would have kept it).
    DroppedHistoryFull,
}

/// The arena has no room for what a sample needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CapacityError {
    /// The frame table is full (`max_frames`); the new frame is named.
    FrameTableFull {
        /// The frame that could not be added.
        frame: String,
        /// The arena's `max_frames`.
        max_frames: u32,
    },
    /// The names region is full.
    NamesFull {
        /// The name that did not fit.
        name: String,
    },
    /// A frame or authority name is longer than
    /// [`MAX_FRAME_NAME_LEN`](crate::arena::MAX_FRAME_NAME_LEN) bytes.
    NameTooLong {
        /// Its length, bytes.
        len: usize,
    },
    /// A new dynamic frame could not get its first ring: the ring pool is exhausted.
    RingPoolExhausted {
        /// The frame.
        frame: String,
    },
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapacityError::FrameTableFull { frame, max_frames } => write!(
                f,
                "cannot add frame \"{frame}\": the arena holds at most {max_frames} frames \
                 (raise max_frames)"
            ),
            CapacityError::NamesFull { name } => write!(
                f,
                "cannot store name \"{name}\": the arena's names region is full (raise max_frames)"
            ),
            CapacityError::NameTooLong { len } => write!(
                f,
                "frame or authority name of {len} bytes is longer than the {MAX_NAME_LEN} allowed"
            ),
            CapacityError::RingPoolExhausted { frame } => write!(
                f,
                "cannot store history for frame \"{frame}\": the ring pool is exhausted (raise \
                 the memory budget)"
            ),
        }
    }
}

/// Why `set_transform` did not store a sample.
#[derive(Clone, Debug, PartialEq)]
pub enum SetTransformError {
    /// tf2 refuses it (`TF_SELF_TRANSFORM`, `TF_NAN_INPUT`, `TF_OLD_DATA`, …); the refusal
    /// carries every code and tf2's log text.
    Refused(Refusal),
    /// The arena is out of room for it.
    Capacity(CapacityError),
}

impl fmt::Display for SetTransformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetTransformError::Refused(r) => r.fmt(f),
            SetTransformError::Capacity(c) => c.fmt(f),
        }
    }
}

impl std::error::Error for SetTransformError {}

/// The codes counted in `Header::refusals`, in counter order.
pub(crate) const COUNTED_CODES: [RefusalCode; 6] = [
    RefusalCode::SelfTransform,
    RefusalCode::NoChildFrameId,
    RefusalCode::NoFrameId,
    RefusalCode::NanInput,
    RefusalCode::DenormalizedQuaternion,
    RefusalCode::OldData,
];

/// Counter index for samples refused for lack of room.
pub(crate) const CAPACITY_COUNTER: usize = COUNTED_CODES.len();

/// Index of a code's counter in `Header::refusals`.
fn refusal_counter(code: RefusalCode) -> usize {
    COUNTED_CODES
        .iter()
        .position(|&c| c == code)
        .unwrap_or(CAPACITY_COUNTER)
}

/// The arena's only writer. Not `Clone`: one per arena.
pub struct ArenaWriter {
    region: Arc<Region>,
    geo: Geometry,
    /// Name → id of every frame (the writer's own index; readers use the in-arena one).
    frames: FrameIndex,
    /// Every authority stored (at most [`MAX_AUTHORITIES`]) with its reference, and the index
    /// of the last one used: a bridge passes one authority for every sample.
    authorities: Vec<(Box<str>, u64)>,
    last_authority: usize,
    /// Inside [`ArenaWriter::batch`]: waiters are notified once at its end.
    batching: bool,
    /// A sample was stored (or the buffer cleared) since the last notification.
    unnotified: bool,
    /// The current moment's wall clock, ns ([`ArenaWriter::moment_now`]); 0 until read.
    now_ns: i64,
    /// Copy 0's geometry; `geo` is the copy being changed.
    copy0: Geometry,
    /// What this moment changed in copy 0, to be made in copy 1 after it is published. Kept
    /// between moments, so that a moment allocates only when it is the largest yet.
    log: Vec<CopyChange>,
}

/// Frames a moment's warm-up covers at most (`ArenaWriter::warm_up`; the log's first ones).
const WARM_UP_MAX: usize = 256;

/// One change the writer makes to a copy (see the module doc).
#[derive(Clone, Copy)]
enum CopyChange {
    /// A frame without cache, `id`, named by `name` (a reference into the shared names).
    Frame { id: FrameId, name: u64 },
    /// A static sample of frame `id`.
    Static { id: FrameId, sample: Sample },
    /// A sample offered to the history of frame `id` (stored, dropped or refused as tf2's
    /// `insertData` decides: the decision is the copy's, and equal in both).
    Dynamic { id: FrameId, sample: Sample },
    /// The record's bookkeeping of a sample accepted for `child`.
    Accepted {
        child: FrameId,
        parent: FrameId,
        authority: Option<u64>,
        now: i64,
    },
    /// tf2's `clear()`.
    Clear,
}

/// The creator's constructors of [`Arena`]; a reader's is beside the view (`view.rs`).
impl Arena {
    /// A process-local arena on the heap: a writer and a view sharing it. Same layout and
    /// protocol as the shared one; for tests and in-process buffers.
    ///
    /// Errors: [`ConfigError`] naming the first bad field.
    pub fn in_memory(config: &ArenaConfig) -> Result<(ArenaWriter, ArenaView), ConfigError> {
        let geo = Geometry::from_config(config)?;
        let region = Region::heap(geo.size as usize);
        Ok(Self::init(region, geo))
    }

    fn init(region: Arc<Region>, geo: Geometry) -> (ArenaWriter, ArenaView) {
        let header = region.header().expect("arena smaller than its header");
        geo.write_header(header, random_uuid(), boot_id());
        let identity = identity_of(header, geo.size);
        let writer = ArenaWriter::new(region.clone(), geo);
        (writer, ArenaView::new(region, geo, identity))
    }

    /// Creates a sealed memfd arena (see `arena::memfd`): its file (to hand to consumers with
    /// [`SharedArena::reader_fd`]), the writer and a view.
    ///
    /// Errors: [`CreateError::Config`] for a bad config, [`CreateError::Io`] when the memfd
    /// cannot be created, sized, mapped or sealed.
    pub fn create_shared(config: &ArenaConfig, name: &str) -> Result<SharedArena, CreateError> {
        let geo = Geometry::from_config(config).map_err(CreateError::Config)?;
        let (file, map) = memfd::create(name, geo.size as usize).map_err(CreateError::Io)?;
        let region = Region::mapped(map, true);
        let (writer, view) = Self::init(region, geo);
        Ok(SharedArena { file, writer, view })
    }
}

/// A shared arena as its creator holds it.
pub struct SharedArena {
    file: File,
    /// The single writer.
    pub writer: ArenaWriter,
    /// A view for the creator's own lookups.
    pub view: ArenaView,
}

impl SharedArena {
    /// A new read-only descriptor of the arena for a consumer (a write mapping of it fails).
    pub fn reader_fd(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        memfd::reopen_read_only(&self.file)
    }

    /// The arena's file (read-write; keep it private).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The file, the writer and the view, for callers that move the writer elsewhere.
    pub fn into_parts(self) -> (File, ArenaWriter, ArenaView) {
        (self.file, self.writer, self.view)
    }
}

impl ArenaWriter {
    pub(crate) fn new(region: Arc<Region>, geo: Geometry) -> ArenaWriter {
        assert!(region.is_writable(), "a writer needs a writable region");
        let w = ArenaWriter {
            region,
            geo,
            frames: FrameIndex::default(),
            authorities: Vec::new(),
            last_authority: 0,
            batching: false,
            unnotified: false,
            now_ns: 0,
            copy0: geo,
            log: Vec::with_capacity(64),
        };
        // Frame id 0 is tf2's "no parent" sentinel; real frames start at 1.
        for copy in &w.header().copies {
            copy.frame_count.store(1, Ordering::Relaxed);
        }
        w
    }

    fn header(&self) -> &Header {
        self.region.header().expect("own arena has a header")
    }

    /// The header of the copy being changed.
    fn copy_header(&self) -> &CopyHeader {
        &self.header().copies[self.geo.copy as usize]
    }

    /// Makes `change` to the copy being changed and logs it for the other.
    fn change(&mut self, change: CopyChange) -> Result<WriteStatus, Stop> {
        self.log.push(change);
        self.make(&change)
    }

    /// Makes `change` to the copy being changed.
    fn make(&self, change: &CopyChange) -> Result<WriteStatus, Stop> {
        match *change {
            CopyChange::Frame { id, name } => self.add_record(id, name),
            CopyChange::Static { id, sample } => self.store_static(id, &sample),
            CopyChange::Dynamic { id, sample } => return self.store_dynamic(id, &sample),
            CopyChange::Accepted {
                child,
                parent,
                authority,
                now,
            } => self.note_accepted_record(child, parent, authority, now),
            CopyChange::Clear => {
                let g = &self.copy_header().clear_generation;
                g.store(g.load(Ordering::Relaxed).wrapping_add(1), Ordering::Release);
            }
        }
        Ok(WriteStatus::Stored)
    }

    /// Publishes the moment and makes its changes to copy 1 (`crate::moment`).
    fn finish_moment(&mut self) {
        crate::moment::publish(&self.header().latch);
        self.geo = self.copy0.copy(1);
        self.warm_up(&self.logged_frames());
        for change in &self.log {
            let _ = self.make(change);
        }
        self.geo = self.copy0;
        self.log.clear();
    }

    /// Loads, in the copy being changed, the lines the writes of frames `ids` read first —
    /// their records, then their rings' headers, then the stamps and the slot an insert reads
    /// — each round for every frame before the next, so that the loads of a round, which do
    /// not depend on each other, miss the cache together instead of one after another. The
    /// bridge writes a message every 10 ms, by when these lines have left the cache: their
    /// misses, one after another, were most of its write path (perf at the fan-out workload:
    /// the replay's reads of a ring's generation and newest stamp). Changes nothing.
    fn warm_up(&self, ids: &[FrameId]) {
        let mut sink = 0u64;
        for &id in ids {
            let rec = self.record(id);
            sink ^= rec.ring.load(Ordering::Relaxed)
                ^ u64::from(rec.last_parent.load(Ordering::Relaxed))
                ^ rec.changes.load(Ordering::Relaxed);
        }
        let rings = || ids.iter().filter_map(|&id| self.ring_of(self.record(id)));
        for ring in rings() {
            sink ^= ring.head() ^ ring.generation();
        }
        for ring in rings() {
            sink ^= ring.touch();
        }
        std::hint::black_box(sink);
    }

    /// The frames a moment's log changes, for [`ArenaWriter::warm_up`] before its replay.
    fn logged_frames(&self) -> ArrayVec<FrameId, WARM_UP_MAX> {
        self.log
            .iter()
            .filter_map(|c| match *c {
                CopyChange::Static { id, .. } | CopyChange::Dynamic { id, .. } => Some(id),
                CopyChange::Accepted { .. } | CopyChange::Frame { .. } | CopyChange::Clear => None,
            })
            .take(WARM_UP_MAX)
            .collect()
    }

    fn record(&self, id: FrameId) -> &FrameRecord {
        self.region
            .frame(self.geo.frames_off, id)
            .expect("own frame ids are in range")
    }

    /// The cache time, ns.
    pub fn cache_time_ns(&self) -> i64 {
        self.geo.cache_time_ns
    }

    /// tf2's `BufferCore::setTransform(msg, authority, is_static)` (ROS 2 Jazzy rules, docs/tf2-semantics.md §2):
    /// validates, creates frames as needed, and stores the sample — into the frame's static
    /// slot when `is_static`, else into its history. A frame that switches kind loses its old
    /// cache, as in ROS 2.
    ///
    /// Errors: [`SetTransformError::Refused`] with tf2's codes and texts (nothing is stored, the
    /// refusal is counted in the arena header); [`SetTransformError::Capacity`] when the frame
    /// table, names region or ring pool has no room (nothing is stored; other frames are
    /// unaffected). Allocates only when a frame or authority is seen for the first time.
    /// One moment (`crate::moment`): readers see all of it or none; inside a
    /// [`ArenaWriter::batch`], part of the batch's moment.
    pub fn set_transform(
        &mut self,
        input: &TransformInput<'_>,
        authority: &str,
        is_static: bool,
    ) -> Result<WriteStatus, SetTransformError> {
        self.batch(|w| w.store_transform(input, authority, is_static))
    }

    fn store_transform(
        &mut self,
        input: &TransformInput<'_>,
        authority: &str,
        is_static: bool,
    ) -> Result<WriteStatus, SetTransformError> {
        let v = match validate(input, authority) {
            Ok(v) => v,
            Err(r) => return Err(self.refused(r)),
        };
        let (child, parent) = match self.known_frames(v.child, v.parent) {
            Some(ids) => ids,
            None => self.add_frames(v.child, v.parent)?,
        };
        let sample = Sample {
            stamp: v.stamp,
            parent,
            transform: v.transform,
        };
        let status = if is_static {
            let _ = self.change(CopyChange::Static { id: child, sample });
            WriteStatus::Stored
        } else {
            match self.change(CopyChange::Dynamic { id: child, sample }) {
                Ok(s) => s,
                Err(Stop::Old) => {
                    let r = Refusal::old_data(old_data_message(v.child, v.stamp, authority));
                    return Err(self.refused(r));
                }
                Err(Stop::NoRing) => {
                    let e = CapacityError::RingPoolExhausted {
                        frame: v.child.to_string(),
                    };
                    return Err(self.capacity(e));
                }
            }
        };
        if matches!(status, WriteStatus::Stored | WriteStatus::StoredHistoryCut) {
            self.note_accepted(child, parent, authority);
            self.published();
        }
        Ok(status)
    }

    /// tf2's `BufferCore::clear()`: every dynamic frame's history becomes empty in one store;
    /// static frames and frame names stay. One moment (`crate::moment`), or part of a batch's.
    pub fn clear(&mut self) {
        self.batch(|w| {
            let _ = w.change(CopyChange::Clear);
            w.header().clears_total.fetch_add(1, Ordering::Relaxed);
            // A waiter's answer may change (e.g. to an extrapolation it should not wait past).
            w.published();
        });
    }

    /// Runs `f` (typically one `TFMessage`'s `set_transform` calls) and notifies waiting
    /// consumers once at its end instead of after every sample: a consumer waiting for a frame
    /// the message does not hold re-checks once per message, not once per transform. The batch
    /// is one moment (`crate::moment`): lookups see every sample of it or none, from its end.
    /// Nested batches are part of the outermost one.
    pub fn batch<R>(&mut self, f: impl FnOnce(&mut ArenaWriter) -> R) -> R {
        /// Ends the outermost batch even if `f` panics, so a moment never stays open in a
        /// live writer and notifications never stay held.
        struct End<'a>(&'a mut ArenaWriter, bool);
        impl Drop for End<'_> {
            fn drop(&mut self) {
                if self.1 {
                    self.0.finish_moment();
                    self.0.batching = false;
                    self.0.now_ns = 0;
                    if self.0.unnotified {
                        self.0.published();
                    }
                }
            }
        }
        let outer = !self.batching;
        if outer {
            crate::moment::begin(&self.header().latch);
        }
        self.batching = true;
        let end = End(self, outer);
        f(&mut *end.0)
    }

    fn published(&mut self) {
        if self.batching {
            self.unnotified = true;
        } else {
            self.unnotified = false;
            notify::published(self.header());
        }
    }

    /// Sets the count of messages the process feeding this writer received but could not
    /// hand to it (its intake queue was full), since creation. A total, not an increment: the
    /// counter never goes down.
    pub fn set_messages_lost(&mut self, total: u64) {
        self.header()
            .messages_lost
            .fetch_max(total, Ordering::Relaxed);
    }

    /// Sets how many `/tf_static` publishers the process feeding this writer sees in the ROS
    /// graph without having received anything from them (for `tf_shm doctor`). The current
    /// count: it goes down again when one delivers or leaves the graph.
    pub fn set_static_publishers_unheard(&mut self, count: u64) {
        self.header()
            .static_publishers_unheard
            .store(count, Ordering::Relaxed);
    }

    /// Declares the arena ready: the writer has caught up after its start (what it had to
    /// receive first is stored). Consumers of an earlier arena of the same location keep
    /// answering from it until then (see [`crate::Buffer`]). Idempotent; the first time stays.
    pub fn declare_ready(&mut self) {
        let now = crate::time::unix_now_ns().max(1);
        let _ = self.header().ready_unix_ns.compare_exchange(
            0,
            now,
            Ordering::Release,
            Ordering::Relaxed,
        );
    }

    fn refused(&self, r: Refusal) -> SetTransformError {
        for code in r.codes() {
            self.header().refusals[refusal_counter(code)].fetch_add(1, Ordering::Relaxed);
        }
        SetTransformError::Refused(r)
    }

    fn capacity(&self, e: CapacityError) -> SetTransformError {
        let h = self.header();
        h.refusals[CAPACITY_COUNTER].fetch_add(1, Ordering::Relaxed);
        let bit = match e {
            CapacityError::FrameTableFull { .. } => STATUS_FRAME_TABLE_FULL,
            CapacityError::NamesFull { .. } | CapacityError::NameTooLong { .. } => {
                STATUS_NAMES_FULL
            }
            CapacityError::RingPoolExhausted { .. } => STATUS_POOL_EXHAUSTED,
        };
        h.status.fetch_or(bit, Ordering::Relaxed);
        SetTransformError::Capacity(e)
    }

    /// Ids of `child` and `parent` if both are known. A child's parent is most often the one
    /// of its previous sample, so that one is tried first, by name, without a lookup.
    #[inline]
    fn known_frames(&self, child: &str, parent: &str) -> Option<(FrameId, FrameId)> {
        let child = self.frames.get(child)?;
        let last = self.record(child).last_parent.load(Ordering::Relaxed);
        if self.frames.name(last).is_some_and(|n| n == parent) {
            return Some((child, last));
        }
        Some((child, self.frames.get(parent)?))
    }

    /// Ids of `child` and `parent`, creating those not seen yet (all of them or, when the
    /// arena has no room, none).
    #[cold]
    #[inline(never)]
    fn add_frames(
        &mut self,
        child: &str,
        parent: &str,
    ) -> Result<(FrameId, FrameId), SetTransformError> {
        self.check_room(&[child, parent])
            .map_err(|e| self.capacity(e))?;
        let child = self.intern(child).map_err(|e| self.capacity(e))?;
        step();
        let parent = self.intern(parent).map_err(|e| self.capacity(e))?;
        step();
        Ok((child, parent))
    }

    /// Whether the frame table has room for those of `names` not seen yet, so that a refused
    /// sample never leaves half of its frames behind.
    fn check_room(&self, names: &[&str]) -> Result<(), CapacityError> {
        let count = self.copy_header().frame_count.load(Ordering::Relaxed);
        let mut free = (self.geo.max_frames + 1).saturating_sub(count);
        for (i, name) in names.iter().enumerate() {
            if self.frames.get(name).is_some() || names[..i].contains(name) {
                continue;
            }
            if free == 0 {
                return Err(CapacityError::FrameTableFull {
                    frame: name.to_string(),
                    max_frames: self.geo.max_frames,
                });
            }
            free -= 1;
        }
        Ok(())
    }

    /// Id of `name`, creating the frame (with no cache) the first time.
    fn intern(&mut self, name: &str) -> Result<FrameId, CapacityError> {
        if let Some(id) = self.frames.get(name) {
            return Ok(id);
        }
        let id = self.copy_header().frame_count.load(Ordering::Relaxed);
        if id > self.geo.max_frames {
            return Err(CapacityError::FrameTableFull {
                frame: name.to_string(),
                max_frames: self.geo.max_frames,
            });
        }
        let name_ref = self.store_name(name)?;
        let index = self
            .region
            .u32s(self.geo.index_off, self.geo.index_capacity as usize)
            .expect("index inside own arena");
        // The index is twice max_frames, so a free entry always exists.
        if let Some(entry) = names::probe(index, names::hash(name.as_bytes()))
            .find(|e| e.load(Ordering::Relaxed) == 0)
        {
            entry.store(id, Ordering::Relaxed);
        }
        let _ = self.change(CopyChange::Frame { id, name: name_ref });
        self.frames.insert(name, id);
        Ok(id)
    }

    /// Frame `id`'s record, without cache, then the copy's frame count past it (Release: a
    /// reader that counts the frame sees its record and its shared name and index entry).
    fn add_record(&self, id: FrameId, name: u64) {
        let rec = self.record(id);
        rec.name.store(name, Ordering::Relaxed);
        rec.kind.store(KIND_NONE, Ordering::Relaxed);
        self.copy_header()
            .frame_count
            .store(id + 1, Ordering::Release);
    }

    /// Writes `name` into the names region; returns its reference.
    fn store_name(&self, name: &str) -> Result<u64, CapacityError> {
        if name.len() > MAX_NAME_LEN {
            return Err(CapacityError::NameTooLong { len: name.len() });
        }
        let h = self.header();
        let used = h.names_used.load(Ordering::Relaxed);
        let n = names::words_for(name.len()) as u64;
        if used + n > self.geo.names_words {
            return Err(CapacityError::NamesFull {
                name: name.to_string(),
            });
        }
        let words = self
            .region
            .u64s(self.geo.names_off + used * 8, n as usize)
            .expect("names inside own arena");
        names::write(words, name.as_bytes());
        h.names_used.store(used + n, Ordering::Relaxed);
        Ok(name_ref(used as u32, name.len() as u32))
    }

    fn store_static(&self, id: FrameId, s: &Sample) {
        let rec = self.record(id);
        write_slot(&rec.static_slot, s);
        step();
        // ROS 2: a dynamic frame becoming static loses its history (the kind switch is the
        // one store readers see).
        rec.kind.store(KIND_STATIC, Ordering::Release);
    }

    fn ring_of(&self, rec: &FrameRecord) -> Option<RingWriter<'_>> {
        let (off, log2) = decode_ring_descriptor(rec.ring.load(Ordering::Relaxed));
        if rec.ring.load(Ordering::Relaxed) == 0 {
            return None;
        }
        self.ring_at(off, 1usize << log2)
    }

    fn ring_at(&self, pool_rel: u64, capacity: usize) -> Option<RingWriter<'_>> {
        let ring: RingRef<'_> = self.region.ring(
            self.geo.pool_off + pool_rel,
            capacity,
            self.geo.pool_off + self.geo.pool_size,
        )?;
        Some(RingWriter { ring })
    }

    /// Allocates a ring of `capacity` samples from the pool; `None` when it does not fit.
    fn allocate_ring(&self, capacity: usize) -> Option<u64> {
        let h = self.copy_header();
        let used = h.pool_used.load(Ordering::Relaxed);
        let bytes = ring_bytes(capacity) as u64;
        if used + bytes > self.geo.pool_size {
            return None;
        }
        h.pool_used.store(used + bytes, Ordering::Relaxed);
        Some(used)
    }

    fn store_dynamic(&self, id: FrameId, s: &Sample) -> Result<WriteStatus, Stop> {
        let rec = self.record(id);
        let generation = self.copy_header().clear_generation.load(Ordering::Relaxed);
        let was_dynamic = rec.kind.load(Ordering::Relaxed) == KIND_DYNAMIC;
        let ring = match self.ring_of(rec) {
            Some(r) => r,
            None => {
                let cap = self.geo.initial_ring_capacity as usize;
                let Some(off) = self.allocate_ring(cap) else {
                    rec.flags.fetch_or(FRAME_NO_RING, Ordering::Relaxed);
                    return Err(Stop::NoRing);
                };
                let r = self.ring_at(off, cap).expect("allocated inside the pool");
                r.reset(generation);
                rec.ring
                    .store(ring_descriptor(off as usize, cap), Ordering::Release);
                rec.flags.fetch_and(!FRAME_NO_RING, Ordering::Relaxed);
                r
            }
        };
        // A new TimeCache (ROS 2 kind switch) or a cleared one starts empty.
        if !was_dynamic || ring.generation() != generation {
            ring.reset(generation);
            step();
        }
        let decision = insert_decision(&ring.history(), s, self.geo.cache_time_ns);
        let pruned = decision.prune() > 0;
        ring.drop_oldest(decision.prune() as u64);
        step();
        // tf2 prunes before it decides; a sample not stored after a prune still changed the
        // link (a stored one is counted with the sample).
        let pruned_only = || {
            if pruned {
                ring.note_span();
                bump(&rec.changes, Ordering::Release);
            }
        };
        let index = match decision {
            InsertDecision::RejectOld { .. } => {
                pruned_only();
                return Err(Stop::Old);
            }
            InsertDecision::DropDuplicate { .. } => {
                pruned_only();
                return Ok(WriteStatus::DuplicateDropped);
            }
            InsertDecision::Insert { index, .. } => index as u64,
        };
        let mut status = WriteStatus::Stored;
        let mut ring = ring;
        let mut index = index;
        // Grow at three quarters full, not at full: the free quarter is how many writes a
        // reader of the oldest sample may lag before its slot is reused (and it retries).
        if ring.len() >= ring.capacity() - ring.capacity() / 4 {
            if let Some(bigger) = self.grow(rec, &ring) {
                ring = bigger;
            }
        }
        if ring.len() == ring.capacity() {
            // Could not grow: keep the newest `capacity` samples, the new one included.
            status = WriteStatus::StoredHistoryCut;
            rec.flags.fetch_or(FRAME_HISTORY_SHORT, Ordering::Relaxed);
            if index == 0 {
                self.mark_kind_dynamic(rec, was_dynamic);
                return Ok(WriteStatus::DroppedHistoryFull);
            }
            ring.drop_oldest(1);
            index -= 1;
        }
        ring.insert(index, s);
        step();
        self.mark_kind_dynamic(rec, was_dynamic);
        Ok(status)
    }

    fn mark_kind_dynamic(&self, rec: &FrameRecord, was_dynamic: bool) {
        if !was_dynamic {
            rec.kind.store(KIND_DYNAMIC, Ordering::Release);
        }
    }

    /// Moves a full ring's history into one twice as large, if `max_ring_capacity` and the
    /// pool allow. (Pruning already ran, so every sample in a full ring is one tf2 would keep.)
    fn grow<'a>(&'a self, rec: &FrameRecord, ring: &RingWriter<'a>) -> Option<RingWriter<'a>> {
        let cap = ring.capacity() as usize;
        if cap * 2 > self.geo.max_ring_capacity as usize {
            return None;
        }
        let Some(off) = self.allocate_ring(cap * 2) else {
            self.header()
                .status
                .fetch_or(STATUS_POOL_EXHAUSTED, Ordering::Relaxed);
            return None;
        };
        let bigger = self.ring_at(off, cap * 2)?;
        ring.copy_into(&bigger);
        rec.ring
            .store(ring_descriptor(off as usize, cap * 2), Ordering::Release);
        Some(bigger)
    }

    fn note_accepted(&mut self, child: FrameId, parent: FrameId, authority: &str) {
        let authority = self.authority_ref(authority);
        let now = self.moment_now();
        let h = self.header();
        // The writer is the only one to store these words: a load and a store each, not a
        // locked read-modify-write.
        bump(&h.accepted_total, Ordering::Relaxed);
        h.last_write_unix_ns.store(now, Ordering::Relaxed);
        let _ = self.change(CopyChange::Accepted {
            child,
            parent,
            authority,
            now,
        });
    }

    /// The record's part of [`ArenaWriter::note_accepted`], in the copy being changed.
    fn note_accepted_record(
        &self,
        child: FrameId,
        parent: FrameId,
        authority_ref: Option<u64>,
        now: i64,
    ) {
        let rec = self.record(child);
        let accepted = bump(&rec.accepted, Ordering::Relaxed);
        // Release: readers that keep a time-0 answer take an unchanged count to mean the link
        // did not change since they read it (`FrameStore::link_version`).
        bump(&rec.changes, Ordering::Release);
        let previous = rec.last_parent.load(Ordering::Relaxed);
        if previous != parent {
            rec.last_parent.store(parent, Ordering::Relaxed);
            if accepted > 0 {
                bump(&rec.parent_changes, Ordering::Relaxed);
                rec.last_parent_change_unix_ns.store(now, Ordering::Relaxed);
            }
        }
        rec.last_write_unix_ns.store(now, Ordering::Relaxed);
        if let Some(r) = authority_ref {
            rec.authority.store(r, Ordering::Relaxed);
        }
    }

    /// The wall clock of this moment's writes, read at its first accepted sample: one clock
    /// read per moment (per `TFMessage` in the bridge), not per sample, and the kernel's
    /// coarse clock (a few ms of resolution, for tools that show ages in seconds; ~7 ns where
    /// the precise one costs ~35).
    fn moment_now(&mut self) -> i64 {
        if self.now_ns == 0 {
            self.now_ns = crate::time::unix_now_coarse_ns().max(1);
        }
        self.now_ns
    }

    /// Reference of `authority` in the names region, storing it the first time; `None` past
    /// [`MAX_AUTHORITIES`] distinct or [`MAX_AUTHORITY_LEN`] bytes (authorities are
    /// informational and use a fixed reserve; the sample is kept regardless).
    fn authority_ref(&mut self, authority: &str) -> Option<u64> {
        if let Some((name, r)) = self.authorities.get(self.last_authority) {
            if **name == *authority {
                return Some(*r);
            }
        }
        if let Some(i) = self.authorities.iter().position(|(a, _)| **a == *authority) {
            self.last_authority = i;
            return Some(self.authorities[i].1);
        }
        if self.authorities.len() >= MAX_AUTHORITIES || authority.len() > MAX_AUTHORITY_LEN {
            return None;
        }
        let r = self.store_name(authority).ok()?;
        self.last_authority = self.authorities.len();
        self.authorities.push((authority.into(), r));
        Some(r)
    }
}

/// The writer's name → id map, and every frame's name by id (for the previous-parent check).
/// `rustc_hash`'s hasher, not std's SipHash (~200 instructions per name, most of a write):
/// the names come from the bridge's publishers, and a publisher of colliding names slows only
/// lookups among at most `max_frames` names.
#[derive(Default)]
struct FrameIndex {
    ids: HashMap<Box<str>, FrameId, FxBuildHasher>,
    /// Every frame's name, by id (index 0, [`crate::sample::NO_FRAME`], is empty).
    names: Vec<Box<str>>,
}

impl FrameIndex {
    /// Id of `name`, if it is a frame.
    #[inline]
    fn get(&self, name: &str) -> Option<FrameId> {
        self.ids.get(name).copied()
    }

    /// Name of frame `id`.
    #[inline]
    fn name(&self, id: FrameId) -> Option<&str> {
        self.names.get(id as usize).map(|n| &**n)
    }

    /// Adds `name` (not yet in the index) as frame `id`.
    fn insert(&mut self, name: &str, id: FrameId) {
        let id_at = id as usize;
        if self.names.len() <= id_at {
            self.names.resize(id_at + 1, Box::from(""));
        }
        self.names[id_at] = name.into();
        self.ids.insert(name.into(), id);
    }
}

/// Adds one to a counter only the writer stores; returns the value before (as `fetch_add`).
#[inline(always)]
fn bump(word: &AtomicU64, order: Ordering) -> u64 {
    let v = word.load(Ordering::Relaxed);
    word.store(v.wrapping_add(1), order);
    v
}

/// A point between two of the writer's stores, where tests pause it to read
/// (`crate::moment_interleavings`); nothing outside tests.
#[inline(always)]
fn step() {
    #[cfg(all(test, not(loom)))]
    crate::moment_interleavings::writer_step();
}

/// Internal reasons `store_dynamic` stops without storing.
enum Stop {
    Old,
    NoRing,
}
