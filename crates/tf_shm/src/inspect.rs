//! What tools (`tf_shm tree`, `monitor`, `doctor`) read about an arena beyond tf2's queries:
//! per-frame bookkeeping and arena-wide counters the writer keeps.

use crate::arena::layout::*;
use crate::error::ArenaError;
use crate::sample::FrameId;
use crate::store::{FrameStore, HistorySpan};
use crate::sync::Ordering;
use crate::view::ArenaView;
use crate::writer::{CAPACITY_COUNTER, COUNTED_CODES};

/// What kind of cache a frame has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// No cache: only ever seen as a parent (a root, e.g. `map`).
    Root,
    /// One static transform (`/tf_static`).
    Static,
    /// A history (`/tf`).
    Dynamic,
}

/// One frame as tools show it.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameInfo {
    /// Frame id in this arena.
    pub id: FrameId,
    /// Frame name.
    pub name: String,
    /// Cache kind.
    pub kind: FrameKind,
    /// Parent of the newest accepted sample (`None` for roots).
    pub parent: Option<String>,
    /// Extent of the history (dynamic frames with data only).
    pub history: Option<HistorySpan>,
    /// Capacity of the frame's ring, samples (0 without a ring).
    pub ring_capacity: u32,
    /// Samples accepted since the arena was created.
    pub accepted: u64,
    /// Wall-clock time of the newest accepted sample, ns since the Unix epoch (0: never); the
    /// kernel's coarse clock at its moment's first accepted sample, so to a few ms.
    pub last_write_unix_ns: i64,
    /// How often the parent changed between consecutive accepted samples.
    pub parent_changes: u64,
    /// Wall-clock time of the last parent change, ns since the Unix epoch (0: never); to a few
    /// ms, as `last_write_unix_ns`.
    pub last_parent_change_unix_ns: i64,
    /// The history was cut shorter than the cache time (ring could not grow).
    pub history_short: bool,
    /// Samples were refused because no ring could be allocated.
    pub no_ring: bool,
    /// Authority (publisher) of the newest sample.
    pub authority: Option<String>,
}

/// Arena-wide numbers, as the writer keeps them in the arena's header (tools read these rather
/// than the header's raw fields).
#[derive(Clone, Debug, PartialEq)]
pub struct ArenaStats {
    /// Arena size, bytes.
    pub arena_size: u64,
    /// Frames created (ids `1..=frames`).
    pub frames: u32,
    /// `max_frames`.
    pub max_frames: u32,
    /// Ring pool bytes handed out, in each of the arena's two copies (`crate::moment`).
    pub pool_used: u64,
    /// Ring pool size of each copy, bytes (the two copies take twice this).
    pub pool_size: u64,
    /// Cache time, ns.
    pub cache_time_ns: i64,
    /// Samples accepted.
    pub accepted_total: u64,
    /// Samples refused by tf2's rules, per code (`"TF_NAN_INPUT"`, `"TF_OLD_DATA"`, …), every
    /// code listed (0 when none was refused).
    pub refusals: Vec<(&'static str, u64)>,
    /// Samples refused because the arena had no room for them (frame table, names region or
    /// ring pool full).
    pub capacity_refusals: u64,
    /// A new frame was refused: the frame table holds `max_frames` frames.
    pub frame_table_full: bool,
    /// A new frame or authority name was refused: the names region is full.
    pub names_full: bool,
    /// The ring pool could not grow a ring (some history is shorter than the cache time) or
    /// could not give a new frame its first ring.
    pub ring_pool_exhausted: bool,
    /// `clear()` calls (time jumps).
    pub clears_total: u64,
    /// Messages the bridge received but could not store (its intake queue was full).
    pub messages_lost: u64,
    /// `/tf_static` publishers the bridge sees in the ROS graph and has received nothing from
    /// (0 for owners that are not a bridge).
    pub static_publishers_unheard: u64,
    /// When the bridge declared the arena ready, ns since the Unix epoch (0: not yet).
    pub ready_unix_ns: i64,
    /// Wall-clock time the arena was created, ns since the Unix epoch.
    pub created_unix_ns: i64,
    /// Wall-clock time of the newest accepted sample, ns since the Unix epoch (0: never); to a
    /// few ms, as [`FrameInfo::last_write_unix_ns`].
    pub last_write_unix_ns: i64,
    /// Pid of the creating process.
    pub owner_pid: u32,
}

impl ArenaView {
    /// Frames created so far, ids `1..=frames_created()` (ids are never reused).
    pub fn frames_created(&self) -> u32 {
        self.frame_count().saturating_sub(1)
    }

