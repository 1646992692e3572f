//! Copying what an arena receives into a bag, by polling it: each poll writes the samples
//! that arrived since the last one as one `/tf` message, and all statics as one `/tf_static`
//! message whenever any changed (as tf2_ros's static broadcaster republishes them all).
//!
//! The arena keeps each frame's history for its cache time, so polling well inside it (the
//! default 10 s) catches every sample. What it cannot catch, it counts: a sample inserted
//! behind one already recorded (an out-of-order arrival), or one overwritten before the poll.

use std::collections::HashMap;

use tf_shm::inspect::FrameKind;
use tf_shm::store::FrameStore;
use tf_shm::{ArenaError, ArenaIdentity, ArenaView, FrameId, Sample};

use crate::error::BagError;
use crate::msg::{self, TfMessage};
use crate::write::BagWriter;

#[derive(Default)]
struct Seen {
    /// Newest stamp recorded in this clear generation.
    newest: Option<i64>,
    /// The frame's accepted-sample counter at the last poll.
    accepted: u64,
}

/// What one poll did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollStats {
    /// Dynamic samples written.
    pub dynamic: u64,
    /// Static transforms written (all statics, when one changed).
    pub statics: u64,
    /// Samples the arena accepted that this poll could not record.
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
    clears: Option<u64>,
    arena: Option<ArenaIdentity>,
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
            clears: None,
            arena: None,
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
            self.clears = None;
        }
        let clears = view.stats().clears_total;
        if self.clears != Some(clears) {
            // History was cleared (a clock jump): stamps may start over lower.
            for s in self.seen.values_mut() {
                s.newest = None;
            }
            self.clears = Some(clears);
        }
        let mut dynamic = Vec::new();
        let mut statics_changed = false;
        for id in 1..view.frame_count() {
            let info = view.frame_info(id).map_err(RecordError::Arena)?;
            match info.kind {
                FrameKind::Root => {}
                FrameKind::Static => {
                    let s = view.frame_samples(id).map_err(RecordError::Arena)?;
                    if let Some(&s) = s.first() {
                        if self.statics.insert(id, s) != Some(s) {
                            statics_changed = true;
                        }
                    }
                }
                FrameKind::Dynamic => {
                    let samples = view.frame_samples(id).map_err(RecordError::Arena)?;
                    let seen = self.seen.entry(id).or_default();
                    let first_poll = seen.accepted == 0 && seen.newest.is_none();
                    let fresh: Vec<Sample> = samples
                        .into_iter()
                        .filter(|s| seen.newest.map_or(true, |n| s.stamp > n))
                        .collect();
                    let arrived = info.accepted.saturating_sub(seen.accepted);
                    if !first_poll && arrived > fresh.len() as u64 {
                        stats.missed += arrived - fresh.len() as u64;
                    }
                    seen.accepted = info.accepted;
                    if let Some(last) = fresh.last() {
                        seen.newest = Some(last.stamp);
                    }
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
