//! `tf_shm record OUT.mcap`: writes what the arena receives into a rosbag2-compatible MCAP
//! file (`/tf`, `/tf_static`, the TFMessage schema); Ctrl-C (SIGINT) or SIGTERM ends the file
//! properly (last chunk, indexes, summary).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Args;
use tf_shm_bag::{BagWriter, Recorder, Topics};

use crate::cli::Global;
use crate::connect;

/// `tf_shm record`.
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// The MCAP file to write
    pub out: PathBuf,
    /// How often the arena is read, Hz (each frame keeps its cache time of history, so any
    /// rate well above 1/cache time loses nothing)
    #[arg(long, default_value_t = 100.0, value_name = "HZ", value_parser = crate::cli::positive_f64)]
    pub poll: f64,
    /// Stop after this long, s (default: until interrupted)
    #[arg(long, value_name = "SEC", value_parser = crate::cli::positive_f64)]
    pub duration: Option<f64>,
    /// Overwrite OUT if it exists
    #[arg(long, short = 'f')]
    pub force: bool,
    /// Dynamic transforms topic written
    #[arg(long, default_value = "/tf", value_name = "TOPIC")]
    pub tf_topic: String,
    /// Static transforms topic written
    #[arg(long, default_value = "/tf_static", value_name = "TOPIC")]
    pub tf_static_topic: String,
    /// No progress line, even on a terminal
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Runs `tf_shm record`; returns the exit status.
pub fn run(g: &Global, a: &RecordArgs) -> u8 {
    if a.out.exists() && !a.force {
        eprintln!(
            "tf_shm record: {} exists; pass --force to overwrite it",
            a.out.display()
        );
        return crate::EXIT_NO_ARENA;
    }
    let buffer = match connect::open(g) {
        Ok(b) => b,
        Err(e) => return connect::report_open_error(&e),
    };
    let topics = Topics {
        tf: a.tf_topic.clone(),
        tf_static: a.tf_static_topic.clone(),
        clock: None,
    };
    let bag = match BagWriter::create(&a.out, &topics) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("tf_shm record: {e}");
            return crate::EXIT_NO_ARENA;
        }
    };
    let mut rec = Recorder::new(bag);
    let stop = crate::replay::stop_flag();
    let period = Duration::from_secs_f64(1.0 / a.poll);
    let started = Instant::now();
    let until = a.duration.map(|d| started + Duration::from_secs_f64(d));
    let show = !a.quiet && !g.json && std::io::stderr().is_terminal();
    let mut shown = Instant::now();
    let mut failure = None;
    if !g.json {
        eprintln!(
            "tf_shm record: recording arena {} into {}; Ctrl-C to stop",
            buffer.location().name,
            a.out.display()
        );
    }
    loop {
        let now = tf_shm::time::unix_now_ns() as u64;
        if let Err(e) = rec.poll_buffer(&buffer, now) {
            failure = Some(e.to_string());
            break;
        }
        if show && shown.elapsed() >= Duration::from_millis(500) {
            shown = Instant::now();
            let t = rec.totals;
            let _ = write!(
                std::io::stderr(),
                "\r {:.1} s  {} transforms  {} static  {} missed   ",
                started.elapsed().as_secs_f64(),
                t.dynamic,
                t.statics,
                t.missed
            );
        }
        if stop.load(Ordering::Relaxed) || until.is_some_and(|u| Instant::now() >= u) {
            // One last poll so what arrived meanwhile is in.
            let now = tf_shm::time::unix_now_ns() as u64;
            if let Err(e) = rec.poll_buffer(&buffer, now) {
                failure = Some(e.to_string());
            }
            break;
        }
        std::thread::sleep(period);
    }
    if show {
        eprintln!();
    }
    let totals = rec.totals;
    let messages = rec.messages();
    let arenas = rec.arenas;
    if let Err(e) = rec.finish() {
        eprintln!("tf_shm record: {e}");
        return crate::EXIT_NO_ARENA;
    }
    if g.json {
        let doc = serde_json::json!({
            "out": a.out.display().to_string(),
            "transforms": totals.dynamic,
            "static_transforms": totals.statics,
            "messages": messages,
            "missed": totals.missed,
            "arenas": arenas,
            "error": failure,
        });
        println!("{doc}");
    } else {
        eprintln!(
            "tf_shm record: wrote {} ({} messages: {} transforms, {} static); {} missed",
            a.out.display(),
            messages,
            totals.dynamic,
            totals.statics,
            totals.missed
        );
        if totals.missed > 0 {
            eprintln!(
                "tf_shm record: the missed samples were dropped from the arena's history \
                 before a poll could copy them (history cut short by the memory budget or \
                 max_rate_hz, or cleared by a clock jump); raise --poll, or the bridge's \
                 memory_budget_mb"
            );
        }
        if let Some(e) = &failure {
            eprintln!("tf_shm record: stopped: {e}");
        }
    }
    if failure.is_some() {
        crate::EXIT_NO_ARENA
    } else {
        0
    }
}
