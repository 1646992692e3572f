//! A reader's view of an arena: tf2's queries over shared memory, without locks or syscalls.
//!
//! Every index and offset read from the arena is checked against the geometry validated when
//! the view was made; a damaged arena yields [`ArenaError`], never a panic.

use std::os::fd::AsFd;
use std::sync::Arc;

use crate::arena::layout::*;
use crate::arena::region::Region;
use crate::arena::{identity_of, memfd, names, Arena, ArenaIdentity, AttachError, Geometry};
use crate::error::{ArenaError, TransformError};
use crate::fast_path::declined;
use crate::history::{from_bracket, get_data};
use crate::math::{slerp, slerp_tf2};
use crate::pair::FramePair;
use crate::queries::BufferCore;
use crate::ring::{self, try_read_slot};
use crate::sample::{FrameId, Sample, Transform, TransformStamped, NO_FRAME};
use crate::store::{
    CacheError, FrameStore, History, HistoryLimit, HistorySpan, LatestLink, LinkAt,
};
use crate::sync::Ordering;

/// How [`CopyView::link_sample`] answers between two samples of a dynamic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkRead {
    /// tf2's `getParent`: the older sample, not interpolated.
    Parent,
    /// tf2's `getData` with tf2's slerp, literally.
    Tf2Slerp,
    /// tf2's `getData` with [`crate::math::slerp`] (series between close rotations; equal to
    /// tf2's up to rounding): [`FrameStore::link_at_close`].
    SeriesSlerp,
}

/// A link's newest sample as [`CopyView::newest`] reads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Newest {
    /// The sample, stamped with tf2's latest time of the link (`getLatestTimeAndParent`): its
    /// own stamp, 0 for a static (whose stamp means nothing to a lookup: tf2's `StaticCache`
    /// answers any time).
    pub sample: Sample,
}

/// [`ring::read_newest`] after [`ring::read_bracket`] found no bracket at `time`: counts the
/// bracket read's decline at a time before the newest stamp (where a bracket answers unless
/// the time is older than the history), and the newest read's where it declines.
#[inline(always)]
fn read_newest_counted(
    r: crate::arena::region::RingRef<'_>,
    generation: u64,
    time: i64,
) -> Option<Sample> {
    let newest = ring::read_newest(r, generation);
    match newest {
        Some(s) if time == 0 || s.stamp == time => {}
        Some(s) if time > s.stamp => {}
        Some(_) => declined(|d| &mut d.bracket),
        None => declined(|d| &mut d.newest),
    }
    newest
}

/// Where a frame's link lives.
enum FrameLink<'a> {
    Static(&'a Slot),
    Dynamic(crate::arena::region::RingRef<'a>),
}

/// A frame's samples as one snapshot, with the count of samples its history was ever given
/// ([`ArenaView::frame_history`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameHistory {
    /// Oldest first (a static frame: its one sample; a frame without cache: none).
    pub samples: Vec<Sample>,
    /// Dynamic frames: samples ever inserted into the frame's history (stored by
    /// `set_transform`, whatever was pruned, cut or cleared since), counted at the instant
    /// `samples` shows, so `inserted` minus what a reader already saw is exactly what arrived
    /// since (a history cleared and not written since has no samples and keeps its count).
    /// `None` for a static frame, a frame without cache or a dynamic frame without a ring.
    pub inserted: Option<u64>,
    /// Dynamic frames: the clear generation the history belongs to (bumped by every
    /// `clear()`; a sample equal to one read before under another generation is a new one).
    pub generation: u64,
}

/// What [`ArenaView::frame_history_since`] read of a frame.
#[derive(Clone, Debug, PartialEq)]
pub enum HistorySince {
    /// Only the samples stored since: what a reader that kept the history as it was needs to
    /// bring its copy up to date (drop what is older than `oldest`, append
    /// `history.samples`; a length that then differs from `len` means the history was cut
    /// among equal stamps, and the reader reads it whole).
    Newest {
        /// The samples stored since, oldest first (none when only pruning changed the
        /// history), with the insertion count and clear generation of the same snapshot.
        history: FrameHistory,
        /// The oldest stamp the history holds now, ns (`i64::MIN` when it is empty).
        oldest: i64,
        /// The history's length now.
        len: usize,
    },
    /// The whole history, as [`ArenaView::frame_history`] reads it: the samples stored since
    /// are not its newest ones (one landed among older stamps, or one was dropped before this
    /// read), or the frame is not a dynamic one.
    Whole(FrameHistory),
}

/// Read access to an arena (shared mapping or in-process). Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct ArenaView {
    region: Arc<Region>,
    geo: Geometry,
    identity: ArenaIdentity,
    /// 1: read the copy the latch names; 0: copy 0 only (tests of what the latch prevents).
    latch_mask: u64,
}

