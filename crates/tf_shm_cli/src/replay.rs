//! `tf_shm replay BAG.mcap`: serves a rosbag2 bag's TF through an arena, as the bridge serves
//! a live robot's (require_create, rendezvous owner), so `tf_shm::open()` consumers and the
//! other commands work unchanged. A bag with `/clock` is followed as a `use_sim_time` tf2_ros
//! node follows `ros2 bag play`: a backward jump clears dynamic history there.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use tf_shm::ArenaConfig;
use tf_shm_bag::feed::{self, Feed};
use tf_shm_bag::scan::BagInfo;
use tf_shm_bag::{BagError, Event, ReplayOptions, ScannedBag, Topics};

use crate::cli::Global;
use crate::connect;

/// `tf_shm replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// The rosbag2 MCAP file (uncompressed, zstd or lz4 chunks)
    pub bag: PathBuf,
    /// Playback speed against the recorded receive times (2 = twice as fast)
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR", value_parser = crate::cli::positive_f64)]
    pub rate: f64,
    /// Write every transform at once, without waiting for its receive time
    #[arg(long, conflicts_with = "rate")]
    pub as_fast_as_possible: bool,
    /// Start over at the end; each pass clears dynamic history as tf2_ros does on a
    /// backward clock jump (statics stay)
    #[arg(long = "loop")]
    pub looped: bool,
    /// Skip this long from the bag's first /tf message, s
    #[arg(long, default_value_t = 0.0, value_name = "SEC", value_parser = non_negative_f64)]
    pub start: f64,
    /// Play only this long from --start, s
    #[arg(long, value_name = "SEC", value_parser = crate::cli::positive_f64)]
    pub duration: Option<f64>,
    /// Keep serving after the end of the bag until interrupted
    #[arg(long, conflicts_with = "looped")]
    pub hold: bool,
    /// Dynamic transforms topic in the bag
    #[arg(long, default_value = "/tf", value_name = "TOPIC")]
    pub tf_topic: String,
    /// Static transforms topic in the bag
    #[arg(long, default_value = "/tf_static", value_name = "TOPIC")]
    pub tf_static_topic: String,
    /// The bag's clock topic (rosgraph_msgs/msg/Clock), followed as a use_sim_time tf2_ros
    /// node follows it: a backward jump (a simulation reset) clears dynamic history there
    #[arg(long, default_value = "/clock", value_name = "TOPIC")]
    pub clock_topic: String,
    /// Do not follow the bag's clock: history is never cleared within a pass, so stamps that
    /// start over are stored behind (or refused against) the older ones
    #[arg(long)]
    pub ignore_clock: bool,
    /// History kept per dynamic frame, s (tf2's cache time), as the bridge's cache_time
    #[arg(long, default_value_t = 10.0, value_name = "SEC", value_parser = crate::cli::positive_f64)]
    pub cache_time: f64,
    /// Arena size, MiB, as the bridge's memory_budget_mb
    #[arg(long, default_value_t = 64, value_name = "MIB")]
    pub memory_budget_mb: u64,
    /// Most frames the arena can hold, as the bridge's max_frames
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub max_frames: u32,
    /// Highest per-frame rate for which the full cache time is kept, Hz, as the bridge's
    /// max_rate_hz
    #[arg(long, default_value_t = 1000, value_name = "HZ")]
    pub max_rate_hz: u32,
    /// No progress line, even on a terminal
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

fn non_negative_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(_) => Err("must be a number ≥ 0".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Whether SIGINT or SIGTERM arrived.
pub(crate) fn stop_flag() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // Failing to install leaves the default action (terminate), which is still safe.
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    stop
}

/// Refusal texts printed after the summary (the counts per reason cover all of them).
const SHOWN_REFUSALS: usize = 3;

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn secs_i(ns: i64) -> f64 {
    ns as f64 / 1e9
}

