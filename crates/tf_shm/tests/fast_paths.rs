//! Every fast path answers where it should: each fast read hands what it declines to a slower
//! read that answers every case, so a fast path that always declined would keep every answer
//! right and only lose speed. These tests count declines (`tf_shm::fast_path`) over lookups
//! each fast path must answer, on an arena no writer touches during the lookups, in-process and
//! through a read-only mapping, and fail on any decline.

#[path = "common/arenas.rs"]
mod arenas;

use tf_shm::fast_path::{declines, reset_declines, Declines};
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, FramePair};

const S: i64 = 1_000_000_000;
const T0: i64 = 1_000 * S;
const PERIOD: i64 = S / 100;
const SAMPLES: i64 = 200;

fn put(w: &mut ArenaWriter, parent: &str, child: &str, k: i64, i: usize, is_static: bool) {
    let stamp = if is_static { 0 } else { T0 + k * PERIOD };
    put_stamped(w, parent, child, stamp, k, i, is_static);
}

/// [`put`]'s sample `k` of link `i`, stamped `stamp`.
fn put_stamped(
    w: &mut ArenaWriter,
    parent: &str,
    child: &str,
    stamp: i64,
    k: i64,
    i: usize,
    is_static: bool,
) {
    let yaw = 0.2 + 0.3 * (0.05 * k as f64 + i as f64).sin();
    let (s, c) = (yaw / 2.0).sin_cos();
    w.set_transform(
        &TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp,
            translation: [0.5, 0.1 * i as f64, -0.2],
            rotation: [0.0, 0.0, s, c],
        },
        "test",
        is_static,
    )
    .expect("accepted");
}

/// `world → map` (dynamic) above `map → c1 → c2 → c3` and `map → b1 → b2` (dynamic), and a
/// static `c3 → cam`: pairs below, above and across the fork at `map`, whose `world → map` link
/// lies above the common ancestor.
fn arenas() -> Vec<(&'static str, ArenaView, ArenaWriter)> {
    let config = ArenaConfig {
        max_frames: 32,
        memory_budget_bytes: 4 << 20,
        ..ArenaConfig::default()
    };
    let mut out = arenas::in_process_and_mapped(&config, "tf_shm_fast_paths");
    for (_, _, w) in &mut out {
        for k in 0..SAMPLES {
            put(w, "world", "map", k, 0, false);
            for (i, (p, c)) in [
                ("map", "c1"),
                ("c1", "c2"),
                ("c2", "c3"),
                ("map", "b1"),
                ("b1", "b2"),
            ]
            .into_iter()
            .enumerate()
            {
                put(w, p, c, k, i + 1, false);
            }
        }
        put(w, "c3", "cam", 0, 9, true);
    }
    out
}

const PAIRS: [(&str, &str); 6] = [
    ("map", "c3"),
    ("c3", "map"),
    ("b2", "c3"),
    ("cam", "b1"),
    ("world", "cam"),
    ("c1", "c2"),
];

/// Off-grid times strictly inside every history.
fn inside(n: usize) -> impl Iterator<Item = i64> {
    (0..n as i64).map(move |k| T0 + PERIOD + 3_333_333 + k * (PERIOD * (SAMPLES - 3)) / n as i64)
}

/// Runs `f` (after one untimed call that resolves the names) and returns its declines.
fn counted(mut f: impl FnMut()) -> Declines {
    f();
    reset_declines();
    f();
    declines()
}

#[test]
fn one_attempt_link_reads_answer_inside_the_history() {
    for (what, view, _w) in arenas() {
        for (t, s) in PAIRS {
            let mut pair = FramePair::new(t, s);
            let d = counted(|| {
                for time in inside(64) {
                    view.lookup_pair(&mut pair, time).unwrap();
                    view.lookup_transform(t, s, time).unwrap();
                }
            });
            assert_eq!(d, Declines::default(), "{what}: {t} <- {s}");
        }
    }
}

