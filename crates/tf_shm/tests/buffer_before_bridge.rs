//! A buffer made before any bridge serves (`Join::open_or_empty`): an empty tf2 buffer until
//! an owner serves, then joined by the re-attach thread within a few ms; a wait that began
//! before wakes on the data; `Join::open` keeps refusing with `NotServing`.

mod rendezvous_support;

use std::time::{Duration, Instant};

use rendezvous_support::*;
use tf_shm::validate::TransformInput;
use tf_shm::{BufferCore, JoinError, TransformError};

#[test]
fn open_still_refuses_when_nobody_serves() {
    let dir = TestDir::new("before-open");
    match dir.open().open() {
        Err(JoinError::NotServing { .. }) => {}
        Err(e) => panic!("expected NotServing, got {e}"),
        Ok(_) => panic!("expected NotServing, got a buffer"),
    }
}

#[test]
fn an_empty_buffer_answers_as_tf2_then_joins_the_bridge() {
    let dir = TestDir::new("before-empty");
    let buffer = dir
        .open()
        .open_or_empty()
        .expect("a buffer without a bridge");
    assert!(!buffer.joined());
    assert!(!buffer.owner_alive());
    // tf2's empty BufferCore: the frame does not exist; canTransform is false.
    match buffer.lookup_transform("map", "base", 0) {
        Err(e @ TransformError::Lookup(_)) => assert_eq!(
            e.to_string(),
            "\"map\" passed to lookupTransform argument target_frame does not exist. "
        ),
        other => panic!("expected LookupException, got {other:?}"),
    }
    assert!(buffer.can_transform("map", "base", 0).is_err());
    assert!(buffer.frame_exists("map").is_ok_and(|e| !e));

    let owner = owner_in_process(&dir, 2.5, serve());
    let served = Instant::now();
    while !buffer.joined() {
        assert!(
            served.elapsed() < Duration::from_secs(2),
            "not joined within 2 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let joined_after = served.elapsed();
    let t = buffer.lookup_transform("map", "base", 0).expect("joined");
    assert_eq!(t.transform.translation[0], 2.5);
    assert!(buffer.owner_alive());
    assert_eq!(buffer.arena_swaps(), 0, "a first join is no restart");
    assert!(buffer.slot() < 64);
    println!("joined {joined_after:?} after the owner served");
    drop(owner);
}

#[test]
fn a_wait_begun_before_the_bridge_wakes_on_its_data() {
    let dir = TestDir::new("before-wait");
    let buffer = dir
        .open()
        .open_or_empty()
        .expect("a buffer without a bridge");
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let r = buffer.lookup_transform_timeout("map", "late", 0, Duration::from_secs(10));
            (r.map(|t| t.transform.translation[0]), Instant::now())
        });
        std::thread::sleep(Duration::from_millis(150));
        let mut owner = owner_in_process(&dir, 1.0, serve());
        // After the join, a frame the wait asks for arrives later still.
        while !buffer.joined() {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(100));
        let t = TransformInput {
            frame_id: "map",
            child_frame_id: "late",
            stamp: 2_000_000_000,
            translation: [7.0, 0.0, 0.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        let written = Instant::now();
        owner
            .writer()
            .set_transform(&t, "test", false)
            .expect("write");
        let (r, done) = waiter.join().expect("waiter");
        assert_eq!(r.expect("the frame arrives"), 7.0);
        let late = done.saturating_duration_since(written);
        println!("woke {late:?} after the write");
        assert!(late < Duration::from_millis(100), "woke {late:?} late");
    });
}
