//! A first pass over a bag: validates the whole file (container, schemas, every TF message
//! decodes) before anything is served, keeps the static messages to load first, and measures
//! what sizing and progress need.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::BagError;
use crate::msg::TfMessage;
use crate::read::{BagReader, BagRecord, Topics};

/// A backward jump of the bag's `/clock`: where a `use_sim_time` tf2_ros node clears its
/// dynamic history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockJump {
    /// Receive time of the `/clock` message that jumps back, ns.
    pub log_time: u64,
    /// The clock before it and the clock it sets, ns.
    pub from: i64,
    pub to: i64,
}

/// A frame whose `/tf` stamps step back by at least [`STAMP_STEP_MIN_NS`] (a simulation reset,
/// a second recording appended): tf2 refuses what is older than its newest sample minus the
/// cache time, unless a clock jump cleared the history first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StampStep {
    /// Receive time of the message with the earlier stamp, ns.
    pub log_time: u64,
    /// The frame (child frame id).
    pub frame: String,
    /// The frame's previous stamp and the one that steps back, ns.
    pub from: i64,
    pub to: i64,
}

/// Smallest backward step of a frame's stamps that [`BagInfo::stamp_steps`] lists, ns (1 s,
/// the smallest backward clock jump tf2_ros's Python buffer clears on; ordinary out-of-order
/// arrivals are far shorter).
pub const STAMP_STEP_MIN_NS: i64 = 1_000_000_000;

/// Entries kept in [`BagInfo::clock_jumps`] and [`BagInfo::stamp_steps`] (the totals count all).
const KEPT_EVENTS: usize = 4096;

/// What a bag holds on its TF topics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BagInfo {
    /// Messages on the static topic, in file order (kept: they are loaded first).
    pub static_messages: Vec<TfMessage>,
    /// Messages on the dynamic topic.
    pub dynamic_messages: u64,
    /// Transforms in the dynamic messages.
    pub dynamic_transforms: u64,
    /// Transforms in the static messages.
    pub static_transforms: u64,
    /// Log (receive) time of the first and last dynamic message, ns.
    pub log_time_range: Option<(u64, u64)>,
    /// Oldest and newest stamp of the dynamic transforms, ns.
    pub stamp_range: Option<(i64, i64)>,
    /// Dynamic transforms per child frame.
    pub per_frame: HashMap<String, u64>,
    /// Every topic of the bag with its schema name.
    pub topics: Vec<(String, String)>,
    /// Messages on the clock topic (0 when it is not read).
    pub clock_messages: u64,
    /// Backward jumps of the clock, in file order (the first [`KEPT_EVENTS`]).
    pub clock_jumps: Vec<ClockJump>,
    /// Backward jumps of the clock in all.
    pub clock_jumps_total: u64,
    /// Backward steps of a frame's stamps by [`STAMP_STEP_MIN_NS`] or more, in file order
    /// (the first [`KEPT_EVENTS`]).
    pub stamp_steps: Vec<StampStep>,
    /// Such steps in all.
    pub stamp_steps_total: u64,
    /// Size of the file, bytes.
    pub file_bytes: u64,
}

/// Reads the whole bag once.
///
/// Errors: every [`BagError`]; [`BagError::NoTf`] when neither TF topic has a message.
pub fn scan(path: &Path, topics: &Topics) -> Result<BagInfo, BagError> {
    let mut reader = BagReader::open(path, topics)?;
    let mut info = BagInfo::default();
    let mut clock: Option<i64> = None;
    let mut frames: HashMap<String, (u64, i64)> = HashMap::new();
    for rec in reader.by_ref() {
        let rec = match rec? {
            BagRecord::Tf(t) => t,
            BagRecord::Clock(c) => {
                info.clock_messages += 1;
                if let Some(from) = clock.filter(|&last| c.clock < last) {
                    info.clock_jumps_total += 1;
                    if info.clock_jumps.len() < KEPT_EVENTS {
                        info.clock_jumps.push(ClockJump {
                            log_time: c.log_time,
                            from,
                            to: c.clock,
                        });
                    }
                }
                clock = Some(c.clock);
                continue;
            }
        };
        if rec.is_static {
            info.static_transforms += rec.message.transforms.len() as u64;
            info.static_messages.push(rec.message);
            continue;
        }
        info.dynamic_messages += 1;
        info.dynamic_transforms += rec.message.transforms.len() as u64;
        let (lo, hi) = info
            .log_time_range
            .get_or_insert((rec.log_time, rec.log_time));
        *lo = (*lo).min(rec.log_time);
        *hi = (*hi).max(rec.log_time);
        for t in &rec.message.transforms {
            let s = t.header.stamp.to_ns();
            let (lo, hi) = info.stamp_range.get_or_insert((s, s));
            *lo = (*lo).min(s);
            *hi = (*hi).max(s);
            // One lookup per transform: (count, previous stamp) by child frame.
            match frames.get_mut(t.child_frame_id.as_str()) {
                Some((n, p)) => {
                    *n += 1;
                    if p.saturating_sub(s) >= STAMP_STEP_MIN_NS {
                        info.stamp_steps_total += 1;
                        if info.stamp_steps.len() < KEPT_EVENTS {
                            info.stamp_steps.push(StampStep {
                                log_time: rec.log_time,
                                frame: t.child_frame_id.clone(),
                                from: *p,
                                to: s,
                            });
                        }
                    }
                    *p = s;
                }
                None => {
                    frames.insert(t.child_frame_id.clone(), (1, s));
                }
            }
        }
    }
    info.per_frame = frames.into_iter().map(|(f, (n, _))| (f, n)).collect();
    info.topics = reader.topics();
    info.file_bytes = reader.bytes_read();
    if reader.tf_messages() == 0 {
        return Err(reader.no_tf_error());
    }
    Ok(info)
}

/// A bag checked by [`scan`], ready to replay.
#[derive(Clone, Debug)]
pub struct ScannedBag {
    /// The file.
    pub path: PathBuf,
    /// Its TF topics.
    pub topics: Topics,
    /// What it holds.
    pub info: BagInfo,
}

impl ScannedBag {
    /// [`scan`]s `path`.
    ///
    /// Errors: as [`scan`].
    pub fn open(path: &Path, topics: &Topics) -> Result<ScannedBag, BagError> {
        Ok(ScannedBag {
            path: path.to_path_buf(),
            topics: topics.clone(),
            info: scan(path, topics)?,
        })
    }
}
