//! The frame store a consumer answers from while it holds its old arena after a bridge
//! restart: the old arena (its writer is gone, its data stays valid) and the new one (filling
//! up) seen as the one buffer a tf2_ros listener would have kept across the restart.
//!
//! * Ids: the old arena's ids first (unchanged), then the frames only the new arena has, in the
//!   order the new arena's table names them. Ids are never reused or renumbered while the
//!   store lives, so ids a walk resolved stay valid while the new table grows.
//! * A frame's cache is what tf2's would hold had it received the old arena's samples and then
//!   the new arena's: a dynamic frame's history is the old samples older than the new arena's
//!   oldest, then the new arena's samples (time 0 answers the new data as soon as there is any;
//!   times inside the restart gap interpolate across it), with tf2's pruning to the cache time;
//!   a static frame is the new arena's once it has one, else the old one's. A frame whose kind
//!   changed takes the new kind with the new data only (tf2 ROS 2 replaces a cache whose kind
//!   changes). A frame the new arena has no data for yet answers from the old arena alone.
//! * Parents are translated by name into this id space.
//!
//! A link the new arena alone answers as the merged cache would (a static there, time 0, a time
//! inside its history) is read from the new arena directly; other times copy the new arena's
//! history once per write of the new arena (not per lookup), which is fine for the few seconds
//! a hold lasts. The normal path never comes here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::ArenaError;
use crate::history::get_data;
use crate::moment;
use crate::sample::{FrameId, Sample, NO_FRAME};
use crate::store::{FrameStore, History, HistoryLimit, HistorySpan, LinkAt};
use crate::view::ArenaView;

/// One frame's cache in one arena.
#[derive(Clone, Debug)]
enum Cache {
    /// No cache (only seen as a parent).
    None,
    Static(Sample),
    /// Oldest first; may be empty (cleared).
    Dynamic(Vec<Sample>),
}

fn read_cache(view: &ArenaView, id: FrameId) -> Result<Cache, ArenaError> {
    if view.is_static(id)? {
        let s = view.frame_samples(id)?;
        return Ok(s.first().map_or(Cache::None, |s| Cache::Static(*s)));
    }
    match view.latest_time_and_parent(id)? {
        None => Ok(Cache::None),
        Some(_) => Ok(Cache::Dynamic(view.frame_samples(id)?)),
    }
}

/// The composite of an old and a new arena; see the module docs.
pub struct HandoverStore {
    old: ArenaView,
    new: ArenaView,
    /// Old names by id (index 0 unused); the old arena's table no longer changes.
    old_names: Vec<String>,
    old_ids: HashMap<String, FrameId>,
    map: Mutex<Mapping>,
}

/// What is known of the new arena's table so far (grows only).
#[derive(Default)]
struct Mapping {
    /// New ids mapped so far: `1..mapped`.
    mapped: FrameId,
    /// New id → id here (index 0 = `NO_FRAME`).
    new_to_here: Vec<FrameId>,
    /// Id here → new id, for ids known to the new arena.
    here_to_new: HashMap<FrameId, FrameId>,
    /// Names of the frames only the new arena has, in id order after the old ones.
    appended: Vec<String>,
    /// Old caches read so far (the old arena no longer changes).
    old_caches: HashMap<FrameId, Arc<Result<Cache, ArenaError>>>,
    /// New caches by new id, parents translated, with the new arena's latch read before
    /// them: still current while the latch has not moved.
    new_caches: HashMap<FrameId, (u64, Arc<Cache>)>,
}

impl Mapping {
    /// The id here of `new_parent`, a parent id read from the new arena. A parent the table
    /// mapped so far does not hold is damage: `ArenaError::Corrupt { what: "parent" }`.
    fn parent_here(&self, new_parent: FrameId) -> Result<FrameId, ArenaError> {
        self.new_to_here
            .get(new_parent as usize)
            .copied()
            .ok_or(ArenaError::Corrupt { what: "parent" })
    }
}

/// A frame's effective cache here.
enum Effective {
    None,
    Static(Sample),
    Dynamic(Merged),
}

