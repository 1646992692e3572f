//! What a [`tf_shm::tail::Tail`] costs the process that follows an arena (the C++
//! `tf_shm::TransformListener`, `tf_shm record`): a star of `frames` dynamic children of one
//! root written at 100 Hz, one message (one `batch`) per tick, and the tail polled after each
//! message, as a listener woken by the arena's futex polls. The first 10 s of stamps fill the
//! histories (the default 10 s cache time) and are not measured.
//!
//! Prints polls, samples reported and ns of thread CPU per poll and per sample (the writer's
//! time excluded), as JSON.
//!
//! `cargo run --release -p tf_shm --example profile_tail -- [seconds] [frames]`
use tf_shm::tail::Tail;
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig};

/// A star of FRAMES children written at 100 Hz, the tail polled after every message.
#[derive(clap::Parser)]
#[command(name = "profile_tail")]
struct Args {
    /// Seconds of stamps, the first 10 not measured
    #[arg(default_value_t = 30)]
    seconds: i64,
    /// Children of the root
    #[arg(default_value_t = 50)]
    frames: usize,
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
    let (mut writer, view) = Arena::in_memory(&ArenaConfig::default()).expect("arena");
    let names: Vec<String> = (0..args.frames).map(|i| format!("f{i}")).collect();
    let mut tail = Tail::new();
    let (mut polls, mut reported, mut cpu) = (0u64, 0u64, 0i64);
    let t0 = 1_000_000_000_000i64;
    for k in 0..args.seconds * 100 {
        let stamp = t0 + k * 10_000_000;
        writer.batch(|w| {
            for (i, name) in names.iter().enumerate() {
                let (s, c) = ((0.002 * k as f64 + i as f64).sin() / 2.0).sin_cos();
                let t = TransformInput {
                    frame_id: "root",
                    child_frame_id: name,
                    stamp,
                    translation: [1.0, i as f64, 0.0],
                    rotation: [0.0, 0.0, s, c],
                };
                w.set_transform(&t, "profile_tail", false).expect("stored");
            }
        });
        let start = thread_cpu_ns();
        let arrived = tail.poll(&view).expect("poll");
        if k >= 1000 {
            cpu += thread_cpu_ns() - start;
            polls += 1;
            reported += arrived.dynamic.len() as u64;
        }
    }
    println!(
        "{{\"frames\": {}, \"polls\": {polls}, \"samples\": {reported}, \"ns_per_poll\": {:.0}, \"ns_per_sample\": {:.1}}}",
        args.frames,
        cpu as f64 / polls.max(1) as f64,
        cpu as f64 / reported.max(1) as f64
    );
}
