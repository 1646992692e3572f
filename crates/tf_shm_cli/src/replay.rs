//! `tf_shm replay BAG.mcap`: serves a rosbag2 bag's TF through an arena, as the bridge serves
//! a live robot's (require_create, rendezvous owner), so `tf_shm::open()` consumers and the
//! other commands work unchanged.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use tf_shm::ArenaConfig;
use tf_shm_bag::feed::Feed;
use tf_shm_bag::{Progress, ReplayOptions, ScannedBag, Topics};

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

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Runs `tf_shm replay`; returns the exit status.
pub fn run(g: &Global, a: &ReplayArgs) -> u8 {
    let topics = Topics {
        tf: a.tf_topic.clone(),
        tf_static: a.tf_static_topic.clone(),
    };
    let scan_started = Instant::now();
    let bag = match ScannedBag::open(&a.bag, &topics) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("tf_shm replay: {e}");
            return crate::EXIT_NO_ARENA;
        }
    };
    let scan_s = scan_started.elapsed().as_secs_f64();
    let config = ArenaConfig {
        max_frames: a.max_frames,
        cache_time_ns: (a.cache_time * 1e9).round() as i64,
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
    if !g.json {
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
    let mut on_progress = |p: &Progress| {
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
    };
    let mut feed = Feed::default();
    let result = tf_shm_bag::replay(
        &bag,
        owner.writer(),
        &mut feed,
        &opts,
        &stop,
        &mut on_progress,
    );
    if show {
        eprintln!();
    }
    let end = match result {
        Ok(end) => end,
        Err(e) => {
            eprintln!("tf_shm replay: {e}");
            return crate::EXIT_NO_ARENA;
        }
    };
    let c = &feed.counts;
    let rate = end.transforms as f64 / end.elapsed.as_secs_f64().max(1e-9);
    if g.json {
        let doc = serde_json::json!({
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
            "history_cut": c.history_cut,
            "refusals": feed.refusals,
        });
        println!("{doc}");
    } else {
        eprintln!(
            "tf_shm replay: {} {} transforms ({} /tf messages, {} pass{}) in {:.3} s, {:.0} \
             transforms/s (after a {:.3} s check of the file); {} stored, {} duplicates, {} \
             refused, {} with history cut",
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
            c.history_cut
        );
        for r in &feed.refusals {
            eprintln!("tf_shm replay: refused: {r}");
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
