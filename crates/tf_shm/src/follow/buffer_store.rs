//! [`BufferStore`]: what a [`Buffer`](crate::Buffer) answers from, its arena alone or, during a
//! hold after a bridge restart, the old and the new arena together.

use std::sync::Arc;

use super::handover_store::HandoverStore;
use crate::error::{ArenaError, TransformError};
use crate::pair::FramePair;
use crate::rendezvous::join::Attachment;
use crate::sample::{FrameId, Transform};
use crate::store::{FrameStore, HistoryLimit, HistorySpan, LatestLink, LinkAt};
use crate::view::{ArenaView, CopyView};

/// What a [`Buffer`](crate::Buffer) answers from: its arena; or, while it holds its old arena after a bridge
/// restart, the old and the new arena together ([`HandoverStore`]: fresh data from the new
/// arena as soon as it has it, everything else from the old one).
pub struct BufferStore {
    /// The attachment's view, inline: the normal path reads it with no further indirection.
    pub(crate) view: ArenaView,
    pub(crate) att: Arc<Attachment>,
    pub(crate) held: Option<Held>,
}

/// The new arena joined while the old one is held.
pub(crate) struct Held {
    store: HandoverStore,
    att: Arc<Attachment>,
}

impl Held {
    /// A pair's lookup during a hold: by its names, through the handover store (kept out of
    /// line: the normal path must not pay for it).
    #[cold]
    #[inline(never)]
    pub(crate) fn lookup_pair(
        &self,
        pair: &FramePair,
        time: i64,
    ) -> Result<(i64, Transform), TransformError> {
        self.store
            .in_one_moment(|s| crate::pair::lookup_names(s, pair.target(), pair.source(), time))
            .map(|t| (t.stamp, t.transform))
    }
}

impl BufferStore {
    /// Answering from `att`'s arena.
    pub(crate) fn alone(att: Arc<Attachment>) -> BufferStore {
        BufferStore {
            view: att.view.clone(),
            att,
            held: None,
        }
    }

    /// Answering from `old`'s and `new`'s arenas together through `store`.
    pub(crate) fn holding(
        old: Arc<Attachment>,
        store: HandoverStore,
        new: Arc<Attachment>,
    ) -> BufferStore {
        BufferStore {
            view: old.view.clone(),
            att: old,
            held: Some(Held { store, att: new }),
        }
    }

    /// The attachment answering (the old one during a hold).
    pub(crate) fn attachment(&self) -> &Arc<Attachment> {
        &self.att
    }

    /// The attachment new data arrives in.
    pub(crate) fn receiving(&self) -> &Arc<Attachment> {
        self.held.as_ref().map_or(&self.att, |h| &h.att)
    }
}

/// `$body` with `$s` bound to the store answering: the arena, or during a hold the handover
/// store (one branch on the normal path).
macro_rules! on_store {
    ($self:ident, $s:ident => $body:expr) => {
        match &$self.held {
            None => {
                let $s = &$self.view;
                $body
            }
            Some(h) => {
                let $s = &h.store;
                $body
            }
        }
    };
}

/// The methods of [`FrameStore`] but `in_one_moment`, each that of the store `$on!` binds.
macro_rules! forward_to {
    ($on:ident) => {
    #[inline]
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        $on!(self, s => s.frame_id(name))
    }
    #[inline]
    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        $on!(self, s => s.frame_name(id))
    }
    #[inline]
    fn instance(&self) -> Option<[u8; 16]> {
        $on!(self, s => s.instance())
    }
    #[inline]
    fn frame_count(&self) -> FrameId {
        $on!(self, s => s.frame_count())
    }
    #[inline]
    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        $on!(self, s => s.link_at(id, time, interpolate))
    }
    #[inline]
    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError> {
        $on!(self, s => s.link_at_within(id, time, interpolate, limit))
    }
    #[inline]
    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        $on!(self, s => s.latest_time_and_parent(id))
    }
    #[inline]
    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        $on!(self, s => s.is_static(id))
    }
    #[inline]
    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        $on!(self, s => s.history_span(id))
    }
    #[inline]
    fn store_version(&self) -> Option<u64> {
        // Alone (without `link_version`) it keeps no answer; a buffer's `ClearMark` reads it.
        $on!(self, s => s.store_version())
    }
    #[inline]
    fn read_is_whole(&self) -> bool {
        $on!(self, s => s.read_is_whole())
    }
    #[inline]
    fn history_span_within(
        &self,
        id: FrameId,
        limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError> {
        $on!(self, s => s.history_span_within(id, limit))
    }
    #[inline]
    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        $on!(self, s => s.authority(id))
    }
    #[inline]
    fn cache_time_ns(&self) -> i64 {
        $on!(self, s => s.cache_time_ns())
    }
    #[inline]
    fn link_at_close(&self, id: FrameId, time: i64) -> Result<LinkAt, ArenaError> {
        $on!(self, s => s.link_at_close(id, time))
    }
    #[inline]
    fn latest_link(&self, id: FrameId) -> Result<Option<LatestLink>, ArenaError> {
        $on!(self, s => s.latest_link(id))
    }
    #[inline]
    fn link_version(&self, id: FrameId) -> Option<u64> {
        $on!(self, s => s.link_version(id))
    }
    #[inline]
    fn links_unchanged(&self, frames: &[FrameId], versions: &[u64]) -> bool {
        $on!(self, s => s.links_unchanged(frames, versions))
    }
    };
}

/// Every method is the arena's, or the handover store's during a hold.
impl FrameStore for BufferStore {
    type Moment<'m> = BufferMoment<'m>;

    /// The arena's moment (on the copy its latch names), or the handover store's.
    #[inline(always)]
    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        match &self.held {
            None => self.view.in_one_moment(|c| query(&BufferMoment::Arena(*c))),
            Some(h) => h
                .store
                .in_one_moment(|_| query(&BufferMoment::Held(&h.store))),
        }
    }

    forward_to!(on_store);
}

/// One moment of a [`BufferStore`]: a copy of its arena, or the handover store during a hold.
#[derive(Clone, Copy)]
pub enum BufferMoment<'m> {
    /// The copy of the arena the query reads.
    Arena(CopyView<'m>),
    /// During a hold: the old and the new arena together.
    Held(&'m HandoverStore),
}

/// `$body` with `$s` bound to the moment's store.
macro_rules! on_moment {
    ($self:ident, $s:ident => $body:expr) => {
        match $self {
            BufferMoment::Arena($s) => $body,
            BufferMoment::Held($s) => $body,
        }
    };
}

impl FrameStore for BufferMoment<'_> {
    type Moment<'m>
        = Self
    where
        Self: 'm;

    /// Already one moment.
    #[inline(always)]
    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        query(self)
    }

    forward_to!(on_moment);
}
