//! The stores one tf2 test suite runs over: the test store ([`VecStore`]), an in-memory arena
//! and a sealed memfd arena read through a read-only mapping. Queries go through
//! [`tf_shm::BufferCore`] (for the arenas, through the names API's per-thread cache of resolved pairs); inserts
//! through each store's `setTransform`.
// Each test binary uses a different part.
#![allow(dead_code)]

use tf_shm::error::ArenaError;
use tf_shm::store::{FrameStore, HistoryLimit, HistorySpan, LatestLink, LinkAt};
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, FrameId};

use crate::vec_store::{ns, VecStore};

/// A store the suite can fill.
pub trait Backend: FrameStore + Sized {
    fn new() -> Self;
    /// tf2's `setTransform`; panics if refused.
    fn set(&mut self, input: &TransformInput<'_>, is_static: bool);
    /// tf2's `clear()`.
    fn clear(&mut self);

    fn insert(&mut self, parent: &str, child: &str, stamp: i64, t: [f64; 3], q: [f64; 4]) {
        let input = TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp,
            translation: t,
            rotation: q,
        };
        self.set(&input, false);
    }
    /// Dynamic insert, translation only, stamp in seconds.
    fn add(&mut self, parent: &str, child: &str, secs: f64, t: [f64; 3]) {
        self.insert(parent, child, ns(secs), t, [0.0, 0.0, 0.0, 1.0]);
    }
    /// Static insert, translation only.
    fn add_static(&mut self, parent: &str, child: &str, t: [f64; 3]) {
        let input = TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp: 0,
            translation: t,
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        self.set(&input, true);
    }
}

impl Backend for VecStore {
    fn new() -> Self {
        VecStore::default()
    }
    fn set(&mut self, input: &TransformInput<'_>, is_static: bool) {
        self.set_transform(input, "test", is_static).unwrap();
    }
    fn clear(&mut self) {
        VecStore::clear(self);
    }
}

/// An arena with its writer; `SHARED`: a sealed memfd read through a read-only mapping.
pub struct ArenaStore<const SHARED: bool> {
    writer: ArenaWriter,
    view: ArenaView,
}

fn config() -> ArenaConfig {
    ArenaConfig {
        max_frames: 32,
        memory_budget_bytes: 2 << 20,
        ..ArenaConfig::default()
    }
}

impl<const SHARED: bool> Backend for ArenaStore<SHARED> {
    fn new() -> Self {
        if SHARED {
            let shared = Arena::create_shared(&config(), "tf_shm_suite").unwrap();
            let view = Arena::attach(shared.reader_fd().unwrap()).unwrap();
            let (_, writer, _) = shared.into_parts();
            ArenaStore { writer, view }
        } else {
            let (writer, view) = Arena::in_memory(&config()).unwrap();
            ArenaStore { writer, view }
        }
    }
    fn set(&mut self, input: &TransformInput<'_>, is_static: bool) {
        self.writer.set_transform(input, "test", is_static).unwrap();
    }
    fn clear(&mut self) {
        self.writer.clear();
    }
}

impl<const SHARED: bool> FrameStore for ArenaStore<SHARED> {
    type Moment<'m>
        = Self
    where
        Self: 'm;

    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        self.view.in_one_moment(|_| query(self))
    }
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        self.view.frame_id(name)
    }
    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.view.frame_name(id)
    }
    fn instance(&self) -> Option<[u8; 16]> {
        self.view.instance()
    }
    fn frame_count(&self) -> FrameId {
        self.view.frame_count()
    }
    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        self.view.link_at(id, time, interpolate)
    }
    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        self.view.latest_time_and_parent(id)
    }
    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        self.view.is_static(id)
    }
    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        self.view.history_span(id)
    }
    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.view.authority(id)
    }
    fn cache_time_ns(&self) -> i64 {
        self.view.cache_time_ns()
    }
    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError> {
        self.view.link_at_within(id, time, interpolate, limit)
    }
    fn history_span_within(
        &self,
        id: FrameId,
        limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError> {
        self.view.history_span_within(id, limit)
    }
    fn link_at_close(&self, id: FrameId, time: i64) -> Result<LinkAt, ArenaError> {
        self.view.link_at_close(id, time)
    }
    fn latest_link(&self, id: FrameId) -> Result<Option<LatestLink>, ArenaError> {
        self.view.latest_link(id)
    }
    fn link_version(&self, id: FrameId) -> Option<u64> {
        self.view.link_version(id)
    }
    fn links_unchanged(&self, frames: &[FrameId], versions: &[u64]) -> bool {
        self.view.links_unchanged(frames, versions)
    }
    fn store_version(&self) -> Option<u64> {
        self.view.store_version()
    }
    fn read_is_whole(&self) -> bool {
        self.view.read_is_whole()
    }
}

/// The in-memory arena.
pub type InMemory = ArenaStore<false>;
/// The memfd arena through a read-only mapping.
pub type ReadOnlyMemfd = ArenaStore<true>;

/// Instantiates each generic test `name::<B: Backend>()` once per store, in modules
/// `test_store`, `in_memory_arena` and `read_only_memfd`.
#[macro_export]
macro_rules! over_every_store {
    ($($name:ident),* $(,)?) => {
        mod test_store {
            $( #[test] fn $name() { super::$name::<super::VecStore>() } )*
        }
        mod in_memory_arena {
            $( #[test] fn $name() { super::$name::<super::backends::InMemory>() } )*
        }
        mod read_only_memfd {
            $( #[test] fn $name() { super::$name::<super::backends::ReadOnlyMemfd>() } )*
        }
    };
}