#[test]
fn newest_reads_answer_time_zero_and_newest_stamps() {
    let newest = T0 + (SAMPLES - 1) * PERIOD;
    for (what, view, _w) in arenas() {
        for (t, s) in PAIRS {
            let mut pair = FramePair::new(t, s);
            let d = counted(|| {
                for time in [0, newest] {
                    view.lookup_pair(&mut pair, time).unwrap();
                    view.lookup_transform(t, s, time).unwrap();
                }
            });
            // Time 0 through a pair gives its kept answer (nothing changed); the newest stamp
            // is the one-attempt read's newest-sample case.
            assert_eq!(d, Declines::default(), "{what}: {t} <- {s}");
            // The walk at time 0 reuses the newest samples the latest common time read: the
            // free function keeps no answer, so it walks every time.
            let d = counted(|| {
                tf_shm::walk::lookup_transform(&view, t, s, 0).unwrap();
            });
            assert_eq!(d, Declines::default(), "{what}: walk at time 0, {t} <- {s}");
        }
    }
}

#[test]
fn time_zero_answers_are_kept_while_their_links_are_unchanged() {
    for (what, view, mut w) in arenas() {
        for (t, s) in PAIRS {
            let mut pair = FramePair::new(t, s);
            reset_declines();
            for _ in 0..32 {
                view.lookup_pair(&mut pair, 0).unwrap();
                view.lookup_transform(t, s, 0).unwrap();
            }
            // One walk for the pair, one for the names API's pair; the other 62 lookups give
            // the kept answers.
            assert_eq!(declines().kept_answer, 2, "{what}: {t} <- {s}");
        }
        // A sample of a frame on no queried chain changes no kept answer; one of `world → map`
        // (on every chain above the fork) changes all of them.
        let mut pairs: Vec<FramePair> = PAIRS.iter().map(|(t, s)| FramePair::new(t, s)).collect();
        for p in &mut pairs {
            view.lookup_pair(p, 0).unwrap();
        }
        put(&mut w, "world", "elsewhere", SAMPLES, 11, false);
        reset_declines();
        for p in &mut pairs {
            view.lookup_pair(p, 0).unwrap();
        }
        assert_eq!(declines().kept_answer, 0, "{what}: unrelated frame");
        put(&mut w, "world", "map", SAMPLES, 0, false);
        for p in &mut pairs {
            view.lookup_pair(p, 0).unwrap();
        }
        // ("c1", "c2") does not reach `world → map`.
        assert_eq!(declines().kept_answer, 5, "{what}: world -> map written");
    }
}

#[test]
fn bracket_reads_answer_the_walk_and_links_above_a_fork() {
    for (what, view, _w) in arenas() {
        // Across the fork at `map`, tf2's walk reads `world → map` (above the common ancestor)
        // in both passes.
        let mut pair = FramePair::new("b2", "c3");
        let d = counted(|| {
            for time in inside(64) {
                view.lookup_pair(&mut pair, time).unwrap();
            }
        });
        assert_eq!(d, Declines::default(), "{what}: fork");
        // By name, and `can_transform` (parents only: the general reader's bracket search).
        let d = counted(|| {
            for time in inside(64) {
                for (t, s) in PAIRS {
                    tf_shm::walk::lookup_transform(&view, t, s, time).unwrap();
                    view.can_transform(t, s, time).unwrap();
                }
            }
        });
        // The free function walks once, as the pair does: nothing may decline.
        assert_eq!(d, Declines::default(), "{what}: walk");
    }
}

/// A jittery publisher (stamps alternately 40 % of a period late and 30 % early): the
/// one-attempt read's uniform-rate guess misses the bracket by a sample for a good part of the
/// times, and steps to it along the stamp index instead of declining. Both the pair's close
/// read and `can_transform`'s bracket read (parents only) must answer.
#[test]
fn one_attempt_link_reads_step_to_the_bracket_on_jittery_stamps() {
    let (mut w, view) = Arena::in_memory(&ArenaConfig::default()).unwrap();
    for k in 0..SAMPLES {
        let jitter = if k % 2 == 0 {
            4 * PERIOD / 10
        } else {
            -3 * PERIOD / 10
        };
        for (i, (parent, child)) in [("map", "a"), ("a", "b")].into_iter().enumerate() {
            put_stamped(
                &mut w,
                parent,
                child,
                T0 + k * PERIOD + jitter,
                k,
                i + 1,
                false,
            );
        }
    }
    let mut pair = FramePair::new("map", "b");
    let d = counted(|| {
        for time in inside(200) {
            view.lookup_pair(&mut pair, time).unwrap();
            view.can_transform("map", "b", time).unwrap();
        }
    });
    assert_eq!(d, Declines::default());
}

