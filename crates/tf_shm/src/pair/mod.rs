//! A (target, source) pair that repeats one lookup: [`FramePair`], what it keeps between calls
//! (the ids its names resolved to, the last time-0 answer with what it was read from), and the
//! names API's per-thread cache of pairs ([`cache`]). None of it changes an answer, only its
//! cost: the walk ([`crate::walk`]) reads every link at the query time whatever a pair holds.

pub(crate) mod cache;

use arrayvec::ArrayVec;

use crate::error::TransformError;
use crate::fast_path::declined;
use crate::sample::{FrameId, Transform, TransformStamped};
use crate::store::FrameStore;
use crate::walk::{self, ReadFrom, KEPT};

/// A (target, source) pair for [`crate::ArenaView::lookup_pair`]: the names, the frame ids
/// they resolved to in one store instance ([`FrameStore::instance`]; ids never change within
/// an instance: frames are never unpublished), and the last time-0 answer with the change
/// counts of the links it was read from, given again without walking while none of them
/// changed (a sample stored for any frame of the chain, or `clear()`, means a walk). None of
/// it changes an answer, only its cost. Pairs compare by their names.
#[derive(Clone, Debug)]
pub struct FramePair {
    target: Box<str>,
    source: Box<str>,
    resolved: Option<([u8; 16], FrameId, FrameId)>,
    /// Room for the last time-0 answer of the ids in `resolved`, made on the pair's first
    /// lookup in an instance (boxed: the names API keeps a table of pairs).
    kept: Option<Box<KeptAnswer>>,
}

impl PartialEq for FramePair {
    fn eq(&self, other: &FramePair) -> bool {
        self.target == other.target && self.source == other.source
    }
}

impl Eq for FramePair {}

impl FramePair {
    /// A pair for `T_target_source` lookups.
    pub fn new(target: &str, source: &str) -> FramePair {
        FramePair {
            target: target.into(),
            source: source.into(),
            resolved: None,
            kept: None,
        }
    }

    /// The target frame.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The source frame.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The (target, source) ids the pair resolved to, if it was resolved in `s`'s instance.
    #[inline(always)]
    fn ids_in<S: FrameStore + ?Sized>(&self, s: &S) -> Option<(FrameId, FrameId)> {
        let (instance, target, source) = self.resolved?;
        matches!(s.instance(), Some(i) if i == instance).then_some((target, source))
    }
}

/// A time-0 answer and the counts it was read from.
///
/// The answer at time 0 depends only on the samples of the links the latest common time and
/// the walk at that time read; an answer is kept only when the walk read no link the latest
/// common time did not (it may, where a link's parent at that time is not its newest one).
/// Those samples change only with a sample stored for one of these frames or a `clear()`. The
/// store counts both, after the change is visible ([`FrameStore::link_version`],
/// [`FrameStore::store_version`]); the counts are loaded before the samples they cover and
/// only grow. So while every count is what it was, a walk now would read what the kept one
/// read, and the kept answer is given without walking. A count that moved (a write racing the
/// walk included) means a walk.
#[derive(Clone, Debug, Default)]
struct KeptAnswer {
    store_version: u64,
    frames: ArrayVec<FrameId, KEPT>,
    versions: ArrayVec<u64, KEPT>,
    /// `None`: nothing kept.
    answer: Option<(i64, Transform)>,
}

impl KeptAnswer {
    /// The kept answer, if no count it was read from has moved in `s` (the store instance it
    /// was read from).
    #[inline(always)]
    fn holds<S: FrameStore + ?Sized>(&self, s: &S) -> Option<(i64, Transform)> {
        let answer = self.answer.as_ref()?;
        (s.store_version() == Some(self.store_version)
            && s.links_unchanged(&self.frames, &self.versions))
        .then_some(*answer)
    }

