//! tf2 ROS 2 Jazzy's `BufferCore` queries over any [`FrameStore`]: the two-pass walk, latest
//! common time, one- and two-time lookups, `canTransform`, and the frame listings
//! (docs/tf2-semantics.md §4–§6, §8, §9).
//!
//! The walk is reproduced literally rather than as "find the common ancestor, then compose",
//! because tf2's stop rules decide *which* error is reported (docs/tf2-semantics.md §4.2, ros2/geometry2#832):
//!
//! * source pass: accumulate `T_top_source` upwards; stop at a frame without cache (root), at
//!   `target`, or at the first link that cannot be read (remember that failure, keep going);
//! * target pass: accumulate `T_top_target` up to the source pass's top; `source` on the way
//!   ends it; a link failure here is returned at once; a frame without cache ends it early;
//! * not reaching the top: the remembered source failure if any, else a connectivity error;
//! * more than 1000 links in a pass: "The tf tree is invalid because it contains a loop."
//!
//! This is the only walk: lookups by name and by [`crate::FramePair`], time 0, the two-time
//! form, `canTransform` and the latest common time all run it, with tf2's accumulator policies
//! as types (`CanTransformAccum`, `TransformAccum`). A lookup's links are read with the store's
//! close read ([`FrameStore::link_at_close`]), and any result whose rounding could show is
//! walked again with tf2's slerp literally: one function makes that choice (`lookup_at`). At
//! time 0 the walk reuses the newest samples the latest common time read
//! ([`FrameStore::latest_link`]).
//!
//! Queries allocate nothing unless they fail (or a chain is deeper than 32 links while
//! resolving time 0). Every text a failure carries is tf2's (see [`crate::error`]).

use std::cell::Cell;

use arrayvec::ArrayVec;
use smallvec::SmallVec;

use crate::error::{ArenaError, FrameArgProblem, TransformError};
use crate::fast_path::declined;
use crate::math::{
    accumulate, canonicalize_clear, canonicalize_unit, identity_inverse_times, inverse,
    inverse_times, MatTransform,
};
use crate::sample::{FrameId, Sample, Transform, TransformStamped, NO_FRAME};
use crate::store::{CacheError, FrameStore, LatestLink, LinkAt};
use crate::time::{display_time, to_sec};

/// tf2's `MAX_GRAPH_DEPTH`: a pass of more than this many links is a loop.
pub const MAX_GRAPH_DEPTH: u32 = 1000;

/// How tf2 names frame id 0 in listings and chains (`frameIDs_reverse_[0]`).
pub(crate) const NO_PARENT_NAME: &str = "NO_PARENT";

/// A walk failure before names are attached (names are fetched only on this path).
#[derive(Debug)]
enum Fail {
    /// A link could not be read; `extrapolation` text + suffix.
    Cache(CacheError),
    Connectivity,
    Loop,
    /// tf2's getLatestCommonTime on id 0: `LookupException` with no text.
    NoFrame,
    Arena(ArenaError),
}

impl From<ArenaError> for Fail {
    fn from(e: ArenaError) -> Self {
        Fail::Arena(e)
    }
}

/// Name of `id` for an error text; tf2's `lookupFrameString` failure otherwise.
fn name_of<S: FrameStore + ?Sized>(s: &S, id: FrameId) -> Result<String, TransformError> {
    match s.frame_name(id)? {
        Some(n) => Ok(n),
        None => Err(TransformError::Lookup(format!(
            "Reverse lookup of frame id {id} failed!"
        ))),
    }
}

/// Turns a walk failure between `target` and `source` into tf2's exception and text.
fn to_error<S: FrameStore + ?Sized>(
    s: &S,
    fail: Fail,
    target: FrameId,
    source: FrameId,
) -> TransformError {
    let build = || -> Result<TransformError, TransformError> {
        Ok(match fail {
            Fail::Cache(e) => {
                TransformError::extrapolation(&e, &name_of(s, source)?, &name_of(s, target)?)
            }
            Fail::Connectivity => {
                TransformError::connectivity(&name_of(s, target)?, &name_of(s, source)?)
            }
            Fail::Loop => TransformError::tree_loop(&all_frames_as_string(s)?),
            Fail::NoFrame => TransformError::Lookup(String::new()),
            Fail::Arena(e) => TransformError::Arena(e),
        })
    };
    build().unwrap_or_else(|e| e)
}

/// How tf2's walk ended (tf2's `WalkEnding`), for the accumulator's `finalize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WalkEnding {
    /// `source == target`.
    Identity,
    /// The source pass reached the target: the target is an ancestor of the source.
    TargetParentOfSource,
    /// The target pass reached the source: the source is an ancestor of the target.
    SourceParentOfTarget,
    /// Both passes reached the same top.
    FullPath,
}

/// tf2's accumulator policies (`CanTransformAccum`, `TransformAccum` in `buffer_core.cpp`):
/// what the walk reads from each link and what it makes of the links it passed.
trait Accum {
    /// tf2's `gather`: the link of `frame` at `time`.
    fn gather<S: FrameStore + ?Sized>(
        &self,
        s: &S,
        frame: FrameId,
        time: i64,
    ) -> Result<LinkAt, ArenaError>;
    /// tf2's `accum(source)`: one link read by the source pass (`source`) or the target pass.
    fn accum(&mut self, source: bool, link: &Transform);
    /// tf2's `finalize`.
    fn finalize(&mut self, ending: WalkEnding);
}

/// tf2's `CanTransformAccum`: parents and coverage only.
struct CanTransformAccum;

impl Accum for CanTransformAccum {
    #[inline(always)]
    fn gather<S: FrameStore + ?Sized>(
        &self,
        s: &S,
        frame: FrameId,
        time: i64,
    ) -> Result<LinkAt, ArenaError> {
        s.link_at(frame, time, false)
    }
    #[inline(always)]
    fn accum(&mut self, _: bool, _: &Transform) {}
    #[inline(always)]
    fn finalize(&mut self, _: WalkEnding) {}
}