#[test]
fn the_counters_count() {
    // A lookup that extrapolates leaves the one-attempt link read (at `c3`, then at `map` in
    // tf2's target pass) and is counted.
    let (_, view, _w) = arenas().swap_remove(0);
    let mut pair = FramePair::new("map", "c3");
    view.lookup_pair(&mut pair, T0 + PERIOD + 1).unwrap();
    reset_declines();
    assert!(view.lookup_pair(&mut pair, T0 + SAMPLES * PERIOD).is_err());
    assert_eq!(declines().fused_link, 2);
    reset_declines();
    assert_eq!(declines(), Declines::default());
}

#[test]
fn names_answer_through_the_thread_cache_and_without_it_once_it_is_gone() {
    use std::cell::RefCell;
    use std::sync::mpsc;

    /// Looks up by name when dropped (at thread exit) and reports the answer and the
    /// declines counted on the way.
    struct AtExit {
        view: ArenaView,
        report: mpsc::Sender<(f64, Declines)>,
    }
    impl Drop for AtExit {
        fn drop(&mut self) {
            reset_declines();
            let x = self.view.lookup_transform("map", "c3", 0).unwrap();
            let _ = self.report.send((x.transform.translation[0], declines()));
        }
    }
    thread_local! {
        static AT_EXIT: RefCell<Option<AtExit>> = const { RefCell::new(None) };
    }

    let (_, view, _w) = arenas().swap_remove(0);
    let expected = view.lookup_transform("map", "c3", 0).unwrap().transform;
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            // Registered before the names cache is first used on this thread, so it is
            // dropped after the cache (thread-locals are destroyed in reverse order).
            AT_EXIT.with(|a| {
                *a.borrow_mut() = Some(AtExit {
                    view: view.clone(),
                    report: tx,
                })
            });
            let d = counted(|| {
                view.lookup_transform("map", "c3", 0).unwrap();
            });
            assert_eq!(d, Declines::default());
        });
    });
    let (x, d) = rx.recv().expect("the lookup at thread exit ran");
    assert_eq!(x.to_bits(), expected.translation[0].to_bits());
    assert_eq!(
        d,
        Declines {
            names_cache: 1,
            ..Declines::default()
        }
    );
}

/// The rings' histories after what moves their ends other than an append: tf2's pruning past
/// the cache time, a ring grown into a larger one (copied), samples inserted among older
/// stamps. The one-attempt read finds its bracket from the ring header's hint of the history's
/// span, which the writer keeps through each of these; a stale hint would still answer (the
/// slots' stamps are checked) but through the general read, which this counts.
#[test]
fn one_attempt_link_reads_answer_after_pruning_growth_and_late_samples() {
    let config = ArenaConfig {
        max_frames: 32,
        memory_budget_bytes: 8 << 20,
        cache_time_ns: 2 * S,
        initial_ring_capacity: 16,
        ..ArenaConfig::default()
    };
    // 5 s at 100 Hz against a 2 s cache: pruned for 3 s, the ring grown from 16 slots on the
    // way; every 50th sample of `map → c1` arrives 7 samples late (inserted among older ones).
    let samples = 500;
    for (what, view, mut w) in arenas::in_process_and_mapped(&config, "tf_shm_fast_paths_ends") {
        for k in 0..samples {
            put(&mut w, "world", "map", k, 0, false);
            if k % 50 != 10 {
                put(&mut w, "map", "c1", k, 1, false);
            }
            if k % 50 == 17 {
                put(&mut w, "map", "c1", k - 7, 1, false);
            }
        }
        let (oldest, newest) = (T0 + (samples - 190) * PERIOD, T0 + (samples - 2) * PERIOD);
        let times: Vec<i64> = (0..64)
            .map(|k| oldest + 3_333_333 + k * (newest - oldest) / 64)
            .chain((0..32).map(|k| oldest + k * 5 * PERIOD))
            .collect();
        for (t, s) in [("world", "c1"), ("c1", "world")] {
            let mut pair = FramePair::new(t, s);
            let d = counted(|| {
                for &time in &times {
                    view.lookup_pair(&mut pair, time).unwrap();
                }
            });
            assert_eq!(d, Declines::default(), "{what}: {t} <- {s}");
        }
    }
}