/// One copy of the arena as a query reads it: the copy the latch named when the read began
/// (`crate::moment`, the kernel's `seqcount_latch`). Every access of one query to the copied
/// records (frame table, rings, copy header) goes to that copy, so a query loads the latch
/// once to start and once to validate. Made by [`ArenaView`]'s `in_one_moment` (and for one
/// call of its [`FrameStore`] methods outside a moment); not kept beyond a query.
#[derive(Clone, Copy)]
pub struct CopyView<'a> {
    view: &'a ArenaView,
    /// This copy's frame table (ids `0..=max_frames`), bounds-checked once per query.
    table: &'a [FrameRecord],
    /// Byte offset of this copy's ring pool.
    pool_off: u64,
    header: &'a CopyHeader,
    /// The latch when the copy was chosen.
    latch: u64,
}

/// The reader's constructor of [`Arena`]; the creator's are beside the writer (`writer.rs`).
impl Arena {
    /// Maps an arena from its file descriptor, read-only, after checking the seals, the
    /// magic, the format version, the layout hash and every header field against the mapping.
    pub fn attach(fd: impl AsFd) -> Result<ArenaView, AttachError> {
        let io = |e: std::io::Error| AttachError::Io(e.to_string());
        let size = memfd::check_sealed(fd.as_fd()).map_err(io)?;
        if size < HEADER_SIZE as u64 || size > isize::MAX as u64 {
            return Err(AttachError::Corrupt {
                field: "arena_size",
            });
        }
        let map = memfd::map_read_only(fd.as_fd(), size as usize).map_err(io)?;
        let region = Region::mapped(map, false);
        let geo = Geometry::from_header(&region)?;
        let identity = identity_of(region.header().expect("checked"), geo.size);
        Ok(ArenaView::new(region, geo, identity))
    }
}

const CORRUPT_NAME: ArenaError = ArenaError::Corrupt { what: "frame.name" };
const CORRUPT_RING: ArenaError = ArenaError::Corrupt { what: "frame.ring" };
const CORRUPT_PARENT: ArenaError = ArenaError::Corrupt {
    what: "sample.parent",
};

impl ArenaView {
    pub(crate) fn new(region: Arc<Region>, geo: Geometry, identity: ArenaIdentity) -> ArenaView {
        ArenaView {
            region,
            geo,
            identity,
            latch_mask: 1,
        }
    }

    /// The arena's identity (instance uuid, boot id, size).
    pub fn identity(&self) -> ArenaIdentity {
        self.identity
    }

    /// The cache time the arena was created with, ns.
    pub fn cache_time_ns(&self) -> i64 {
        self.geo.cache_time_ns
    }

    #[inline(always)]
    pub(crate) fn header(&self) -> &Header {
        self.region.header().expect("validated at attach")
    }

    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// This view reading copy 0 whatever the latch says: what a reader without the latch
    /// would read, for the tests of what it prevents.
    #[cfg(test)]
    pub(crate) fn pinned_to_copy_0(&self) -> ArenaView {
        let mut v = self.clone();
        v.latch_mask = 0;
        v
    }

    /// Copy `k & 1` of the arena (with the view's latch mask), `k` a value of the latch.
    #[inline(always)]
    pub(crate) fn copy(&self, latch: u64) -> CopyView<'_> {
        let k = latch & self.latch_mask;
        let shift = k.wrapping_neg() & self.geo.copy_stride;
        // Inside the region (checked at attach); empty otherwise, so every record read
        // reports the damage.
        let table = self
            .region
            .frames(
                self.geo.frames_off + shift,
                self.geo.max_frames as usize + 1,
            )
            .unwrap_or(&[]);
        CopyView {
            view: self,
            table,
            pool_off: self.geo.pool_off + shift,
            // `& 1`: no bounds check.
            header: &self.header().copies[(k & 1) as usize],
            latch,
        }
    }

    /// The copy the latch names now: for one access outside a moment.
    #[inline(always)]
    pub(crate) fn copy_now(&self) -> CopyView<'_> {
        self.copy(self.header().latch.load(Ordering::Acquire))
    }

    /// The header of the copy the latch names now.
    #[inline(always)]
    pub(crate) fn copy_header(&self) -> &CopyHeader {
        self.copy_now().header
    }

    /// The record of frame `id` in the copy the latch names now.
    #[inline(always)]
    pub(crate) fn record(&self, id: FrameId) -> Result<&FrameRecord, ArenaError> {
        self.copy_now().record(id)
    }

    /// Frame `id`'s authority as the record holds it, in the copy the latch names now: a
    /// reference into the names, which are written once (0: none).
    pub(crate) fn authority_ref(&self, id: FrameId) -> Result<u64, ArenaError> {
        Ok(self.record(id)?.authority.load(Ordering::Relaxed))
    }

    /// The arena's clear generation now (bumped by every `clear()`).
    #[inline(always)]
    pub(crate) fn clear_generation(&self) -> u64 {
        self.copy_now().clear_generation()
    }
}

