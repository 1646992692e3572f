//! Waiting lookups (`*_timeout`) wake on data through the arena's futex word: promptly after a
//! write, without burning CPU while nothing arrives, on time when nothing does, and at an
//! arena swap (bridge restart by SIGKILL).

mod rendezvous_support;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use rendezvous_support::*;
use tf_shm::{Buffer, FramePair};

const S: i64 = 1_000_000_000;

fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[test]
fn a_wait_returns_promptly_after_the_write_it_waits_for() {
    let dir = TestDir::new("wait-wake");
    let mut owner = owner_in_process(&dir, 1.0, serve());
    let buffer: Buffer = dir.open().open().expect("consumer");
    let (tx, rx) = mpsc::channel::<(usize, Instant)>();
    let rounds = 9;
    let latencies = std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut got = Vec::new();
            for k in 0..rounds {
                let frame = format!("late{k}");
                let r = buffer.lookup_transform_timeout("map", &frame, 0, Duration::from_secs(10));
                let done = Instant::now();
                assert_eq!(
                    r.expect("the frame arrives").transform.translation[0],
                    k as f64
                );
                got.push(done);
            }
            got
        });
        for k in 0..rounds {
            // Odd delays, so the write falls at varied phases of any periodic re-check.
            std::thread::sleep(Duration::from_millis(37 + 23 * k as u64));
            tx.send((k, Instant::now())).unwrap();
            put(&mut owner, &format!("late{k}"), S, k as f64, false);
        }
        let done = waiter.join().unwrap();
        let writes: Vec<Instant> = rx.iter().take(rounds).map(|(_, t)| t).collect();
        let mut l: Vec<Duration> = done.iter().zip(&writes).map(|(d, w)| *d - *w).collect();
        l.sort();
        l
    });
    // Woken by the write, not found by a periodic re-check (those are 200 ms apart): the
    // median wait after the write is far below that even on a loaded machine.
    assert!(
        latencies[rounds / 2] < Duration::from_millis(30),
        "{latencies:?}"
    );
}

#[test]
fn a_wait_costs_no_cpu_and_times_out_on_time() {
    let dir = TestDir::new("wait-idle");
    let mut owner = owner_in_process(&dir, 1.0, serve());
    let buffer = dir.open().open().expect("consumer");
    let timeout = Duration::from_millis(1500);
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let cpu = thread_cpu();
            let start = Instant::now();
            let r = buffer.can_transform_timeout("map", "never", 0, timeout);
            (r, start.elapsed(), thread_cpu() - cpu)
        });
        // Writes of other frames wake the waiter, which re-checks and sleeps again.
        for k in 0..10 {
            std::thread::sleep(Duration::from_millis(50));
            put(&mut owner, "other", S + k, 0.0, false);
        }
        let (r, elapsed, cpu) = waiter.join().unwrap();
        let e = r.expect_err("never written");
        assert_eq!(e.class_name(), "LookupException", "{e}");
        assert!(elapsed >= timeout, "{elapsed:?}");
        assert!(
            elapsed < timeout + Duration::from_millis(500),
            "{elapsed:?}"
        );
        assert!(
            cpu < Duration::from_millis(50),
            "waiting cost {cpu:?} of CPU"
        );
    });
    // The plain lookup's error, as tf2_ros throws it, after the wait.
    let e = buffer
        .lookup_transform_timeout("map", "never", 0, Duration::from_millis(50))
        .expect_err("never written");
    assert_eq!(e.class_name(), "LookupException");
}

#[test]
fn two_time_waits_and_zero_timeouts() {
    let dir = TestDir::new("wait-full");
    let mut owner = owner_in_process(&dir, 1.0, serve());
    let buffer = dir.open().open().expect("consumer");
    put(&mut owner, "a", S, 1.0, false);
    put(&mut owner, "a", 2 * S, 2.0, false);
    // A zero timeout checks once.
    let start = Instant::now();
    assert!(buffer
        .can_transform_full_timeout("a", 3 * S, "b", S, "map", Duration::ZERO)
        .is_err());
    assert!(start.elapsed() < Duration::from_millis(100));
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            buffer.lookup_transform_full_timeout("a", 2 * S, "b", S, "map", Duration::from_secs(10))
        });
        std::thread::sleep(Duration::from_millis(100));
        put(&mut owner, "b", S, 5.0, false);
        let t = waiter.join().unwrap().expect("b arrives");
        // T_a(2 s)^-1 * T_b(1 s): x = 5 - 2.
        assert_eq!(t.transform.translation[0], 3.0);
    });
}

