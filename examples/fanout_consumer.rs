//! Fan-out benchmark, arm B: one consumer process reading TF through `tf_shm` (no ROS).
//!
//! Opens the arena that `tf_shm_bridge` serves (`tf_shm::open()`, retrying until it does) and
//! looks up the given frame pairs at time 0 at 100 Hz, exactly as `fanout_listener` does in
//! its private buffer.
//!
//!     fanout_consumer --pairs odom:link_50,sensor_0:sensor_1 [--secs S] [--skip S0]
//!
//! Exits after S seconds (default 60) and prints one JSON line on stderr: lookups that
//! succeeded and failed after the first S0 seconds (default 0). `scripts/fanout.sh` runs it.

mod common;

use std::time::{Duration, Instant};

use common::{parse_pairs, Tally, Window};

/// Fan-out benchmark, arm B: one consumer reading TF through tf_shm (no ROS), looking up the
/// given frame pairs at time 0 at 100 Hz; prints one JSON line on stderr when done. Waits up to
/// --secs for a bridge.
#[derive(clap::Parser)]
#[command(name = "fanout_consumer")]
struct Args {
    #[command(flatten)]
    window: Window,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args {
        window: Window { pairs, secs, skip },
    } = clap::Parser::parse();
    let mut pairs = parse_pairs(&pairs, "fanout_consumer");

    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let buffer = loop {
        match tf_shm::open() {
            Ok(b) => break b,
            Err(e) if Instant::now() >= end => return Err(e.into()),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    };

    let period = Duration::from_millis(10);
    let mut next = Instant::now() + period;
    let count_from = start + Duration::from_secs_f64(skip);
    let mut tally = Tally::default();
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        if now < next {
            std::thread::sleep(next - now);
            continue;
        }
        for pair in pairs.iter_mut() {
            let r = buffer.lookup_pair(pair, 0);
            if now >= count_from {
                tally.record(pair, r);
            }
        }
        next += period;
        if next < now {
            next = now + period;
        }
    }
    eprintln!(
        "{{\"arm\":\"B\",\"lookups_ok\":{},\"lookups_err\":{},\"sink\":{},\"first_err\":{:?}}}",
        tally.ok,
        tally.err,
        tally.sink.is_finite(),
        tally.first_err
    );
    Ok(())
}
