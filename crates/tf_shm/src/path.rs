//! Compiled paths: the frames tf2's walk visits between one target and one source, kept with a
//! [`crate::FramePair`] so that repeated lookups read exactly those links and nothing else.
//!
//! A path is a *prediction*. Every lookup through it still reads every link tf2's walk would
//! need at the query time and checks each sample's parent against the path; any difference
//! (re-parenting, a new link above the root, a cleared or failing link, a contended ring) makes
//! [`lookup`] answer `None`, and the caller runs the literal walk (`crate::walk`), which gives
//! tf2's answer or error, and recompiles. So a path can be stale, never wrong.
//!
//! Why the answer equals the literal walk's (docs/tf2-semantics.md §4.2) when every check passes, with `A` the
//! common ancestor of target and source:
//!
//! * links from the source up to `A` and from the target up to `A` are read and composed as the
//!   two passes compose them, between close rotations with the series slerp (equal to tf2's to
//!   rounding). Rounding only moves the answer's last bits, except where the answer lies on
//!   one of the matrix round trip's sign decisions (a camera's optical frame below a joint
//!   passing through zero): there `lookup_pair` asks the path again with tf2's slerp on every
//!   link ([`lookup`] with `exact`), which gives the walk's bits;
//! * links from `A` up to the root matter through tf2's *source* pass: it reads them, stops at
//!   the first failure (which the target pass then forgives by reaching that frame) and detects
//!   loops. When the two branches fork below `A`, both passes also compose them; they cancel
//!   in `inverse_times` up to rounding, and that rounding decides the last bits and, on the
//!   matrix round trip's sign decisions, the sign of the answer. So a fork composes them into
//!   both branches exactly as tf2 does (tf2's slerp, literally) up to the first failure, and
//!   checks that they still lead to the same root, a frame without cache;
//! * when the source is an ancestor of the target, the walk returns from its target pass
//!   before using them: their parents are checked (no interpolation);
//! * when the target is an ancestor of the source, the source pass stops at the target
//!   whatever the target's own link says: nothing above is read.
//!
//! Time 0 resolves tf2's latest common time over the same links and the same checks (docs/tf2-semantics.md §5:
//! stamps of the links below `A` on both sides, statics' zero stamps ignored; newest parents
//! checked up to the root).

use crate::fast_path::declined;
use crate::math::{accumulate, identity_inverse_times, inverse, inverse_times};
use crate::sample::{FrameId, Transform, NO_FRAME};
use crate::store::{FrameStore, LinkAt};
use crate::view::{ArenaView, LinkRead, Newest};

/// Longest path compiled (links on both sides plus those above the common ancestor). Deeper
/// pairs take the literal walk every time; tf2's loop limit (1000 links) stays the walk's.
pub(crate) const MAX_PATH_LINKS: usize = 64;

/// How the two branches meet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Shape {
    /// Not compiled (or the last compile failed).
    #[default]
    None,
    /// The target is an ancestor of the source and has a link of its own (a root target is a
    /// `Fork` with an empty target branch, as tf2's walk composes it): `T_target_source` is
    /// the source branch alone.
    TargetAbove,
    /// The source is an ancestor of the target: the inverse of the target branch.
    SourceAbove,
    /// Both branches meet at a common ancestor below both.
    Fork,
}

/// The compiled path of one (target, source) pair in one arena. Its vectors keep their
/// capacity across recompiles, so recompiling allocates only when a path grows.
#[derive(Clone, Debug, Default)]
pub(crate) struct Path {
    shape: Shape,
    /// Frames whose links form the source branch, source first, up to (excluding) `ancestor`.
    source_links: Vec<FrameId>,
    /// Frames whose links form the target branch, target first, up to (excluding) `ancestor`.
    target_links: Vec<FrameId>,
    /// The common ancestor (the target for `TargetAbove`, the source for `SourceAbove`).
    ancestor: FrameId,
    /// Frames from `ancestor` up to (excluding) `root` whose parents are checked; empty for
    /// `TargetAbove`.
    above_links: Vec<FrameId>,
    /// The frame without cache that ends the chain (unused for `TargetAbove`).
    root: FrameId,
    /// Time 0: the newest samples of the source links, then of the target links, read for
    /// the latest common time and reused at that time wherever they are the answer (capacity
    /// reserved by `compile`, so a lookup does not allocate).
    newest: Vec<Newest>,
    /// Where [`branch`] puts the links it has read before composing them (sized by `compile`
    /// to the longer branch, so a lookup does not allocate).
    scratch: Vec<Transform>,
}