/// How a [`TransformAccum`] interpolates a link between two samples.
trait Rounding {
    /// Whether the link's rotation comes from the series slerp (equal to tf2's up to
    /// rounding), so that the result is canonicalised only where rounding cannot decide it
    /// (see [`lookup_at`]).
    const SERIES: bool;
    /// tf2's `getData` of `frame` at `time`.
    fn read<S: FrameStore + ?Sized>(s: &S, frame: FrameId, time: i64)
        -> Result<LinkAt, ArenaError>;
}

/// tf2's slerp, literally ([`FrameStore::link_at`]).
struct Tf2;

impl Rounding for Tf2 {
    const SERIES: bool = false;
    #[inline(always)]
    fn read<S: FrameStore + ?Sized>(
        s: &S,
        frame: FrameId,
        time: i64,
    ) -> Result<LinkAt, ArenaError> {
        s.link_at(frame, time, true)
    }
}

/// The store's close read ([`FrameStore::link_at_close`]: a series slerp between close
/// rotations, in one attempt on an arena).
struct Series;

impl Rounding for Series {
    const SERIES: bool = true;
    #[inline(always)]
    fn read<S: FrameStore + ?Sized>(
        s: &S,
        frame: FrameId,
        time: i64,
    ) -> Result<LinkAt, ArenaError> {
        s.link_at_close(frame, time)
    }
}

/// tf2's `TransformAccum`: composes `T_top_source` and `T_top_target` and finalizes
/// `T_target_source` (raw: not canonicalised), with links interpolated as `R` does and, at
/// the latest common time, the newest samples it read (`kept`) where they are the links.
struct TransformAccum<'k, R> {
    kept: Option<&'k Kept>,
    source: Transform,
    target: Transform,
    /// Links the target pass composed (0: a root target).
    target_links: u32,
    result: Transform,
    /// With [`WalkEnding::FullPath`], the largest translation component the two passes
    /// composed: what cancels in the result, so the size of its rounding.
    cancelled: f64,
    rounding: std::marker::PhantomData<R>,
}

impl<'k, R: Rounding> TransformAccum<'k, R> {
    fn new(kept: Option<&'k Kept>) -> Self {
        TransformAccum {
            kept,
            source: Transform::IDENTITY,
            target: Transform::IDENTITY,
            target_links: 0,
            result: Transform::IDENTITY,
            cancelled: 0.0,
            rounding: std::marker::PhantomData,
        }
    }
}

impl<R: Rounding> Accum for TransformAccum<'_, R> {
    #[inline(always)]
    fn gather<S: FrameStore + ?Sized>(
        &self,
        s: &S,
        frame: FrameId,
        time: i64,
    ) -> Result<LinkAt, ArenaError> {
        if let Some(k) = self.kept {
            if let Some(link) = k.at(frame, time) {
                return Ok(link);
            }
        }
        R::read(s, frame, time)
    }
    #[inline(always)]
    fn accum(&mut self, source: bool, link: &Transform) {
        if source {
            self.source = accumulate(link, &self.source);
        } else {
            self.target = accumulate(link, &self.target);
            self.target_links += 1;
        }
    }
    #[inline(always)]
    fn finalize(&mut self, ending: WalkEnding) {
        self.result = match ending {
            WalkEnding::Identity => Transform::IDENTITY,
            WalkEnding::TargetParentOfSource => self.source,
            WalkEnding::SourceParentOfTarget => inverse(&self.target),
            WalkEnding::FullPath => {
                let max = |t: &Transform| t.translation.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                self.cancelled = max(&self.source).max(max(&self.target));
                // A root target finalizes with the identity, worked out (equal to the literal
                // product for a finite translation; a series result with a non-finite one is
                // never used, see `lookup_at`).
                if R::SERIES && self.target_links == 0 {
                    identity_inverse_times(&self.source)
                } else {
                    inverse_times(&self.target, &self.source)
                }
            }
        };
    }
}

/// tf2's `gather` result as the walk takes it: a sample with parent 0 is tf2's failure value
/// (no text).
#[inline(always)]
fn gather<S: FrameStore + ?Sized, A: Accum>(
    s: &S,
    acc: &A,
    frame: FrameId,
    time: i64,
) -> Result<LinkAt, ArenaError> {
    Ok(match acc.gather(s, frame, time)? {
        LinkAt::Sample(st) if st.parent == NO_FRAME => LinkAt::Failed(CacheError::NoData { time }),
        other => other,
    })
}