/// The old arena's samples `lo..hi` followed by the new arena's samples.
struct Merged {
    old: Arc<Result<Cache, ArenaError>>,
    lo: usize,
    hi: usize,
    /// The new arena's cache: its samples when dynamic, else none.
    new: Arc<Cache>,
}

impl Merged {
    fn old_samples(&self) -> &[Sample] {
        match self.old.as_ref() {
            Ok(Cache::Dynamic(v)) => &v[self.lo..self.hi],
            _ => &[],
        }
    }

    fn new_samples(&self) -> &[Sample] {
        match self.new.as_ref() {
            Cache::Dynamic(v) => v,
            _ => &[],
        }
    }
}

impl History for Merged {
    fn len(&self) -> usize {
        (self.hi - self.lo) + self.new_samples().len()
    }
    fn stamp(&self, i: usize) -> i64 {
        self.sample(i).stamp
    }
    fn sample(&self, i: usize) -> Sample {
        let old = self.old_samples();
        match old.get(i) {
            Some(s) => *s,
            None => self.new_samples()[i - old.len()],
        }
    }
}

impl HandoverStore {
    /// The composite of `old` (whose writer is gone) and `new`.
    ///
    /// Errors: [`ArenaError`] when the old arena's frame table cannot be read.
    pub fn new(old: ArenaView, new: ArenaView) -> Result<HandoverStore, ArenaError> {
        let count = old.frame_count();
        let mut old_names = vec![String::new()];
        let mut old_ids = HashMap::new();
        for id in 1..count {
            let name = old
                .frame_name(id)?
                .ok_or(ArenaError::Corrupt { what: "frame.name" })?;
            old_ids.insert(name.clone(), id);
            old_names.push(name);
        }
        Ok(HandoverStore {
            old,
            new,
            old_names,
            old_ids,
            map: Mutex::new(Mapping {
                mapped: 1,
                new_to_here: vec![NO_FRAME],
                ..Mapping::default()
            }),
        })
    }

    fn old_count(&self) -> FrameId {
        self.old_names.len() as FrameId
    }

