//! A consumer whose owner died keeps answering from the old arena until the new owner's arena
//! holds the old arena's frames, or is declared ready by its writer, bounded in time; and
//! idle handshakes cannot lock a joiner out of the owner. Real processes, real SIGKILL.

mod rendezvous_support;

use std::time::{Duration, Instant};

use rendezvous_support::*;
use tf_shm::rendezvous::wire::Status;

const T: Duration = Duration::from_secs(10);

fn deferred_owner(dir: &TestDir, value: f64) -> (Peer, i64) {
    let p = Peer::spawn(&["owner-deferred", &value.to_string()], dir);
    let w = p.expect("READY", T);
    let t = w[1].parse().expect("time");
    (p, t)
}

/// Asks the consumer for its answer: (x or error class, generation).
fn ask(c: &mut Peer) -> (String, String) {
    c.send("lookup");
    let w = c.expect("X", T);
    (w[0].clone(), w[1].clone())
}

#[test]
fn the_old_arena_answers_until_the_new_one_holds_its_frames() {
    let dir = TestDir::new("handover");
    let (mut first, _) = owner_child(&dir, 1.0);
    let mut consumer = Peer::spawn(&["consumer"], &dir);
    assert_eq!(consumer.expect("JOINED", T)[1], "1");
    first.kill();

    let (mut second, _) = deferred_owner(&dir, 2.0);
    // Joined but empty and not ready: the old answer stays.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(ask(&mut consumer), ("1".into(), "0".into()));
    // Holds every frame the old one held (not declared ready yet): swapped within the polling
    // period.
    second.send("write");
    let written_at: i64 = second.expect("DONE", T)[0].parse().unwrap();
    let w = consumer.expect("GEN", T);
    assert_eq!((w[0].as_str(), w[1].as_str()), ("1", "2"));
    let dt = w[2].parse::<i64>().unwrap() - written_at;
    assert!(dt < 200_000_000, "swap {dt} ns after the frames were back");
    println!("swap after the frames were back: {:.1} ms", dt as f64 / 1e6);
}

#[test]
fn a_ready_arena_missing_old_frames_is_followed_after_a_bounded_wait() {
    let dir = TestDir::new("handover-empty");
    let (mut first, _) = owner_child(&dir, 1.0);
    let mut consumer = Peer::spawn(&["consumer"], &dir);
    consumer.expect("JOINED", T);
    first.kill();
    let (mut second, _) = deferred_owner(&dir, 2.0);
    std::thread::sleep(Duration::from_millis(100));
    second.send("ready");
    second.expect("DONE", T);
    // Ready but without map→base: the consumer waits for it, at most 500 ms, then follows.
    let ready = Instant::now();
    std::thread::sleep(Duration::from_millis(250));
    assert_eq!(ask(&mut consumer), ("1".into(), "0".into()));
    std::thread::sleep(Duration::from_millis(800).saturating_sub(ready.elapsed()));
    let (x, generation) = ask(&mut consumer);
    assert_eq!(generation, "1", "followed the ready arena within 800 ms");
    assert!(x.starts_with("ERR"), "the new arena has no map→base: {x}");
}

#[test]
fn an_owner_that_never_declares_ready_nor_writes_is_followed_within_the_hold_bound() {
    let dir = TestDir::new("handover-never");
    let (mut first, _) = owner_child(&dir, 1.0);
    let mut consumer = Peer::spawn(&["consumer"], &dir);
    consumer.expect("JOINED", T);
    first.kill();
    let start = Instant::now();
    let (_second, _) = deferred_owner(&dir, 2.0);
    std::thread::sleep(Duration::from_secs(7));
    assert_eq!(ask(&mut consumer), ("1".into(), "0".into()));
    std::thread::sleep(Duration::from_secs(10).saturating_sub(start.elapsed()));
    let (x, generation) = ask(&mut consumer);
    assert_eq!(generation, "1", "followed within 10 s");
    assert!(x.starts_with("ERR"), "the new arena is empty: {x}");
}

#[test]
fn a_hundred_idle_connections_do_not_lock_a_joiner_out() {
    let dir = TestDir::new("idle-flood");
    let owner = owner_in_process(&dir, 3.0, serve());
    let idle: Vec<_> = (0..100).map(|_| raw_connect(&dir)).collect();
    // Let the owner accept them all.
    std::thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    let consumer = Peer::spawn(&["consumer"], &dir);
    let w = consumer.expect("JOINED", T);
    let took = start.elapsed();
    assert_eq!(w[1], "3");
    assert!(took < Duration::from_secs(1), "joined after {took:?}");
    // The oldest idle ones were closed with a truthful answer.
    let first = raw_response(&idle[0]).expect("an answer before the hang-up");
    assert_eq!(first.status, Status::Busy);
    assert!(owner.stats().evicted >= 36, "{:?}", owner.stats());
    println!("join with 100 idle connections held: {took:?}");
}