/// tf2's `walkToTopParent(accum, time, target, source, error, frame_chain)`: returns the
/// time walked at (0 resolved to the latest common time unless `resolved`: the caller ran it),
/// the result left in `acc`.
///
/// With `frame_chain`, also fills it with tf2's `frame_chain`: the frames the walk passed,
/// source side first, pruned where the two passes meet exactly as tf2 prunes them (for
/// [`chain_as_vector`]). Unchanged on failure only in what tf2 leaves unspecified.
#[inline(always)]
fn walk<S: FrameStore + ?Sized, A: Accum>(
    s: &S,
    target: FrameId,
    source: FrameId,
    time: i64,
    resolved: bool,
    acc: &mut A,
    mut frame_chain: Option<&mut Vec<FrameId>>,
) -> Result<i64, Fail> {
    if let Some(c) = frame_chain.as_deref_mut() {
        c.clear();
    }
    if source == target {
        acc.finalize(WalkEnding::Identity);
        return Ok(time);
    }
    let time = if time == 0 && !resolved {
        latest_common_time(s, target, source, None)?
    } else {
        time
    };

    // Source pass. The links it read are kept for the target pass, which reads them again
    // from where the passes meet (tf2 reads them from their caches twice; here once).
    let mut frame = source;
    let mut top = frame;
    let mut depth = 0u32;
    let mut source_failure = None;
    let mut passed = Passed::new();
    while frame != NO_FRAME {
        if let Some(c) = frame_chain.as_deref_mut() {
            c.push(frame);
        }
        match gather(s, acc, frame, time)? {
            LinkAt::NoCache => {
                top = frame;
                break;
            }
            LinkAt::Failed(e) => {
                // There may still be a path from the target to here.
                top = frame;
                source_failure = Some(e);
                break;
            }
            LinkAt::Sample(st) => {
                if frame == target {
                    acc.finalize(WalkEnding::TargetParentOfSource);
                    return Ok(time);
                }
                acc.accum(true, &st.transform);
                passed.push(frame, &st);
                top = frame;
                frame = st.parent;
                depth += 1;
                if depth > MAX_GRAPH_DEPTH {
                    return Err(Fail::Loop);
                }
            }
        }
    }

    // Target pass.
    let mut frame = target;
    let mut depth = 0u32;
    let mut reverse_chain = Vec::new();
    while frame != top {
        if frame_chain.is_some() {
            reverse_chain.push(frame);
        }
        let link = match passed.find(frame) {
            Some(st) => LinkAt::Sample(st),
            None => gather(s, acc, frame, time)?,
        };
        match link {
            LinkAt::NoCache => break,
            // A failure here wins even if the link lies above the common ancestor (#832).
            LinkAt::Failed(e) => return Err(Fail::Cache(e)),
            LinkAt::Sample(st) => {
                if frame == source {
                    if let Some(c) = frame_chain {
                        std::mem::swap(c, &mut reverse_chain);
                    }
                    acc.finalize(WalkEnding::SourceParentOfTarget);
                    return Ok(time);
                }
                acc.accum(false, &st.transform);
                frame = st.parent;
                depth += 1;
                if depth > MAX_GRAPH_DEPTH {
                    return Err(Fail::Loop);
                }
            }
        }
    }
    if frame != top {
        return Err(match source_failure {
            Some(e) => Fail::Cache(e),
            None => Fail::Connectivity,
        });
    }
    if let Some(c) = frame_chain {
        prune_chain(c, &reverse_chain);
    }
    acc.finalize(WalkEnding::FullPath);
    Ok(time)
}

/// The links a walk's source pass read, for its target pass: up to [`PASSED`] of them (a
/// longer source pass has its further links read again).
struct Passed {
    frames: ArrayVec<FrameId, PASSED>,
    links: ArrayVec<Sample, PASSED>,
    /// Where the target pass looks first: one past its last hit (passes that met go on
    /// together).
    next: usize,
}

/// Source-pass links a walk keeps for its target pass.
const PASSED: usize = 16;

impl Passed {
    #[inline(always)]
    fn new() -> Passed {
        Passed {
            frames: ArrayVec::new(),
            links: ArrayVec::new(),
            next: 0,
        }
    }

    #[inline(always)]
    fn push(&mut self, frame: FrameId, link: &Sample) {
        if self.frames.try_push(frame).is_ok() {
            self.links.push(*link);
        }
    }

    /// The source pass's link of `frame`, if it read one.
    #[inline(always)]
    fn find(&mut self, frame: FrameId) -> Option<Sample> {
        let j = if self.frames.get(self.next) == Some(&frame) {
            self.next
        } else {
            self.frames.iter().position(|&f| f == frame)?
        };
        self.next = j + 1;
        Some(self.links[j])
    }
}

/// tf2's pruning of a full path's `frame_chain` in `walkToTopParent`, literally: compare the
/// two passes' chains from their tops until they differ, cut the source chain there (one
/// frame further than the first shared one, as tf2's `erase(begin + (n - 1))` does), then
/// append the target pass's frames top down.
#[cold]
fn prune_chain(chain: &mut Vec<FrameId>, reverse: &[FrameId]) {
    if let Some(m) = cut_chain(chain, reverse) {
        chain.extend(reverse[..=m].iter().rev());
    }
}

/// The compare-and-cut that tf2 does before joining two frame chains (`walkToTopParent`'s
/// pruning and `_chainAsVector`): compares `chain` and `other` from their tops until they
/// differ, cuts `chain` there as tf2's `erase(begin + (n - 1))` does, and returns the index in
/// `other` up to which (inclusive) its frames are to be appended, if any.
pub(crate) fn cut_chain(chain: &mut Vec<FrameId>, other: &[FrameId]) -> Option<usize> {
    let (mut m, mut n) = (other.len(), chain.len());
    while m > 0 && n > 0 {
        m -= 1;
        n -= 1;
        if chain[n] != other[m] {
            break;
        }
    }
    if n > 0 {
        chain.truncate(n - 1);
    }
    (m < other.len()).then_some(m)
}

/// The source chain's `(newest stamp, newest parent)` list of tf2's `getLatestCommonTime`:
/// 32 entries on the stack (not initialised until pushed), spilling to the heap only for
/// deeper chains (or loops).
type ChainList = SmallVec<[(i64, FrameId); 32]>;

/// Links whose newest samples the latest common time read are kept for the walk at that time
/// (the first this many; further ones are read again).
pub(crate) const KEPT: usize = 16;

/// The newest samples [`latest_common_time`] read ([`FrameStore::latest_link`]), for the walk
/// at the latest common time to reuse where a newest sample is the link at that time, with
/// the store's change counts loaded before them ([`FrameStore::link_version`]), from which a
/// [`KeptAnswer`] is made. (Arrays not initialised until pushed: a time-0 lookup pays for the
/// links it keeps only.)
struct Kept {
    frames: ArrayVec<FrameId, KEPT>,
    /// `None` for a frame without cache.
    links: ArrayVec<Option<LatestLink>, KEPT>,
    versions: ArrayVec<u64, KEPT>,
    /// The store's count, loaded before any link was read; `None` once any count is missing,
    /// a link read was not kept, or the walk read a link that was not (then no answer can be
    /// kept).
    store_version: Cell<Option<u64>>,
}

impl Kept {
    fn new<S: FrameStore + ?Sized>(s: &S) -> Kept {
        Kept {
            frames: ArrayVec::new(),
            links: ArrayVec::new(),
            versions: ArrayVec::new(),
            store_version: Cell::new(s.store_version()),
        }
    }