#[test]
fn a_wait_follows_the_arena_to_a_restarted_owner() {
    let dir = TestDir::new("wait-swap");
    let (mut first, _) = owner_child(&dir, 1.0);
    let buffer = dir.open().open().expect("consumer");
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let start = Instant::now();
            let r = buffer.can_transform_timeout("map", "fresh", 0, Duration::from_secs(20));
            (r, start.elapsed())
        });
        std::thread::sleep(Duration::from_millis(200));
        first.kill();
        let mut second = owner_in_process(&dir, 2.0, serve());
        put(&mut second, "fresh", S, 0.0, false);
        let (r, elapsed) = waiter.join().unwrap();
        r.expect("the new owner's frame");
        assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
        // The new arena holds the old one's frames: the buffer swaps to it within its polling
        // period (the wait may have answered from the hold just before).
        let start = Instant::now();
        while buffer.arena_swaps() == 0 && start.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(buffer.arena_swaps(), 1);
    });
}

#[test]
fn a_wait_during_a_hold_wakes_on_the_new_arenas_data() {
    let dir = TestDir::new("wait-hold");
    let (mut first, _) = owner_child(&dir, 1.0);
    let buffer = dir.open().open().expect("consumer");
    first.kill();
    // Not ready and without the old arena's frames: the buffer holds the old arena.
    let mut second = dir
        .serve()
        .require_create(true)
        .defer_ready(true)
        .serve()
        .expect("owner");
    // The buffer re-joins within its retry period (20 ms) and holds.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        buffer.arena_swaps(),
        0,
        "held: not ready, old frames missing"
    );
    assert!(buffer.owner_alive(), "the owner followed is the new one");
    let rounds = 7;
    let mut latencies = std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            (0..rounds)
                .map(|k| {
                    let frame = format!("fresh{k}");
                    let r = buffer.can_transform_timeout("map", &frame, 0, Duration::from_secs(10));
                    r.expect("the new arena's frame, through the hold");
                    Instant::now()
                })
                .collect::<Vec<_>>()
        });
        let mut writes = Vec::new();
        for k in 0..rounds {
            // Odd delays, so the write falls at varied phases of any periodic re-check.
            std::thread::sleep(Duration::from_millis(37 + 23 * k as u64));
            writes.push(Instant::now());
            put(&mut second, &format!("fresh{k}"), S, k as f64, false);
        }
        let done = waiter.join().unwrap();
        done.iter()
            .zip(&writes)
            .map(|(d, w)| d.duration_since(*w))
            .collect::<Vec<_>>()
    });
    latencies.sort();
    // Woken by the new arena's writes, not found by the 200 ms re-check.
    assert!(
        latencies[rounds / 2] < Duration::from_millis(30),
        "{latencies:?}"
    );
    assert_eq!(buffer.arena_swaps(), 0, "answered before any swap");
    // The old arena's frames keep answering alongside.
    let t = buffer
        .lookup_transform("map", "base", 0)
        .expect("old frame");
    assert_eq!(t.transform.translation[0], 1.0);
    let t = buffer
        .lookup_transform("map", "fresh3", 0)
        .expect("new frame");
    assert_eq!(t.transform.translation[0], 3.0);
    // The pair API answers through the hold too, by the pair's names.
    let mut pair = FramePair::new("base", "fresh3");
    let (_, t) = buffer
        .lookup_pair(&mut pair, 0)
        .expect("pair across both arenas");
    assert_eq!(t.translation[0], 2.0);
}

/// `wait_while` (what the C ABI's `tf_shm_buffer_wait` serves many requests with) runs its step
/// after each write and after `wake_waiters`, though the step asked to sleep for a minute, and
/// ends when the step says so.
#[test]
fn wait_while_steps_on_writes_and_on_wake_waiters() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
    let dir = TestDir::new("wait-while");
    let mut owner = owner_in_process(&dir, 1.0, serve());
    let buffer: Buffer = dir.open().open().expect("consumer");
    let steps = AtomicU32::new(0);
    let stop = AtomicBool::new(false);
    let until = |n: u32| {
        let end = Instant::now() + Duration::from_secs(5);
        while steps.load(SeqCst) < n && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(1));
        }
        steps.load(SeqCst)
    };
    let (first, after_write, ended_in) = std::thread::scope(|s| {
        s.spawn(|| {
            buffer.wait_while(|| {
                steps.fetch_add(1, SeqCst);
                (!stop.load(SeqCst)).then_some(Duration::from_secs(60))
            })
        });
        let first = until(1);
        // Let the owner's wake for our announced wait pass, then count from a quiet state.
        std::thread::sleep(Duration::from_millis(50));
        let before = steps.load(SeqCst);
        put(&mut owner, "a", S, 1.0, false);
        let after_write = until(before + 1) - before;
        let t = Instant::now();
        let before = steps.load(SeqCst);
        stop.store(true, SeqCst);
        // A wake that lands before the waiter sleeps is not seen: repeat until it answers.
        while steps.load(SeqCst) == before {
            buffer.wake_waiters();
            std::thread::sleep(Duration::from_millis(1));
        }
        (first, after_write, t.elapsed())
    });
    assert!(first >= 1, "the step runs at once");
    assert!(after_write >= 1, "a write runs the step again");
    // A missed wake would wait for SWAP_RECHECK (200 ms); the step asks for 60 s.
    assert!(ended_in < Duration::from_millis(150), "{ended_in:?}");
}
