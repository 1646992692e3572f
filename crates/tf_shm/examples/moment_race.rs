//! Lookups racing the writer: how often a lookup overlaps a moment being made and is read
//! again (`Declines::moment_retry`), and what that does to its latency (p50, p99, p99.9),
//! with no writer, a writer at 1 kHz and at 10 kHz (one `set_transform` per tick, each one
//! moment), 10 kHz in messages of 10 transforms (one batch, one moment, each), and a burst of
//! 100 000 transforms written back to back.
//!
//! A chain of 3 dynamic links; the reader thread loops over an interpolated `lookup_pair`
//! and a time-0 `lookup_pair` (kept answer, walked again after each change).
//!
//! `cargo run --release -p tf_shm --example moment_race -- [SECONDS]` (per case; default 1)
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;

use tf_shm::fast_path::{declines, reset_declines};
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, FramePair};

const FRAMES: [&str; 4] = ["map", "odom", "base", "arm"];
const T0: i64 = 1_000_000_000_000;

fn put(w: &mut ArenaWriter, link: usize, stamp: i64) {
    let x = stamp as f64 * 1e-9;
    w.set_transform(
        &TransformInput {
            frame_id: FRAMES[link],
            child_frame_id: FRAMES[link + 1],
            stamp,
            translation: [x.sin(), x.cos(), 0.1],
            rotation: [0.0, 0.0, (x * 0.3).sin(), (x * 0.3).cos()],
        },
        "bench",
        false,
    )
    .expect("stored");
}

/// How the writer writes while the reader reads.
#[derive(Clone, Copy)]
enum Writer {
    None,
    /// Transforms per second, one moment each.
    Rate(u32),
    /// Messages per second of `n` transforms, one moment each.
    Messages(u32, usize),
    /// This many transforms back to back, one moment each.
    Burst(usize),
}

struct Report {
    lookups: u64,
    retries: u64,
    p50: u64,
    p99: u64,
    p999: u64,
    written: u64,
}

fn run(case: Writer, secs: f64) -> Report {
    let (mut w, view) = Arena::in_memory(&ArenaConfig {
        max_rate_hz: 10_000,
        memory_budget_bytes: 256 << 20,
        ..ArenaConfig::default()
    })
    .expect("arena");
    // 10 s of history at 100 Hz on every link.
    let mut stamp = T0;
    for _ in 0..1000 {
        for link in 0..3 {
            put(&mut w, link, stamp);
        }
        stamp += 10_000_000;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || writer_loop(w, case, stamp, &stop))
    };
    let r = reader_loop(&view, secs, stamp);
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().expect("writer");
    Report { written, ..r }
}

fn writer_loop(mut w: ArenaWriter, case: Writer, mut stamp: i64, stop: &AtomicBool) -> u64 {
    let mut written = 0u64;
    let start = Instant::now();
    let mut next = Duration::ZERO;
    // 100 µs of stamps per transform (10 kHz); 10 µs in a burst, so that its 100 000 stay
    // inside the cache time the reader's times assume.
    let step = if matches!(case, Writer::Burst(_)) {
        10_000
    } else {
        100_000
    };
    let mut write_one = |w: &mut ArenaWriter, written: &mut u64| {
        stamp += step;
        put(w, (*written % 3) as usize, stamp);
        *written += 1;
    };
    match case {
        Writer::None => {}
        Writer::Burst(n) => {
            std::thread::sleep(Duration::from_millis(20));
            for _ in 0..n {
                write_one(&mut w, &mut written);
            }
        }
        Writer::Rate(hz) | Writer::Messages(hz, _) => {
            let per = match case {
                Writer::Messages(_, n) => n,
                _ => 1,
            };
            let period = Duration::from_secs_f64(1.0 / f64::from(hz));
            while !stop.load(Ordering::Relaxed) {
                next += period;
                while start.elapsed() < next {
                    std::hint::spin_loop();
                }
                w.batch(|w| {
                    for _ in 0..per {
                        write_one(w, &mut written);
                    }
                });
            }
        }
    }
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(1));
    }
    written
}

fn reader_loop(view: &ArenaView, secs: f64, newest: i64) -> Report {
    let mut interp = FramePair::new("map", "arm");
    let mut latest = FramePair::new("map", "arm");
    let mut times = Vec::with_capacity(1 << 22);
    reset_declines();
    let start = Instant::now();
    let mut k: i64 = 0;
    while start.elapsed().as_secs_f64() < secs {
        for _ in 0..64 {
            k += 1;
            let t = newest - 5_000_000_000 + (k * 7_919_113) % 4_000_000_000;
            let a = Instant::now();
            let r1 = view.lookup_pair(&mut interp, t);
            let b = Instant::now();
            let r2 = view.lookup_pair(&mut latest, 0);
            let c = Instant::now();
            assert!(r1.is_ok() && r2.is_ok(), "{r1:?} {r2:?}");
            times.push((b - a).as_nanos() as u64);
            times.push((c - b).as_nanos() as u64);
        }
    }
    let d = declines();
    times.sort_unstable();
    let q = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
    Report {
        lookups: times.len() as u64,
        retries: d.moment_retry,
        p50: q(0.5),
        p99: q(0.99),
        p999: q(0.999),
        written: 0,
    }
}

/// Lookups racing the writer: retry rate and latency per writer case (a Markdown table).
#[derive(Parser)]
#[command(name = "moment_race")]
struct Args {
    /// Seconds each case runs
    #[arg(default_value_t = 1.0)]
    seconds: f64,
}

fn main() {
    let secs = Args::parse().seconds;
    println!(
        "| writer | transforms written | lookups | retried | retry rate | p50 ns | p99 ns | p99.9 ns | p99 / no writer |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut base_p99 = 0;
    for (name, case) in [
        ("none", Writer::None),
        ("1 kHz", Writer::Rate(1_000)),
        ("10 kHz", Writer::Rate(10_000)),
        ("10 kHz, messages of 10", Writer::Messages(1_000, 10)),
        ("burst of 100 000", Writer::Burst(100_000)),
    ] {
        let r = run(case, secs);
        if base_p99 == 0 {
            base_p99 = r.p99.max(1);
        }
        println!(
            "| {name} | {} | {} | {} | {:.4} % | {} | {} | {} | {:.2} |",
            r.written,
            r.lookups,
            r.retries,
            100.0 * r.retries as f64 / r.lookups as f64,
            r.p50,
            r.p99,
            r.p999,
            r.p99 as f64 / base_p99 as f64
        );
    }
}