    /// Reads `frame`'s newest sample for [`latest_common_time`] and keeps it, loading the
    /// frame's change count first.
    #[inline(always)]
    fn read<S: FrameStore + ?Sized>(
        &mut self,
        s: &S,
        frame: FrameId,
    ) -> Result<Option<LatestLink>, ArenaError> {
        let version = s.link_version(frame);
        let link = s.latest_link(frame)?;
        if version.is_none() || self.frames.is_full() {
            self.store_version.set(None);
        }
        if !self.frames.is_full() {
            self.frames.push(frame);
            self.links.push(link);
            self.versions.push(version.unwrap_or(0));
        }
        Ok(link)
    }

    /// What the kept newest samples were read from.
    fn read_from(&self) -> ReadFrom<'_> {
        ReadFrom {
            store_version: self.store_version.get(),
            frames: &self.frames,
            versions: &self.versions,
        }
    }

    /// `frame`'s link at `time` where what was kept of it is that link (a frame without
    /// cache; a newest sample that is the link at `time`); `None` otherwise, and the walk reads
    /// the link. A frame the latest common time did not read (a parent at `time` other than
    /// the newest one, or past [`KEPT`] links) means the answer depends on a link whose change
    /// count was not loaded, so no answer can be kept.
    #[inline(always)]
    fn at(&self, frame: FrameId, time: i64) -> Option<LinkAt> {
        let Some(i) = self.frames.iter().position(|&f| f == frame) else {
            self.store_version.set(None);
            if !self.frames.is_full() {
                declined(|d| &mut d.kept_newest);
            }
            return None;
        };
        let Some(link) = &self.links[i] else {
            return Some(LinkAt::NoCache);
        };
        if link.transform.is_none() {
            declined(|d| &mut d.kept_newest);
            return None;
        }
        // `None`: the newest sample is newer than `time` (a link faster than the others).
        Some(LinkAt::Sample(Sample {
            stamp: time,
            parent: link.parent,
            transform: link.at(time)?,
        }))
    }
}

/// tf2's `getLatestCommonTime` on ids (docs/tf2-semantics.md §5). With `kept`, the newest
/// samples read on the way are kept in it.
fn latest_common_time<S: FrameStore + ?Sized>(
    s: &S,
    target: FrameId,
    source: FrameId,
    mut kept: Option<&mut Kept>,
) -> Result<i64, Fail> {
    if source == NO_FRAME || target == NO_FRAME {
        return Err(Fail::NoFrame);
    }
    if source == target {
        return Ok(match s.latest_time_and_parent(source)? {
            Some((stamp, _)) => stamp,
            None => 0,
        });
    }
    let finish = |t: i64| if t == i64::MAX { 0 } else { t };

    // Source side: newest stamp and newest parent of each link; zero stamps (statics) ignored.
    let mut list = ChainList::new();
    let mut frame = source;
    let mut depth = 0u32;
    let mut common = i64::MAX;
    while frame != NO_FRAME {
        let link = match kept.as_deref_mut() {
            Some(k) => k.read(s, frame)?,
            None => s.latest_link(frame)?,
        };
        let Some(LatestLink { stamp, parent, .. }) = link else {
            break;
        };
        if parent == NO_FRAME {
            break;
        }
        if stamp != 0 {
            common = common.min(stamp);
        }
        list.push((stamp, parent));
        frame = parent;
        if frame == target {
            // The walk at this time reads the target's link too (its source pass stops there
            // after reading it).
            if let Some(k) = kept.as_deref_mut() {
                k.read(s, frame)?;
            }
            return Ok(finish(common));
        }
        depth += 1;
        if depth > MAX_GRAPH_DEPTH {
            return Err(Fail::Loop);
        }
    }

    // Target side, looking for a parent that also appears on the source side.
    let mut frame = target;
    let mut depth = 0u32;
    let mut common = i64::MAX;
    let mut common_parent = NO_FRAME;
    loop {
        let link = match kept.as_deref_mut() {
            Some(k) => k.read(s, frame)?,
            None => s.latest_link(frame)?,
        };
        let Some(LatestLink { stamp, parent, .. }) = link else {
            break;
        };
        if parent == NO_FRAME {
            break;
        }
        if stamp != 0 {
            common = common.min(stamp);
        }
        if list.iter().any(|&(_, p)| p == parent) {
            common_parent = parent;
            break;
        }
        frame = parent;
        if frame == source {
            return Ok(finish(common));
        }
        depth += 1;
        if depth > MAX_GRAPH_DEPTH {
            return Err(Fail::Loop);
        }
    }
    if common_parent == NO_FRAME {
        return Err(Fail::Connectivity);
    }
    // Only source links up to the one whose parent is the common ancestor count.
    for &(stamp, parent) in list.iter() {
        if stamp != 0 {
            common = common.min(stamp);
        }
        if parent == common_parent {
            break;
        }
    }
    Ok(finish(common))
}

/// tf2's `getLatestCommonTime` as `lookupVelocity` calls it: names by `lookupFrameNumber`
/// (unknown: id 0), any failure leaving the time at 0.
///
/// # Errors
/// Only an unreadable store.
pub(crate) fn latest_common_time_or_zero<S: FrameStore + ?Sized>(
    s: &S,
    target: &str,
    source: &str,
) -> Result<i64, ArenaError> {
    let target = s.frame_id(target)?.unwrap_or(NO_FRAME);
    let source = s.frame_id(source)?.unwrap_or(NO_FRAME);
    match latest_common_time(s, target, source, None) {
        Ok(t) => Ok(t),
        Err(Fail::Arena(e)) => Err(e),
        Err(_) => Ok(0),
    }
}

/// tf2's `validateFrameId` checks (empty, leading `/`, unknown), in that order.
fn check_frame<S: FrameStore + ?Sized>(
    s: &S,
    name: &str,
) -> Result<Result<FrameId, FrameArgProblem>, ArenaError> {
    Ok(if name.is_empty() {
        Err(FrameArgProblem::Empty)
    } else if name.starts_with('/') {
        Err(FrameArgProblem::LeadingSlash)
    } else {
        match s.frame_id(name)? {
            Some(id) if id != NO_FRAME => Ok(id),
            _ => Err(FrameArgProblem::Unknown),
        }
    })
}