impl<'a> CopyView<'a> {
    /// One past the highest frame id of this copy.
    #[inline(always)]
    fn count(&self) -> FrameId {
        self.header
            .frame_count
            .load(Ordering::Acquire)
            .min(self.view.geo.max_frames + 1)
    }

    /// The record of frame `id` in this copy.
    #[inline(always)]
    pub(crate) fn record(&self, id: FrameId) -> Result<&'a FrameRecord, ArenaError> {
        if id == 0 || id >= self.count() {
            return Err(ArenaError::Corrupt { what: "frame id" });
        }
        self.table
            .get(id as usize)
            .ok_or(ArenaError::Corrupt { what: "frame id" })
    }

    fn name_words(&self, name_ref: u64) -> Result<(&[crate::sync::AtomicU64], usize), ArenaError> {
        let (off, len) = decode_name_ref(name_ref);
        let n = names::words_for(len as usize) as u64;
        if len as usize > MAX_NAME_LEN || u64::from(off) + n > self.view.geo.names_words {
            return Err(CORRUPT_NAME);
        }
        let words = self
            .view
            .region
            .u64s(self.view.geo.names_off + u64::from(off) * 8, n as usize)
            .ok_or(CORRUPT_NAME)?;
        Ok((words, len as usize))
    }

    #[inline(always)]
    fn check_parent(&self, s: Sample) -> Result<Sample, ArenaError> {
        if s.parent >= self.frame_count() {
            return Err(CORRUPT_PARENT);
        }
        Ok(s)
    }

    /// The ring of the frame of record `rec` (of this copy) in this copy's pool.
    #[inline(always)]
    pub(crate) fn ring(
        &self,
        rec: &FrameRecord,
    ) -> Result<Option<crate::arena::region::RingRef<'a>>, ArenaError> {
        let desc = rec.ring.load(Ordering::Acquire);
        if desc == 0 {
            return Ok(None);
        }
        let (off, log2) = decode_ring_descriptor(desc);
        if log2 > self.view.geo.max_ring_capacity.trailing_zeros() {
            return Err(CORRUPT_RING);
        }
        // Inside the pool (whose end is inside the region, checked at attach): one check.
        let pool_off = self.pool_off;
        let pool_end = pool_off + self.view.geo.pool_size;
        self.view
            .region
            .ring(pool_off.saturating_add(off), 1usize << log2, pool_end)
            .map(Some)
            .ok_or(CORRUPT_RING)
    }

    /// Runs `f` over a consistent snapshot of a dynamic frame's history.
    fn with_history<R>(
        &self,
        id: FrameId,
        rec: &FrameRecord,
        f: impl FnMut(&ring::Snapshot<'_>) -> R,
    ) -> Result<Option<R>, ArenaError> {
        let Some(r) = self.ring(rec)? else {
            return Ok(None);
        };
        let generation = self.clear_generation();
        ring::read(r, generation, f)
            .map(Some)
            .ok_or(ArenaError::Contended { frame: id })
    }

    /// The arena's clear generation in this copy (bumped by every `clear()`).
    #[inline(always)]
    pub(crate) fn clear_generation(&self) -> u64 {
        self.header.clear_generation.load(Ordering::Acquire)
    }

    /// Where `id`'s link lives; `None` for a frame without cache, a dynamic frame without a
    /// ring yet, or a damaged record.
    #[inline]
    fn frame_link(&self, id: FrameId) -> Option<FrameLink<'_>> {
        self.link_of(self.record(id).ok()?)
    }

    /// Where the link of the frame of record `rec` lives (see [`CopyView::frame_link`]).
    #[inline(always)]
    fn link_of<'s>(&'s self, rec: &'s FrameRecord) -> Option<FrameLink<'s>> {
        match rec.kind.load(Ordering::Acquire) {
            KIND_STATIC => Some(FrameLink::Static(&rec.static_slot)),
            KIND_DYNAMIC => self.ring(rec).ok()?.map(FrameLink::Dynamic),
            _ => None,
        }
    }

    /// tf2's `getData` (or `getParent`, see [`LinkRead`]) for `id` at `time` (0: newest) in
    /// clear generation `generation`: `Some(Err(()))` when the link exists but cannot answer at
    /// `time` (tf2's errors, parent 0); `None` for a frame without cache, a dynamic frame
    /// without a ring, a damaged record, a link that stays contended, or a static slot that
    /// raced its writer (one attempt).
    // Always inlined: each caller passes a constant `read`, and the hot path must not pay
    // for the choice.
    #[inline(always)]
    pub(crate) fn link_sample(
        &self,
        id: FrameId,
        generation: u64,
        time: i64,
        read: LinkRead,
    ) -> Option<Result<Sample, ()>> {
        let s = match self.frame_link(id)? {
            // tf2's StaticCache answers any time with the requested stamp.
            FrameLink::Static(slot) => Sample {
                stamp: time,
                ..ring::try_read_slot(slot)?
            },
            FrameLink::Dynamic(r) => match ring::read_bracket(r, generation, time) {
                Some((older, newer)) => match read {
                    LinkRead::Parent => older,
                    LinkRead::Tf2Slerp => from_bracket(&older, &newer, time, slerp_tf2),
                    LinkRead::SeriesSlerp => from_bracket(&older, &newer, time, slerp),
                },
                // Time 0 or the newest stamp: the newest sample (the last of equal stamps).
                None => match read_newest_counted(r, generation, time) {
                    Some(s) if time == 0 || s.stamp == time => s,
                    _ => {
                        let interpolate = !matches!(read, LinkRead::Parent);
                        match ring::read(r, generation, |h| get_data(h, time, interpolate))? {
                            Ok(s) => s,
                            Err(_) => return Some(Err(())),
                        }
                    }
                },
            },
        };
        Some(if s.parent == NO_FRAME { Err(()) } else { Ok(s) })
    }

    /// `id`'s link at `time` as [`CopyView::link_sample`] reads it with
    /// [`LinkRead::SeriesSlerp`], in the hot case of a lookup: a static link, or a dynamic one
    /// whose history brackets `time` strictly inside it with one parent ([`ring::interpolate_at`])
    /// or whose newest stamp is `time` ([`ring::read_newest`]), read in one attempt. Only the
    /// parent and transform are meaningful. `None` otherwise (the caller then takes `link_sample`, which answers every
    /// case), including a parent id out of range (which the general read reports).
    #[inline(always)]
    fn link_close_fast(&self, id: FrameId, time: i64) -> Option<LinkAt> {
        let rec = self.table.get(id as usize)?;
        let s = match rec.kind.load(Ordering::Acquire) {
            KIND_STATIC => ring::try_read_slot(&rec.static_slot)?,
            KIND_DYNAMIC => {
                let r = self.ring(rec).ok()??;
                let generation = self.clear_generation();
                match ring::interpolate_at(r, generation, time) {
                    Some((parent, transform)) => Sample {
                        stamp: time,
                        parent: FrameId::try_from(parent).ok()?,
                        transform,
                    },
                    // At the newest stamp (time 0 resolves to it): tf2 answers with the
                    // newest sample.
                    None => ring::read_newest(r, generation).filter(|s| s.stamp == time)?,
                }
            }
            // A frame without cache (a root), if it is in the table.
            _ => return (id != NO_FRAME && id < self.count()).then_some(LinkAt::NoCache),
        };
        (s.parent != NO_FRAME && s.parent < self.count()).then_some(LinkAt::Sample(s))
    }

    /// tf2's `getData` (`getParent` with [`LinkRead::Parent`]) for `id` at `time` (0: newest),
    /// as [`FrameStore::link_at`] answers it: the one link reader with its fast reads answers
    /// the common case; a snapshot read answers the rest with tf2's error detail (and the
    /// damage checks).
    #[inline(never)]
    fn link_read(&self, id: FrameId, time: i64, read: LinkRead) -> Result<LinkAt, ArenaError> {
        if let Some(Ok(s)) = self.link_sample(id, self.clear_generation(), time, read) {
            return Ok(LinkAt::Sample(self.check_parent(s)?));
        }
        let interpolate = !matches!(read, LinkRead::Parent);
        let rec = self.record(id)?;
        match rec.kind.load(Ordering::Acquire) {
            KIND_STATIC => {
                let s =
                    try_read_slot(&rec.static_slot).ok_or(ArenaError::Contended { frame: id })?;
                // tf2's StaticCache answers any time with the requested stamp.
                Ok(LinkAt::Sample(
                    self.check_parent(Sample { stamp: time, ..s })?,
                ))
            }
            KIND_DYNAMIC => {
                // Tf2's slerp: the general read is not the hot path, and a snapshot's
                // answer is tf2's own.
                match self.with_history(id, rec, |h| get_data(h, time, interpolate))? {
                    None => Ok(LinkAt::Failed(CacheError::NoData { time })),
                    Some(Ok(s)) => Ok(LinkAt::Sample(self.check_parent(s)?)),
                    Some(Err(e)) => Ok(LinkAt::Failed(e)),
                }
            }
            _ => Ok(LinkAt::NoCache),
        }
    }

    /// tf2's `getLatestTimeAndParent` for a frame with a non-empty cache, with the sample
    /// itself; `None` for anything else (an empty cache is tf2's parent 0).
    pub(crate) fn newest(&self, id: FrameId, generation: u64) -> Option<Newest> {
        let n = match self.frame_link(id)? {
            FrameLink::Static(slot) => Newest {
                sample: Sample {
                    stamp: 0,
                    ..ring::try_read_slot(slot)?
                },
            },
            FrameLink::Dynamic(r) => {
                let s = match ring::read_newest(r, generation) {
                    Some(s) => s,
                    None => ring::read(r, generation, |h| {
                        declined(|d| &mut d.newest);
                        (!h.is_empty()).then(|| h.sample(h.len() - 1))
                    })??,
                };
                Newest { sample: s }
            }
        };
        (n.sample.parent != NO_FRAME).then_some(n)
    }

    /// [`ArenaView::frame_history`] in this copy.
    fn frame_history(&self, id: FrameId) -> Result<FrameHistory, ArenaError> {
        let rec = self.record(id)?;
        match rec.kind.load(Ordering::Acquire) {
            KIND_DYNAMIC => {}
            KIND_STATIC => {
                let s =
                    try_read_slot(&rec.static_slot).ok_or(ArenaError::Contended { frame: id })?;
                return Ok(FrameHistory {
                    samples: vec![self.check_parent(s)?],
                    ..FrameHistory::default()
                });
            }
            _ => return Ok(FrameHistory::default()),
        }
        let read = self.with_history(id, rec, |h| {
            let samples = (0..h.len()).map(|i| h.sample(i)).collect::<Vec<_>>();
            (samples, Some(h.inserted()), h.generation())
        })?;
        let (samples, inserted, generation) = read.unwrap_or_default();
        Ok(FrameHistory {
            samples: samples
                .into_iter()
                .map(|s| self.check_parent(s))
                .collect::<Result<_, _>>()?,
            inserted,
            generation,
        })
    }

    /// [`ArenaView::frame_history_since`] in this copy.
    fn frame_history_since(
        &self,
        id: FrameId,
        inserted: u64,
        newest: i64,
    ) -> Result<HistorySince, ArenaError> {
        let rec = self.record(id)?;
        if rec.kind.load(Ordering::Acquire) == KIND_DYNAMIC {
            let read = self.with_history(id, rec, |h| {
                // `k` samples were stored since. Those with a stamp after `newest` are all new;
                // when the `k` newest are, they are the `k` (none landed among older stamps,
                // none was dropped).
                let k = usize::try_from(h.inserted().checked_sub(inserted)?).ok()?;
                let first = h.len().checked_sub(k)?;
                if k > 0 && h.stamp(first) <= newest {
                    return None;
                }
                let samples = (first..h.len()).map(|i| h.sample(i)).collect::<Vec<_>>();
                let oldest = if h.is_empty() { i64::MIN } else { h.stamp(0) };
                Some((samples, h.inserted(), h.generation(), oldest, h.len()))
            })?;
            if let Some(Some((samples, inserted, generation, oldest, len))) = read {
                let history = FrameHistory {
                    samples: samples
                        .into_iter()
                        .map(|s| self.check_parent(s))
                        .collect::<Result<_, _>>()?,
                    inserted: Some(inserted),
                    generation,
                };
                return Ok(HistorySince::Newest {
                    history,
                    oldest,
                    len,
                });
            }
            declined(|d| &mut d.history_since);
        }
        self.frame_history(id).map(HistorySince::Whole)
    }
}

