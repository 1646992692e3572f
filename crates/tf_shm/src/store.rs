//! What tf2's walk needs from a frame store, and nothing more.
//!
//! The walk (`walk.rs`) is written once against [`FrameStore`]; the arena view implements it
//! over shared memory, tests may implement it over plain vectors. The per-frame read
//! (`TimeCache::getData` / `getParent`) is shared too: a store exposes a frame's history as a
//! [`History`] and calls [`crate::history::get_data`].

use crate::error::ArenaError;
use crate::sample::{FrameId, Sample, Transform};

pub use crate::error::CacheError;

/// A frame's link at one time, as the walk sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinkAt {
    /// The frame has no cache (only ever seen as a parent): the walk treats it as a root.
    NoCache,
    /// The link at that time. `stamp` is the sample's (static: the requested time).
    /// With `interpolate == false` only `parent` is meaningful (tf2's `getParent`).
    Sample(Sample),
    /// The cache exists but cannot answer at that time.
    Failed(CacheError),
}

/// A frame store as tf2's `BufferCore` sees its frames. Every method may report a damaged
/// arena instead of answering; it never panics on bad shared data.
pub trait FrameStore {
    /// Id of `name`, or `None` when the frame is unknown. `name` is matched exactly.
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError>;
    /// Name of `id`, or `None` for an id not in the table (including [`crate::NO_FRAME`]).
    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError>;
    /// One past the highest frame id (ids are `1..frame_count()`).
    fn frame_count(&self) -> FrameId;
    /// tf2's `getData` (`interpolate`) or `getParent` (`!interpolate`) for `id` at `time` ns;
    /// `time == 0` means the newest sample.
    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError>;
    /// tf2's `getLatestTimeAndParent`: `None` when the frame has no cache; `(0, NO_FRAME)` for
    /// an empty time cache; `(0, parent)` for a static frame; else the newest sample's stamp and
    /// parent.
    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError>;
    /// Whether `id` is a static frame (for `all_frames_as_yaml`/listings).
    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError>;
    /// Oldest and newest stamp and sample count of a dynamic frame's history (listings and
    /// `all_frames_as_yaml`); `None` for frames without a time cache or with an empty one.
    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError>;
    /// The authority (publisher) recorded with the frame's newest sample, if any.
    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError>;
    /// Runs `query` on one state of this store ([`FrameStore::Moment`]), as
    /// tf2's `BufferCore` under its mutex: for a store a writer fills while it is read (an arena),
    /// one moment of that writer, reading again when a run overlapped one being made
    /// (`crate::moment`); for a store nobody writes while it is read, `query(self)`. Every tf2
    /// query ([`crate::queries::BufferCore`], [`crate::ArenaView::lookup_pair`]) runs inside
    /// it. Required, so that no wrapper can drop it: a wrapper runs its inner store's.
    fn in_one_moment<'s, R>(&'s self, query: impl FnMut(&Self::Moment<'s>) -> R) -> R
    where
        Self: Sized;
    /// The store [`FrameStore::in_one_moment`] runs a query on: one state of this store (an
    /// arena view's: the copy its latch named, [`crate::view::CopyView`]); `Self` for a store
    /// whose own calls are that state (nobody writes it, or a wrapper whose inner store chose
    /// it).
    type Moment<'m>: FrameStore
    where
        Self: 'm;
    /// tf2's cache time (`getCacheLength`), ns ([`DEFAULT_CACHE_TIME_NS`] for a store without
    /// its own).
    fn cache_time_ns(&self) -> i64;
    /// The store instance whose frame ids a [`crate::FramePair`] may keep (an arena's
    /// instance uuid: ids never change within it); `None` for a store whose answers are not
    /// those of one instance's ids (a wrapper that changes them, a handover of two arenas),
    /// whose pairs resolve their names on every call.
    fn instance(&self) -> Option<[u8; 16]>;
    /// [`FrameStore::link_at`] as a tf2 cache holds the frame's history under `limit` (a
    /// shorter cache time, samples hidden by a buffer's `clear()`; see [`crate::cache_limit`]);
    /// a store without its own history rings (the handover store of a restart) may ignore it.
    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError>;
    /// [`FrameStore::history_span`] of the history a tf2 cache holds under `limit` (see
    /// [`FrameStore::link_at_within`]).
    fn history_span_within(
        &self,
        id: FrameId,
        limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError>;
    /// tf2's `getData` for `id` at `time` as the walk composes lookups: [`FrameStore::link_at`]
    /// with interpolation, or a faster read whose interpolation equals tf2's up to rounding
    /// (an arena view: a series slerp between close rotations, in one attempt when no writer
    /// is in the way). Only the returned sample's parent and transform are used. The walk
    /// takes tf2's slerp itself wherever rounding could show (`walk::lookup_at`).
    fn link_at_close(&self, id: FrameId, time: i64) -> Result<LinkAt, ArenaError>;
    /// [`FrameStore::latest_time_and_parent`] with the newest sample's transform where the
    /// store reads it anyway (an arena view), so that a lookup at time 0 reuses the links
    /// whose newest sample is the answer at the latest common time instead of reading them
    /// again. `None` as `latest_time_and_parent`; a store without the transform at hand gives
    /// [`LatestLink::without_transform`].
    fn latest_link(&self, id: FrameId) -> Result<Option<LatestLink>, ArenaError>;
    /// A count that changes with every change to frame `id`'s link (each sample stored for the
    /// frame, a kind switch, the frame's first sample, a history pruned by a sample that was
    /// then not stored), read with acquire ordering: the store
    /// changes it only after the change is visible to reads. With [`FrameStore::store_version`]
    /// this lets a caller keep a time-0 answer and give it again while nothing it was read from
    /// changed (see [`crate::FramePair`]). `None` when the store keeps no such count: no
    /// answer is kept.
    fn link_version(&self, id: FrameId) -> Option<u64>;
    /// Whether [`FrameStore::link_version`] of each of `frames` is the matching one of
    /// `versions` (equal lengths), loaded with its ordering; what a kept answer checks on every
    /// call, so a store may do it faster than one frame at a time.
    fn links_unchanged(&self, frames: &[FrameId], versions: &[u64]) -> bool;
    /// A count that changes with every change that is not one frame's (tf2's `clear()`), with
    /// the ordering of [`FrameStore::link_version`]; `None` as there.
    fn store_version(&self) -> Option<u64>;
    /// Whether everything read from this store since its moment began
    /// ([`FrameStore::in_one_moment`]) is one state of it: an arena copy whose latch has not
    /// moved since the copy was chosen (`crate::moment`). A time-0 answer is kept only when
    /// it holds, so that a read the writer overtook, which its moment will read again, leaves
    /// nothing behind. `true` for a store nobody writes while it is read; `false` for one
    /// whose calls are not one state together (an arena view outside a moment).
    fn read_is_whole(&self) -> bool;
}

/// tf2's `getLatestTimeAndParent` for a frame with a cache, with the newest sample's transform
/// when the store has it at hand ([`FrameStore::latest_link`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatestLink {
    /// The newest stamp, ns; 0 for a static frame or an empty cache.
    pub stamp: i64,
    /// The newest sample's parent; [`crate::NO_FRAME`] for an empty cache.
    pub parent: FrameId,
    /// The newest sample's transform, which is the link at `stamp` (at any time for a
    /// static); `None` when the store does not give it.
    pub transform: Option<Transform>,
    /// Whether the frame is static (its transform answers at any time).
    pub is_static: bool,
}

/// The five [`FrameStore`] methods of a store without an arena's fast reads, written once:
/// `link_at_close` is [`FrameStore::link_at`] with tf2's interpolation, `latest_link` is
/// [`FrameStore::latest_time_and_parent`] without the transform
/// ([`LatestLink::without_transform`]), and no change counts (`link_version`,
/// `store_version` `None`, `links_unchanged` false), so no time-0 answer is kept. Invoked
/// inside the store's `impl FrameStore` block: the methods stay required, so a store that
/// neither writes them nor invokes this does not compile.
#[macro_export]
macro_rules! store_without_fast_reads {
    () => {
        fn link_at_close(
            &self,
            id: $crate::FrameId,
            time: i64,
        ) -> ::std::result::Result<$crate::store::LinkAt, $crate::ArenaError> {
            $crate::store::FrameStore::link_at(self, id, time, true)
        }
        fn latest_link(
            &self,
            id: $crate::FrameId,
        ) -> ::std::result::Result<
            ::std::option::Option<$crate::store::LatestLink>,
            $crate::ArenaError,
        > {
            ::std::result::Result::Ok(
                $crate::store::FrameStore::latest_time_and_parent(self, id)?.map(
                    |(stamp, parent)| $crate::store::LatestLink::without_transform(stamp, parent),
                ),
            )
        }
        fn link_version(&self, _id: $crate::FrameId) -> ::std::option::Option<u64> {
            ::std::option::Option::None
        }
        fn links_unchanged(&self, _frames: &[$crate::FrameId], _versions: &[u64]) -> bool {
            false
        }
        fn store_version(&self) -> ::std::option::Option<u64> {
            ::std::option::Option::None
        }
        fn read_is_whole(&self) -> bool {
            // No answer is kept without counts.
            true
        }
    };
}

impl LatestLink {
    /// `getLatestTimeAndParent`'s answer alone (not known to be static).
    pub fn without_transform(stamp: i64, parent: FrameId) -> LatestLink {
        LatestLink {
            stamp,
            parent,
            transform: None,
            is_static: false,
        }
    }

