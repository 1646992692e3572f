//! [`Tail`]: what an arena received since the last look, for copying it out in order — into a
//! bag (`tf_shm record`) or into another tf2 buffer (the C++ `tf_shm::TransformListener`).
//!
//! Each [`Tail::poll`] reads what each changed frame stored since the last poll: only those
//! samples when they are the history's newest (samples arriving in stamp order), else the
//! whole history, compared with the one it saw before ([`ArenaView::frame_history_since`]),
//! so the samples that arrived since are found wherever they landed (out-of-order arrivals
//! included) as long as the history still holds them: the arena keeps each frame's cache time of
//! history, so a tail woken by the arena's futex, or polling well inside the cache time, gets
//! every sample. What it cannot get, it counts exactly ([`Arrived::missed`]): samples the
//! history dropped before a poll read them (cut short for lack of memory or above
//! `max_rate_hz`, pruned by the cache time, or cleared by a clock jump), from the frame's
//! insertion count read in the same snapshot as its samples ([`ArenaView::frame_history`]).
//!
//! The arena's clear (the bridge's answer to a clock jump) is reported as
//! [`Arrived::cleared`], ahead of the samples stored after it; a poll that races a clear reads
//! again, so no sample from before a clear is reported after it.
//!
//! A bridge restart: [`Tail::follow`] reads the old arena one last time (its mapping stays
//! valid), then the new one from its beginning, as at start. The new arena holds what the new
//! bridge stored: refilled statics (tf2_ros's `/tf_static` is transient-local) and new
//! samples. A sample it holds that the old arena held too is reported again; given to a tf2
//! buffer again it changes nothing (tf2's `TimeCache::insertData` drops an exact duplicate, a
//! static frame keeps its one value), so a buffer fed by a tail holds each sample once.

use std::collections::{HashMap, VecDeque};

use crate::buffer::Buffer;
use crate::error::ArenaError;
use crate::sample::{FrameId, Sample};
use crate::store::FrameStore;
use crate::view::{ArenaView, HistorySince};
use crate::ArenaIdentity;

/// Reads of one poll that may race a clear before it takes the arena as changing too fast.
const CLEAR_RETRIES: u32 = 64;

/// What a tail saw of one dynamic frame.
#[derive(Default)]
struct Seen {
    /// The frame's history at the last poll (what was reported of it, for the samples still
    /// held); empty after a clear or a spell as a static frame.
    held: VecDeque<Sample>,
    /// Its insertion count then.
    inserted: u64,
    /// `held` may hold a sample the history no longer does: read the history whole next.
    stale: bool,
}

/// Whether two samples are the same in every bit (the arena never holds two such at once:
/// tf2 drops an exact duplicate).
fn same(a: &Sample, b: &Sample) -> bool {
    let bits = |s: &Sample| {
        let (t, q) = (s.transform.translation, s.transform.rotation);
        [t[0], t[1], t[2], q[0], q[1], q[2], q[3]].map(f64::to_bits)
    };
    a.stamp == b.stamp && a.parent == b.parent && bits(a) == bits(b)
}

/// The samples of `now` (oldest first) that are not in `before` (oldest first): those
/// inserted since, wherever they landed. Linear merge over the stamps.
fn arrived(before: &[Sample], now: &[Sample]) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut i = 0;
    for s in now {
        while i < before.len() && before[i].stamp < s.stamp {
            i += 1;
        }
        // Samples of equal stamp (tf2 keeps those that differ) are few: look at all of them.
        let known = before[i..]
            .iter()
            .take_while(|b| b.stamp == s.stamp)
            .any(|b| same(b, s));
        if !known {
            out.push(*s);
        }
    }
    out
}

/// What arrived in an arena since the previous poll, in the order to apply it: `cleared`
/// first, then `statics`, then `dynamic`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Arrived {
    /// The first poll of this arena instance (the tail's first, or a restarted bridge's).
    pub new_arena: bool,
    /// The arena was cleared (tf2's `clear()`, as for a clock jump) since the previous poll.
    pub cleared: bool,
    /// Static frames set or changed since (child frame id, its sample), by frame id.
    pub statics: Vec<(FrameId, Sample)>,
    /// Dynamic samples stored since (child frame id, sample), oldest stamp first; equal
    /// stamps keep the arena's (arrival) order within a frame.
    pub dynamic: Vec<(FrameId, Sample)>,
    /// Samples the arena stored that no poll can report any more: dropped from the frame's
    /// history (cut, pruned or cleared) before a poll read them.
    pub missed: u64,
}

impl Arrived {
    /// Nothing to apply.
    pub fn is_empty(&self) -> bool {
        !self.cleared && self.statics.is_empty() && self.dynamic.is_empty()
    }
}