impl ArenaView {
    // ---- tf2's queries (see `walk` for what each reproduces) ----

    /// [`ArenaView::lookup_transform`] for hot loops: the pair's names are resolved to frame
    /// ids on first use (and again only if the pair was last used with another arena), so
    /// repeated lookups do no string work. The answer is tf2's walk's on those ids
    /// ([`crate::walk::lookup_transform_ids`]), the same code and the same bits as
    /// [`ArenaView::lookup_transform`]; at time 0, the pair's kept answer while no link of
    /// its chain changed since it was read (see [`FramePair`]). The first lookup of a pair in
    /// an arena may allocate; later ones do not.
    ///
    /// Returns the stamp (ns; as `lookup_transform`) and `T_target_source`.
    /// Errors: exactly those of [`crate::walk::lookup_transform`].
    #[inline]
    pub fn lookup_pair(
        &self,
        pair: &mut FramePair,
        time: i64,
    ) -> Result<(i64, Transform), TransformError> {
        // `crate::moment::read`, written out: the answer is made in the return slot.
        let latch = &self.header().latch;
        let start = crate::moment::Start::now(latch);
        let answer = crate::pair::lookup(&self.copy(start.latch()), pair, time);
        if start.holds(latch) {
            return answer;
        }
        drop(answer);
        crate::moment::read_again(latch, &mut |k| {
            crate::pair::lookup(&self.copy(k), pair, time)
        })
    }

