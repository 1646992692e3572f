//! Two measurements of the bridge's path, printed as one JSON line each.
//!
//! `latency_probe ingest [--seconds S]`: the bridge's write path without DDS. An in-memory
//! arena (default config: 10 s cache) takes a PR2-shaped stream in stamp order, one
//! `ArenaWriter::set_transform` per transform as the bridge calls it: 51 static frames once,
//! then per 10 ms tick 30 joint transforms, plus 2 base transforms every other tick. Stamps
//! cover S seconds (default 120, so the 10 s cache is in steady state, pruning); the first 10 s
//! are warm-up. Prints transforms/s of wall and thread CPU time of the writer's calls (each
//! second of stamps is timed as one, its values computed before its clocks start).
//!
//! `latency_probe latency [--parent P] [--child C] [--count N] [--timeout S] [--poll-us U]`:
//! opens the arena like any consumer (`tf_shm::open()`, retrying until a bridge serves) and
//! polls `T_P_C` at time 0 every U µs (default 20). A publisher stamps each transform with its
//! CLOCK_REALTIME at publish time; every new stamp the probe sees gives
//! `visible_at - stamp`: publish → DDS → bridge → arena → reader, an upper bound of
//! DDS-receive → visible. Stops after N new stamps (default 2000) or S seconds (default 30);
//! the first 5 are dropped (they may predate the probe). Prints count and p50/p90/p99/p99.9/max in µs.
//! `scripts/latency.sh` runs it with a bridge and a publisher.

use std::time::{Duration, Instant};

use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, FramePair};

/// Two measurements of the bridge's path, printed as one JSON line each.
#[derive(clap::Parser)]
#[command(name = "latency_probe")]
enum Probe {
    /// The bridge's write path without DDS: a PR2-shaped stream into an in-memory arena, one
    /// ArenaWriter::set_transform per transform; prints transforms/s of wall and CPU time
    Ingest {
        /// Seconds of stamps (the first 10 s are warm-up)
        #[arg(long, default_value_t = 120, value_name = "S")]
        seconds: i64,
    },
    /// Publish → visible latency: polls T_parent_child at time 0 in the arena a bridge serves
    /// and prints percentiles of (seen − stamp), µs
    Latency(LatencyArgs),
}

#[derive(clap::Args)]
struct LatencyArgs {
    /// Parent frame
    #[arg(long, default_value = "lat_parent", value_name = "P")]
    parent: String,
    /// Child frame
    #[arg(long, default_value = "lat_child", value_name = "C")]
    child: String,
    /// New stamps to measure
    #[arg(long, default_value_t = 2000, value_name = "N")]
    count: usize,
    /// Give up after this long, s
    #[arg(long, default_value_t = 30.0, value_name = "S")]
    timeout: f64,
    /// Poll period, µs
    #[arg(long, default_value_t = 20, value_name = "U")]
    poll_us: u64,
}

fn realtime_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

fn thread_cpu_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// Translation and rotation of one sample.
type Pose = ([f64; 3], [f64; 4]);

fn pose(i: usize, k: i64) -> Pose {
    let a = 0.5 * (0.01 * k as f64 + i as f64).sin();
    let (s, c) = (a / 2.0).sin_cos();
    ([0.1 * i as f64, 0.02 * a, 0.3], [0.0, s, 0.0, c])
}

