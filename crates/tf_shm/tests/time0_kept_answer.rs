//! A `FramePair` (and the names API's cached one) keeps its last time-0 answer and gives it
//! again while no link it was read from changed. These tests change the arena in every way a
//! time-0 answer can depend on — a newer, older or equal-stamp sample of each link on the
//! chain, a re-parented frame, a root that gains a parent, a kind switch, `clear()` — and
//! check that the kept answer is never given for a changed arena: after each change, the
//! pair, kept across all changes, answers exactly what tf2's walk without a kept answer
//! (`tf_shm::walk::lookup_transform`) answers, value or error. A writer racing the lookups
//! on another thread, then stopping, must not leave a stale kept answer behind either.

#[path = "common/arenas.rs"]
mod arenas;

use arenas::bits;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, FramePair, TransformError};

const S: i64 = 1_000_000_000;
const T0: i64 = 1_000 * S;
const PERIOD: i64 = S / 10;

/// A sample whose translation and yaw both follow `x`.
fn put(w: &mut ArenaWriter, parent: &str, child: &str, stamp: i64, x: f64, is_static: bool) {
    arenas::put(w, parent, child, stamp, x, 0.3 + 0.1 * x, is_static);
}

/// `map → odom → base → arm → tool` (dynamic), `base → laser` (dynamic), `arm → cam`
/// (static), 20 samples each.
fn arenas() -> Vec<(&'static str, ArenaView, ArenaWriter)> {
    let config = ArenaConfig {
        max_frames: 32,
        memory_budget_bytes: 4 << 20,
        ..ArenaConfig::default()
    };
    let mut out = arenas::in_process_and_mapped(&config, "tf_shm_time0_kept");
    for (_, _, w) in &mut out {
        for k in 0..20 {
            let t = T0 + k * PERIOD;
            for (i, (p, c)) in [
                ("map", "odom"),
                ("odom", "base"),
                ("base", "arm"),
                ("arm", "tool"),
                ("base", "laser"),
            ]
            .into_iter()
            .enumerate()
            {
                put(w, p, c, t, k as f64 * 0.01 + i as f64, false);
            }
        }
        put(w, "arm", "cam", 0, 7.0, true);
    }
    out
}

const PAIRS: [(&str, &str); 6] = [
    ("map", "tool"),
    ("tool", "map"),
    ("laser", "cam"),
    ("cam", "laser"),
    ("odom", "base"),
    ("map", "cam"),
];

type Answer = Result<(i64, [u64; 7]), TransformError>;

fn by_pair(view: &ArenaView, pair: &mut FramePair) -> Answer {
    view.lookup_pair(pair, 0).map(|(s, t)| bits(s, &t))
}

fn by_name(view: &ArenaView, t: &str, s: &str) -> Answer {
    view.lookup_transform(t, s, 0)
        .map(|a| bits(a.stamp, &a.transform))
}

/// tf2's walk at time 0, keeping nothing between calls.
fn reference(view: &ArenaView, t: &str, s: &str) -> Answer {
    tf_shm::walk::lookup_transform(view, t, s, 0).map(|a| bits(a.stamp, &a.transform))
}