    /// The mapping, extended to every frame the new arena's table holds now.
    fn mapping(&self) -> Result<MutexGuard<'_, Mapping>, ArenaError> {
        let mut m = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let count = self.new.frame_count();
        while m.mapped < count {
            let nid = m.mapped;
            let name = self
                .new
                .frame_name(nid)?
                .ok_or(ArenaError::Corrupt { what: "frame.name" })?;
            let here = match self.old_ids.get(&name) {
                Some(&id) => id,
                None => {
                    m.appended.push(name);
                    self.old_count() + m.appended.len() as FrameId - 1
                }
            };
            m.new_to_here.push(here);
            m.here_to_new.insert(here, nid);
            m.mapped += 1;
        }
        Ok(m)
    }

    fn old_cache(&self, m: &mut Mapping, id: FrameId) -> Option<Arc<Result<Cache, ArenaError>>> {
        if id == NO_FRAME || id >= self.old_count() {
            return None;
        }
        Some(
            m.old_caches
                .entry(id)
                .or_insert_with(|| Arc::new(read_cache(&self.old, id)))
                .clone(),
        )
    }

    /// Frame `id`'s cache as tf2 would hold it (see the module docs).
    fn effective(&self, id: FrameId) -> Result<Effective, ArenaError> {
        let (old, new_id) = {
            let mut m = self.mapping()?;
            (self.old_cache(&mut m, id), m.here_to_new.get(&id).copied())
        };
        let new = match new_id {
            Some(n) => self.new_cache(n)?,
            None => Arc::new(Cache::None),
        };
        let old = old.filter(|o| !matches!(o.as_ref(), Ok(Cache::None)));
        Ok(match (new.as_ref(), old) {
            (Cache::Static(s), _) => Effective::Static(*s),
            (Cache::Dynamic(v), old) if !v.is_empty() => {
                let old = old.unwrap_or_else(|| Arc::new(Ok(Cache::None)));
                let (lo, hi) = match old.as_ref() {
                    Ok(Cache::Dynamic(o)) => self.old_range(o, v),
                    _ => (0, 0),
                };
                Effective::Dynamic(Merged { old, lo, hi, new })
            }
            // Nothing new yet: the old cache alone.
            (_, Some(old)) => match old.as_ref() {
                Err(e) => return Err(e.clone()),
                Ok(Cache::Static(s)) => Effective::Static(*s),
                Ok(Cache::Dynamic(o)) => {
                    let hi = o.len();
                    Effective::Dynamic(Merged {
                        old,
                        lo: 0,
                        hi,
                        new: Arc::new(Cache::None),
                    })
                }
                Ok(Cache::None) => Effective::None,
            },
            (Cache::Dynamic(_), None) => Effective::Dynamic(Merged {
                old: Arc::new(Ok(Cache::None)),
                lo: 0,
                hi: 0,
                new,
            }),
            (Cache::None, None) => Effective::None,
        })
    }

    /// Frame `id` in the new arena when the new arena alone answers it at `time` exactly as
    /// the merged cache would (no history copied): a static there; a dynamic frame with data
    /// at time 0, strictly after its oldest sample when it has two or more (the bracket and the
    /// extrapolation limits are then the new arena's own), or with no old sample before its
    /// oldest. `None`: ask [`HandoverStore::effective`].
    fn new_answers(&self, id: FrameId, time: i64) -> Result<Option<FrameId>, ArenaError> {
        let (old, n) = {
            let mut m = self.mapping()?;
            let Some(&n) = m.here_to_new.get(&id) else {
                return Ok(None);
            };
            (self.old_cache(&mut m, id), n)
        };
        if self.new.is_static(n)? {
            return Ok(Some(n));
        }
        let Some(span) = self.new.history_span(n)? else {
            return Ok(None);
        };
        if time == 0 || (span.len >= 2 && time > span.oldest) {
            return Ok(Some(n));
        }
        let old_before = match old.as_deref() {
            Some(Ok(Cache::Dynamic(o))) => o.first().is_some_and(|s| s.stamp < span.oldest),
            Some(Err(_)) => true,
            _ => false,
        };
        Ok((!old_before).then_some(n))
    }

    /// New frame `n`'s cache, parents translated; re-read only after the new arena's writer
    /// began a moment (its latch moved), so lookups at times that need the merged history do
    /// not copy the new history each time. Keyed by the latch, not by the notification count:
    /// the writer notifies after it publishes, and a copy kept under a count that had not yet
    /// moved would be of the moment before the one the query reads live.
    fn new_cache(&self, n: FrameId) -> Result<Arc<Cache>, ArenaError> {
        // Read before the samples: a moment begun after this read moves the latch, so a cache
        // stored under it is re-read next time; one that did not move names the moment read.
        let seen = moment::Start::now(&self.new.header().latch).latch();
        if let Some((at, c)) = self.mapping()?.new_caches.get(&n) {
            if *at == seen {
                return Ok(c.clone());
            }
        }
        let mut cache = read_cache(&self.new, n)?;
        // Taken after reading the samples, so it knows every parent they name.
        let mut m = self.mapping()?;
        let here = |s: &mut Sample| -> Result<(), ArenaError> {
            s.parent = m.parent_here(s.parent)?;
            Ok(())
        };
        match &mut cache {
            Cache::Static(s) => here(s)?,
            Cache::Dynamic(v) => v.iter_mut().try_for_each(here)?,
            Cache::None => {}
        }
        let cache = Arc::new(cache);
        m.new_caches.insert(n, (seen, cache.clone()));
        Ok(cache)
    }

    /// `s` (read from the new arena) with its parent in this id space.
    fn translated(&self, s: Sample) -> Result<Sample, ArenaError> {
        let parent = self.mapping()?.parent_here(s.parent)?;
        Ok(Sample { parent, ..s })
    }

    /// Which of the old samples `o` precede the new samples `v` (non-empty) in the merged
    /// history: those older than the new oldest, minus what tf2 prunes when the last sample
    /// arrives (older than the newest before it by more than the cache time).
    fn old_range(&self, o: &[Sample], v: &[Sample]) -> (usize, usize) {
        let oldest_new = v[0].stamp;
        let hi = o.partition_point(|s| s.stamp < oldest_new);
        let before_last = if v.len() >= 2 {
            Some(v[v.len() - 2].stamp)
        } else {
            o[..hi].last().map(|s| s.stamp)
        };
        let lo = match before_last {
            Some(latest) => {
                let cache = i128::from(self.cache_time_ns());
                o[..hi].partition_point(|s| i128::from(s.stamp) + cache < i128::from(latest))
            }
            None => 0,
        };
        (lo, hi)
    }
}

