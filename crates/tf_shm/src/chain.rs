//! tf2's `BufferCore::_chainAsVector` (tf2_py's `_chain`): the frames a two-time lookup
//! passes, from tf2's walk ([`crate::walk`] records them as tf2's `frame_chain`).

use crate::error::{ArenaError, TransformError};
use crate::sample::{FrameId, NO_FRAME};
use crate::store::{FrameStore, HistoryLimit, HistorySpan, LatestLink, LinkAt};
use crate::walk::{self, NO_PARENT_NAME};

/// tf2 `BufferCore::_chainAsVector(target, target_time, source, source_time, fixed)`, as
/// tf2_py's `_chain` returns it: the frames of the walk from `source` to `fixed` at
/// `source_time` (ns, 0 = latest common time), then, when `target_time != source_time`, those
/// of the walk from `fixed` to `target` at `target_time`, joined where they meet, literally
/// as tf2 joins and prunes them (including where tf2's pruning drops or repeats a frame).
///
/// Names are not validated: an unknown one is tf2's id 0 (`lookupFrameNumber`), a frame
/// without cache named `NO_PARENT` in error texts. Equal ends give an empty chain.
///
/// # Errors
/// tf2's lookup exceptions and texts for either walk (the source walk's first), e.g.
/// `Connectivity` for frames in different trees, an extrapolation error at a time a link does
/// not cover, `Lookup` with no text at time 0 with an unknown frame.
pub fn chain_as_vector<S: FrameStore>(
    s: &S,
    target: &str,
    target_time: i64,
    source: &str,
    source_time: i64,
    fixed: &str,
) -> Result<Vec<String>, TransformError> {
    let s = &UnknownAsRoot(s);
    let id =
        |name: &str| -> Result<FrameId, ArenaError> { Ok(s.frame_id(name)?.unwrap_or(NO_FRAME)) };
    let (source_id, fixed_id, target_id) = (id(source)?, id(fixed)?, id(target)?);
    let mut chain = walk::frame_chain(s, fixed_id, source_id, source_time)?;
    if source_time != target_time {
        let target_chain = walk::frame_chain(s, target_id, fixed_id, target_time)?;
        if let Some(m) = walk::cut_chain(&mut chain, &target_chain) {
            chain.extend_from_slice(&target_chain[..=m]);
        }
    }
    chain
        .into_iter()
        .map(|f| Ok(s.frame_name(f)?.unwrap_or_default()))
        .collect::<Result<_, ArenaError>>()
        .map_err(TransformError::Arena)
}

/// A store seen as tf2's `BufferCore` sees id 0: a frame without cache named `NO_PARENT`
/// (`getFrame(0)` is null), so the walk can start from an unknown name as tf2's does.
struct UnknownAsRoot<'a, S>(&'a S);

impl<S: FrameStore> FrameStore for UnknownAsRoot<'_, S> {
    type Moment<'m>
        = Self
    where
        Self: 'm;

    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        self.0.in_one_moment(|_| query(self))
    }
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        self.0.frame_id(name)
    }
    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        if id == NO_FRAME {
            return Ok(Some(NO_PARENT_NAME.to_string()));
        }
        self.0.frame_name(id)
    }
    fn instance(&self) -> Option<[u8; 16]> {
        // Id 0 answers here as no store of its own does.
        None
    }
    fn frame_count(&self) -> FrameId {
        self.0.frame_count()
    }
    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        if id == NO_FRAME {
            return Ok(LinkAt::NoCache);
        }
        self.0.link_at(id, time, interpolate)
    }
    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        if id == NO_FRAME {
            return Ok(None);
        }
        self.0.latest_time_and_parent(id)
    }
    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        self.0.is_static(id)
    }
    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        self.0.history_span(id)
    }
    fn history_span_within(
        &self,
        id: FrameId,
        limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError> {
        self.0.history_span_within(id, limit)
    }
    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.0.authority(id)
    }
    fn cache_time_ns(&self) -> i64 {
        self.0.cache_time_ns()
    }
    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError> {
        if id == NO_FRAME {
            return Ok(LinkAt::NoCache);
        }
        self.0.link_at_within(id, time, interpolate, limit)
    }
    fn link_at_close(&self, id: FrameId, time: i64) -> Result<LinkAt, ArenaError> {
        if id == NO_FRAME {
            return Ok(LinkAt::NoCache);
        }
        self.0.link_at_close(id, time)
    }
    fn latest_link(&self, id: FrameId) -> Result<Option<LatestLink>, ArenaError> {
        if id == NO_FRAME {
            return Ok(None);
        }
        self.0.latest_link(id)
    }
    fn link_version(&self, id: FrameId) -> Option<u64> {
        self.0.link_version(id)
    }
    fn links_unchanged(&self, frames: &[FrameId], versions: &[u64]) -> bool {
        self.0.links_unchanged(frames, versions)
    }
    fn store_version(&self) -> Option<u64> {
        self.0.store_version()
    }
    fn read_is_whole(&self) -> bool {
        self.0.read_is_whole()
    }
}