/// Follows what an arena receives; see the module documentation.
#[derive(Default)]
pub struct Tail {
    /// The arena polled last, kept mapped so a restart can read it once more.
    view: Option<ArenaView>,
    arena: Option<ArenaIdentity>,
    generation: u64,
    seen: HashMap<FrameId, Seen>,
    statics: HashMap<FrameId, Sample>,
    /// Each frame's change count ([`FrameStore::link_version`]) when its history was last
    /// read: a frame whose count has not moved since is not read again.
    versions: HashMap<FrameId, u64>,
    names: Vec<Option<String>>,
    names_of: Option<ArenaIdentity>,
    /// Arena instances polled (more than one when the bridge restarted meanwhile).
    pub arenas: u64,
}

impl Tail {
    /// A tail that has seen nothing: its first poll reports all the arena holds.
    pub fn new() -> Tail {
        Tail::default()
    }

    /// Frame `id`'s name in `view`'s arena (names never change in an arena, so each is read
    /// once per arena); "" for an id it does not have.
    ///
    /// Errors: [`ArenaError`] when the name is damaged.
    pub fn name(&mut self, view: &ArenaView, id: FrameId) -> Result<&str, ArenaError> {
        if self.names_of != Some(view.identity()) {
            self.names_of = Some(view.identity());
            self.names.clear();
        }
        let i = id as usize;
        if self.names.len() <= i {
            self.names.resize(i + 1, None);
        }
        if self.names[i].is_none() {
            self.names[i] = Some(view.frame_name(id)?.unwrap_or_default());
        }
        Ok(self.names[i].as_deref().unwrap_or_default())
    }

    /// What the arena a buffer receives data from got since the last call, with the arena it
    /// is from, following a bridge restart: when the buffer has joined a new arena (during the
    /// handover already), the old one is read a last time (the first element), then the new
    /// one from its beginning.
    ///
    /// Errors: as [`Tail::poll`].
    pub fn follow(&mut self, buffer: &Buffer) -> Result<Vec<(ArenaView, Arrived)>, ArenaError> {
        let now = buffer.receiving_view();
        let mut out = Vec::with_capacity(1);
        if let Some(old) = self.view.clone() {
            if old.identity() != now.identity() {
                // On an error the tail stays on the old arena, so the next call reads it again.
                let last = self.poll(&old)?;
                out.push((old, last));
            }
        }
        let arrived = self.poll(&now)?;
        out.push((now, arrived));
        Ok(out)
    }

    /// What `view`'s arena got since the last poll (all it holds at the first poll of an
    /// arena instance).
    ///
    /// Errors: [`ArenaError`] when the arena is damaged, or [`ArenaError::Contended`] when
    /// clears overtook the read 64 times (each frame's history is read in one moment; a
    /// writer never makes a reader wait); the tail is unchanged then and the next poll
    /// reports it.
    pub fn poll(&mut self, view: &ArenaView) -> Result<Arrived, ArenaError> {
        let mut out = Arrived::default();
        if self.arena != Some(view.identity()) {
            // A new arena (bridge restarted): its frame ids and counters are its own.
            self.arena = Some(view.identity());
            self.arenas += 1;
            self.seen.clear();
            self.statics.clear();
            self.versions.clear();
            self.generation = view.clear_generation();
            out.new_arena = true;
        }
        self.view = Some(view.clone());
        let (generation, frames) = read_settled(view, self.generation, &self.versions, &self.seen)?;
        if generation != self.generation {
            out.cleared = true;
            self.generation = generation;
            for seen in self.seen.values_mut() {
                seen.held.clear();
            }
        }
        for (id, version, frame) in frames {
            self.versions.insert(id, version);
            match frame {
                Frame::Static(s) => {
                    if let Some(seen) = self.seen.get_mut(&id) {
                        // A static spell ends the dynamic history (ROS 2 kind switch).
                        seen.held.clear();
                    }
                    if self.statics.insert(id, s) != Some(s) {
                        out.statics.push((id, s));
                    }
                }
                Frame::Newest {
                    samples,
                    inserted,
                    oldest,
                    len,
                } => self.newest_samples(id, samples, inserted, (oldest, len), &mut out),
                Frame::Dynamic { samples, inserted } => {
                    // A frame already there at the arena's first poll brings the history it
                    // holds; one that appears later is counted from its first sample.
                    let before = out.new_arena && !self.seen.contains_key(&id);
                    self.whole_history(id, samples, inserted, before, &mut out);
                }
            }
        }
        out.statics.sort_by_key(|&(id, _)| id);
        // Stable: equal stamps keep the arena's (arrival) order within a frame.
        out.dynamic.sort_by_key(|&(_, s)| s.stamp);
        Ok(out)
    }