impl FrameStore for HandoverStore {
    type Moment<'m>
        = Self
    where
        Self: 'm;

    /// One moment of each arena (the old one's writer has normally stopped: one check).
    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        self.old
            .in_one_moment(|_| self.new.in_one_moment(|_| query(self)))
    }
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        if let Some(&id) = self.old_ids.get(name) {
            return Ok(Some(id));
        }
        match self.new.frame_id(name)? {
            None => Ok(None),
            Some(n) => Ok(self.mapping()?.new_to_here.get(n as usize).copied()),
        }
    }

    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        if id == NO_FRAME {
            return Ok(None);
        }
        if id < self.old_count() {
            return Ok(Some(self.old_names[id as usize].clone()));
        }
        let m = self.mapping()?;
        Ok(m.appended.get((id - self.old_count()) as usize).cloned())
    }

    fn instance(&self) -> Option<[u8; 16]> {
        // Two arenas' ids.
        None
    }
    fn frame_count(&self) -> FrameId {
        // A damaged new table shows no new-only frame rather than failing every query.
        let appended = self.mapping().map_or(0, |m| m.appended.len());
        self.old_count() + appended as FrameId
    }

    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        if let Some(n) = self.new_answers(id, time)? {
            return Ok(match self.new.link_at(n, time, interpolate)? {
                LinkAt::Sample(s) => LinkAt::Sample(self.translated(s)?),
                other => other,
            });
        }
        Ok(match self.effective(id)? {
            Effective::None => LinkAt::NoCache,
            // tf2's StaticCache answers any time with the requested stamp.
            Effective::Static(s) => LinkAt::Sample(Sample { stamp: time, ..s }),
            Effective::Dynamic(h) => match get_data(&h, time, interpolate) {
                Ok(s) => LinkAt::Sample(s),
                Err(e) => LinkAt::Failed(e),
            },
        })
    }

    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        if let Some(n) = self.new_answers(id, 0)? {
            if let Some((stamp, parent)) = self.new.latest_time_and_parent(n)? {
                return Ok(Some((stamp, self.mapping()?.parent_here(parent)?)));
            }
        }
        Ok(match self.effective(id)? {
            Effective::None => None,
            Effective::Static(s) => Some((0, s.parent)),
            Effective::Dynamic(h) => Some(match h.len() {
                0 => (0, NO_FRAME),
                n => {
                    let s = h.sample(n - 1);
                    (s.stamp, s.parent)
                }
            }),
        })
    }

    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        Ok(matches!(self.effective(id)?, Effective::Static(_)))
    }

    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        Ok(match self.effective(id)? {
            Effective::Dynamic(h) if !h.is_empty() => Some(HistorySpan {
                oldest: h.stamp(0),
                newest: h.stamp(h.len() - 1),
                len: h.len(),
            }),
            _ => None,
        })
    }

    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        let new_id = self.mapping()?.here_to_new.get(&id).copied();
        if let Some(n) = new_id {
            if let Some(a) = self.new.authority(n)? {
                return Ok(Some(a));
            }
        }
        if id != NO_FRAME && id < self.old_count() {
            return self.old.authority(id);
        }
        Ok(None)
    }

    fn cache_time_ns(&self) -> i64 {
        self.new.cache_time_ns()
    }
    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        _limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError> {
        // Cold (a restart's handover): no history limit of a buffer applies here.
        self.link_at(id, time, interpolate)
    }
    fn history_span_within(
        &self,
        id: FrameId,
        _limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError> {
        self.history_span(id)
    }
    // Cold (a restart's handover of two arenas): tf2's slerp, and no answer is kept.
    crate::store_without_fast_reads!();
}
