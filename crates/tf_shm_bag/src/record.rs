//! Copying what an arena receives into a bag, by polling it: each poll writes the samples
//! that arrived since the last one as one `/tf` message, and all statics as one `/tf_static`
//! message whenever any changed (as tf2_ros's static broadcaster republishes them all).
//!
//! The arena keeps each frame's history for its cache time, so polling well inside it (the
//! default 10 s) catches every sample, out-of-order arrivals included (each poll compares the
//! frame's history with the one it saw before). What it cannot catch, it counts, exactly: a
//! sample the history dropped before a poll read it (history cut short for lack of memory or
//! above `max_rate_hz`, pruned by the cache time, or cleared by a clock jump). The count comes
//! from the frame's insertion count read in the same snapshot as its samples
//! ([`ArenaView::frame_history`]), so it never counts a sample that is in the file.

use std::collections::HashMap;

use tf_shm::inspect::FrameKind;
use tf_shm::store::FrameStore;
use tf_shm::{ArenaError, ArenaIdentity, ArenaView, FrameId, Sample};

use crate::error::BagError;
use crate::msg::{self, TfMessage};
use crate::write::BagWriter;

/// What the recorder saw of one dynamic frame.
#[derive(Default)]
struct Seen {
    /// The frame's history at the last poll (what is in the file of it, for the samples still
    /// held); empty after a clear or a spell as a static frame.
    held: Vec<Sample>,
    /// Its insertion count then.
    inserted: u64,
    /// The clear generation `held` belongs to.
    generation: u64,
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
        let mut j = i;
        let mut known = false;
        while j < before.len() && before[j].stamp == s.stamp {
            if same(&before[j], s) {
                known = true;
                break;
            }
            j += 1;
        }
        if !known {
            out.push(*s);
        }
    }
    out
}

/// What one poll did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollStats {
    /// Dynamic samples written.
    pub dynamic: u64,
    /// Static transforms written (all statics, when one changed).
    pub statics: u64,
    /// Samples the arena stored that no poll can record any more: dropped from the frame's
    /// history (cut, pruned or cleared) before a poll read them.
    pub missed: u64,
}

