//! `tf_shm record OUT.mcap`: writes what the arena receives into a rosbag2-compatible MCAP
//! file (`/tf`, `/tf_static`, the TFMessage schema); Ctrl-C (SIGINT) or SIGTERM ends the file
//! properly (last chunk, indexes, summary).
//!
//! When the arena's owner (the bridge) goes away, recording goes on and follows its restart, as
//! `ros2 bag record` keeps recording across a publisher's restart; the span without an owner is
//! said when it happens, in the summary and in `--json` ([`crate::record_owner`]), and the exit
//! status is [`crate::EXIT_OWNER_GAP`], so neither a reader nor a script takes the bag for
//! complete.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Args;
use tf_shm_bag::{BagWriter, Recorder, Topics};

use crate::cli::Global;
use crate::connect;
use crate::record_owner;

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
    let start_ns = tf_shm::time::unix_now_ns() as u64;
    let arena = buffer.location().name.clone();
    let until = a.duration.map(|d| started + Duration::from_secs_f64(d));
    let show = !a.quiet && !g.json && std::io::stderr().is_terminal();
    let mut shown = Instant::now();
    let mut failure = None;
    if !g.json {
        eprintln!(
            "tf_shm record: recording arena {} into {}; Ctrl-C to stop",
            arena,
            a.out.display()
        );
    }
    // The owner's goings and comings, said as they happen (on a line of their own).
    let say = |change: &Option<tf_shm_bag::owner_watch::OwnerChange>| {
        if let Some(c) = change {
            if show {
                eprintln!();
            }
            eprintln!("{}", record_owner::change_text(c, start_ns, &arena));
        }
    };
    let mut end_ns;
    loop {
        end_ns = tf_shm::time::unix_now_ns() as u64;
        match rec.poll_buffer(&buffer, end_ns) {
            Ok(s) => say(&s.owner),
            Err(e) => {
                failure = Some(e.to_string());
                break;
            }
        }
        if show && shown.elapsed() >= Duration::from_millis(500) {
            shown = Instant::now();
            let t = rec.totals;
            let owner = match rec.owner.open() {
                Some(g) => format!("  NO OWNER for {:.1} s", g.duration_ns(end_ns) as f64 / 1e9),
                None => String::new(),
            };
            let _ = write!(
                std::io::stderr(),
                "\r {:.1} s  {} transforms  {} static  {} missed{owner}   ",
                started.elapsed().as_secs_f64(),
                t.dynamic,
                t.statics,
                t.missed
            );
        }
        if stop.load(Ordering::Relaxed) || until.is_some_and(|u| Instant::now() >= u) {
            // One last poll so what arrived meanwhile is in.
            end_ns = tf_shm::time::unix_now_ns() as u64;
            match rec.poll_buffer(&buffer, end_ns) {
                Ok(s) => say(&s.owner),
                Err(e) => failure = Some(e.to_string()),
            }
            break;
        }
        std::thread::sleep(period);
    }
    if show {
        eprintln!();
    }
    let owner = rec.owner.clone();
    let totals = rec.totals;
    let messages = rec.messages();
    let arenas = rec.arenas;
    let intake_lost = rec.intake_lost();
    if let Err(e) = rec.finish() {
        eprintln!("tf_shm record: {e}");
        return crate::EXIT_NO_ARENA;
    }
    let gaps = !owner.gaps().is_empty();
    if g.json {
        let mut doc = serde_json::json!({
            "out": a.out.display().to_string(),
            "transforms": totals.dynamic,
            "static_transforms": totals.statics,
            "messages": messages,
            "missed": totals.missed,
            "intake_lost": intake_lost,
            "arenas": arenas,
            // Nothing missed or lost and an owner throughout: the bag holds all that was
            // published.
            "complete": totals.missed == 0 && intake_lost == 0 && !gaps && failure.is_none(),
            "error": failure,
        });
        if let Some(m) = doc.as_object_mut() {
            m.extend(record_owner::json_fields(&owner, start_ns, end_ns));
        }
        println!("{doc}");
    } else {
        eprintln!(
            "tf_shm record: wrote {} ({} messages: {} transforms, {} static); {} missed{}",
            a.out.display(),
            messages,
            totals.dynamic,
            totals.statics,
            totals.missed,
            record_owner::summary_clause(&owner, end_ns)
        );
        for line in record_owner::gap_lines(&owner, start_ns, end_ns) {
            eprintln!("{line}");
        }
        if totals.missed > 0 {
            eprintln!(
                "tf_shm record: the missed samples were dropped from the arena's history \
                 before a poll could copy them (history cut short by the memory budget or \
                 max_rate_hz, or cleared by a clock jump); raise --poll, or the bridge's \
                 memory_budget_mb"
            );
        }
        if intake_lost > 0 {
            eprintln!(
                "tf_shm record: the bridge received {intake_lost} messages during the recording \
                 that it could not store (its intake queue was full): they are in no arena and \
                 not in the bag; `tf_shm doctor` shows the bridge's intake"
            );
        }
        if let Some(e) = &failure {
            eprintln!("tf_shm record: stopped: {e}");
        }
    }
    if failure.is_some() {
        crate::EXIT_NO_ARENA
    } else if gaps {
        crate::EXIT_OWNER_GAP
    } else {
        0
    }
}
