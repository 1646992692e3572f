//! Copying what an arena receives into a bag, by polling it: each poll writes the samples
//! that arrived since the last one as one `/tf` message, and all statics as one `/tf_static`
//! message whenever any changed (as tf2_ros's static broadcaster republishes them all).
//!
//! What arrived is what [`tf_shm::tail::Tail`] finds (the one reader of an arena's stream,
//! also behind the C++ `tf_shm::TransformListener`): every sample while the history holds it,
//! out-of-order arrivals included, and an exact count of what it dropped before a poll read
//! it ([`PollStats::missed`]); a bridge restart ([`Recorder::poll_buffer`]) reads the old
//! arena's last samples, then the new arena from its beginning. What was published while no
//! bridge served is in no arena: [`Recorder::owner`] keeps those spans, for the recording to
//! report rather than pass for complete.

use std::collections::BTreeMap;

use tf_shm::tail::{Arrived, Tail};
use tf_shm::{ArenaError, ArenaView, Buffer, FrameId, Sample};

use crate::error::BagError;
use crate::msg::{self, TfMessage};
use crate::owner_watch::{OwnerChange, OwnerWatch};
use crate::write::BagWriter;

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
    /// The arena's owner went away or a new one came ([`Recorder::poll_buffer`] only; never in
    /// [`Recorder::totals`]).
    pub owner: Option<OwnerChange>,
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
    tail: Tail,
    /// The arena's static frames, as last written.
    statics: BTreeMap<FrameId, Sample>,
    /// Arenas recorded from (more than one when the bridge restarted meanwhile).
    pub arenas: u64,
    /// Totals over all polls.
    pub totals: PollStats,
    /// The recorded arena's owner over the recording ([`Recorder::poll_buffer`]).
    pub owner: OwnerWatch,
    /// Per arena instance read by [`Recorder::poll_buffer`]: its owner's count of messages lost
    /// on the way in (`ArenaStats::messages_lost`) when the recording first saw it, and last.
    intake: BTreeMap<[u8; 16], (u64, u64)>,
}

impl Recorder {
    /// Records into `bag`.
    pub fn new(bag: BagWriter) -> Recorder {
        Recorder {
            bag,
            tail: Tail::new(),
            statics: BTreeMap::new(),
            arenas: 0,
            totals: PollStats::default(),
            owner: OwnerWatch::default(),
            intake: BTreeMap::new(),
        }
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
                    frame_id: self.tail.name(view, s.parent)?.to_owned(),
                },
                child_frame_id: self.tail.name(view, child)?.to_owned(),
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
        let arrived = self.tail.poll(view).map_err(RecordError::Arena)?;
        self.write(view, &arrived, now)
    }

    /// [`Recorder::poll`] of the arena `buffer` receives data from, following a bridge
    /// restart ([`Tail::follow`]: the old arena's last samples, then the new arena's), and
    /// watching its owner ([`PollStats::owner`], [`Recorder::owner`]).
    ///
    /// Errors: as [`Recorder::poll`].
    pub fn poll_buffer(&mut self, buffer: &Buffer, now: u64) -> Result<PollStats, RecordError> {
        let (view, alive) = receiving(buffer);
        let arena_stats = view.stats();
        let lost = arena_stats.messages_lost;
        // The first arena's earlier losses are not the recording's; a later arena began
        // during it, so all of its are.
        let base = if self.intake.is_empty() { lost } else { 0 };
        self.intake
            .entry(view.identity().instance_uuid)
            .or_insert((base, lost))
            .1 = lost;
        let owner = self
            .owner
            .observe(view.identity(), alive, now, || arena_stats.owner_pid);
        let mut stats = PollStats {
            owner,
            ..PollStats::default()
        };
        for (view, arrived) in self.tail.follow(buffer).map_err(RecordError::Arena)? {
            let s = self.write(&view, &arrived, now)?;
            stats.dynamic += s.dynamic;
            stats.statics += s.statics;
            stats.missed += s.missed;
        }
        Ok(stats)
    }

    fn write(
        &mut self,
        view: &ArenaView,
        arrived: &Arrived,
        now: u64,
    ) -> Result<PollStats, RecordError> {
        let mut stats = PollStats {
            missed: arrived.missed,
            ..PollStats::default()
        };
        if arrived.new_arena {
            // A new arena (bridge restarted): its frame ids are its own.
            self.arenas += 1;
            self.statics.clear();
        }
        self.statics.extend(arrived.statics.iter().copied());
        if !arrived.statics.is_empty() {
            // All statics whenever one changed, as tf2_ros's static broadcaster republishes.
            let all: Vec<_> = self.statics.iter().map(|(&id, &s)| (id, s)).collect();
            let m = self.message(view, &all).map_err(RecordError::Arena)?;
            self.bag.write(true, now, &m).map_err(RecordError::Bag)?;
            stats.statics = all.len() as u64;
        }
        if !arrived.dynamic.is_empty() {
            let m = self
                .message(view, &arrived.dynamic)
                .map_err(RecordError::Arena)?;
            self.bag.write(false, now, &m).map_err(RecordError::Bag)?;
            stats.dynamic = arrived.dynamic.len() as u64;
        }
        self.totals.dynamic += stats.dynamic;
        self.totals.statics += stats.statics;
        self.totals.missed += stats.missed;
        Ok(stats)
    }

    /// Messages the arenas' owners received during the recording but could not store (their
    /// intake queue was full; `ArenaStats::messages_lost`): in no arena, so in no bag and not
    /// in [`PollStats::missed`]. Counted by [`Recorder::poll_buffer`] only.
    pub fn intake_lost(&self) -> u64 {
        self.intake
            .values()
            .map(|&(first, last)| last.saturating_sub(first))
            .sum()
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

/// The arena `buffer` receives data from and whether its owner is alive, both of one moment:
/// an answer from the old owner about the new arena would pass a restart for a loss.
fn receiving(buffer: &Buffer) -> (ArenaView, bool) {
    loop {
        let view = buffer.receiving_view();
        let alive = buffer.owner_alive();
        if buffer.receiving_view().identity() == view.identity() {
            return (view, alive);
        }
    }
}