    /// Frame `id`'s samples stored since the last poll, `samples` (the history's newest, read
    /// in one snapshot with its insertion count and the history's `(oldest stamp, length)`):
    /// the held history loses what the arena's pruned and gains them.
    fn newest_samples(
        &mut self,
        id: FrameId,
        samples: Vec<Sample>,
        inserted: u64,
        (oldest, len): (i64, usize),
        out: &mut Arrived,
    ) {
        self.statics.remove(&id);
        let seen = self.seen.entry(id).or_default();
        while seen.held.front().is_some_and(|s| s.stamp < oldest) {
            seen.held.pop_front();
        }
        seen.held.extend(samples.iter().copied());
        seen.inserted = inserted;
        out.dynamic.extend(samples.into_iter().map(|s| (id, s)));
        if seen.held.len() != len {
            // The history cut a sample among equal stamps: the next poll compares the whole
            // history with what is held.
            seen.stale = true;
            self.versions.remove(&id);
        }
    }

    /// Frame `id`'s whole history `samples` (with its insertion count), read in one
    /// snapshot: what is not in the history held since the last poll arrived since.
    fn whole_history(
        &mut self,
        id: FrameId,
        samples: Vec<Sample>,
        inserted: u64,
        before: bool,
        out: &mut Arrived,
    ) {
        self.statics.remove(&id);
        let seen = self.seen.entry(id).or_default();
        let fresh = arrived(seen.held.make_contiguous(), &samples);
        if !before {
            // Every fresh sample is one of the insertions since the last poll; the other
            // insertions were dropped before this snapshot read them.
            let since = inserted.saturating_sub(seen.inserted);
            out.missed += since.saturating_sub(fresh.len() as u64);
        }
        seen.inserted = inserted;
        seen.held = samples.into();
        seen.stale = false;
        out.dynamic.extend(fresh.into_iter().map(|s| (id, s)));
    }
}

/// A frame a poll read: its id, its change count, what it holds.
type Read = (FrameId, u64, Frame);

/// One frame as a poll reads it.
enum Frame {
    Static(Sample),
    /// The whole history.
    Dynamic {
        samples: Vec<Sample>,
        inserted: u64,
    },
    /// Only what it stored since the last poll, its newest samples (see
    /// [`HistorySince::Newest`]), and the history's length.
    Newest {
        samples: Vec<Sample>,
        inserted: u64,
        oldest: i64,
        len: usize,
    },
}

/// Every frame with data that changed since `versions` (all of them when the arena was
/// cleared since `known`, the generation `versions` belong to), with its change count, all read
/// under one clear generation (returned): a read that a clear overtook is done again, so no
/// history from before the clear passes for one after it. (A history not written since a clear
/// reads as empty.)
fn read_settled(
    view: &ArenaView,
    known: u64,
    versions: &HashMap<FrameId, u64>,
    seen: &HashMap<FrameId, Seen>,
) -> Result<(u64, Vec<Read>), ArenaError> {
    for _ in 0..CLEAR_RETRIES {
        let generation = view.clear_generation();
        let mut frames = Vec::new();
        for id in 1..view.frame_count() {
            // Loaded before the history (acquire; the writer bumps it after each change is
            // visible): a change after this load moves it, and the next poll reads the frame.
            let version = view.link_version(id).unwrap_or(u64::MAX);
            if generation == known && versions.get(&id) == Some(&version) {
                continue;
            }
            let known_history = seen.get(&id).filter(|s| generation == known && !s.stale);
            let h = match known_history {
                Some(s) => {
                    let newest = s.held.back().map_or(i64::MIN, |s| s.stamp);
                    match view.frame_history_since(id, s.inserted, newest)? {
                        HistorySince::Newest {
                            history,
                            oldest,
                            len,
                        } => {
                            frames.push((
                                id,
                                version,
                                Frame::Newest {
                                    samples: history.samples,
                                    inserted: history.inserted.unwrap_or(s.inserted),
                                    oldest,
                                    len,
                                },
                            ));
                            continue;
                        }
                        HistorySince::Whole(h) => h,
                    }
                }
                None => view.frame_history(id)?,
            };
            match (h.inserted, h.samples.first()) {
                (Some(inserted), _) => frames.push((
                    id,
                    version,
                    Frame::Dynamic {
                        samples: h.samples,
                        inserted,
                    },
                )),
                // Without an insertion count and with a sample: a static frame.
                (None, Some(&s)) => frames.push((id, version, Frame::Static(s))),
                (None, None) => {}
            }
        }
        // The generation only grows: unchanged at the end, every history was read under it.
        if view.clear_generation() == generation {
            return Ok((generation, frames));
        }
    }
    Err(ArenaError::Contended { frame: 0 })
}

/// The authority (publisher) of frame `id`'s newest sample, as tf2's `setTransform` takes it
/// (the arena keeps one per frame); "" when it has none.
///
/// Errors: [`ArenaError`] when the record is damaged.
pub fn authority(view: &ArenaView, id: FrameId) -> Result<String, ArenaError> {
    Ok(view.authority(id)?.unwrap_or_default())
}