/// The warning for stamps that jump back by more than the cache time with no clock to clear
/// history at the jump, if the bag has such a jump.
fn stamp_jump_warning(a: &ReplayArgs, info: &BagInfo, cache_time_ns: i64) -> Option<String> {
    if info.clock_messages > 0 {
        return None;
    }
    let over: Vec<_> = info
        .stamp_steps
        .iter()
        .filter(|s| s.from - s.to > cache_time_ns)
        .collect();
    let first = over.first()?;
    let frames: std::collections::BTreeSet<&str> = over
        .iter()
        .filter(|s| s.log_time == first.log_time)
        .map(|s| s.frame.as_str())
        .collect();
    let offset = first
        .log_time
        .saturating_sub(info.log_time_range.map_or(0, |r| r.0));
    let why = if a.ignore_clock {
        "its clock is ignored (--ignore-clock)".to_string()
    } else {
        format!(
            "the bag has no {} to clear history there as tf2_ros does",
            a.clock_topic
        )
    };
    Some(format!(
        "the {} stamps jump back by {:.3} s at bag time {:.3} s (frame {}{}), more than the \
         {} s cache time, and {why}: what follows is refused as TF_OLD_DATA or stored behind \
         the older history; --start {:.3} replays from there",
        a.tf_topic,
        secs_i(first.from - first.to),
        secs(first.log_time),
        first.frame,
        if frames.len() > 1 {
            format!(" and {} more", frames.len() - 1)
        } else {
            String::new()
        },
        a.cache_time,
        secs(offset),
    ))
}

/// A bag error, with the way around it when the bag's clock is what is wrong.
fn bag_error_text(e: &BagError, topics: &Topics) -> String {
    match e.topic() {
        Some(t) if Some(t) == topics.clock.as_deref() => {
            format!("{e} (--ignore-clock replays the bag without it)")
        }
        _ => e.to_string(),
    }
}