/// tf2's throwing `validateFrameId` for `lookupTransform argument <arg>`.
fn validate_lookup_arg<S: FrameStore + ?Sized>(
    s: &S,
    arg: &str,
    name: &str,
) -> Result<FrameId, TransformError> {
    check_frame(s, name)?.map_err(|p| TransformError::lookup_argument(arg, name, p))
}

/// tf2 ROS 2's non-throwing `validateFrameId` for `canTransform argument <arg>`.
fn validate_can_arg<S: FrameStore + ?Sized>(
    s: &S,
    arg: &str,
    name: &str,
) -> Result<FrameId, TransformError> {
    check_frame(s, name)?.map_err(|p| TransformError::can_transform_argument(arg, name, p))
}

/// Stamp of the identity answer for `time == 0`: the newest stamp of the frame's cache (0 for
/// statics, roots and unknown names), as tf2's `lookupTransformImpl` short cut.
fn identity_stamp<S: FrameStore + ?Sized>(s: &S, id: Option<FrameId>) -> Result<i64, ArenaError> {
    Ok(match id {
        Some(id) => s.latest_time_and_parent(id)?.map_or(0, |(t, _)| t),
        None => 0,
    })
}

/// tf2's lookup on resolved, different ids: `T_target_source` with its rotation canonicalised
/// as ROS 2's matrix round trip does, and the stamp. At time 0 the latest common time is
/// resolved here, so that a second walk reuses it, and the answer is handed to `keep` with
/// what it was read from (a caller that keeps it: [`crate::FramePair`]).
#[inline(always)]
fn lookup_ids<S: FrameStore + ?Sized>(
    s: &S,
    target: FrameId,
    source: FrameId,
    time: i64,
    keep: impl FnOnce(ReadFrom<'_>, (i64, Transform)),
) -> Result<(i64, Transform), Fail> {
    if time != 0 {
        return lookup_at(s, target, source, time, None);
    }
    let mut kept = Kept::new(s);
    let time = latest_common_time(s, target, source, Some(&mut kept))?;
    let answer = lookup_at(s, target, source, time, Some(&kept))?;
    keep(kept.read_from(), answer);
    Ok(answer)
}

/// What a time-0 answer was read from: the store's count and each link's, loaded before the
/// samples they cover ([`FrameStore::store_version`], [`FrameStore::link_version`]);
/// `store_version` is `None` when they are not all known (then the answer cannot be kept).
pub(crate) struct ReadFrom<'k> {
    pub(crate) store_version: Option<u64>,
    pub(crate) frames: &'k [FrameId],
    pub(crate) versions: &'k [u64],
}