/// The parent of `frame` as the walk sees it at `time` (0: newest): `Ok(None)` for a frame
/// without cache, `Err(())` when the link cannot be read.
fn parent_at(view: &ArenaView, frame: FrameId, time: i64) -> Result<Option<FrameId>, ()> {
    if time == 0 {
        return match view.latest_time_and_parent(frame) {
            Ok(None) => Ok(None),
            Ok(Some((_, p))) if p != NO_FRAME => Ok(Some(p)),
            _ => Err(()),
        };
    }
    match view.link_at(frame, time, false) {
        Ok(LinkAt::NoCache) => Ok(None),
        Ok(LinkAt::Sample(s)) if s.parent != NO_FRAME => Ok(Some(s.parent)),
        _ => Err(()),
    }
}

impl Path {
    /// Whether the last compile succeeded.
    pub(crate) fn is_compiled(&self) -> bool {
        self.shape != Shape::None
    }

    /// Forgets the path (keeps the vectors' capacity).
    pub(crate) fn reset(&mut self) {
        self.shape = Shape::None;
        self.source_links.clear();
        self.target_links.clear();
        self.above_links.clear();
        self.newest.clear();
    }

    /// Compiles the path `target ← source` from the parents at `time` (0: newest parents).
    /// Leaves the path uncompiled when the frames are not connected at that time, a link
    /// cannot be read, or the path is longer than [`MAX_PATH_LINKS`].
    pub(crate) fn compile(
        &mut self,
        view: &ArenaView,
        target: FrameId,
        source: FrameId,
        time: i64,
    ) {
        self.reset();
        match self.fill(view, target, source, time) {
            Some(shape) => {
                self.shape = shape;
                self.newest
                    .reserve(self.source_links.len() + self.target_links.len());
                let longest = self.source_links.len().max(self.target_links.len());
                self.scratch.resize(longest, Transform::IDENTITY);
            }
            None => self.reset(),
        }
    }

    /// [`Path::compile`]'s walk over the parents, into the (empty) vectors.
    fn fill(
        &mut self,
        view: &ArenaView,
        target: FrameId,
        source: FrameId,
        time: i64,
    ) -> Option<Shape> {
        if target == source {
            return None;
        }
        // The source chain, up to the target or a root, is gathered in `above_links` and
        // split at the meeting point at the end.
        let Path {
            source_links,
            target_links,
            above_links: chain,
            ancestor,
            root: root_slot,
            ..
        } = self;
        let mut frame = source;
        let root = loop {
            if frame == target && parent_at(view, frame, time) != Ok(None) {
                source_links.append(chain);
                *ancestor = target;
                return Some(Shape::TargetAbove);
            }
            if chain.len() >= MAX_PATH_LINKS || chain.contains(&frame) {
                return None;
            }
            match parent_at(view, frame, time).ok()? {
                Some(p) => {
                    chain.push(frame);
                    frame = p;
                }
                None => break frame,
            }
        };
        // Target chain, up to the first frame on the source chain (or the source itself).
        // Meeting at the root (a frame without cache) is tf2's target pass reaching the
        // source pass's top; meeting at the source is its `frame == source` return.
        let mut frame = target;
        let meet = loop {
            if frame == root {
                break chain.len();
            }
            if frame == source {
                break 0;
            }
            if let Some(i) = chain.iter().position(|&f| f == frame) {
                break i;
            }
            if target_links.len() + chain.len() >= MAX_PATH_LINKS {
                return None;
            }
            target_links.push(frame);
            frame = parent_at(view, frame, time).ok()??;
        };
        *ancestor = frame;
        *root_slot = root;
        source_links.extend_from_slice(&chain[..meet]);
        chain.drain(..meet);
        Some(if frame == source && frame != root {
            Shape::SourceAbove
        } else {
            Shape::Fork
        })
    }
}

/// Expected parent of `links[i]`: the next link's frame, or `end` after the last.
#[inline]
fn expected_parent(links: &[FrameId], i: usize, end: FrameId) -> FrameId {
    links.get(i + 1).copied().unwrap_or(end)
}

