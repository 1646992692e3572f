//! A test-only [`FrameStore`] over plain vectors, with tf2 ROS 2 Jazzy's `setTransform` rules
//! (validation, kind switching, `TimeCache::insertData` via `history::insert_decision`), so
//! the walk can be tested without the arena. Include with
//! `#[path = "common/vec_store.rs"] mod vec_store;`.
#![allow(dead_code)]

use tf_shm::error::ArenaError;
use tf_shm::history::{get_data, insert_decision, InsertDecision};
use tf_shm::store::{FrameStore, History, HistoryLimit, HistorySpan, LinkAt};
use tf_shm::validate::{old_data_message, validate, Refusal, TransformInput};
use tf_shm::{FrameId, Sample, Transform};

/// One second in ns.
pub const S: i64 = 1_000_000_000;

/// Seconds (exact for the values tests use) to ns.
pub fn ns(secs: f64) -> i64 {
    (secs * 1e9).round() as i64
}

/// An oldest-first history in a `Vec`.
#[derive(Clone, Debug, Default)]
pub struct VecHistory(pub Vec<Sample>);

impl History for VecHistory {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn stamp(&self, i: usize) -> i64 {
        self.0[i].stamp
    }
    fn sample(&self, i: usize) -> Sample {
        self.0[i]
    }
}

#[derive(Clone, Debug)]
enum Cache {
    Static(Sample),
    Dynamic(VecHistory),
}

/// Frames by id (index 0 unused, as tf2's `NO_PARENT`).
#[derive(Clone, Debug)]
pub struct VecStore {
    names: Vec<String>,
    caches: Vec<Option<Cache>>,
    authorities: Vec<Option<String>>,
    /// tf2's cache time, ns.
    pub cache_time: i64,
}

impl Default for VecStore {
    fn default() -> Self {
        Self::new(10 * S)
    }
}

impl VecStore {
    pub fn new(cache_time: i64) -> Self {
        VecStore {
            names: vec!["NO_PARENT".to_string()],
            caches: vec![None],
            authorities: vec![None],
            cache_time,
        }
    }

    fn intern(&mut self, name: &str) -> FrameId {
        if let Some(i) = self.names.iter().skip(1).position(|n| n == name) {
            return (i + 1) as FrameId;
        }
        self.names.push(name.to_string());
        self.caches.push(None);
        self.authorities.push(None);
        (self.names.len() - 1) as FrameId
    }

    /// tf2 ROS 2 `setTransform(msg, authority, is_static)`.
    pub fn set_transform(
        &mut self,
        input: &TransformInput<'_>,
        authority: &str,
        is_static: bool,
    ) -> Result<(), Refusal> {
        let v = validate(input, authority)?;
        // tf2 interns the child first, then the parent.
        let child = self.intern(v.child) as usize;
        let parent = self.intern(v.parent);
        let sample = Sample {
            stamp: v.stamp,
            parent,
            transform: v.transform,
        };
        // ROS 2: a kind change replaces the cache.
        let keep = matches!(
            (&self.caches[child], is_static),
            (Some(Cache::Static(_)), true) | (Some(Cache::Dynamic(_)), false)
        );
        if !keep {
            self.caches[child] = Some(if is_static {
                Cache::Static(sample)
            } else {
                Cache::Dynamic(VecHistory::default())
            });
        }
        match self.caches[child].as_mut().unwrap() {
            Cache::Static(s) => *s = sample,
            Cache::Dynamic(h) => {
                let d = insert_decision(h, &sample, self.cache_time);
                h.0.drain(..d.prune());
                match d {
                    InsertDecision::RejectOld { .. } => {
                        return Err(Refusal::old_data(old_data_message(
                            v.child, v.stamp, authority,
                        )))
                    }
                    InsertDecision::DropDuplicate { .. } => {}
                    InsertDecision::Insert { index, .. } => h.0.insert(index, sample),
                }
            }
        }
        self.authorities[child] = Some(authority.to_string());
        Ok(())
    }

