//! Replaying a bag into an arena writer: statics first, then `/tf` at the recorded receive
//! times (scaled) or as fast as possible, optionally looped; a backward jump of the bag's
//! `/clock` clears dynamic history where it happens, as it does in a `use_sim_time` tf2_ros
//! node while `ros2 bag play` runs the bag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tf_shm::ArenaWriter;

use crate::error::BagError;
use crate::feed::Feed;
use crate::read::{BagReader, BagRecord};
use crate::scan::{ClockJump, ScannedBag};

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

/// What a replay reports as it goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event<'a> {
    /// A `/tf` message was written.
    Message(&'a Progress),
    /// The bag's `/clock` jumped back: dynamic history was cleared before what follows.
    ClockJump(&'a ClockJump),
    /// A pass ended (`loops` passes are now complete); with looping, the next one starts.
    PassEnd { loops: u64 },
}

/// How a replay ended.
#[derive(Clone, Debug, PartialEq)]
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
    /// `/clock` messages followed (all passes).
    pub clock_messages: u64,
    /// Clears of dynamic history at a backward jump of `/clock` (all passes).
    pub clock_clears: u64,
    /// Clears at the start of a new pass (`looped`).
    pub loop_clears: u64,
}

/// Longest sleep between checks of the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// The ROS time a `use_sim_time` node has, set by each `/clock` message; a message setting
/// an earlier time is a backward jump, on which tf2_ros's C++ `Buffer` clears (its jump
/// threshold is −1 ns: any backward step; docs/tf2-semantics.md §10.2).
#[derive(Default)]
struct SimClock {
    now: Option<i64>,
}

impl SimClock {
    /// Sets the clock to `to`; the time it had when that is a jump back.
    fn set(&mut self, to: i64) -> Option<i64> {
        let from = self.now.filter(|&now| to < now);
        self.now = Some(to);
        from
    }
}

/// Replays `bag` into `writer` through `feed`, following the bag's clock when `bag.topics`
/// names one and the bag has it. `on_event` is called after every message written, at every
/// clear for a clock jump and at the end of every pass; `stop` ends the replay (checked
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
    mut on_event: impl FnMut(&Event<'_>),
) -> Result<ReplayEnd, BagError> {
    let info = &bag.info;
    let t0 = Instant::now();
    let mut end = ReplayEnd {
        transforms: 0,
        messages: 0,
        loops: 0,
        stopped: false,
        elapsed: Duration::ZERO,
        clock_messages: 0,
        clock_clears: 0,
        loop_clears: 0,
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
            end.loop_clears += 1;
        }
        // A new pass starts from an unset clock: its first /clock is not a jump (the pass's
        // clear stands for it).
        let mut clock = SimClock::default();
        let pass_start = Instant::now();
        for rec in BagReader::open(&bag.path, &bag.topics)? {
            let rec = rec?;
            let log_time = rec.log_time();
            // The clock a pass starts with may come before its first /tf message.
            let early_clock = matches!(rec, BagRecord::Clock(_)) && opts.start_ns == 0;
            // Not `break` past the end: a file is in write order, which a recorder may not
            // have kept strictly sorted by receive time.
            if matches!(&rec, BagRecord::Tf(t) if t.is_static)
                || (log_time < begin && !early_clock)
                || log_time > finish
            {
                continue;
            }
            if let Some(rate) = opts.rate {
                let ahead = log_time.saturating_sub(begin);
                let due = pass_start + Duration::from_secs_f64(ahead as f64 / 1e9 / rate);
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
            match rec {
                BagRecord::Clock(c) => {
                    end.clock_messages += 1;
                    if let Some(from) = clock.set(c.clock) {
                        writer.clear();
                        end.clock_clears += 1;
                        on_event(&Event::ClockJump(&ClockJump {
                            log_time,
                            from,
                            to: c.clock,
                        }));
                    }
                }
                BagRecord::Tf(t) => {
                    feed.apply(writer, &t.message, false);
                    end.transforms += t.message.transforms.len() as u64;
                    end.messages += 1;
                    on_event(&Event::Message(&Progress {
                        bag_time_ns: log_time,
                        fraction: log_time.saturating_sub(begin) as f64 / span,
                        transforms: end.transforms,
                        loops: end.loops,
                    }));
                }
            }
        }
        end.loops += 1;
        on_event(&Event::PassEnd { loops: end.loops });
        if !opts.looped || stop.load(Ordering::Relaxed) {
            end.stopped = stop.load(Ordering::Relaxed);
            break;
        }
    }
    end.elapsed = t0.elapsed();
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::SimClock;

    #[test]
    fn any_backward_step_of_the_clock_is_a_jump_forward_is_not() {
        let mut c = SimClock::default();
        assert_eq!(c.set(5_000), None);
        assert_eq!(c.set(9_000), None);
        assert_eq!(c.set(9_000), None);
        assert_eq!(c.set(8_999), Some(9_000));
        assert_eq!(c.set(1_000_000), None);
        assert_eq!(c.set(0), Some(1_000_000));
    }
}