    /// Every frame, by id.
    ///
    /// Errors: [`ArenaError`] when the arena is damaged or a frame cannot be read consistently.
    pub fn frames(&self) -> Result<Vec<FrameInfo>, ArenaError> {
        (1..self.frame_count())
            .map(|id| self.frame_info(id))
            .collect()
    }

    /// One frame by id.
    pub fn frame_info(&self, id: FrameId) -> Result<FrameInfo, ArenaError> {
        let rec = self.record(id)?;
        let kind = match rec.kind.load(Ordering::Acquire) {
            KIND_STATIC => FrameKind::Static,
            KIND_DYNAMIC => FrameKind::Dynamic,
            _ => FrameKind::Root,
        };
        let parent = match kind {
            FrameKind::Root => None,
            _ => self.frame_name(rec.last_parent.load(Ordering::Relaxed))?,
        };
        let flags = rec.flags.load(Ordering::Relaxed);
        Ok(FrameInfo {
            id,
            name: self.frame_name(id)?.unwrap_or_default(),
            kind,
            parent,
            history: self.history_span(id)?,
            ring_capacity: match rec.ring.load(Ordering::Relaxed) {
                0 => 0,
                desc => 1u32
                    .checked_shl(decode_ring_descriptor(desc).1)
                    .unwrap_or(0),
            },
            accepted: rec.accepted.load(Ordering::Relaxed),
            last_write_unix_ns: rec.last_write_unix_ns.load(Ordering::Relaxed),
            parent_changes: rec.parent_changes.load(Ordering::Relaxed),
            last_parent_change_unix_ns: rec.last_parent_change_unix_ns.load(Ordering::Relaxed),
            history_short: flags & FRAME_HISTORY_SHORT != 0,
            no_ring: flags & FRAME_NO_RING != 0,
            authority: self.authority(id)?,
        })
    }

    /// Arena-wide counters.
    pub fn stats(&self) -> ArenaStats {
        let h = self.header();
        let g = self.geometry();
        let status = h.status.load(Ordering::Relaxed);
        let refusals: Vec<(&'static str, u64)> = COUNTED_CODES
            .iter()
            .map(|c| c.as_str())
            .zip(&h.refusals)
            .map(|(n, c)| (n, c.load(Ordering::Relaxed)))
            .collect();
        ArenaStats {
            arena_size: g.size,
            frames: self.frames_created(),
            max_frames: g.max_frames,
            pool_used: self.copy_header().pool_used.load(Ordering::Relaxed),
            pool_size: g.pool_size,
            cache_time_ns: g.cache_time_ns,
            accepted_total: h.accepted_total.load(Ordering::Relaxed),
            capacity_refusals: h.refusals[CAPACITY_COUNTER].load(Ordering::Relaxed),
            refusals,
            frame_table_full: status & STATUS_FRAME_TABLE_FULL != 0,
            names_full: status & STATUS_NAMES_FULL != 0,
            ring_pool_exhausted: status & STATUS_POOL_EXHAUSTED != 0,
            clears_total: h.clears_total.load(Ordering::Relaxed),
            messages_lost: h.messages_lost.load(Ordering::Relaxed),
            static_publishers_unheard: h.static_publishers_unheard.load(Ordering::Relaxed),
            ready_unix_ns: h.ready_unix_ns.load(Ordering::Acquire),
            created_unix_ns: h.created_unix_ns.load(Ordering::Relaxed),
            last_write_unix_ns: h.last_write_unix_ns.load(Ordering::Relaxed),
            owner_pid: h.owner_pid.load(Ordering::Relaxed),
        }
    }
}