/// Composes one branch at `time` (`T_ancestor_first`), checking every parent. `newest`, when
/// holds the links' newest samples (time 0, `REUSE`): those that answer at `time` are used as
/// they are instead of being read again. (A constant, so that a lookup at a given time pays
/// nothing for it.) Each link is read by [`ArenaView::link_transform`] when it can answer
/// (without `EXACT`), else by [`link_slow`].
///
/// Every link is read and interpolated (into `scratch`, at least as long as `links`) before
/// any is composed: the links are independent until composed, and keeping the composition
/// out of the read loop keeps each iteration short enough for the next link's loads to start
/// while the previous link's arithmetic runs.
#[inline]
fn branch<const REUSE: bool, const EXACT: bool>(
    view: &ArenaView,
    links: &[FrameId],
    end: FrameId,
    generation: u64,
    time: i64,
    newest: &[Newest],
    scratch: &mut [Transform],
) -> Option<Transform> {
    let read = scratch.get_mut(..links.len())?;
    for (i, (r, &frame)) in read.iter_mut().zip(links).enumerate() {
        let parent = expected_parent(links, i, end);
        let reused = if REUSE { newest.get(i) } else { None };
        *r = match reused {
            Some(n) if n.answers(time) => {
                if n.sample.parent != parent {
                    return None;
                }
                n.sample.transform
            }
            _ => match (!EXACT)
                .then(|| view.link_transform(frame, parent, generation, time))
                .flatten()
            {
                Some(t) => t,
                None => {
                    if !EXACT {
                        declined(|d| &mut d.fused_link);
                    }
                    link_slow::<EXACT>(view, frame, parent, generation, time)?
                }
            },
        };
    }
    // tf2 composes the first link onto the identity, which gives the link itself (up to the
    // sign of zeros).
    let Some((first, rest)) = read.split_first() else {
        return Some(Transform::IDENTITY);
    };
    Some(rest.iter().fold(*first, |acc, t| accumulate(t, &acc)))
}

/// One link of [`branch`] through [`ArenaView::link_sample`] (every case the fast read does
/// not answer), its parent checked.
#[inline(never)]
fn link_slow<const EXACT: bool>(
    view: &ArenaView,
    frame: FrameId,
    parent: FrameId,
    generation: u64,
    time: i64,
) -> Option<Transform> {
    let read = if EXACT {
        LinkRead::Tf2Slerp
    } else {
        LinkRead::SeriesSlerp
    };
    let s = view.link_sample(frame, generation, time, read)?.ok()?;
    (s.parent == parent).then_some(s.transform)
}

/// tf2's source pass above the common ancestor: the links from `ancestor` up to the root,
/// parents checked, up to the first link that fails (which tf2 forgives); then the root must
/// still be a frame without cache. With `compose` (a fork), each link is also composed into
/// both branches' accumulators as tf2's two passes compose them, with tf2's slerp literally:
/// they cancel in the result only up to rounding, and that rounding is tf2's answer (with a
/// large translation above the fork, a UTM map, or a result on one of the sign decisions of
/// the matrix round trip, a camera's optical frame seen from a sibling, skipping them would not
/// give tf2's bits). Without it (the source above the target) only the parents matter.
fn above(
    view: &ArenaView,
    path: &Path,
    generation: u64,
    time: i64,
    mut compose: Option<(&mut Transform, &mut Transform)>,
) -> Option<()> {
    let read = if compose.is_some() {
        LinkRead::Tf2Slerp
    } else {
        LinkRead::Parent
    };
    for (i, &frame) in path.above_links.iter().enumerate() {
        match view.link_sample(frame, generation, time, read)? {
            Ok(s) if s.parent == expected_parent(&path.above_links, i, path.root) => {
                if let Some((source, target)) = compose.as_mut() {
                    **source = accumulate(&s.transform, source);
                    **target = accumulate(&s.transform, target);
                }
            }
            Ok(_) => return None,
            Err(()) => return Some(()),
        }
    }
    view.has_no_cache(path.root).then_some(())
}

/// Newest stamps of one branch (zero stamps ignored), checking newest parents; `i64::MAX`
/// when none counts. With `keep`, the newest samples are appended to it.
fn branch_latest(
    view: &ArenaView,
    links: &[FrameId],
    end: FrameId,
    generation: u64,
    mut keep: Option<&mut Vec<Newest>>,
) -> Option<i64> {
    let mut common = i64::MAX;
    for (i, &frame) in links.iter().enumerate() {
        let n = view.newest(frame, generation)?;
        if n.sample.parent != expected_parent(links, i, end) {
            return None;
        }
        if n.sample.stamp != 0 {
            common = common.min(n.sample.stamp);
        }
        if let Some(keep) = keep.as_mut() {
            keep.push(n);
        }
    }
    Some(common)
}