fn ingest(seconds: i64) {
    let (mut w, _view) = Arena::in_memory(&ArenaConfig::default()).expect("arena");
    let names: Vec<String> = (0..83).map(|i| format!("link_{i}")).collect();
    let parent = |i: usize| {
        if i == 0 {
            "base_footprint"
        } else {
            names[(i - 1) / 2].as_str()
        }
    };
    let t0 = 1_000_000_000_000i64;
    let put = |w: &mut tf_shm::ArenaWriter, i: usize, stamp: i64, pose: Pose, is_static: bool| {
        let (translation, rotation) = pose;
        w.set_transform(
            &TransformInput {
                frame_id: parent(i),
                child_frame_id: &names[i],
                stamp,
                translation,
                rotation,
            },
            "Authority undetectable",
            is_static,
        )
        .expect("accepted");
    };
    // Frames 0..51 static, 51..81 joints at 100 Hz, 81..83 base at 50 Hz.
    for i in 0..51 {
        put(&mut w, i, t0, pose(i, t0 / 10_000_000), true);
    }
    let ticks = seconds * 100;
    let warm = 1000.min(ticks / 2);
    let (mut n, mut wall, mut cpu) = (0u64, Duration::ZERO, 0i64);
    // Timed a second of stamps at a time, its values computed before its clocks start: only
    // the writer is timed, and the thread-CPU clock (a system call) is read twice per 3100
    // transforms, not per tick.
    const TICKS_PER_ROUND: i64 = 100;
    let mut round: Vec<(usize, i64, Pose)> = Vec::new();
    let mut k = 0;
    while k < ticks {
        let end = if k < warm {
            warm
        } else {
            (k + TICKS_PER_ROUND).min(ticks)
        };
        round.clear();
        for k in k..end {
            let stamp = t0 + k * 10_000_000;
            let base = if k % 2 == 0 { 83 } else { 81 };
            round.extend((51..base).map(|i| (i, stamp, pose(i, stamp / 10_000_000))));
        }
        let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
        for &(i, stamp, p) in &round {
            put(&mut w, i, stamp, p, false);
        }
        if k >= warm {
            wall += start.elapsed();
            cpu += thread_cpu_ns() - cpu_start;
            n += round.len() as u64;
        }
        k = end;
    }
    println!(
        "{{\"ingest_transforms\": {n}, \"wall_s\": {:.6}, \"per_s_wall\": {:.0}, \"per_s_cpu\": {:.0}, \"ns_per_transform_cpu\": {:.1}}}",
        wall.as_secs_f64(),
        n as f64 / wall.as_secs_f64(),
        n as f64 / (cpu as f64 * 1e-9),
        cpu as f64 / n as f64
    );
}

fn latency(a: LatencyArgs) {
    let LatencyArgs {
        parent,
        child,
        count,
        ..
    } = a;
    let timeout = Duration::from_secs_f64(a.timeout);
    let poll = Duration::from_micros(a.poll_us);
    let start = Instant::now();
    let buffer = loop {
        match tf_shm::open() {
            Ok(b) => break b,
            Err(e) if start.elapsed() > timeout => {
                eprintln!("latency_probe: no arena: {e}");
                std::process::exit(3)
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    eprintln!("latency_probe: attached; waiting for {parent} -> {child}");
    let mut pair = FramePair::new(&parent, &child);
    let (mut last, mut seen) = (i64::MIN, 0usize);
    let mut lat_us: Vec<f64> = Vec::with_capacity(count);
    while lat_us.len() < count && start.elapsed() < timeout {
        if let Ok((stamp, _)) = buffer.lookup_pair(&mut pair, 0) {
            if stamp != last {
                let now = realtime_ns();
                last = stamp;
                seen += 1;
                if seen > 5 {
                    lat_us.push((now - stamp) as f64 / 1e3);
                }
            }
        }
        std::thread::sleep(poll);
    }
    if lat_us.is_empty() {
        eprintln!("latency_probe: no new stamps of {parent} -> {child} within the timeout");
        std::process::exit(1)
    }
    lat_us.sort_by(f64::total_cmp);
    let q = |p: f64| lat_us[((p * lat_us.len() as f64).ceil() as usize).clamp(1, lat_us.len()) - 1];
    println!(
        "{{\"samples\": {}, \"poll_us\": {}, \"p50_us\": {:.1}, \"p90_us\": {:.1}, \"p99_us\": {:.1}, \"p999_us\": {:.1}, \"max_us\": {:.1}}}",
        lat_us.len(),
        poll.as_micros(),
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        lat_us[lat_us.len() - 1]
    );
}

fn main() {
    match clap::Parser::parse() {
        Probe::Ingest { seconds } => ingest(seconds),
        Probe::Latency(a) => latency(a),
    }
}
