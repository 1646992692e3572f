//! The order of a kept time-0 answer's loads, checked deterministically: a sample stored just
//! after the walk read a link's newest sample (as a writer racing the lookup may) must not
//! leave a kept answer that looks current. That holds only if each link's change count is
//! loaded *before* its sample ([`crate::FramePair`]); loaded after, the count already
//! covers the new sample while the answer was read from the old one.

use std::cell::{Cell, RefCell};

use crate::error::ArenaError;
use crate::pair::lookup;
use crate::sample::FrameId;
use crate::store::{FrameStore, HistoryLimit, HistorySpan, LatestLink, LinkAt};
use crate::validate::TransformInput;
use crate::walk::lookup_transform_ids;
use crate::{Arena, ArenaConfig, ArenaView, ArenaWriter, FramePair};

const T0: i64 = 1_000_000_000_000;
const PERIOD: i64 = 10_000_000;

/// An arena view whose `latest_link` of one frame stores a new sample for it right after
/// reading, once.
struct Racing {
    view: ArenaView,
    writer: RefCell<ArenaWriter>,
    frame: FrameId,
    fired: Cell<bool>,
}

fn put(w: &mut ArenaWriter, parent: &str, child: &str, stamp: i64, x: f64, is_static: bool) {
    w.set_transform(
        &TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp,
            translation: [x, 0.0, 0.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
        },
        "test",
        is_static,
    )
    .unwrap();
}

impl FrameStore for Racing {
    type Moment<'m>
        = Self
    where
        Self: 'm;

    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        query(self)
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
    fn link_at_close(&self, id: FrameId, time: i64) -> Result<LinkAt, ArenaError> {
        self.view.link_at_close(id, time)
    }
    fn latest_link(&self, id: FrameId) -> Result<Option<LatestLink>, ArenaError> {
        let link = self.view.latest_link(id);
        if id == self.frame && !self.fired.replace(true) {
            put(
                &mut self.writer.borrow_mut(),
                "odom",
                "base",
                T0 + 9 * PERIOD,
                9.0,
                false,
            );
        }
        link
    }
    fn link_version(&self, id: FrameId) -> Option<u64> {
        self.view.link_version(id)
    }
    fn store_version(&self) -> Option<u64> {
        self.view.store_version()
    }
    /// The counts' own protocol is what this store examines, with its reads racing the writer
    /// on purpose.
    fn read_is_whole(&self) -> bool {
        true
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
    fn links_unchanged(&self, frames: &[FrameId], versions: &[u64]) -> bool {
        self.view.links_unchanged(frames, versions)
    }
}

#[test]
fn a_sample_stored_between_the_read_and_the_kept_answer_is_not_hidden() {
    let (mut w, view) = Arena::in_memory(&ArenaConfig::default()).unwrap();
    put(&mut w, "map", "odom", 0, 1.0, true);
    for k in 0..5 {
        put(&mut w, "odom", "base", T0 + k * PERIOD, k as f64, false);
    }
    let id = |n: &str| view.frame_id(n).unwrap().unwrap();
    let (map, base) = (id("map"), id("base"));
    let racing = Racing {
        view: view.clone(),
        writer: RefCell::new(w),
        frame: base,
        fired: Cell::new(false),
    };
    let mut pair = FramePair::new("map", "base");
    // Read before the racing sample: the newest was stamped T0 + 4 periods.
    let first = lookup(&racing, &mut pair, 0).unwrap();
    assert_eq!(first.0, T0 + 4 * PERIOD);
    // The sample stored after that read is the answer now, kept answer or not.
    let now = lookup_transform_ids(&view, map, base, 0).unwrap();
    assert_eq!(now.0, T0 + 9 * PERIOD);
    let again = lookup(&racing, &mut pair, 0).unwrap();
    assert_eq!(again, now);
    // And that one is kept.
    assert_eq!(lookup(&racing, &mut pair, 0).unwrap(), now);
}
