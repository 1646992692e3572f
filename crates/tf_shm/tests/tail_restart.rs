//! `tf_shm::tail::Tail::follow` across a bridge restart, with the tail's reads placed where a
//! thread's could fall: samples the old owner stored after the tail's last read of its arena
//! and before the new owner is joined are still reported (the old arena is read a last time),
//! then the new arena from its beginning, each sample once per arena.

mod rendezvous_support;

use std::time::{Duration, Instant};

use rendezvous_support::*;
use tf_shm::tail::Tail;
use tf_shm::validate::TransformInput;
use tf_shm::{ArenaIdentity, Owner};

fn write(owner: &mut Owner, child: &str, stamp: i64, x: f64) {
    let input = TransformInput {
        frame_id: "map",
        child_frame_id: child,
        stamp,
        translation: [x, 0.0, 0.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };
    owner.writer().set_transform(&input, "test", false).unwrap();
}

/// (arena identity, child name, stamp, x) of everything `follow` reports.
fn follow(tail: &mut Tail, b: &tf_shm::Buffer) -> Vec<(ArenaIdentity, String, i64, f64)> {
    let mut out = Vec::new();
    for (view, arrived) in tail.follow(b).unwrap() {
        assert_eq!(arrived.missed, 0);
        for (id, s) in arrived.statics.iter().chain(&arrived.dynamic) {
            let name = tail.name(&view, *id).unwrap().to_owned();
            out.push((view.identity(), name, s.stamp, s.transform.translation[0]));
        }
    }
    out
}

#[test]
fn the_old_arenas_last_samples_then_the_new_arena_from_its_beginning() {
    let dir = TestDir::new("tail");
    let mut a = owner_in_process(&dir, 1.0, serve());
    write(&mut a, "odom", 1_000_000_000, 0.5);
    let b = dir.open().open().unwrap();
    let mut tail = Tail::new();
    let first = follow(&mut tail, &b);
    let a_id = b.view().identity();
    assert_eq!(first.len(), 2, "{first:?}");
    // Stored after the tail's last read, then the owner goes.
    for k in 1..=5 {
        write(&mut a, "odom", 1_000_000_000 + k * 10_000_000, k as f64);
    }
    drop(a);
    let mut new = owner_in_process(&dir, 1.0, serve());
    write(&mut new, "odom", 2_000_000_000, 9.0);
    let deadline = Instant::now() + Duration::from_secs(5);
    while b.receiving_view().identity() == b.view().identity() && b.arena_swaps() == 0 {
        assert!(Instant::now() < deadline, "the new arena was not joined");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut got = follow(&mut tail, &b);
    while got.len() < 7 {
        assert!(Instant::now() < deadline, "{got:?}");
        got.extend(follow(&mut tail, &b));
    }
    let old: Vec<_> = got.iter().filter(|r| r.0 == a_id).map(|r| r.3).collect();
    assert_eq!(
        old,
        [1.0, 2.0, 3.0, 4.0, 5.0],
        "the old arena's last samples: {got:?}"
    );
    let fresh: Vec<_> = got
        .iter()
        .filter(|r| r.0 != a_id)
        .map(|r| (r.1.as_str(), r.3))
        .collect();
    assert_eq!(
        fresh,
        [("base", 1.0), ("odom", 9.0)],
        "the new arena, once: {got:?}"
    );
    assert!(
        got.iter().skip_while(|r| r.0 == a_id).all(|r| r.0 != a_id),
        "the old arena's first: {got:?}"
    );
    assert!(follow(&mut tail, &b).is_empty());
}
