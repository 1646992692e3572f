//! [`CacheLimited`]: a store answering as a tf2 buffer whose cache time is shorter than the
//! arena's (a consumer that asked for less history than the bridge keeps, e.g. tf2_ros's
//! `Buffer(cache_time=Duration(seconds=1))`).
//!
//! tf2 (`TimeCache::insertData`, ROS 2 Jazzy) prunes before each insert, against the newest
//! stamp held before that insert: samples with `stamp + cache_time < latest` are dropped. For a
//! frame whose samples arrived in time order, the newest stamp before the last insert is the
//! second newest stamp, so such a buffer holds the newest sample and every older one with
//! `stamp + cache_time ≥ second newest` (`Pruned`); a lookup before those raises tf2's
//! extrapolation error with the oldest kept stamp, as that buffer would. (A frame whose last
//! sample arrived out of order may have been pruned against its newest stamp instead; the arena
//! does not keep arrival order, so this takes the in-order case.)
//!
//! [`ClearMark`]: what one buffer's tf2 `clear()` leaves (`BufferCore::clear` empties every
//! time cache, `StaticCache::clearList` does nothing). The arena is shared, so a buffer does not
//! erase it: it records, per dynamic frame, the newest stamp at the clear, and from then on
//! holds only samples stamped after it. A sample stored after the clear with a stamp at or
//! before its frame's newest at the clear stays hidden (tf2 would hold it; the arena does not
//! record which samples came after a moment); samples arriving in time order, the usual case,
//! answer as tf2's after the clear and the same inserts.

use crate::error::ArenaError;
use crate::history::get_data;
use crate::sample::{FrameId, Sample, NO_FRAME};
use crate::store::{CacheError, FrameStore, History, HistoryLimit, HistorySpan, LinkAt};

/// A history without the samples a buffer's `clear()` hid and the oldest ones a tf2 cache of
/// its cache time would have pruned from the rest.
pub(crate) struct Pruned<'h, H: History + ?Sized> {
    inner: &'h H,
    skip: usize,
}

