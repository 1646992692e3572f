//! A fixed write loop for instruction-level profiling (e.g. `valgrind --tool=callgrind`) and
//! for timing `ArenaWriter::set_transform` alone: the inputs are computed before the loop, so
//! only the writer is measured.
//!
//! * `ingest` (default): `latency_probe ingest`'s PR2-shaped stream (51 statics once, then per
//!   10 ms tick 30 joints, plus 2 base transforms every other tick) for `seconds` of stamps,
//!   so the default 10 s cache is pruning; the first 10 s are warm-up.
//! * `star`: `benches/lookup.rs`'s writer bench, `frames` children of one root written
//!   round-robin at 100 Hz each, for `seconds` of stamps; the first 10 s are warm-up.
//!
//! Prints transforms written after the warm-up and ns of thread CPU time per transform (use
//! the callgrind count of `ArenaWriter::set_transform` divided by the total calls, also
//! printed, for instructions per transform).
//!
//! `cargo run --release -p tf_shm --example profile_write -- [ingest|star] [seconds] [frames] [--batch]`
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig};

/// A fixed write loop: a PR2-shaped stream (ingest) or a star of FRAMES children (star).
#[derive(clap::Parser)]
#[command(name = "profile_write")]
struct Args {
    /// The stream: `ingest` (PR2-shaped, as `latency_probe ingest`) or `star` (as the
    /// criterion writer bench)
    #[arg(value_parser = ["ingest", "star"], default_value = "ingest")]
    mode: String,
    /// Seconds of stamps (the first 10 s are warm-up)
    #[arg(default_value_t = 30)]
    seconds: i64,
    /// Children of the root in `star`
    #[arg(default_value_t = 100)]
    frames: usize,
    /// Write each message's transforms in one `ArenaWriter::batch`, as the bridge does (one
    /// message: `ingest` a tick's joints, its base transforms, the statics; `star` a tick)
    #[arg(long)]
    batch: bool,
}

/// One `set_transform` call's arguments, owned.
struct Call {
    parent: usize,
    child: usize,
    stamp: i64,
    translation: [f64; 3],
    rotation: [f64; 4],
    is_static: bool,
    /// The message it arrives in.
    message: i64,
}

/// Thread CPU time, ns. Through libc, not rustix: rustix reads the vDSO itself, which
/// valgrind does not map (bytecodealliance/rustix#1559), and this example runs under callgrind.
fn thread_cpu_ns() -> i64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a live, writable `timespec`; clock_gettime writes only it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

fn main() {
    let args: Args = clap::Parser::parse();
    let t0 = 1_000_000_000_000i64;
    let ticks = args.seconds * 100;
    let warm_ticks = 1000.min(ticks / 2);
    let mut names: Vec<String> = vec!["root".into()];
    let mut calls = Vec::new();
    let mut warm = 0;
    match args.mode.as_str() {
        "star" => {
            names.extend((0..args.frames).map(|i| format!("f{i}")));
            for k in 0..ticks {
                if k == warm_ticks {
                    warm = calls.len();
                }
                let stamp = t0 + k * 10_000_000;
                for i in 1..=args.frames {
                    let a = 0.3 + 0.5 * (0.002 * k as f64 + i as f64).sin();
                    let (s, c) = (a / 2.0).sin_cos();
                    let h = std::f64::consts::FRAC_1_SQRT_2;
                    calls.push(Call {
                        parent: 0,
                        child: i,
                        stamp,
                        translation: [0.5 + 0.1 * a, 0.2, 0.05 * i as f64],
                        rotation: [h * s, 0.0, h * s, c],
                        is_static: false,
                        message: k,
                    });
                }
            }
        }
        _ => {
            // `root` is base_footprint; link i's parent is link (i - 1) / 2.
            names.extend((0..83).map(|i| format!("link_{i}")));
            let parent = |i: usize| if i == 0 { 0 } else { (i - 1) / 2 + 1 };
            let put = |calls: &mut Vec<Call>, i: usize, k: i64, is_static: bool, message: i64| {
                let a = 0.5 * (0.01 * k as f64 + i as f64).sin();
                let (s, c) = (a / 2.0).sin_cos();
                calls.push(Call {
                    parent: parent(i),
                    child: i + 1,
                    stamp: t0 + k * 10_000_000,
                    translation: [0.1 * i as f64, 0.02 * a, 0.3],
                    rotation: [0.0, s, 0.0, c],
                    is_static,
                    message,
                });
            };
            for i in 0..51 {
                put(&mut calls, i, 0, true, -1);
            }
            for k in 0..ticks {
                if k == warm_ticks {
                    warm = calls.len();
                }
                for i in 51..81 {
                    put(&mut calls, i, k, false, 2 * k);
                }
                if k % 2 == 0 {
                    for i in 81..83 {
                        put(&mut calls, i, k, false, 2 * k + 1);
                    }
                }
            }
        }
    }
    let (mut w, _view) = Arena::in_memory(&ArenaConfig {
        memory_budget_bytes: 128 << 20,
        ..ArenaConfig::default()
    })
    .expect("arena");
    let write = |w: &mut tf_shm::ArenaWriter, c: &Call| {
        w.set_transform(
            &TransformInput {
                frame_id: &names[c.parent],
                child_frame_id: &names[c.child],
                stamp: c.stamp,
                translation: c.translation,
                rotation: c.rotation,
            },
            "Authority undetectable",
            c.is_static,
        )
        .expect("accepted");
    };
    let (before, after) = calls.split_at(warm);
    let run = |w: &mut tf_shm::ArenaWriter, calls: &[Call]| {
        if args.batch {
            for message in calls.chunk_by(|a, b| a.message == b.message) {
                w.batch(|w| message.iter().for_each(|c| write(w, c)));
            }
        } else {
            calls.iter().for_each(|c| write(w, c));
        }
    };
    run(&mut w, before);
    let cpu_start = thread_cpu_ns();
    run(&mut w, after);
    let cpu = thread_cpu_ns() - cpu_start;
    let measured = calls.len() - warm;
    println!(
        "{{\"mode\": \"{}\", \"batch\": {}, \"calls\": {}, \"measured\": {measured}, \"ns_per_transform_cpu\": {:.1}}}",
        args.mode,
        args.batch,
        calls.len(),
        cpu as f64 / measured as f64
    );
}