    /// Dynamic insert with translation and rotation.
    pub fn insert(
        &mut self,
        parent: &str,
        child: &str,
        stamp: i64,
        translation: [f64; 3],
        rotation: [f64; 4],
    ) -> Result<(), Refusal> {
        let input = TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp,
            translation,
            rotation,
        };
        self.set_transform(&input, "test", false)
    }

    /// Dynamic insert, translation only, stamp in seconds. Panics if refused.
    pub fn add(&mut self, parent: &str, child: &str, secs: f64, translation: [f64; 3]) {
        self.insert(parent, child, ns(secs), translation, [0.0, 0.0, 0.0, 1.0])
            .unwrap();
    }

    /// Static insert, translation only. Panics if refused.
    pub fn add_static(&mut self, parent: &str, child: &str, translation: [f64; 3]) {
        let input = TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp: 0,
            translation,
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        self.set_transform(&input, "test", true).unwrap();
    }

    /// tf2's `clear()`: empties every time cache; statics and names stay.
    pub fn clear(&mut self) {
        for c in self.caches.iter_mut().flatten() {
            if let Cache::Dynamic(h) = c {
                h.0.clear();
            }
        }
    }

    /// The dynamic history of `frame` (tests of insertion order).
    pub fn history(&self, frame: &str) -> Option<&VecHistory> {
        let id = self.names.iter().position(|n| n == frame)?;
        match self.caches[id].as_ref()? {
            Cache::Dynamic(h) => Some(h),
            Cache::Static(_) => None,
        }
    }

    /// Makes `child`'s link point at `parent` with no validation (loops for tests).
    pub fn force_link(&mut self, parent: &str, child: &str, stamp: i64) {
        let c = self.intern(child) as usize;
        let p = self.intern(parent);
        self.caches[c] = Some(Cache::Dynamic(VecHistory(vec![Sample {
            stamp,
            parent: p,
            transform: Transform::IDENTITY,
        }])));
    }
}

impl FrameStore for VecStore {
    type Moment<'m>
        = Self
    where
        Self: 'm;

    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        query(self)
    }
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        Ok(self
            .names
            .iter()
            .skip(1)
            .position(|n| n == name)
            .map(|i| (i + 1) as FrameId))
    }

    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        Ok(match id {
            0 => None,
            _ => self.names.get(id as usize).cloned(),
        })
    }

    fn instance(&self) -> Option<[u8; 16]> {
        None
    }
    fn frame_count(&self) -> FrameId {
        self.names.len() as FrameId
    }

    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        Ok(
            match self.caches.get(id as usize).and_then(|c| c.as_ref()) {
                None => LinkAt::NoCache,
                Some(Cache::Static(s)) => LinkAt::Sample(Sample { stamp: time, ..*s }),
                Some(Cache::Dynamic(h)) => match get_data(h, time, interpolate) {
                    Ok(s) => LinkAt::Sample(s),
                    Err(e) => LinkAt::Failed(e),
                },
            },
        )
    }

    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        Ok(
            match self.caches.get(id as usize).and_then(|c| c.as_ref()) {
                None => None,
                Some(Cache::Static(s)) => Some((0, s.parent)),
                Some(Cache::Dynamic(h)) => Some(h.0.last().map_or((0, 0), |s| (s.stamp, s.parent))),
            },
        )
    }

    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        Ok(matches!(
            self.caches.get(id as usize),
            Some(Some(Cache::Static(_)))
        ))
    }

    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        Ok(match self.caches.get(id as usize) {
            Some(Some(Cache::Dynamic(h))) if !h.0.is_empty() => Some(HistorySpan {
                oldest: h.0[0].stamp,
                newest: h.0[h.0.len() - 1].stamp,
                len: h.0.len(),
            }),
            _ => None,
        })
    }

    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        Ok(self.authorities.get(id as usize).cloned().flatten())
    }
    fn cache_time_ns(&self) -> i64 {
        tf_shm::store::DEFAULT_CACHE_TIME_NS
    }
    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        _limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError> {
        self.link_at(id, time, interpolate)
    }
    fn history_span_within(
        &self,
        id: FrameId,
        _limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError> {
        self.history_span(id)
    }
    tf_shm::store_without_fast_reads!();
}