/// For a caller that keeps no answer.
pub(crate) fn keep_nothing(_: ReadFrom<'_>, _: (i64, Transform)) {}

/// The largest translation component that may cancel in a full path's result (both passes
/// composed it: the links from the common ancestor up) for a series walk's answer to be
/// given: the cancellation's rounding is then below 1e-13 m, whichever slerp rounded the
/// links (tf2 itself keeps only rounding of this size).
const SERIES_CANCELLATION_LIMIT: f64 = 256.0;

/// The choice between the two rounding regimes, made here alone: [`lookup_ids`] at a resolved
/// time (`latest`: the newest samples its latest common time read, when `time` is one).
///
/// The walk reads links with the store's close read ([`Series`]: a series slerp, equal to
/// tf2's up to rounding, at about a third of its cost), and its result is canonicalised
/// without the matrix ([`canonicalize_clear`]). Where rounding could show — a non-finite
/// component (an accepted infinite translation: its NaNs depend on every operation tf2
/// performs), a rotation within rounding of one of the round trip's sign decisions, or a
/// full path whose passes both composed a translation above [`SERIES_CANCELLATION_LIMIT`]
/// (its cancellation keeps rounding of that size: a UTM-sized link above a fork) — the walk
/// runs again with tf2's slerp on every link and the exact trip, so the answer is tf2's own.
#[inline(always)]
fn lookup_at<S: FrameStore + ?Sized>(
    s: &S,
    target: FrameId,
    source: FrameId,
    time: i64,
    latest: Option<&Kept>,
) -> Result<(i64, Transform), Fail> {
    let mut acc = TransformAccum::<Series>::new(latest);
    let time = walk(s, target, source, time, latest.is_some(), &mut acc, None)?;
    let raw = acc.result;
    if acc.cancelled <= SERIES_CANCELLATION_LIMIT && raw.translation.iter().all(|v| v.is_finite()) {
        if let Some(rotation) = canonicalize_clear(&raw.rotation) {
            let translation = raw.translation;
            return Ok((
                time,
                Transform {
                    translation,
                    rotation,
                },
            ));
        }
    }
    declined(|d| &mut d.sign_decision);
    exact_lookup_ids(s, target, source, time, latest)
}

/// [`lookup_ids`] with tf2's slerp on every link and the exact round trip.
#[inline(never)]
fn exact_lookup_ids<S: FrameStore + ?Sized>(
    s: &S,
    target: FrameId,
    source: FrameId,
    time: i64,
    latest: Option<&Kept>,
) -> Result<(i64, Transform), Fail> {
    let mut acc = TransformAccum::<Tf2>::new(latest);
    let time = walk(s, target, source, time, true, &mut acc, None)?;
    let raw = acc.result;
    Ok((
        time,
        Transform {
            translation: raw.translation,
            rotation: canonicalize_unit(&raw.rotation),
        },
    ))
}

/// The answer for equal names or ids: the identity, stamped `time` or, for `time == 0`, the
/// newest stamp of that frame's cache (0 for statics, roots and unknown frames), as tf2's
/// `lookupTransformImpl` short cut.
fn identity_answer<S: FrameStore + ?Sized>(
    s: &S,
    id: Option<FrameId>,
    time: i64,
) -> Result<(i64, Transform), ArenaError> {
    let stamp = if time == 0 {
        identity_stamp(s, id)?
    } else {
        time
    };
    Ok((stamp, Transform::IDENTITY))
}

/// tf2's string `lookupTransformImpl` with tf2's slerp on every link: the raw walk result
/// (stamp, `T_target_source` with the quaternion not yet canonicalised), for the two-time
/// form, which composes it with matrices.
pub(crate) fn lookup_raw<S: FrameStore + ?Sized>(
    s: &S,
    target: &str,
    source: &str,
    time: i64,
) -> Result<(i64, Transform), TransformError> {
    if target == source {
        return Ok(identity_answer(s, s.frame_id(target)?, time)?);
    }
    let target_id = validate_lookup_arg(s, "target_frame", target)?;
    let source_id = validate_lookup_arg(s, "source_frame", source)?;
    let mut acc = TransformAccum::<Tf2>::new(None);
    walk(s, target_id, source_id, time, false, &mut acc, None)
        .map(|time| (time, acc.result))
        .map_err(|f| to_error(s, f, target_id, source_id))
}

/// An answer (stamp, `T_target_source`) and the (target, source) ids the names resolved to
/// (`None` for equal names).
pub(crate) type Resolved = ((i64, Transform), Option<(FrameId, FrameId)>);

/// tf2's string `lookupTransformImpl`, canonicalised (see [`lookup_ids`]), with the ids the
/// names resolved to, for callers that keep them ([`crate::FramePair`]); `keep` as for
/// [`lookup_ids_checked`].
///
/// # Errors
/// As [`lookup_transform`].
#[inline(always)]
pub(crate) fn lookup_transform_resolving<S: FrameStore + ?Sized>(
    s: &S,
    target: &str,
    source: &str,
    time: i64,
    keep: impl FnOnce(ReadFrom<'_>, (i64, Transform)),
) -> Result<Resolved, TransformError> {
    if target == source {
        return Ok((identity_answer(s, s.frame_id(target)?, time)?, None));
    }
    let target_id = validate_lookup_arg(s, "target_frame", target)?;
    let source_id = validate_lookup_arg(s, "source_frame", source)?;
    let answer = lookup_ids(s, target_id, source_id, time, keep)
        .map_err(|f| to_error(s, f, target_id, source_id))?;
    Ok((answer, Some((target_id, source_id))))
}

/// tf2 `BufferCore::lookupTransform(target, source, time)`: `T_target_source` at `time` ns
/// (0 = latest common time).
///
/// * `target == source` (string compare, before any validation): identity, stamp `time`, or
///   for `time == 0` the newest stamp of that frame (0 for static, root or unknown frames).
/// * Names are validated target first: empty or leading `/` → `InvalidArgument`, unknown →
///   `Lookup` (tf2's texts).
/// * The answer's stamp is `time`, or the latest common time for 0 (docs/tf2-semantics.md §6.1); its rotation
///   is normalised and signed as ROS 2's matrix round trip does (docs/tf2-semantics.md §6.4; equal to it up to
///   rounding, see [`crate::math::canonicalize_unit`]). Links are interpolated as the store's
///   [`FrameStore::link_at_close`] reads them (tf2's slerp or a series equal to it up to
///   rounding), with tf2's slerp wherever the rounding could change the quaternion's sign.
///
/// # Errors
/// tf2's exceptions ([`TransformError`]) with tf2 Jazzy's texts; `Arena` if the store is
/// unreadable.
pub fn lookup_transform<'a, S: FrameStore + ?Sized>(
    s: &S,
    target: &'a str,
    source: &'a str,
    time: i64,
) -> Result<TransformStamped<'a>, TransformError> {
    let ((stamp, transform), _) =
        lookup_transform_resolving(s, target, source, time, keep_nothing)?;
    Ok(TransformStamped {
        stamp,
        frame_id: target,
        child_frame_id: source,
        transform,
    })
}

/// [`lookup_transform`] on resolved ids, without touching names unless it fails. Returns the
/// stamp (ns) and `T_target_source` (rotation canonicalised).
///
/// Equal ids give the identity (stamp as for equal names). An id that is 0 or not in the
/// store is a `Lookup` error (text ours: ids have no tf2 counterpart).
///
/// # Errors
/// As [`lookup_transform`].
#[inline]
pub fn lookup_transform_ids<S: FrameStore + ?Sized>(
    s: &S,
    target: FrameId,
    source: FrameId,
    time: i64,
) -> Result<(i64, Transform), TransformError> {
    lookup_ids_checked(s, target, source, time, keep_nothing)
}

/// [`lookup_transform_ids`] handing a time-0 answer to `keep` with what it was read from
/// (see [`lookup_ids`]).
///
/// # Errors
/// As [`lookup_transform`].
#[inline(always)]
pub(crate) fn lookup_ids_checked<S: FrameStore + ?Sized>(
    s: &S,
    target: FrameId,
    source: FrameId,
    time: i64,
    keep: impl FnOnce(ReadFrom<'_>, (i64, Transform)),
) -> Result<(i64, Transform), TransformError> {
    if target == source {
        return Ok(identity_answer(
            s,
            Some(target).filter(|&id| id < s.frame_count()),
            time,
        )?);
    }
    let count = s.frame_count();
    for (arg, id) in [("target_frame", target), ("source_frame", source)] {
        if id == NO_FRAME || id >= count {
            return Err(TransformError::Lookup(format!(
                "frame id {id} passed to lookupTransform argument {arg} does not exist"
            )));
        }
    }
    lookup_ids(s, target, source, time, keep).map_err(|f| to_error(s, f, target, source))
}

/// tf2 `BufferCore::lookupTransform(target, target_time, source, source_time, fixed)`
/// (docs/tf2-semantics.md §6.2): `target`, `source`, `fixed` validated first (in that order); then
/// `A = T_fixed_source` at `source_time` (its errors first), `B = T_target_fixed` at
/// `target_time`; result `B·A` composed with rotation matrices as `tf2::Transform` does, so
/// the rotation is canonical. Stamp = B's stamp (`target_time`, or the target↔fixed latest
/// common time for 0).
///
/// # Errors
/// As [`lookup_transform`].
pub fn lookup_transform_full<'a, S: FrameStore + ?Sized>(
    s: &S,
    target: &'a str,
    target_time: i64,
    source: &'a str,
    source_time: i64,
    fixed: &str,
) -> Result<TransformStamped<'a>, TransformError> {
    validate_lookup_arg(s, "target_frame", target)?;
    validate_lookup_arg(s, "source_frame", source)?;
    validate_lookup_arg(s, "fixed_frame", fixed)?;
    let (_, a) = lookup_raw(s, fixed, source, source_time)?;
    let (stamp, b) = lookup_raw(s, target, fixed, target_time)?;
    let result = MatTransform::from_transform(&b)
        .mul(&MatTransform::from_transform(&a))
        .to_transform();
    Ok(TransformStamped {
        stamp,
        frame_id: target,
        child_frame_id: source,
        transform: result,
    })
}