/// Runs `tf_shm replay`; returns the exit status.
pub fn run(g: &Global, a: &ReplayArgs) -> u8 {
    let topics = Topics {
        tf: a.tf_topic.clone(),
        tf_static: a.tf_static_topic.clone(),
        clock: (!a.ignore_clock).then(|| a.clock_topic.clone()),
    };
    let scan_started = Instant::now();
    let bag = match ScannedBag::open(&a.bag, &topics) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("tf_shm replay: {}", bag_error_text(&e, &topics));
            return crate::EXIT_NO_ARENA;
        }
    };
    let scan_s = scan_started.elapsed().as_secs_f64();
    let cache_time_ns = (a.cache_time * 1e9).round() as i64;
    let config = ArenaConfig {
        max_frames: a.max_frames,
        cache_time_ns,
        memory_budget_bytes: (a.memory_budget_mb << 20) as usize,
        max_rate_hz: a.max_rate_hz,
        ..ArenaConfig::default()
    };
    let mut owner = match connect::server(g, config)
        .participant_name("tf_shm replay")
        .require_create(true)
        .on_event(|e| eprintln!("tf_shm replay: rendezvous: {e}"))
        .serve()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("tf_shm replay: {e}");
            return crate::EXIT_NO_ARENA;
        }
    };
    let info = &bag.info;
    let span = info.log_time_range.map_or(0, |(lo, hi)| hi - lo);
    let warning = stamp_jump_warning(a, info, cache_time_ns);
    if g.json {
        crate::out::print_json(&serde_json::json!({
            "event": "serving",
            "bag": a.bag.display().to_string(),
            "arena": owner.location().name,
            "domain": owner.location().domain,
            "static_transforms": info.static_transforms,
            "dynamic_transforms": info.dynamic_transforms,
            "span_s": secs(span),
            "clock_messages": info.clock_messages,
            "clock_jumps": info.clock_jumps_total,
            "warnings": warning.iter().collect::<Vec<_>>(),
        }));
    } else {
        eprintln!(
            "tf_shm replay: serving {} on arena {} (domain {}): {} static and {} dynamic \
             transforms over {:.3} s",
            a.bag.display(),
            owner.location().name,
            owner.location().domain,
            info.static_transforms,
            info.dynamic_transforms,
            secs(span),
        );
        if info.clock_messages > 0 {
            eprintln!(
                "tf_shm replay: following the bag's {} ({} messages, {} backward jump{}: \
                 dynamic history is cleared at each, as a use_sim_time tf2_ros node does)",
                a.clock_topic,
                info.clock_messages,
                info.clock_jumps_total,
                if info.clock_jumps_total == 1 { "" } else { "s" }
            );
        }
        if let Some(w) = &warning {
            eprintln!("tf_shm replay: warning: {w}");
        }
    }
    let opts = ReplayOptions {
        rate: (!a.as_fast_as_possible).then_some(a.rate),
        looped: a.looped,
        start_ns: (a.start * 1e9).round() as u64,
        duration_ns: a.duration.map(|d| (d * 1e9).round() as u64),
    };
    let stop = stop_flag();
    let show = !a.quiet && !g.json && std::io::stderr().is_terminal();
    let mut shown = Instant::now();
    let started = Instant::now();
    let mut last_line = String::new();
    let mut on_event = |e: &Event<'_>| match *e {
        Event::Message(p) => {
            if !show || shown.elapsed() < Duration::from_millis(200) {
                return;
            }
            shown = Instant::now();
            let t = started.elapsed().as_secs_f64();
            last_line = format!(
                "\r bag time {:.3} s  {:5.1} %  {:.0} transforms/s{}   ",
                secs(p.bag_time_ns),
                100.0 * p.fraction,
                p.transforms as f64 / t.max(1e-9),
                if p.loops > 0 {
                    format!("  loop {}", p.loops + 1)
                } else {
                    String::new()
                }
            );
            let _ = std::io::stderr().write_all(last_line.as_bytes());
        }
        Event::ClockJump(j) => {
            if g.json {
                crate::out::print_json(&serde_json::json!({
                    "event": "clock_jump",
                    "bag_time_s": secs(j.log_time),
                    "from_s": secs_i(j.from),
                    "to_s": secs_i(j.to),
                }));
            } else if !a.quiet {
                eprintln!(
                    "{}tf_shm replay: {} jumped back from {:.3} s to {:.3} s at bag time \
                     {:.3} s: dynamic history cleared",
                    if show { "\n" } else { "" },
                    a.clock_topic,
                    secs_i(j.from),
                    secs_i(j.to),
                    secs(j.log_time)
                );
            }
        }
        Event::PassEnd { loops } => {
            if g.json && a.looped {
                crate::out::print_json(
                    &serde_json::json!({"event": "end_of_pass", "loops": loops}),
                );
            }
        }
    };
    let mut feed = Feed::default();
    let result = tf_shm_bag::replay(&bag, owner.writer(), &mut feed, &opts, &stop, &mut on_event);
    if show {
        eprintln!();
    }
    let end = match result {
        Ok(end) => end,
        Err(e) => {
            eprintln!("tf_shm replay: {}", bag_error_text(&e, &topics));
            return crate::EXIT_NO_ARENA;
        }
    };
    let c = &feed.counts;
    let rate = end.transforms as f64 / end.elapsed.as_secs_f64().max(1e-9);
    if g.json {
        let refused_by: serde_json::Map<String, serde_json::Value> = c
            .refused_by
            .iter()
            .map(|(k, n)| (k.to_string(), (*n).into()))
            .collect();
        crate::out::print_json(&serde_json::json!({
            "event": if end.stopped { "stopped" } else { "end_of_bag" },
            "bag": a.bag.display().to_string(),
            "transforms": end.transforms,
            "messages": end.messages,
            "loops": end.loops,
            "stopped": end.stopped,
            "scan_s": scan_s,
            "elapsed_s": end.elapsed.as_secs_f64(),
            "transforms_per_s": rate,
            "stored": c.stored,
            "duplicates": c.duplicates,
            "refused": c.refused,
            "refused_by": refused_by,
            "history_cut": c.history_cut,
            "refusals": feed.refusals,
            "clock_messages": end.clock_messages,
            "clock_clears": end.clock_clears,
            "loop_clears": end.loop_clears,
            "warnings": warning.iter().collect::<Vec<_>>(),
        }));
    } else {
        eprintln!(
            "tf_shm replay: {} {} transforms ({} /tf messages, {} pass{}) in {:.3} s, {:.0} \
             transforms/s (after a {:.3} s check of the file); {} stored, {} duplicates, {} \
             refused, {} with history cut{}",
            if end.stopped {
                "stopped after"
            } else {
                "replayed"
            },
            end.transforms,
            end.messages,
            end.loops,
            if end.loops == 1 { "" } else { "es" },
            end.elapsed.as_secs_f64(),
            rate,
            scan_s,
            c.stored,
            c.duplicates,
            c.refused,
            c.history_cut,
            if end.clock_messages > 0 {
                format!(
                    "; {} clear{} of dynamic history at a backward jump of {}",
                    end.clock_clears,
                    if end.clock_clears == 1 { "" } else { "s" },
                    a.clock_topic
                )
            } else {
                String::new()
            }
        );
        if c.duplicates > 0 {
            eprintln!(
                "tf_shm replay: {} duplicates: {}",
                c.duplicates,
                feed::DUPLICATE_REASON
            );
        }
        for (k, n) in &c.refused_by {
            eprintln!("tf_shm replay: {n} refused {k}: {}", feed::reason_text(k));
        }
        // A few examples in tf2's words (one line each); --json lists the first 20.
        for r in feed.refusals.iter().take(SHOWN_REFUSALS) {
            eprintln!("tf_shm replay: refused: {}", r.replace('\n', " "));
        }
    }
    if a.hold && !end.stopped {
        if !g.json {
            eprintln!("tf_shm replay: end of bag; serving until interrupted");
        }
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    drop(owner);
    0
}