impl<'h, H: History + ?Sized> Pruned<'h, H> {
    pub(crate) fn new(inner: &'h H, limit: HistoryLimit) -> Pruned<'h, H> {
        let n = inner.len();
        // The history is sorted by stamp: the hidden samples are a prefix.
        let mut skip = 0;
        while skip < n && inner.stamp(skip) <= limit.newer_than {
            skip += 1;
        }
        if n - skip >= 2 {
            let latest_before_last = i128::from(inner.stamp(n - 2));
            while skip < n - 1
                && i128::from(inner.stamp(skip)) + i128::from(limit.cache_time_ns)
                    < latest_before_last
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

/// tf2's `getData` / `getParent` on `h` as a cache under `limit` holds it.
pub(crate) fn get_data_within<H: History + ?Sized>(
    h: &H,
    time: i64,
    interpolate: bool,
    limit: HistoryLimit,
) -> Result<Sample, CacheError> {
    get_data(&Pruned::new(h, limit), time, interpolate)
}

/// One buffer's tf2 `clear()` on a shared store (see the module doc): per dynamic frame, the
/// newest stamp at the clear. Frames created later, static frames and frames without a cache
/// are not affected. A clear of the store itself (the bridge's, [`FrameStore::store_version`]
/// changed) supersedes the mark: everything it hid is gone anyway.
#[derive(Clone, Debug, Default)]
pub struct ClearMark {
    /// By frame id: samples stamped at or before this are hidden (`i64::MIN`: none).
    newer_than: Vec<i64>,
    /// The same by frame name, to carry the mark to another store ([`ClearMark::rekey`]).
    by_name: Vec<(String, i64)>,
    store_version: Option<u64>,
}

impl ClearMark {
    /// tf2's `clear()` of a buffer reading `store`, taken in one moment of it.
    ///
    /// # Errors
    /// A damaged arena ([`ArenaError`]).
    pub fn take<S: FrameStore>(store: &S) -> Result<ClearMark, ArenaError> {
        store.in_one_moment(|s| {
            let mut mark = ClearMark {
                newer_than: vec![i64::MIN; s.frame_count() as usize],
                by_name: Vec::new(),
                store_version: s.store_version(),
            };
            for id in 1..s.frame_count() {
                if s.is_static(id)? {
                    continue;
                }
                if let Some((stamp, parent)) = s.latest_time_and_parent(id)? {
                    if parent != NO_FRAME {
                        mark.newer_than[id as usize] = stamp;
                        if let Some(name) = s.frame_name(id)? {
                            mark.by_name.push((name, stamp));
                        }
                    }
                }
            }
            Ok(mark)
        })
    }

    /// The same mark on `store` (another arena, after the bridge restarted): by frame name.
    ///
    /// # Errors
    /// A damaged arena ([`ArenaError`]).
    pub fn rekey<S: FrameStore>(&mut self, store: &S) -> Result<(), ArenaError> {
        store.in_one_moment(|s| {
            let mut newer_than = vec![i64::MIN; s.frame_count() as usize];
            for (name, stamp) in &self.by_name {
                if let Some(id) = s.frame_id(name)? {
                    if let Some(slot) = newer_than.get_mut(id as usize) {
                        *slot = *stamp;
                    }
                }
            }
            self.newer_than = newer_than;
            self.store_version = s.store_version();
            Ok(())
        })
    }

    /// Whether the mark still applies to `store` (no clear of the store since).
    fn holds_on<S: FrameStore>(&self, store: &S) -> bool {
        match (self.store_version, store.store_version()) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    }

    /// Samples of `id` stamped at or before this are hidden (`i64::MIN`: none).
    fn newer_than(&self, id: FrameId) -> i64 {
        self.newer_than
            .get(id as usize)
            .copied()
            .unwrap_or(i64::MIN)
    }
}

/// `inner` answering as a tf2 buffer of `cache_time_ns` (shorter than the arena's; a longer one
/// changes nothing: the arena has pruned what it has pruned), and/or as that buffer after its
/// `clear()` ([`ClearMark`]). Every query goes through tf2's walk over
/// [`FrameStore::link_at_within`]; the arena's fast paths and kept time-0 answers are not used
/// (they read the whole history).
pub struct CacheLimited<'a, S: FrameStore> {
    inner: &'a S,
    cache_time_ns: i64,
    cleared: Option<&'a ClearMark>,
}

impl<'a, S: FrameStore> CacheLimited<'a, S> {
    /// `inner` with tf2's cache time `cache_time_ns` (ns; zero and negative prune as tf2's do,
    /// see [`crate::buffer_limits`]).
    pub fn new(inner: &'a S, cache_time_ns: i64) -> CacheLimited<'a, S> {
        CacheLimited {
            inner,
            cache_time_ns,
            cleared: None,
        }
    }

    /// `inner` as a buffer of tf2 cache time `cache_time_ns` (ns, as [`CacheLimited::new`];
    /// `None`: the arena's) after the `clear()` that took `mark`.
    pub fn cleared(
        inner: &'a S,
        cache_time_ns: Option<i64>,
        mark: &'a ClearMark,
    ) -> CacheLimited<'a, S> {
        CacheLimited {
            inner,
            cache_time_ns: cache_time_ns.unwrap_or(i64::MAX),
            cleared: Some(mark),
        }
    }

    /// Samples of `id` stamped at or before this are hidden (`i64::MIN`: none).
    fn newer_than(&self, id: FrameId) -> i64 {
        match self.cleared {
            Some(m) if m.holds_on(self.inner) => m.newer_than(id),
            _ => i64::MIN,
        }
    }

    /// What of `id`'s history this buffer's tf2 cache holds.
    fn limit(&self, id: FrameId) -> HistoryLimit {
        HistoryLimit {
            cache_time_ns: self.cache_time_ns,
            newer_than: self.newer_than(id),
        }
    }

    /// Whether `id`'s newest sample, stamped `stamp`, is hidden by the clear (so are all).
    fn all_hidden(&self, id: FrameId, stamp: i64) -> Result<bool, ArenaError> {
        Ok(stamp <= self.newer_than(id) && !self.inner.is_static(id)?)
    }
}

impl<S: FrameStore> FrameStore for CacheLimited<'_, S> {
    type Moment<'m>
        = Self
    where
        Self: 'm;

    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        self.inner.in_one_moment(|_| query(self))
    }
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        self.inner.frame_id(name)
    }
    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.inner.frame_name(id)
    }
    fn instance(&self) -> Option<[u8; 16]> {
        // Its answers are not the arena's.
        None
    }
    fn frame_count(&self) -> FrameId {
        self.inner.frame_count()
    }
    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        self.inner
            .link_at_within(id, time, interpolate, self.limit(id))
    }
    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        // The newest sample is never pruned; a clear may have hidden it, and with it all:
        // tf2's empty time cache.
        match self.inner.latest_time_and_parent(id)? {
            Some((stamp, _)) if self.all_hidden(id, stamp)? => Ok(Some((0, NO_FRAME))),
            r => Ok(r),
        }
    }
    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        self.inner.is_static(id)
    }
    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        self.inner.history_span_within(id, self.limit(id))
    }
    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.inner.authority(id)
    }
    fn cache_time_ns(&self) -> i64 {
        self.cache_time_ns.min(self.inner.cache_time_ns())
    }
    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        _limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError> {
        // Already limited: no further limit applies.
        self.link_at(id, time, interpolate)
    }
    fn history_span_within(
        &self,
        id: FrameId,
        _limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError> {
        self.history_span(id)
    }
    // Its answers are not the arena's: tf2's slerp, and no answer is kept.
    crate::store_without_fast_reads!();
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::queries::BufferCore;
    use crate::validate::TransformInput;
    use crate::{Arena, ArenaConfig, ArenaView, ArenaWriter};

    const S: i64 = 1_000_000_000;

    fn put(w: &mut ArenaWriter, parent: &str, child: &str, stamp: i64, x: f64, is_static: bool) {
        let input = TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp,
            translation: [x, 0.5 * x, 0.0],
            rotation: [0.0, 0.0, (x * 0.1).sin(), (x * 0.1).cos()],
        };
        w.set_transform(&input, "test", is_static).unwrap();
    }

    fn arena() -> (ArenaWriter, ArenaView) {
        Arena::in_memory(&ArenaConfig {
            max_frames: 16,
            memory_budget_bytes: 1 << 20,
            ..ArenaConfig::default()
        })
        .unwrap()
    }

    const PAIRS: [(&str, &str); 5] = [
        ("map", "laser"),
        ("laser", "map"),
        ("map", "odom"),
        ("odom", "base"),
        ("base", "laser"),
    ];
    const TIMES: [i64; 8] = [
        0,
        S,
        2 * S + S / 2,
        3 * S,
        3 * S + S / 3,
        4 * S,
        5 * S,
        6 * S,
    ];

    /// Every lookup of PAIRS at TIMES, as text (transform or error).
    fn answers<B: BufferCore>(b: &B) -> Vec<String> {
        let mut out = Vec::new();
        for (a, s) in PAIRS {
            for t in TIMES {
                out.push(format!("{a} {s} {t}: {:?}", b.lookup_transform(a, s, t)));
            }
            out.push(format!("{a} {s}: {:?}", b.get_latest_common_time(a, s)));
        }
        out.push(b.all_frames_as_yaml(0).unwrap());
        out
    }

    /// A buffer cleared after some samples answers as one that held only the statics and the
    /// samples after the clear (tf2: `clear()` empties each TimeCache, keeps the StaticCache),
    /// for the lookups whose frames both know; alone and with a shorter cache time. The arena
    /// and every other reader of it are untouched.
    #[test]
    fn a_cleared_buffer_answers_as_one_fed_only_what_came_after() {
        let (mut w, view) = arena();
        let (mut fresh_w, fresh) = arena();
        put(&mut w, "base", "laser", 0, 0.3, true);
        put(&mut fresh_w, "base", "laser", 0, 0.3, true);
        for k in [1, 2] {
            put(&mut w, "map", "odom", k * S, k as f64, false);
            put(&mut w, "odom", "base", k * S, 2.0 * k as f64, false);
        }
        let before = answers(&view);
        let mark = ClearMark::take(&view).unwrap();
        let cleared = CacheLimited::cleared(&view, None, &mark);
        let after_clear = answers(&cleared);
        assert!(
            after_clear[0].contains("Connectivity"),
            "{}",
            after_clear[0]
        );
        assert!(after_clear.iter().any(|a| a.contains("Extrapolation")));
        for k in [3, 4, 5] {
            for w in [&mut w, &mut fresh_w] {
                put(w, "map", "odom", k * S, k as f64, false);
                put(w, "odom", "base", k * S + S / 2, 2.0 * k as f64, false);
            }
        }
        // Both through tf2's own slerp (the arena's fast read may differ in the last bit).
        assert_eq!(
            answers(&cleared),
            answers(&CacheLimited::new(&fresh, i64::MAX))
        );
        let limited = CacheLimited::cleared(&view, Some(S), &mark);
        assert_eq!(answers(&limited), answers(&CacheLimited::new(&fresh, S)));
        // The arena itself, and so every other buffer, still holds the samples before the clear.
        let now = answers(&view);
        assert_eq!(now[1], before[1], "map laser at 1 s");
        assert!(now[1].starts_with("map laser 1000000000: Ok"), "{}", now[1]);
    }

    /// The arena's own clear (the bridge's) ends the buffer's: what arrives after it answers,
    /// even stamped before the frame's newest at the buffer's clear.
    #[test]
    fn the_arenas_clear_supersedes_the_buffers() {
        let (mut w, view) = arena();
        put(&mut w, "map", "odom", 2 * S, 2.0, false);
        let mark = ClearMark::take(&view).unwrap();
        let cleared = CacheLimited::cleared(&view, None, &mark);
        put(&mut w, "map", "odom", S, 1.0, false);
        assert!(cleared.lookup_transform("map", "odom", 0).is_err());
        w.clear();
        put(&mut w, "map", "odom", S, 1.0, false);
        assert_eq!(cleared.lookup_transform("map", "odom", 0).unwrap().stamp, S);
    }
}