/// A key of frame `id`'s [`authority`] in `view`'s arena instance, for a reader that keeps the
/// text: the text changes only with the key (names are written once), so an unchanged key is
/// an unchanged authority; 0 when the frame has none.
///
/// Errors: [`ArenaError`] when the record is damaged.
pub fn authority_key(view: &ArenaView, id: FrameId) -> Result<u64, ArenaError> {
    view.authority_ref(id)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::arena::{Arena, ArenaConfig};
    use crate::validate::TransformInput;
    use crate::writer::ArenaWriter;

    fn set(w: &mut ArenaWriter, child: &str, stamp: i64, x: f64, is_static: bool) {
        let t = TransformInput {
            frame_id: "map",
            child_frame_id: child,
            stamp,
            translation: [x, 0.0, 0.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        w.set_transform(&t, "tester", is_static).unwrap();
    }

    fn stamps(a: &Arrived) -> Vec<i64> {
        a.dynamic.iter().map(|(_, s)| s.stamp).collect()
    }

    #[test]
    fn reports_what_it_holds_then_each_new_sample_once_and_a_clear_before_what_follows() {
        let (mut w, view) = Arena::in_memory(&ArenaConfig::default()).unwrap();
        set(&mut w, "s", 5, 1.0, true);
        set(&mut w, "a", 20, 0.0, false);
        set(&mut w, "a", 10, 0.0, false);
        let mut tail = Tail::new();
        let first = tail.poll(&view).unwrap();
        assert!(first.new_arena && !first.cleared);
        assert_eq!(stamps(&first), [10, 20]);
        assert_eq!(first.statics.len(), 1);
        assert!(tail.poll(&view).unwrap().is_empty(), "nothing new");
        set(&mut w, "a", 15, 0.0, false);
        set(&mut w, "s", 5, 1.0, true);
        let next = tail.poll(&view).unwrap();
        assert_eq!(stamps(&next), [15], "the out-of-order one, once");
        assert!(next.statics.is_empty(), "an unchanged static is not news");
        w.clear();
        set(&mut w, "a", 1, 0.0, false);
        let after = tail.poll(&view).unwrap();
        assert!(after.cleared);
        assert_eq!(stamps(&after), [1]);
        assert_eq!(after.missed, 0);
        assert_eq!(tail.name(&view, first.dynamic[0].0).unwrap(), "a");
        assert_eq!(authority(&view, first.dynamic[0].0).unwrap(), "tester");
    }

    /// The history this tail holds for frame `name`, and the one the arena holds.
    fn held_and_arena(tail: &Tail, view: &ArenaView, name: &str) -> (Vec<Sample>, Vec<Sample>) {
        let id = view.frame_id(name).unwrap().unwrap();
        let held = tail.seen[&id].held.iter().copied().collect();
        (held, view.frame_samples(id).unwrap())
    }

    #[test]
    fn samples_in_stamp_order_are_read_alone_and_the_held_history_follows_the_arenas() {
        use crate::fast_path::{declines, reset_declines};
        let (mut w, view) = Arena::in_memory(&ArenaConfig::default()).unwrap();
        let ms = 1_000_000;
        set(&mut w, "a", 10 * ms, 0.0, false);
        let mut tail = Tail::new();
        assert_eq!(stamps(&tail.poll(&view).unwrap()), [10 * ms]);
        reset_declines();
        // 25 s at 100 Hz: the default 10 s cache time prunes from the 11th second on.
        for k in 2..2500 {
            set(&mut w, "a", k * 10 * ms, k as f64, false);
            let a = tail.poll(&view).unwrap();
            assert_eq!(stamps(&a), [k * 10 * ms]);
            assert_eq!(a.missed, 0);
            if k % 500 == 0 {
                let (held, arena) = held_and_arena(&tail, &view, "a");
                assert_eq!(held, arena, "after {k} samples");
            }
        }
        assert_eq!(
            declines().history_since,
            0,
            "every poll read only what was new"
        );
        // One landing among older stamps: read whole once, reported once.
        set(&mut w, "a", 24_000 * ms + 5 * ms, 0.5, false);
        set(&mut w, "a", 25_000 * ms, 0.5, false);
        let a = tail.poll(&view).unwrap();
        assert_eq!(stamps(&a), [24_005 * ms, 25_000 * ms]);
        assert_eq!(declines().history_since, 1);
        let (held, arena) = held_and_arena(&tail, &view, "a");
        assert_eq!(held, arena);
        // And in stamp order again: alone again.
        set(&mut w, "a", 25_010 * ms, 0.5, false);
        assert_eq!(stamps(&tail.poll(&view).unwrap()), [25_010 * ms]);
        assert_eq!(declines().history_since, 1);
    }
}
