//! [`CacheLimited`]: a store answering as a tf2 buffer whose cache time is shorter than the
//! arena's (a consumer that asked for less history than the bridge keeps, e.g. tf2_ros's
//! `Buffer(cache_time=Duration(seconds=1))`).
//!
//! tf2 (`TimeCache::insertData`, ROS 2 Jazzy) prunes before each insert, against the newest
//! stamp held before that insert: samples with `stamp + cache_time < latest` are dropped. For a
//! frame whose samples arrived in time order, the newest stamp before the last insert is the
//! second newest stamp, so such a buffer holds the newest sample and every older one with
//! `stamp + cache_time ≥ second newest` ([`Pruned`]); a lookup before those raises tf2's
//! extrapolation error with the oldest kept stamp, as that buffer would. (A frame whose last
//! sample arrived out of order may have been pruned against its newest stamp instead; the arena
//! does not keep arrival order, so this takes the in-order case.)

use crate::error::ArenaError;
use crate::history::get_data;
use crate::sample::{FrameId, Sample};
use crate::store::{CacheError, FrameStore, History, HistorySpan, LinkAt};

/// A history without the oldest samples a tf2 cache of `cache_time_ns` would have pruned.
pub(crate) struct Pruned<'h, H: History + ?Sized> {
    inner: &'h H,
    skip: usize,
}

impl<'h, H: History + ?Sized> Pruned<'h, H> {
    pub(crate) fn new(inner: &'h H, cache_time_ns: i64) -> Pruned<'h, H> {
        let n = inner.len();
        let mut skip = 0;
        if n >= 2 {
            let latest_before_last = i128::from(inner.stamp(n - 2));
            while skip < n - 1
                && i128::from(inner.stamp(skip)) + i128::from(cache_time_ns) < latest_before_last
            {
                skip += 1;
            }
        }
        Pruned { inner, skip }
    }
}

impl<H: History + ?Sized> History for Pruned<'_, H> {
    fn len(&self) -> usize {
        self.inner.len() - self.skip
    }
    fn stamp(&self, i: usize) -> i64 {
        self.inner.stamp(i + self.skip)
    }
    fn sample(&self, i: usize) -> Sample {
        self.inner.sample(i + self.skip)
    }
}

/// tf2's `getData` / `getParent` on `h` as a cache of `cache_time_ns` holds it.
pub(crate) fn get_data_within<H: History + ?Sized>(
    h: &H,
    time: i64,
    interpolate: bool,
    cache_time_ns: i64,
) -> Result<Sample, CacheError> {
    get_data(&Pruned::new(h, cache_time_ns), time, interpolate)
}

/// `inner` answering as a tf2 buffer of `cache_time_ns` (shorter than the arena's; a longer one
/// changes nothing: the arena has pruned what it has pruned). Every query goes through tf2's
/// walk over [`FrameStore::link_at_within`]; the arena's fast paths and kept time-0 answers
/// are not used (they read the unpruned history).
pub struct CacheLimited<'a, S: FrameStore> {
    inner: &'a S,
    cache_time_ns: i64,
}

impl<'a, S: FrameStore> CacheLimited<'a, S> {
    /// `inner` with tf2's cache time `cache_time_ns` (ns, > 0).
    pub fn new(inner: &'a S, cache_time_ns: i64) -> CacheLimited<'a, S> {
        CacheLimited {
            inner,
            cache_time_ns,
        }
    }
}

impl<S: FrameStore> FrameStore for CacheLimited<'_, S> {
    fn in_one_moment<R>(&self, mut query: impl FnMut(&Self) -> R) -> R {
        self.inner.in_one_moment(|_| query(self))
    }
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        self.inner.frame_id(name)
    }
    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.inner.frame_name(id)
    }
    fn frame_count(&self) -> FrameId {
        self.inner.frame_count()
    }
    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        self.inner
            .link_at_within(id, time, interpolate, self.cache_time_ns)
    }
    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        // The newest sample is never pruned.
        self.inner.latest_time_and_parent(id)
    }
    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        self.inner.is_static(id)
    }
    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        self.inner.history_span(id)
    }
    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.inner.authority(id)
    }
    fn cache_time_ns(&self) -> i64 {
        self.cache_time_ns.min(self.inner.cache_time_ns())
    }
}