/// tf2's `walkToTopParent` with `TransformAccum` and a `frame_chain` between `target` and
/// `source` at `time` (0: their latest common time): the frames passed, as tf2 lists them
/// (see [`crate::chain`]).
///
/// # Errors
/// The lookup's errors, with tf2's texts.
pub(crate) fn frame_chain<S: FrameStore + ?Sized>(
    s: &S,
    target: FrameId,
    source: FrameId,
    time: i64,
) -> Result<Vec<FrameId>, TransformError> {
    let mut chain = Vec::new();
    let mut acc = TransformAccum::<Tf2>::new(None);
    walk(s, target, source, time, false, &mut acc, Some(&mut chain))
        .map_err(|f| to_error(s, f, target, source))?;
    Ok(chain)
}

/// tf2's `canTransformInternal` on ids.
fn can_transform_ids<S: FrameStore + ?Sized>(
    s: &S,
    target: FrameId,
    source: FrameId,
    time: i64,
) -> Result<(), TransformError> {
    if target == source {
        return Ok(());
    }
    walk(s, target, source, time, false, &mut CanTransformAccum, None)
        .map(|_| ())
        .map_err(|f| to_error(s, f, target, source))
}

/// tf2 ROS 2 `BufferCore::canTransform(target, source, time, &error)` (docs/tf2-semantics.md §6.3): `Ok` when
/// [`lookup_transform`] would succeed; otherwise the error string tf2 would fill in, carried in
/// the error class the lookup would throw. Equal names succeed at once (even unknown ones).
/// Bad names give `Invalid frame ID "X" passed to canTransform argument target_frame - …`
/// (only the first bad argument), as `InvalidArgument` (empty, `/`) or `Lookup` (unknown).
///
/// # Errors
/// See above.
pub fn can_transform<S: FrameStore + ?Sized>(
    s: &S,
    target: &str,
    source: &str,
    time: i64,
) -> Result<(), TransformError> {
    if target == source {
        return Ok(());
    }
    let target_id = validate_can_arg(s, "target_frame", target)?;
    let source_id = validate_can_arg(s, "source_frame", source)?;
    can_transform_ids(s, target_id, source_id, time)
}

/// tf2 ROS 2's two-time `canTransform`: validates target, source, fixed (canTransform texts),
/// then checks target↔fixed at `target_time` **before** fixed↔source at `source_time` (the
/// opposite order of the lookup). No equal-names short cut for the whole call.
///
/// # Errors
/// As [`can_transform`].
pub fn can_transform_full<S: FrameStore + ?Sized>(
    s: &S,
    target: &str,
    target_time: i64,
    source: &str,
    source_time: i64,
    fixed: &str,
) -> Result<(), TransformError> {
    let target_id = validate_can_arg(s, "target_frame", target)?;
    let source_id = validate_can_arg(s, "source_frame", source)?;
    let fixed_id = validate_can_arg(s, "fixed_frame", fixed)?;
    can_transform_ids(s, target_id, fixed_id, target_time)?;
    can_transform_ids(s, fixed_id, source_id, source_time)
}

/// tf2's `getLatestCommonTime(target, source)` (docs/tf2-semantics.md §5), in ns; 0 when only static links
/// (or stamp-0 data) are involved. Names are validated as ROS 2's only public entry point,
/// tf2_py's `get_latest_common_time`, does (`_validateFrameId("get_latest_common_time", …)`,
/// target first); equal valid names give that frame's newest stamp.
///
/// # Errors
/// Empty or `/`-prefixed names → `InvalidArgument`, unknown → `Lookup` (tf2's texts);
/// different trees → `Connectivity` (tf2_py raises the base class with this text); a loop →
/// `Lookup` with the loop text.
pub fn get_latest_common_time<S: FrameStore + ?Sized>(
    s: &S,
    target: &str,
    source: &str,
) -> Result<i64, TransformError> {
    const ARG: &str = "get_latest_common_time";
    let target_id =
        check_frame(s, target)?.map_err(|p| TransformError::frame_argument(ARG, target, p))?;
    let source_id =
        check_frame(s, source)?.map_err(|p| TransformError::frame_argument(ARG, source, p))?;
    latest_common_time(s, target_id, source_id, None)
        .map_err(|f| to_error(s, f, target_id, source_id))
}

/// tf2's `_frameExists`: whether `name` has an id. Like tf2, `"NO_PARENT"` (the name of id 0)
/// exists.
///
/// # Errors
/// Only an unreadable store.
pub fn frame_exists<S: FrameStore + ?Sized>(s: &S, name: &str) -> Result<bool, ArenaError> {
    Ok(name == NO_PARENT_NAME || s.frame_id(name)?.is_some())
}