/// Why a poll failed.
#[derive(Debug)]
pub enum RecordError {
    /// Reading the arena failed (damaged, or a writer kept racing the read).
    Arena(ArenaError),
    /// Writing the bag failed.
    Bag(BagError),
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::Arena(e) => write!(f, "reading the arena: {e}"),
            RecordError::Bag(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RecordError {}

/// Records an arena into a [`BagWriter`].
pub struct Recorder {
    bag: BagWriter,
    seen: HashMap<FrameId, Seen>,
    statics: HashMap<FrameId, Sample>,
    names: Vec<Option<String>>,
    arena: Option<ArenaIdentity>,
    /// This arena was polled before (its frames then were there before the recording).
    polled: bool,
    /// Arenas recorded from (more than one when the bridge restarted meanwhile).
    pub arenas: u64,
    /// Totals over all polls.
    pub totals: PollStats,
}

impl Recorder {
    /// Records into `bag`.
    pub fn new(bag: BagWriter) -> Recorder {
        Recorder {
            bag,
            seen: HashMap::new(),
            statics: HashMap::new(),
            names: Vec::new(),
            arena: None,
            polled: false,
            arenas: 0,
            totals: PollStats::default(),
        }
    }

    fn name(&mut self, view: &ArenaView, id: FrameId) -> Result<String, ArenaError> {
        let i = id as usize;
        if self.names.len() <= i {
            self.names.resize(i + 1, None);
        }
        if self.names[i].is_none() {
            self.names[i] = view.frame_name(id)?;
        }
        Ok(self.names[i].clone().unwrap_or_default())
    }

    fn message(
        &mut self,
        view: &ArenaView,
        samples: &[(FrameId, Sample)],
    ) -> Result<TfMessage, ArenaError> {
        let mut transforms = Vec::with_capacity(samples.len());
        for &(child, s) in samples {
            let (p, q) = (s.transform.translation, s.transform.rotation);
            transforms.push(msg::TransformStamped {
                header: msg::Header {
                    stamp: msg::Time::from_ns(s.stamp),
                    frame_id: self.name(view, s.parent)?,
                },
                child_frame_id: self.name(view, child)?,
                transform: msg::Transform {
                    translation: msg::Vector3 {
                        x: p[0],
                        y: p[1],
                        z: p[2],
                    },
                    rotation: msg::Quaternion {
                        x: q[0],
                        y: q[1],
                        z: q[2],
                        w: q[3],
                    },
                },
            });
        }
        Ok(TfMessage { transforms })
    }

    /// Copies what arrived since the last poll; `now` (ns) is the receive time written.
    ///
    /// Errors: [`RecordError`]; the bag stays valid up to the last successful poll.
    pub fn poll(&mut self, view: &ArenaView, now: u64) -> Result<PollStats, RecordError> {
        let mut stats = PollStats::default();
        if self.arena != Some(view.identity()) {
            // A new arena (bridge restarted): its frame ids and counters are its own.
            self.arena = Some(view.identity());
            self.arenas += 1;
            self.seen.clear();
            self.statics.clear();
            self.names.clear();
            self.polled = false;
        }
        let first_poll = !self.polled;
        self.polled = true;
        let mut dynamic = Vec::new();
        let mut statics_changed = false;
        for id in 1..view.frame_count() {
            let info = view.frame_info(id).map_err(RecordError::Arena)?;
            match info.kind {
                FrameKind::Root => {}
                FrameKind::Static => {
                    if let Some(seen) = self.seen.get_mut(&id) {
                        // A static spell ends the dynamic history (ROS 2 kind switch).
                        seen.held.clear();
                    }
                    let s = view.frame_samples(id).map_err(RecordError::Arena)?;
                    if let Some(&s) = s.first() {
                        if self.statics.insert(id, s) != Some(s) {
                            statics_changed = true;
                        }
                    }
                }
                FrameKind::Dynamic => {
                    let h = view.frame_history(id).map_err(RecordError::Arena)?;
                    let Some(inserted) = h.inserted else {
                        continue;
                    };
                    // A frame already there at the arena's first poll brings the history it
                    // holds; one that appears later is counted from its first sample.
                    let before_recording = first_poll && !self.seen.contains_key(&id);
                    let seen = self.seen.entry(id).or_default();
                    if seen.generation != h.generation {
                        // Cleared since (a clock jump): samples equal to those held before are
                        // new ones (a replayed loop sends the same stamps again).
                        seen.held.clear();
                        seen.generation = h.generation;
                    }
                    let fresh = arrived(&seen.held, &h.samples);
                    if !before_recording {
                        // Every fresh sample is one of the insertions since the last poll; the
                        // other insertions were dropped before this snapshot read them.
                        let since = inserted.saturating_sub(seen.inserted);
                        stats.missed += since.saturating_sub(fresh.len() as u64);
                    }
                    seen.inserted = inserted;
                    seen.held = h.samples;
                    dynamic.extend(fresh.into_iter().map(|s| (id, s)));
                }
            }
        }
        if statics_changed {
            let mut all: Vec<(FrameId, Sample)> =
                self.statics.iter().map(|(&id, &s)| (id, s)).collect();
            all.sort_by_key(|&(id, _)| id);
            let m = self.message(view, &all).map_err(RecordError::Arena)?;
            self.bag.write(true, now, &m).map_err(RecordError::Bag)?;
            stats.statics = all.len() as u64;
        }
        if !dynamic.is_empty() {
            // Stable: equal stamps keep the arena's (arrival) order within a frame.
            dynamic.sort_by_key(|&(_, s)| s.stamp);
            let m = self.message(view, &dynamic).map_err(RecordError::Arena)?;
            self.bag.write(false, now, &m).map_err(RecordError::Bag)?;
            stats.dynamic = dynamic.len() as u64;
        }
        self.totals.dynamic += stats.dynamic;
        self.totals.statics += stats.statics;
        self.totals.missed += stats.missed;
        Ok(stats)
    }

    /// Messages written so far.
    pub fn messages(&self) -> u64 {
        self.bag.messages
    }

    /// Ends the bag (indexes, summary, footer).
    ///
    /// Errors: [`BagError`] when writing fails.
    pub fn finish(self) -> Result<(), BagError> {
        self.bag.finish()
    }
}