    /// tf2's `lookupTransform(target, source, time)`: `T_target_source` at `time` ns (0 =
    /// latest common time). See [`crate::walk::lookup_transform`] for errors.
    ///
    /// Goes through a [`FramePair`] this thread keeps for the two names (see
    /// [`ArenaView::lookup_pair`]): after the first call for a name pair on a thread, a lookup
    /// by name costs a few word compares of the names more than a pair the caller keeps (names
    /// longer than 16 bytes are also compared in full), and allocates nothing.
    #[inline]
    pub fn lookup_transform<'a>(
        &self,
        target: &'a str,
        source: &'a str,
        time: i64,
    ) -> Result<TransformStamped<'a>, TransformError> {
        BufferCore::lookup_transform(self, target, source, time)
    }

    /// tf2's two-time `lookupTransform(target, target_time, source, source_time, fixed)`.
    pub fn lookup_transform_full<'a>(
        &self,
        target: &'a str,
        target_time: i64,
        source: &'a str,
        source_time: i64,
        fixed: &str,
    ) -> Result<TransformStamped<'a>, TransformError> {
        BufferCore::lookup_transform_full(self, target, target_time, source, source_time, fixed)
    }

    /// tf2's `canTransform(target, source, time)`; the error carries canTransform's text.
    pub fn can_transform(
        &self,
        target: &str,
        source: &str,
        time: i64,
    ) -> Result<(), TransformError> {
        BufferCore::can_transform(self, target, source, time)
    }

    /// tf2's two-time `canTransform`.
    pub fn can_transform_full(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
    ) -> Result<(), TransformError> {
        BufferCore::can_transform_full(self, target, target_time, source, source_time, fixed)
    }

    /// tf2's `getLatestCommonTime(target, source)`, ns.
    pub fn get_latest_common_time(
        &self,
        target: &str,
        source: &str,
    ) -> Result<i64, TransformError> {
        BufferCore::get_latest_common_time(self, target, source)
    }

    /// The samples frame `id` holds, for tools that copy the arena out: a dynamic frame's
    /// history oldest first, as one consistent snapshot; a static frame's one sample with the
    /// stamp it was set with; nothing for a frame without cache. See
    /// [`ArenaView::frame_history`] for the count of samples that goes with a snapshot.
    ///
    /// Errors: [`ArenaError`] when the record or ring is damaged or a writer keeps racing the
    /// read ([`ArenaError::Contended`]).
    pub fn frame_samples(&self, id: FrameId) -> Result<Vec<Sample>, ArenaError> {
        self.frame_history(id).map(|h| h.samples)
    }

    /// [`ArenaView::frame_samples`] with, for a dynamic frame, how many samples its history
    /// was ever given as of that same snapshot ([`FrameHistory::inserted`]): what a recorder
    /// (`tf_shm record`) needs to count exactly the samples it never saw.
    ///
    /// Errors: as [`ArenaView::frame_samples`].
    pub fn frame_history(&self, id: FrameId) -> Result<FrameHistory, ArenaError> {
        self.in_one_moment(|c| c.frame_history(id))
    }

    /// What frame `id` stored since a reader saw its history with `inserted` insertions
    /// ([`FrameHistory::inserted`]) and newest stamp `newest` (ns; `i64::MIN` for an empty
    /// one), in one snapshot: only those samples when they are the history's newest (samples
    /// arriving in stamp order, the common case: a follower of the arena then copies what is
    /// new, not the whole cache time of history), else the whole history
    /// ([`HistorySince`]; [`crate::fast_path::Declines::history_since`] counts the latter).
    ///
    /// Errors: as [`ArenaView::frame_samples`].
    pub fn frame_history_since(
        &self,
        id: FrameId,
        inserted: u64,
        newest: i64,
    ) -> Result<HistorySince, ArenaError> {
        self.in_one_moment(|c| c.frame_history_since(id, inserted, newest))
    }

    /// tf2's `allFramesAsString()`.
    pub fn all_frames_as_string(&self) -> Result<String, ArenaError> {
        BufferCore::all_frames_as_string(self)
    }

    /// tf2's `allFramesAsYAML(now)`; `now` in ns.
    pub fn all_frames_as_yaml(&self, now: i64) -> Result<String, ArenaError> {
        BufferCore::all_frames_as_yaml(self, now)
    }
}