    /// The link's transform at `time` when this newest sample is it (tf2's `getData` at the
    /// newest stamp returns the newest sample; a static answers any time).
    #[inline]
    pub fn at(&self, time: i64) -> Option<Transform> {
        if self.is_static || self.stamp == time {
            self.transform
        } else {
            None
        }
    }
}

/// How much of a frame's history a buffer's own tf2 cache holds ([`FrameStore::link_at_within`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryLimit {
    /// tf2's cache time, ns (`i64::MAX`: no limit beyond the arena's).
    pub cache_time_ns: i64,
    /// Only samples stamped after this, ns, are held (`i64::MIN`: all): what the buffer's
    /// `clear()` left, see [`crate::cache_limit::ClearMark`].
    pub newer_than: i64,
}

impl HistoryLimit {
    /// No limit: the arena's history as it is.
    pub const NONE: HistoryLimit = HistoryLimit {
        cache_time_ns: i64::MAX,
        newer_than: i64::MIN,
    };

    /// A tf2 cache of `cache_time_ns`, never cleared.
    pub fn cache_time(cache_time_ns: i64) -> HistoryLimit {
        HistoryLimit {
            cache_time_ns,
            newer_than: i64::MIN,
        }
    }
}

/// tf2's `BufferCore::DEFAULT_CACHE_TIME`, ns.
pub const DEFAULT_CACHE_TIME_NS: i64 = 10_000_000_000;

/// Extent of a dynamic frame's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistorySpan {
    /// Stamp of the oldest sample, ns.
    pub oldest: i64,
    /// Stamp of the newest sample, ns.
    pub newest: i64,
    /// Number of samples.
    pub len: usize,
}

/// A frame's time-sorted history, oldest first (index 0), as one consistent snapshot.
///
/// Samples with equal stamps keep their arrival order (earlier arrival at the lower index),
/// which is how tf2 ROS 2 orders them (docs/tf2-semantics.md §2.1). Implementations over shared memory may
/// return garbage for a snapshot a writer is racing with; they detect that afterwards and
/// retry, so [`crate::history::get_data`] must stay in bounds for any values (it never indexes
/// outside `0..len()`).
pub trait History {
    /// Number of samples.
    fn len(&self) -> usize;
    /// Whether there are no samples.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Stamp of sample `i` (`i < len()`), ns.
    fn stamp(&self, i: usize) -> i64;
    /// Sample `i` (`i < len()`).
    fn sample(&self, i: usize) -> Sample;
}
