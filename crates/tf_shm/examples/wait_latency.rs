//! Wake latency of a waiting lookup across processes, and its CPU while it waits.
//!
//! `cargo run --release -p tf_shm --example wait_latency [samples]`: starts itself as an owner
//! process that writes map→base every 3 ms (plus jitter), with the monotonic write time in the
//! translation; this process waits for each new stamp with `lookup_transform_timeout` and
//! records (return time − write time). Then it waits 2 s for a frame that never comes and
//! reports the thread CPU time of that wait. Last, the writer times `set_transform` with
//! nobody waiting and with one thread waiting (each write then pays a FUTEX_WAKE). Prints
//! Markdown tables (the section of docs/benchmarks.md). Uses a private runtime directory.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use tf_shm::rendezvous::{Join, Serve};
use tf_shm::validate::TransformInput;
use tf_shm::ArenaConfig;

const S: i64 = 1_000_000_000;

fn mono_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec * S + t.tv_nsec
}

fn thread_cpu_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec * S + t.tv_nsec
}

fn writer(dir: &str, samples: i64) {
    let cfg = ArenaConfig {
        memory_budget_bytes: 16 << 20,
        ..ArenaConfig::default()
    };
    let mut owner = Serve::new(cfg)
        .runtime_dir(dir)
        .require_create(true)
        .serve()
        .expect("owner");
    println!("READY");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line); // the waiter is attached
    for k in 1..=samples {
        // 3 ms plus a jitter of 0-1 ms, so writes fall at every phase.
        std::thread::sleep(Duration::from_micros(3000 + (k as u64 * 7919) % 1000));
        let t = TransformInput {
            frame_id: "map",
            child_frame_id: "base",
            stamp: k * S / 1000,
            translation: [mono_ns() as f64, 0.0, 0.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        owner
            .writer()
            .set_transform(&t, "bench", false)
            .expect("write");
    }
    // Cost of a write: `cost` lines from the waiter, once with nobody waiting, once with one
    // thread waiting for a frame that never comes.
    let mut stamp = samples * S / 1000;
    loop {
        line.clear();
        if std::io::stdin().read_line(&mut line).unwrap_or(0) == 0 || line.trim() != "cost" {
            return;
        }
        let n = 200_000;
        let t0 = mono_ns();
        for k in 0..n {
            stamp += 1000;
            let t = TransformInput {
                frame_id: "map",
                child_frame_id: "busy",
                stamp,
                translation: [k as f64, 0.0, 0.0],
                rotation: [0.0, 0.0, 0.0, 1.0],
            };
            owner
                .writer()
                .set_transform(&t, "bench", false)
                .expect("write");
        }
        println!("{:.0}", (mono_ns() - t0) as f64 / n as f64);
        let _ = std::io::stdout().flush();
    }
}

/// Wake latency of a waiting lookup across processes, and its CPU while it waits; prints the
/// Markdown tables of docs/benchmarks.md.
#[derive(clap::Parser)]
#[command(name = "wait_latency")]
struct Args {
    /// Samples to time
    #[arg(default_value_t = 2000)]
    samples: i64,
    /// Internal: run as the writer process serving RUNTIME_DIR
    #[arg(long, value_name = "RUNTIME_DIR", hide = true)]
    writer: Option<String>,
}

fn main() {
    let args: Args = clap::Parser::parse();
    if let Some(dir) = &args.writer {
        writer(dir, args.samples);
        return;
    }
    let samples = args.samples;
    let exe = std::env::current_exe().expect("own executable");
    let dir = std::env::temp_dir().join(format!("tf_shm_wait_latency_{}", std::process::id()));
    let dir_s = dir.to_str().unwrap().to_string();
    let mut child = Command::new(exe)
        .args(["--writer", &dir_s, &samples.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the writer");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "READY");
    let buffer = Join::new().runtime_dir(&dir).open().expect("consumer");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "go").unwrap();
    let mut lat = Vec::with_capacity(samples as usize);
    let mut missed = 0;
    for k in 1..=samples {
        let t = buffer
            .lookup_transform_timeout("map", "base", k * S / 1000, Duration::from_secs(5))
            .expect("sample arrives");
        let back = mono_ns();
        if t.stamp == k * S / 1000 {
            lat.push(back - t.transform.translation[0] as i64);
        } else {
            missed += 1;
        }
    }
    lat.sort_unstable();
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p).round() as usize] as f64 / 1000.0;
    let cpu0 = thread_cpu_ns();
    let r = buffer.can_transform_timeout("map", "never", 0, Duration::from_secs(2));
    let cpu = thread_cpu_ns() - cpu0;
    assert!(r.is_err());
    let mut cost = || {
        writeln!(stdin, "cost").unwrap();
        line.clear();
        out.read_line(&mut line).unwrap();
        line.trim().to_string()
    };
    let idle = cost();
    let waited = std::thread::scope(|s| {
        let b = &buffer;
        let w = s.spawn(move || b.can_transform_timeout("map", "never", 0, Duration::from_secs(4)));
        // Let the waiter register with the owner (one datagram) before timing.
        std::thread::sleep(Duration::from_millis(100));
        let c = cost();
        let _ = w.join(); // ends at its timeout: "never" is never written
        c
    });
    println!("| wake latency, write → waiting `lookup_transform_timeout` returns (other process) | samples | p50 | p90 | p99 | max |");
    println!("|---|---:|---:|---:|---:|---:|");
    println!(
        "| owner writes map→base every 3–4 ms; consumer waits for each stamp{} | {} | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs |",
        if missed > 0 { format!(" ({missed} answered past the stamp)") } else { String::new() },
        lat.len(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0),
    );
    println!();
    println!("| while waiting | value |");
    println!("|---|---:|");
    println!(
        "| CPU of a 2 s `can_transform_timeout` with no data (thread CPU time) | {:.0} µs |",
        cpu as f64 / 1000.0
    );
    println!("| `set_transform`, nobody waiting (ns per write, 200 000 writes) | {idle} ns |");
    println!("| `set_transform`, one thread waiting (each write wakes it) | {waited} ns |");
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
