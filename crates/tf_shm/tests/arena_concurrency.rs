//! One writer at full speed; reader threads and reader processes check that every answer is a
//! sample that was written or an interpolation of two that were — never a torn value.
//!
//! Every sample of frame `a` (parent `world`) at stamp `k` ms has `x = k`, `y = 2k`, `z = −k` and
//! a rotation of `k·1e−4` rad about z, so an answer at any time `t` in the history must equal
//! that function at `t` (linear interpolation and tf2's slerp are exact for it). The writer
//! swaps neighbouring stamps now and then (reordering inserts), starts from small rings (so
//! rings grow under the readers), and keeps a short cache (so slots are reused constantly).

use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, FramePair, TransformError};

const MS: i64 = 1_000_000;
const CHILD_ENV: &str = "TF_SHM_TEST_ARENA_PATH";
const RUN: Duration = Duration::from_millis(1500);

fn expected(t_ns: i64) -> ([f64; 3], [f64; 4]) {
    let k = t_ns as f64 / MS as f64;
    let half = k * 1e-4 / 2.0;
    ([k, 2.0 * k, -k], [0.0, 0.0, half.sin(), half.cos()])
}

fn write(w: &mut tf_shm::ArenaWriter, k: i64) {
    let (p, q) = expected(k * MS);
    let t = TransformInput {
        frame_id: "world",
        child_frame_id: "a",
        stamp: k * MS,
        translation: p,
        rotation: q,
    };
    w.set_transform(&t, "race", false).unwrap();
}

/// Checks one answer, through the names or through `pair` (its resolved ids; both tf2's walk
/// with single-attempt ring reads) in turn; returns false for an acceptable failure (the time left
/// the window).
fn check(view: &ArenaView, pair: Option<&mut FramePair>, t: i64) -> bool {
    let answer = match pair {
        None => view
            .lookup_transform("world", "a", t)
            .map(|r| (r.stamp, r.transform)),
        Some(pair) => view.lookup_pair(pair, t),
    };
    match answer {
        Ok((stamp, transform)) => {
            let r = tf_shm::TransformStamped {
                stamp,
                frame_id: "world",
                child_frame_id: "a",
                transform,
            };
            let at = if t == 0 { r.stamp } else { t };
            assert_eq!(r.stamp, at);
            let (p, q) = expected(at);
            for i in 0..3 {
                assert!(
                    (r.transform.translation[i] - p[i]).abs() <= 1e-9 * p[i].abs().max(1.0),
                    "torn translation at {t}: {:?} vs {p:?}",
                    r.transform.translation
                );
            }
            let dot: f64 = (0..4).map(|i| r.transform.rotation[i] * q[i]).sum();
            assert!((dot.abs() - 1.0).abs() < 1e-9, "torn rotation at {t}");
            true
        }
        Err(TransformError::Extrapolation { .. }) => false,
        Err(e) => panic!("unexpected error at {t}: {e}"),
    }
}

/// Reads until `stop`; returns (answers checked, extrapolations).
fn reader(view: &ArenaView, stop: &AtomicBool, newest: &dyn Fn() -> i64) -> (u64, u64) {
    let (mut ok, mut missed) = (0u64, 0u64);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut pair = FramePair::new("world", "a");
    while !stop.load(Ordering::Relaxed) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = newest();
        // Anywhere in the last ~0.9 s (cache is 1 s), off the ms grid, or time 0.
        let t = if x.is_multiple_of(5) {
            0
        } else {
            n - (x % 900_000_000) as i64
        };
        if t < 0 {
            continue;
        }
        let through_pair = (x >> 7).is_multiple_of(2);
        if check(view, through_pair.then_some(&mut pair), t) {
            ok += 1;
        } else {
            missed += 1;
        }
    }
    (ok, missed)
}

fn config() -> ArenaConfig {
    ArenaConfig {
        max_frames: 16,
        cache_time_ns: 1_000_000_000,
        memory_budget_bytes: 8 << 20,
        max_rate_hz: 100_000,
        initial_ring_capacity: 4,
    }
}

/// Writer loop: stamps 1, 2, … ms, swapping every 7th pair (a reordering insert).
fn writer(w: &mut tf_shm::ArenaWriter, newest: &AtomicU64, until: Instant) -> i64 {
    let mut k = 2i64;
    while Instant::now() < until {
        if k % 7 == 0 {
            write(w, k + 1);
            write(w, k);
            k += 2;
        } else {
            write(w, k);
            k += 1;
        }
        newest.store(((k - 1) * MS) as u64, Ordering::Relaxed);
    }
    k
}

#[test]
fn writer_races_readers_in_threads_and_processes() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        return child(&path);
    }
    let (file, mut w, view) = Arena::create_shared(&config(), "tf_shm_race")
        .unwrap()
        .into_parts();
    // Stamps start at 1 ms: a stamp of 0 reads as "latest" in tf2, so a time-0 lookup racing
    // the first writes could not be checked against f(stamp).
    write(&mut w, 1);
    let path = format!("/proc/{}/fd/{}", std::process::id(), file.as_raw_fd());
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(&exe)
                .args(["--exact", "writer_races_readers_in_threads_and_processes"])
                .args(["--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, &path)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let newest = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (view, stop, newest) = (view.clone(), stop.clone(), newest.clone());
            std::thread::spawn(move || {
                reader(&view, &stop, &|| newest.load(Ordering::Relaxed) as i64)
            })
        })
        .collect();
    let written = writer(
        &mut w,
        &newest,
        Instant::now() + RUN + Duration::from_millis(500),
    );
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        let (ok, missed) = r.join().unwrap();
        println!("thread: {ok} checked, {missed} extrapolated");
        assert!(ok > 1000, "thread checked too few answers: {ok}");
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let summary = text.lines().find(|l| l.starts_with("child:")).unwrap_or("");
        println!("{summary}");
        assert!(
            out.status.success(),
            "a reader process saw a torn value:\n{text}"
        );
    }
    println!("writer: {written} samples");
    drop(file);
}

fn child(path: &str) {
    let file = std::fs::File::open(path).unwrap();
    let view = Arena::attach(&file).unwrap();
    let stop = AtomicBool::new(false);
    let deadline = Instant::now() + RUN;
    let newest = || -> i64 {
        if Instant::now() > deadline {
            stop.store(true, Ordering::Relaxed);
        }
        view.get_latest_common_time("world", "a").unwrap_or(0)
    };
    let (ok, missed) = reader(&view, &stop, &newest);
    println!("child: {ok} checked, {missed} extrapolated");
    assert!(ok > 1000, "child checked too few answers: {ok}");
}
