//! Replaying a bag into an arena writer: statics first, then `/tf` at the recorded receive
//! times (scaled) or as fast as possible, optionally looped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tf_shm::ArenaWriter;

use crate::error::BagError;
use crate::feed::Feed;
use crate::read::BagReader;
use crate::scan::ScannedBag;

/// How to replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayOptions {
    /// Playback speed against the recorded receive times (1.0 = real time); `None` = as fast
    /// as possible.
    pub rate: Option<f64>,
    /// Start over at the end; each new pass clears dynamic history as tf2_ros's `Buffer` does
    /// on a backward clock jump (statics stay).
    pub looped: bool,
    /// Skip this long from the start of the bag (its first `/tf` receive time), ns.
    pub start_ns: u64,
    /// Play only this long from `start_ns`, ns (`None` = to the end).
    pub duration_ns: Option<u64>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            rate: Some(1.0),
            looped: false,
            start_ns: 0,
            duration_ns: None,
        }
    }
}

/// Where a replay is, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Receive time of the message just written, ns.
    pub bag_time_ns: u64,
    /// Share of the selected span played in this pass, 0..=1.
    pub fraction: f64,
    /// Transforms written since the replay started (all passes).
    pub transforms: u64,
    /// Completed passes.
    pub loops: u64,
}

/// How a replay ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayEnd {
    /// Transforms written (all passes, statics included).
    pub transforms: u64,
    /// `/tf` messages written (all passes).
    pub messages: u64,
    /// Passes completed.
    pub loops: u64,
    /// Stopped by the stop flag rather than by the end of the bag.
    pub stopped: bool,
    /// Wall-clock time of the replay.
    pub elapsed: Duration,
}

/// Longest sleep between checks of the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Replays `bag` into `writer` through `feed`.
/// `on_progress` is called after every message written; `stop` ends the replay (checked
/// between messages and while waiting).
///
/// Errors: [`BagError`] when the file fails on a later pass (changed or removed since the scan);
/// what was written before stays valid.
pub fn replay(
    bag: &ScannedBag,
    writer: &mut ArenaWriter,
    feed: &mut Feed,
    opts: &ReplayOptions,
    stop: &AtomicBool,
    mut on_progress: impl FnMut(&Progress),
) -> Result<ReplayEnd, BagError> {
    let info = &bag.info;
    let t0 = Instant::now();
    let mut end = ReplayEnd {
        transforms: 0,
        messages: 0,
        loops: 0,
        stopped: false,
        elapsed: Duration::ZERO,
    };
    for m in &info.static_messages {
        feed.apply(writer, m, true);
        end.transforms += m.transforms.len() as u64;
    }
    let Some((first, last)) = info.log_time_range else {
        end.elapsed = t0.elapsed();
        return Ok(end);
    };
    let begin = first.saturating_add(opts.start_ns);
    let finish = opts
        .duration_ns
        .map_or(last, |d| begin.saturating_add(d).min(last));
    let span = finish.saturating_sub(begin).max(1) as f64;
    loop {
        if end.loops > 0 {
            writer.clear();
        }
        let pass_start = Instant::now();
        for rec in BagReader::open(&bag.path, &bag.topics)? {
            let rec = rec?;
            // Not `break` past the end: a file is in write order, which a recorder may not
            // have kept strictly sorted by receive time.
            if rec.is_static || rec.log_time < begin || rec.log_time > finish {
                continue;
            }
            if let Some(rate) = opts.rate {
                let due = pass_start
                    + Duration::from_secs_f64((rec.log_time - begin) as f64 / 1e9 / rate);
                loop {
                    if stop.load(Ordering::Relaxed) {
                        end.stopped = true;
                        break;
                    }
                    let now = Instant::now();
                    if now >= due {
                        break;
                    }
                    std::thread::sleep((due - now).min(STOP_POLL));
                }
            }
            if end.stopped || stop.load(Ordering::Relaxed) {
                end.stopped = true;
                end.elapsed = t0.elapsed();
                return Ok(end);
            }
            feed.apply(writer, &rec.message, false);
            end.transforms += rec.message.transforms.len() as u64;
            end.messages += 1;
            on_progress(&Progress {
                bag_time_ns: rec.log_time,
                fraction: (rec.log_time - begin) as f64 / span,
                transforms: end.transforms,
                loops: end.loops,
            });
        }
        end.loops += 1;
        if !opts.looped || stop.load(Ordering::Relaxed) {
            end.stopped = stop.load(Ordering::Relaxed);
            break;
        }
    }
    end.elapsed = t0.elapsed();
    Ok(end)
}
