//! A consumer for the bridge-restart test (tests/ros/test_bridge_faults.py): looks up
//! map -> sensor at time 0 every millisecond through a [`tf_shm::Buffer`] and checks each
//! answer against the formula tests/ros/tf_faults_publisher.py publishes (`live` mode):
//! map -> base_link at stamp s has x = s mod 100, y = 0.5, yaw = s mod 10; base_link -> sensor
//! is (0.1, 0.2, 0.3). Reads lines `kill <unix ns>` on stdin (the test killed the bridge then);
//! when stdin closes, prints one JSON line:
//! `{"lookups", "errors", "first_error", "wrong", "generation", "fresh_unix_ns": [..],
//! "swaps": [{"stale_ms", "swap_after_first_data_ms", "swap_after_create_ms"}]}` where
//! `fresh_unix_ns[k]` is when this consumer first answered with a stamp newer than the k-th
//! kill (data only the new bridge can have had; `null` if never), `stale_ms` is the oldest
//! answer's age (wall clock minus its stamp) between two swaps and `swap_after_first_data_ms`
//! how long the new arena held /tf data (its oldest stamp) before this consumer swapped to it.
//! Errors count from the first good answer on.
//!
//! With `--receipt-after <unix ns>`: opens the arena fresh (so no hold of an older arena can
//! delay what it sees), polls map -> base_link's newest stamp every 0.2 ms until it is newer
//! than the given time, prints `{"receipt_unix_ns": ..}` (when the new bridge had received
//! such data, within the poll period) and exits.
//!
//! Usage: `restart_probe [--receipt-after NS]` (rendezvous from the environment, as any
//! consumer).

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tf_shm::store::FrameStore;

use tf_shm::time::unix_now_ns;

fn expected(stamp_ns: i64) -> [f64; 3] {
    let s = stamp_ns as f64 / 1e9;
    let (x, yaw) = (s % 100.0, s % 10.0);
    let (c, sn) = (yaw.cos(), yaw.sin());
    let (a, b, z) = (0.1, 0.2, 0.3);
    [x + c * a - sn * b, 0.5 + sn * a + c * b, z]
}

/// A consumer for the bridge-restart test: looks up map -> sensor at time 0 every millisecond
/// until stdin closes, then prints one JSON line of what it saw (see the file's docs).
#[derive(clap::Parser)]
#[command(name = "restart_probe")]
struct Args {
    /// Open the arena fresh, wait until map -> base_link has a stamp newer than this (ns since
    /// the Unix epoch), print when, and exit.
    #[arg(long, value_name = "NS")]
    receipt_after: Option<i64>,
}

fn open() -> tf_shm::Buffer {
    tf_shm::Join::new()
        .participant_name("restart_probe")
        .await_open(Duration::from_secs(30))
        .unwrap_or_else(|e| {
            eprintln!("restart_probe: {e}");
            std::process::exit(2)
        })
}

/// When the arena first holds a map -> base_link stamp newer than `after`.
fn receipt(after: i64) -> ! {
    let buffer = open();
    loop {
        let view = buffer.view();
        let newest = view
            .frame_id("base_link")
            .ok()
            .flatten()
            .and_then(|id| view.latest_time_and_parent(id).ok().flatten());
        if newest.is_some_and(|(stamp, _)| stamp > after) {
            println!("{{\"receipt_unix_ns\":{}}}", unix_now_ns());
            std::process::exit(0);
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn main() {
    let args: Args = clap::Parser::parse();
    if let Some(after) = args.receipt_after {
        receipt(after);
    }
    let buffer = open();
    let done = Arc::new(AtomicBool::new(false));
    let kills = Arc::new(Mutex::new(Vec::<i64>::new()));
    let (d, k) = (done.clone(), kills.clone());
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if let Some(ns) = line
                .strip_prefix("kill ")
                .and_then(|n| n.trim().parse().ok())
            {
                k.lock().unwrap().push(ns);
            }
        }
        d.store(true, Ordering::SeqCst);
    });
    // Per kill: when an answer first carried a stamp newer than it.
    let mut fresh: Vec<Option<i64>> = Vec::new();
    let (mut lookups, mut errors, mut wrong) = (0u64, 0u64, 0u64);
    let mut first_error = String::new();
    let mut seen_good = false;
    let mut generation = buffer.arena_swaps();
    let mut peak_stale = 0i64;
    let mut swaps = Vec::new();
    while !done.load(Ordering::SeqCst) {
        let g = buffer.arena_swaps();
        if g != generation {
            generation = g;
            let view = buffer.view();
            let now = unix_now_ns();
            // The oldest /tf sample the new arena holds: when its bridge started receiving.
            let first = view
                .frames()
                .ok()
                .and_then(|fs| fs.iter().filter_map(|f| f.history).map(|h| h.oldest).min())
                .unwrap_or(now);
            swaps.push(format!(
                "{{\"stale_ms\":{:.1},\"swap_after_first_data_ms\":{:.1},\"swap_after_create_ms\":{:.1}}}",
                peak_stale as f64 / 1e6,
                (now - first) as f64 / 1e6,
                (now - view.stats().created_unix_ns) as f64 / 1e6
            ));
            peak_stale = 0;
        }
        lookups += 1;
        match buffer.lookup_transform("map", "sensor", 0) {
            Ok(t) => {
                seen_good = true;
                let want = expected(t.stamp);
                let off = (0..3)
                    .map(|i| (t.transform.translation[i] - want[i]).abs())
                    .fold(0.0, f64::max);
                if off > 1e-6 {
                    wrong += 1;
                }
                let now = unix_now_ns();
                peak_stale = peak_stale.max(now - t.stamp);
                let kills = kills.lock().unwrap();
                fresh.resize(kills.len(), None);
                for (f, kill) in fresh.iter_mut().zip(kills.iter()) {
                    if f.is_none() && t.stamp > *kill {
                        *f = Some(now);
                    }
                }
            }
            Err(e) if seen_good => {
                errors += 1;
                if first_error.is_empty() {
                    first_error = e.to_string();
                }
            }
            Err(_) => {}
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    fresh.resize(kills.lock().unwrap().len(), None);
    let fresh: Vec<String> = fresh
        .iter()
        .map(|f| f.map_or("null".into(), |t| t.to_string()))
        .collect();
    println!(
        "{{\"lookups\":{lookups},\"errors\":{errors},\"first_error\":{:?},\"wrong\":{wrong},\
         \"generation\":{generation},\"fresh_unix_ns\":[{}],\"swaps\":[{}]}}",
        first_error,
        fresh.join(","),
        swaps.join(",")
    );
}