/// tf2's `TimeCache` reads of one copy: what every query of an [`ArenaView`] runs on.
impl FrameStore for CopyView<'_> {
    type Moment<'m>
        = Self
    where
        Self: 'm;

    /// Already one moment: a copy is made inside the view's (or for one call).
    #[inline(always)]
    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        query(self)
    }

    fn cache_time_ns(&self) -> i64 {
        self.view.geo.cache_time_ns
    }

    #[inline(always)]
    fn instance(&self) -> Option<[u8; 16]> {
        Some(self.view.identity.instance_uuid)
    }

    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        #[cfg(all(test, not(loom)))]
        crate::moment_interleavings::reader_step();
        let count = self.frame_count();
        let index = self
            .view
            .region
            .u32s(
                self.view.geo.index_off,
                self.view.geo.index_capacity as usize,
            )
            .ok_or(ArenaError::Corrupt { what: "index" })?;
        for entry in names::probe(index, names::hash(name.as_bytes())) {
            let id = entry.load(Ordering::Relaxed);
            if id == 0 {
                return Ok(None);
            }
            if id >= count {
                // Published after our frame count load, or damaged: not visible to us.
                continue;
            }
            let rec = self.record(id)?;
            let (words, len) = self.name_words(rec.name.load(Ordering::Relaxed))?;
            if len == name.len() && names::equals(words, name.as_bytes()) {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        if id == 0 || id >= self.frame_count() {
            return Ok(None);
        }
        let rec = self.record(id)?;
        let (words, len) = self.name_words(rec.name.load(Ordering::Relaxed))?;
        names::read(words, len).map(Some).ok_or(CORRUPT_NAME)
    }

    #[inline(always)]
    fn frame_count(&self) -> FrameId {
        self.count()
    }

    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        #[cfg(all(test, not(loom)))]
        crate::moment_interleavings::reader_step();
        let read = if interpolate {
            LinkRead::Tf2Slerp
        } else {
            LinkRead::Parent
        };
        self.link_read(id, time, read)
    }

    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError> {
        let rec = self.record(id)?;
        // Pruning never removes the newest sample; hiding samples (a clear) may.
        if rec.kind.load(Ordering::Acquire) != KIND_DYNAMIC
            || (time == 0 && limit.newer_than == i64::MIN)
        {
            return self.link_at(id, time, interpolate);
        }
        let read = |h: &ring::Snapshot<'_>| {
            crate::cache_limit::get_data_within(h, time, interpolate, limit)
        };
        match self.with_history(id, rec, read)? {
            None => Ok(LinkAt::Failed(CacheError::NoData { time })),
            Some(Ok(s)) => Ok(LinkAt::Sample(self.check_parent(s)?)),
            Some(Err(e)) => Ok(LinkAt::Failed(e)),
        }
    }

    #[inline(always)]
    fn link_at_close(&self, id: FrameId, time: i64) -> Result<LinkAt, ArenaError> {
        #[cfg(all(test, not(loom)))]
        crate::moment_interleavings::reader_step();
        if time != 0 {
            if let Some(link) = self.link_close_fast(id, time) {
                return Ok(link);
            }
            declined(|d| &mut d.fused_link);
        }
        self.link_read(id, time, LinkRead::SeriesSlerp)
    }

    #[inline(always)]
    fn latest_link(&self, id: FrameId) -> Result<Option<LatestLink>, ArenaError> {
        #[cfg(all(test, not(loom)))]
        crate::moment_interleavings::reader_step();
        // One record read, one attempt at the newest sample; anything else (an empty or
        // contended ring, a damaged record) is `latest_time_and_parent`'s.
        let rec = self.record(id)?;
        let newest = match rec.kind.load(Ordering::Acquire) {
            // A frame without cache (a root): no link.
            KIND_NONE => return Ok(None),
            KIND_STATIC => ring::try_read_slot(&rec.static_slot).map(|s| (s, true)),
            KIND_DYNAMIC => match self.ring(rec)? {
                Some(r) => ring::read_newest(r, self.clear_generation()).map(|s| (s, false)),
                None => None,
            },
            _ => None,
        };
        if let Some((s, is_static)) = newest.filter(|(s, _)| s.parent != NO_FRAME) {
            let s = self.check_parent(s)?;
            return Ok(Some(LatestLink {
                // tf2's latest time of a static link is 0.
                stamp: if is_static { 0 } else { s.stamp },
                parent: s.parent,
                transform: Some(s.transform),
                is_static,
            }));
        }
        Ok(self
            .latest_time_and_parent(id)?
            .map(|(stamp, parent)| LatestLink::without_transform(stamp, parent)))
    }

    /// The record's count of changes (`FrameRecord::changes`): the writer adds to it with
    /// release ordering after each change is visible.
    #[inline(always)]
    fn link_version(&self, id: FrameId) -> Option<u64> {
        self.record(id)
            .ok()
            .map(|rec| rec.changes.load(Ordering::Acquire))
    }

    /// One load per frame (the table was bounds-checked with the copy).
    #[inline(always)]
    fn links_unchanged(&self, frames: &[FrameId], versions: &[u64]) -> bool {
        frames.iter().zip(versions).all(|(&f, &v)| {
            self.table
                .get(f as usize)
                .is_some_and(|rec| rec.changes.load(Ordering::Acquire) == v)
        })
    }

    /// The header's clear count (`clear()` adds to it with release ordering).
    #[inline(always)]
    fn store_version(&self) -> Option<u64> {
        Some(self.clear_generation())
    }

    /// The latch unchanged since the copy was chosen: the writer has not touched it since
    /// (`crate::moment::Start::holds`).
    #[inline(always)]
    fn read_is_whole(&self) -> bool {
        crate::moment::Start::at(self.latch).holds(&self.view.header().latch)
    }

    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        #[cfg(all(test, not(loom)))]
        crate::moment_interleavings::reader_step();
        if let Some(n) = self.newest(id, self.clear_generation()) {
            return Ok(Some((n.sample.stamp, self.check_parent(n.sample)?.parent)));
        }
        let rec = self.record(id)?;
        match rec.kind.load(Ordering::Acquire) {
            KIND_STATIC => {
                let s =
                    try_read_slot(&rec.static_slot).ok_or(ArenaError::Contended { frame: id })?;
                Ok(Some((0, self.check_parent(s)?.parent)))
            }
            KIND_DYNAMIC => {
                let newest =
                    self.with_history(id, rec, |h| (!h.is_empty()).then(|| h.sample(h.len() - 1)))?;
                match newest.flatten() {
                    None => Ok(Some((0, 0))),
                    Some(s) => {
                        let s = self.check_parent(s)?;
                        Ok(Some((s.stamp, s.parent)))
                    }
                }
            }
            _ => Ok(None),
        }
    }

    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        Ok(self.record(id)?.kind.load(Ordering::Acquire) == KIND_STATIC)
    }

    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        self.history_span_within(id, HistoryLimit::NONE)
    }

    fn history_span_within(
        &self,
        id: FrameId,
        limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError> {
        let rec = self.record(id)?;
        if rec.kind.load(Ordering::Acquire) != KIND_DYNAMIC {
            return Ok(None);
        }
        let span = self.with_history(id, rec, |h| {
            let h = &crate::cache_limit::Pruned::new(h, limit);
            (!h.is_empty()).then(|| HistorySpan {
                oldest: h.stamp(0),
                newest: h.stamp(h.len() - 1),
                len: h.len(),
            })
        })?;
        Ok(span.flatten())
    }

    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        let r = self.record(id)?.authority.load(Ordering::Relaxed);
        if r == 0 {
            return Ok(None);
        }
        let (words, len) = self.name_words(r)?;
        names::read(words, len).map(Some).ok_or(CORRUPT_NAME)
    }
}