    /// Keeps `answer`, read from `from`, or forgets the kept answer when the counts are not
    /// all known or the read was not `whole` ([`FrameStore::read_is_whole`]: a read the
    /// writer overtook is read again, and what it read must not outlive it — with two copies
    /// its counts may equal those of the other copy, which still holds the moment before).
    fn keep(&mut self, from: ReadFrom<'_>, answer: (i64, Transform), whole: bool) {
        declined(|d| &mut d.kept_answer);
        match from.store_version.filter(|_| whole) {
            Some(store_version) => {
                self.store_version = store_version;
                self.frames.clear();
                self.frames.try_extend_from_slice(from.frames).ok();
                self.versions.clear();
                self.versions.try_extend_from_slice(from.versions).ok();
                self.answer = Some(answer);
            }
            None => self.answer = None,
        }
    }
}

/// tf2's `lookupTransform` for `pair` on `s` (see [`crate::ArenaView::lookup_pair`]): on the
/// ids the pair resolved to in this instance, its kept answer at time 0 while it holds;
/// otherwise by names, keeping the ids.
///
/// # Errors
/// Those of [`walk::lookup_transform`].
#[inline(always)]
pub(crate) fn lookup<S: FrameStore + ?Sized>(
    s: &S,
    pair: &mut FramePair,
    time: i64,
) -> Result<(i64, Transform), TransformError> {
    let Some((target, source)) = pair.ids_in(s) else {
        return resolve_and_lookup(s, pair, time);
    };
    match pair.kept.as_deref_mut() {
        Some(kept) if time == 0 => {
            if let Some(answer) = kept.holds(s) {
                return Ok(answer);
            }
            walk::lookup_ids_checked(s, target, source, time, |from, answer| {
                kept.keep(from, answer, s.read_is_whole())
            })
        }
        _ => walk::lookup_ids_checked(s, target, source, time, walk::keep_nothing),
    }
}

/// [`lookup`]'s first call in a store instance: by names, keeping the ids (and making room
/// for a kept answer: the pair's first lookup may allocate, later ones do not).
#[inline(never)]
fn resolve_and_lookup<S: FrameStore + ?Sized>(
    s: &S,
    pair: &mut FramePair,
    time: i64,
) -> Result<(i64, Transform), TransformError> {
    // What was kept in another instance is of other ids.
    pair.resolved = None;
    let kept = pair.kept.get_or_insert_with(Box::default);
    kept.answer = None;
    let instance = s.instance();
    let keep = |from: ReadFrom<'_>, answer| {
        if instance.is_some() {
            kept.keep(from, answer, s.read_is_whole());
        }
    };
    let (answer, ids) =
        walk::lookup_transform_resolving(s, &pair.target, &pair.source, time, keep)?;
    // Equal names resolve on a later call (their answer needs no walk). Only from a whole
    // read: a torn one may have seen a frame its moment, read again, does not have yet.
    if let (Some(instance), Some((t, src))) = (instance, ids) {
        if s.read_is_whole() {
            pair.resolved = Some((instance, t, src));
        }
    }
    Ok(answer)
}

/// tf2's `lookupTransform(target, source, time)` by names, through this thread's cached
/// [`FramePair`] for them ([`cache`]): after the first call for a name pair on a thread, a
/// lookup by name costs a few word compares of the names more than a pair the caller keeps.
/// tf2's walk by names when the cache is unavailable (re-entered, thread teardown).
///
/// # Errors
/// Those of [`walk::lookup_transform`].
#[inline]
pub(crate) fn lookup_names<'a, S: FrameStore + ?Sized>(
    s: &S,
    target: &'a str,
    source: &'a str,
    time: i64,
) -> Result<TransformStamped<'a>, TransformError> {
    let Some(mut cached) = cache::Cached::take() else {
        declined(|d| &mut d.names_cache);
        return walk::lookup_transform(s, target, source, time);
    };
    let (stamp, transform) = lookup(s, cached.pair(target, source), time)?;
    Ok(TransformStamped {
        stamp,
        frame_id: target,
        child_frame_id: source,
        transform,
    })
}