/// A change to the arena, named.
type Change = (&'static str, Box<dyn Fn(&mut ArenaWriter)>);

/// Every change a time-0 answer can depend on, applied in turn.
fn changes() -> Vec<Change> {
    let late = T0 + 40 * PERIOD;
    vec![
        (
            "newer leaf sample",
            Box::new(move |w| put(w, "arm", "tool", late, 9.0, false)),
        ),
        (
            "newer sample mid-chain",
            Box::new(move |w| put(w, "odom", "base", late, 9.5, false)),
        ),
        (
            "newer sample at the top",
            Box::new(move |w| put(w, "map", "odom", late, 9.25, false)),
        ),
        (
            "older sample inserted into a history",
            Box::new(|w| put(w, "base", "arm", T0 + PERIOD / 2, 8.0, false)),
        ),
        (
            "sample at the newest stamp of another link",
            Box::new(move |w| put(w, "base", "laser", late, 3.0, false)),
        ),
        (
            "static re-set",
            Box::new(|w| put(w, "arm", "cam", 0, 4.0, true)),
        ),
        (
            "root gains a parent",
            Box::new(move |w| put(w, "world", "map", late, 1.0, false)),
        ),
        (
            "frame re-parented",
            Box::new(move |w| put(w, "map", "arm", late + PERIOD, 2.0, false)),
        ),
        (
            "dynamic frame becomes static",
            Box::new(|w| put(w, "map", "odom", 0, 5.0, true)),
        ),
        (
            "static frame becomes dynamic",
            Box::new(move |w| put(w, "arm", "cam", late + 2 * PERIOD, 6.0, false)),
        ),
        ("clear()", Box::new(|w| w.clear())),
        (
            "data again after clear()",
            Box::new(move |w| {
                for (p, c) in [("world", "map"), ("odom", "base"), ("base", "laser")] {
                    put(w, p, c, late + 3 * PERIOD, 0.5, false);
                }
            }),
        ),
    ]
}

#[test]
fn kept_answers_follow_every_change() {
    for (what, view, mut w) in arenas() {
        let mut pairs: Vec<FramePair> = PAIRS.iter().map(|(t, s)| FramePair::new(t, s)).collect();
        let check = |view: &ArenaView, pairs: &mut [FramePair], after: &str| {
            for (pair, (t, s)) in pairs.iter_mut().zip(PAIRS) {
                let want = reference(view, t, s);
                // Twice: the first may walk, the second gives what was kept.
                for round in 0..2 {
                    assert_eq!(
                        by_pair(view, pair),
                        want,
                        "{what}, after {after}: pair {t} <- {s}, call {round}"
                    );
                    assert_eq!(
                        by_name(view, t, s),
                        want,
                        "{what}, after {after}: names {t} <- {s}, call {round}"
                    );
                }
            }
        };
        check(&view, &mut pairs, "setup");
        for (change, apply) in changes() {
            apply(&mut w);
            check(&view, &mut pairs, change);
        }
    }
}

#[test]
fn a_racing_writer_leaves_no_stale_kept_answer() {
    let (_, view, mut w) = arenas().swap_remove(0);
    let stop = Arc::new(AtomicBool::new(false));
    let mut pairs: Vec<FramePair> = PAIRS.iter().map(|(t, s)| FramePair::new(t, s)).collect();
    for round in 0..200i64 {
        stop.store(false, Ordering::SeqCst);
        let reader = {
            let view = view.clone();
            let stop = stop.clone();
            let mut pairs = std::mem::take(&mut pairs);
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    for p in &mut pairs {
                        let _ = view.lookup_pair(p, 0);
                    }
                }
                pairs
            })
        };
        // A few writes while the reader walks and keeps answers.
        let t = T0 + (100 + round) * PERIOD;
        for (i, (p, c)) in [("odom", "base"), ("arm", "tool"), ("base", "laser")]
            .into_iter()
            .enumerate()
        {
            put(&mut w, p, c, t, (round % 7) as f64 + i as f64, false);
            std::thread::yield_now();
        }
        stop.store(true, Ordering::SeqCst);
        pairs = reader.join().unwrap();
        for (pair, (t, s)) in pairs.iter_mut().zip(PAIRS) {
            assert_eq!(
                by_pair(&view, pair),
                reference(&view, t, s),
                "round {round}: {t} <- {s}"
            );
        }
    }
}

#[test]
fn a_pair_moved_to_another_arena_keeps_nothing_of_the_first() {
    // Two arenas with the same frames, ids and sample counts (so every change count is
    // equal) but other values: a pair's kept answer of the first must not answer the second.
    let config = ArenaConfig {
        max_frames: 8,
        memory_budget_bytes: 1 << 20,
        ..ArenaConfig::default()
    };
    let (mut wa, a) = Arena::in_memory(&config).unwrap();
    let (mut wb, b) = Arena::in_memory(&config).unwrap();
    for k in 0..5 {
        put(&mut wa, "map", "base", T0 + k * PERIOD, 1.0, false);
        put(&mut wb, "map", "base", T0 + k * PERIOD, 2.0, false);
    }
    let mut pair = FramePair::new("map", "base");
    for (view, x) in [(&a, 1.0), (&b, 2.0), (&a, 1.0)] {
        // The first lookup in an arena resolves the names; at a time other than 0 it keeps no
        // time-0 answer, so what the pair kept before must be gone by then.
        let (_, t) = view.lookup_pair(&mut pair, T0 + PERIOD / 3).unwrap();
        assert_eq!(t.translation[0], x);
        for _ in 0..2 {
            let (_, t) = view.lookup_pair(&mut pair, 0).unwrap();
            assert_eq!(t.translation[0], x);
        }
    }
}