/// tf2's `getAllFrameNames`: every known frame name, in id order (parents-only frames
/// included).
///
/// # Errors
/// Only an unreadable store.
pub fn get_all_frame_names<S: FrameStore + ?Sized>(s: &S) -> Result<Vec<String>, ArenaError> {
    let mut names = Vec::new();
    for id in 1..s.frame_count() {
        if let Some(n) = s.frame_name(id)? {
            names.push(n);
        }
    }
    Ok(names)
}

/// tf2's `_getParent(frame, time)`: the parent of `frame` at `time` ns (tf2's `getParent`, no
/// interpolation; 0 = newest). `None` for unknown frames, frames without cache, or times the
/// cache does not cover.
///
/// # Errors
/// Only an unreadable store.
pub fn get_parent<S: FrameStore + ?Sized>(
    s: &S,
    frame: &str,
    time: i64,
) -> Result<Option<String>, ArenaError> {
    let Some(id) = s.frame_id(frame)? else {
        return Ok(None);
    };
    match s.link_at(id, time, false)? {
        LinkAt::Sample(st) if st.parent != NO_FRAME => s.frame_name(st.parent),
        _ => Ok(None),
    }
}

/// Name for listings: id 0 is `NO_PARENT`, as in tf2.
pub(crate) fn listing_name<S: FrameStore + ?Sized>(
    s: &S,
    id: FrameId,
) -> Result<String, ArenaError> {
    if id == NO_FRAME {
        return Ok(NO_PARENT_NAME.to_string());
    }
    Ok(s.frame_name(id)?.unwrap_or_default())
}

/// tf2's `allFramesAsString`: `Frame <child> exists with parent <parent>.\n` for every frame
/// that has a cache, in id order; the parent is the newest sample's (`NO_PARENT` for an empty
/// cache).
///
/// # Errors
/// Only an unreadable store.
pub fn all_frames_as_string<S: FrameStore + ?Sized>(s: &S) -> Result<String, ArenaError> {
    let mut out = String::new();
    for id in 1..s.frame_count() {
        let Some((_, parent)) = s.latest_time_and_parent(id)? else {
            continue;
        };
        out.push_str("Frame ");
        out.push_str(&listing_name(s, id)?);
        out.push_str(" exists with parent ");
        out.push_str(&listing_name(s, parent)?);
        out.push_str(".\n");
    }
    Ok(out)
}

/// What tf2's frame listings (`allFramesAsYAML`, `_allFramesAsDot`) say of a frame's link: its
/// newest parent, the oldest and newest stamp it holds and their span (ns; 0 for a static
/// frame, which tf2 lists as one sample at time 0), the average rate tf2 prints (samples over
/// the span, the span at least 100 µs) and the newest sample's authority. `None` where tf2
/// lists nothing: a frame without cache, or an empty time cache (tf2's `getData(0)` fails).
pub(crate) struct FrameListing {
    pub parent: FrameId,
    pub oldest: i64,
    pub newest: i64,
    pub span: i64,
    pub rate: f64,
    pub authority: String,
}

/// [`FrameListing`] of frame `id`.
pub(crate) fn frame_listing<S: FrameStore + ?Sized>(
    s: &S,
    id: FrameId,
) -> Result<Option<FrameListing>, ArenaError> {
    let Some((_, parent)) = s.latest_time_and_parent(id)? else {
        return Ok(None);
    };
    let (oldest, newest, len) = if s.is_static(id)? {
        (0, 0, 1usize)
    } else {
        match s.history_span(id)? {
            Some(span) => (span.oldest, span.newest, span.len),
            None => return Ok(None),
        }
    };
    let authority = s
        .authority(id)?
        .unwrap_or_else(|| "no recorded authority".to_string());
    let span = newest.wrapping_sub(oldest);
    let min_span = 100_000i64; // 100 µs
    let rate = (len as f64 * 1e9) / (if span > min_span { span } else { min_span }) as f64;
    Ok(Some(FrameListing {
        parent,
        oldest,
        newest,
        span,
        rate,
        authority,
    }))
}

/// tf2's `allFramesAsYAML(current_time)` (`now` in ns; 0 omits `transform_delay`), in ROS 2
/// Jazzy's format: `[]` when no frame is known at all; otherwise, for every frame with a
/// non-empty cache, in id order:
///
/// ```text
/// <child>:
///   parent: '<parent>'
///   broadcaster: '<authority or "no recorded authority">'
///   rate: <samples·1e9 / max(newest − oldest, 100 µs) in ns, %.3f>
///   most_recent_transform: <newest, %.6f s>
///   oldest_transform: <oldest, %.6f s>
///   transform_delay: <now − newest, %.3f s>      (only when now != 0)
///   buffer_length: <newest − oldest, %.3f s>
/// ```
///
/// (note the space after `<child>:`). Static frames report one sample at time 0, so rate
/// 10000.000.
///
/// # Errors
/// Only an unreadable store.
pub fn all_frames_as_yaml<S: FrameStore + ?Sized>(s: &S, now: i64) -> Result<String, ArenaError> {
    use std::fmt::Write as _;
    let mut out = String::new();
    if s.frame_count() <= 1 {
        out.push_str("[]");
    }
    for id in 1..s.frame_count() {
        let Some(FrameListing {
            parent,
            oldest,
            newest,
            span,
            rate,
            authority,
        }) = frame_listing(s, id)?
        else {
            continue;
        };
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{}: ", listing_name(s, id)?);
        let _ = writeln!(out, "  parent: '{}'", listing_name(s, parent)?);
        let _ = writeln!(out, "  broadcaster: '{authority}'");
        let _ = writeln!(out, "  rate: {rate:.3}");
        let _ = writeln!(out, "  most_recent_transform: {}", display_time(newest));
        let _ = writeln!(out, "  oldest_transform: {}", display_time(oldest));
        if now != 0 {
            let _ = writeln!(
                out,
                "  transform_delay: {:.3}",
                to_sec(now.wrapping_sub(newest))
            );
        }
        let _ = writeln!(out, "  buffer_length: {:.3}", to_sec(span));
    }
    Ok(out)
}