/// Each call reads the copy the latch names when it is made; a query that makes several calls
/// runs them in [`FrameStore::in_one_moment`], on one [`CopyView`].
impl FrameStore for ArenaView {
    type Moment<'m> = CopyView<'m>;

    /// One moment of the arena's writer (`crate::moment`): the query runs on the copy the
    /// latch names at its start, and again (on the copy then named) until the latch held.
    #[inline(always)]
    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        crate::moment::read(&self.header().latch, |k| query(&self.copy(k)))
    }

    fn cache_time_ns(&self) -> i64 {
        self.geo.cache_time_ns
    }

    #[inline(always)]
    fn instance(&self) -> Option<[u8; 16]> {
        Some(self.identity.instance_uuid)
    }

    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        self.copy_now().frame_id(name)
    }

    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.copy_now().frame_name(id)
    }

    #[inline(always)]
    fn frame_count(&self) -> FrameId {
        self.copy_now().frame_count()
    }

    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        self.copy_now().link_at(id, time, interpolate)
    }

    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError> {
        self.copy_now().link_at_within(id, time, interpolate, limit)
    }

    fn link_at_close(&self, id: FrameId, time: i64) -> Result<LinkAt, ArenaError> {
        self.copy_now().link_at_close(id, time)
    }

    fn latest_link(&self, id: FrameId) -> Result<Option<LatestLink>, ArenaError> {
        self.copy_now().latest_link(id)
    }

    fn link_version(&self, id: FrameId) -> Option<u64> {
        self.copy_now().link_version(id)
    }

    fn links_unchanged(&self, frames: &[FrameId], versions: &[u64]) -> bool {
        self.copy_now().links_unchanged(frames, versions)
    }

    fn store_version(&self) -> Option<u64> {
        self.copy_now().store_version()
    }

    /// Each call reads the copy the latch names at it: several are not known to be one.
    fn read_is_whole(&self) -> bool {
        false
    }

    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        self.copy_now().latest_time_and_parent(id)
    }

    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        self.copy_now().is_static(id)
    }

    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        self.copy_now().history_span(id)
    }

    fn history_span_within(
        &self,
        id: FrameId,
        limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError> {
        self.copy_now().history_span_within(id, limit)
    }

    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.copy_now().authority(id)
    }
}