/// tf2's latest common time over the path (see the module docs); leaves the newest samples
/// of the source links, then of the target links, in `path.newest`.
fn latest_common_time(view: &ArenaView, path: &mut Path, generation: u64) -> Option<i64> {
    path.newest.clear();
    let source = branch_latest(
        view,
        &path.source_links,
        path.ancestor,
        generation,
        Some(&mut path.newest),
    )?;
    let common = if path.shape == Shape::TargetAbove {
        source
    } else {
        // Newest parents above the ancestor: checked, their stamps do not count.
        branch_latest(view, &path.above_links, path.root, generation, None)?;
        if !view.has_no_cache(path.root) {
            return None;
        }
        let target = branch_latest(
            view,
            &path.target_links,
            path.ancestor,
            generation,
            Some(&mut path.newest),
        )?;
        if path.shape == Shape::SourceAbove {
            target
        } else {
            source.min(target)
        }
    };
    Some(if common == i64::MAX { 0 } else { common })
}

/// `T_target_source` at `time` ns (0: latest common time) through a compiled `path`: the stamp
/// tf2 reports and the transform with its rotation not yet canonicalised. `None` when anything
/// differs from the path (the caller then runs the literal walk).
///
/// With `exact`, links below the common ancestor are interpolated with tf2's slerp literally
/// too, so the result has the walk's bits (for a result whose sign the last bits decide).
pub(crate) fn lookup(
    view: &ArenaView,
    path: &mut Path,
    time: i64,
    exact: bool,
) -> Option<(i64, Transform)> {
    if path.shape == Shape::None {
        return None;
    }
    let generation = view.clear_generation();
    let reuse = time == 0;
    let time = if reuse {
        latest_common_time(view, path, generation)?
    } else {
        time
    };
    match (reuse, exact) {
        (true, false) => compose::<true, false>(view, path, generation, time),
        (true, true) => compose::<true, true>(view, path, generation, time),
        (false, false) => compose::<false, false>(view, path, generation, time),
        (false, true) => compose::<false, true>(view, path, generation, time),
    }
}

/// [`lookup`] at `time` (reusing `path.newest` with `REUSE`, see [`branch`]; tf2's slerp on
/// every link with `EXACT`).
#[inline(always)]
fn compose<const REUSE: bool, const EXACT: bool>(
    view: &ArenaView,
    path: &mut Path,
    generation: u64,
    time: i64,
) -> Option<(i64, Transform)> {
    // Put back on every return, so that it keeps its capacity.
    let mut scratch = std::mem::take(&mut path.scratch);
    let r = compose_with::<REUSE, EXACT>(view, path, generation, time, &mut scratch);
    path.scratch = scratch;
    r
}

/// [`compose`] with the path's scratch taken out of it.
#[inline(always)]
fn compose_with<const REUSE: bool, const EXACT: bool>(
    view: &ArenaView,
    path: &Path,
    generation: u64,
    time: i64,
    scratch: &mut [Transform],
) -> Option<(i64, Transform)> {
    let newest = if REUSE { path.newest.as_slice() } else { &[] };
    let (source_newest, target_newest) = newest.split_at(newest.len().min(path.source_links.len()));
    let source = branch::<REUSE, EXACT>(
        view,
        &path.source_links,
        path.ancestor,
        generation,
        time,
        source_newest,
        scratch,
    )?;
    let mut target_branch = || {
        branch::<REUSE, EXACT>(
            view,
            &path.target_links,
            path.ancestor,
            generation,
            time,
            target_newest,
            scratch,
        )
    };
    let t = match path.shape {
        Shape::None => return None,
        Shape::TargetAbove => source,
        Shape::SourceAbove => {
            above(view, path, generation, time, None)?;
            inverse(&target_branch()?)
        }
        // The target is the root: tf2's target pass reads nothing and finalizes with the
        // identity (a non-finite result is left to the walk by the caller).
        Shape::Fork if path.target_links.is_empty() && path.above_links.is_empty() => {
            if !view.has_no_cache(path.root) {
                return None;
            }
            identity_inverse_times(&source)
        }
        Shape::Fork => {
            let mut source = source;
            let mut target = target_branch()?;
            above(
                view,
                path,
                generation,
                time,
                Some((&mut source, &mut target)),
            )?;
            inverse_times(&target, &source)
        }
    };
    Some((time, t))
}
