//! A consumer for the bridge-restart test (tests/ros/test_bridge_faults.py): looks up
//! map -> sensor at time 0 every millisecond through a [`tf_shm::Buffer`] and checks each
//! answer against the formula tests/ros/tf_faults_publisher.py publishes (`live` mode):
//! map -> base_link at stamp s has x = s mod 100, y = 0.5, yaw = s mod 10; base_link -> sensor
//! is (0.1, 0.2, 0.3). Until stdin closes; then prints one JSON line:
//! `{"lookups", "errors", "first_error", "wrong", "generation", "swaps": [{"stale_ms",
//! "swap_after_first_data_ms", "swap_after_create_ms"}]}` where `stale_ms` is the oldest
//! answer's age (wall clock minus its stamp) between two swaps — how long the consumer went
//! without fresh data around a restart — and `swap_after_first_data_ms` how long the new
//! arena held /tf data (its oldest stamp) before this consumer swapped to it. Errors count
//! from the first good answer on.
//!
//! Usage: `restart_probe` (rendezvous from the environment, as any consumer).

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
struct Args {}

fn main() {
    let _: Args = clap::Parser::parse();
    let buffer = tf_shm::Join::new()
        .participant_name("restart_probe")
        .await_open(Duration::from_secs(30))
        .unwrap_or_else(|e| {
            eprintln!("restart_probe: {e}");
            std::process::exit(2)
        });
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        d.store(true, Ordering::SeqCst);
    });
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
                peak_stale = peak_stale.max(unix_now_ns() - t.stamp);
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
    println!(
        "{{\"lookups\":{lookups},\"errors\":{errors},\"first_error\":{:?},\"wrong\":{wrong},\
         \"generation\":{generation},\"swaps\":[{}]}}",
        first_error,
        swaps.join(",")
    );
}
