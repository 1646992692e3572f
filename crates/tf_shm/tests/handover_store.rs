//! The store a consumer answers from while it holds its old arena after a bridge restart
//! ([`HandoverStore`] over an old and a new arena) answers as one tf2 buffer that received the
//! old arena's samples and then the new arena's: the reference is the test store fed the same
//! samples in that order. Values (bits), errors (class and text), latest common times, parents
//! and listings are compared over many times and frame pairs.

#[path = "common/vec_store.rs"]
mod vec_store;

use tf_shm::handover_store::HandoverStore;
use tf_shm::store::FrameStore;
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, BufferCore};
use vec_store::{ns, VecStore};

/// One `setTransform`: parent, child, stamp (s), translation, yaw (rad), static.
#[derive(Clone, Copy)]
struct Tf(&'static str, &'static str, f64, [f64; 3], f64, bool);

fn dynamic(parent: &'static str, child: &'static str, secs: f64, x: f64, yaw: f64) -> Tf {
    Tf(parent, child, secs, [x, 0.5 * x, 0.1], yaw, false)
}

fn fixed(parent: &'static str, child: &'static str, x: f64) -> Tf {
    Tf(parent, child, 0.0, [x, 0.2, 0.3], 0.25, true)
}

fn input(t: &Tf) -> TransformInput<'static> {
    let (s, c) = (t.4 / 2.0).sin_cos();
    TransformInput {
        frame_id: t.0,
        child_frame_id: t.1,
        stamp: ns(t.2),
        translation: t.3,
        rotation: [0.0, 0.0, s, c],
    }
}

fn arena(tfs: &[Tf]) -> (ArenaWriter, ArenaView) {
    let config = ArenaConfig {
        max_frames: 64,
        memory_budget_bytes: 4 << 20,
        ..ArenaConfig::default()
    };
    let (mut w, v) = Arena::in_memory(&config).unwrap();
    for t in tfs {
        w.set_transform(&input(t), "test", t.5).unwrap();
    }
    (w, v)
}

/// Every query over every pair of `frames` at every time in `times` (s; 0 = latest), against
/// the test store fed `old` then `new`.
fn check(old: &[Tf], new: &[Tf], frames: &[&str], times: &[f64]) {
    let mut reference = VecStore::default();
    for t in old.iter().chain(new) {
        reference.set_transform(&input(t), "test", t.5).unwrap();
    }
    let (_wo, old_view) = arena(old);
    let (_wn, new_view) = arena(new);
    let held = HandoverStore::new(old_view, new_view).unwrap();
    let mut compared = 0;
    for &target in frames {
        assert_eq!(
            held.frame_exists(target).unwrap(),
            reference.frame_exists(target).unwrap(),
            "{target} exists"
        );
        for &time in times {
            let t = ns(time);
            assert_eq!(
                held.get_parent(target, t).unwrap(),
                reference.get_parent(target, t).unwrap(),
                "parent of {target} at {time}"
            );
        }
        for &source in frames {
            assert_eq!(
                held.get_latest_common_time(target, source)
                    .map_err(|e| e.to_string()),
                reference
                    .get_latest_common_time(target, source)
                    .map_err(|e| e.to_string()),
                "latest common time {target} <- {source}"
            );
            for &time in times {
                let t = ns(time);
                let got = held
                    .lookup_transform(target, source, t)
                    .map_err(|e| (e.to_string(), std::mem::discriminant(&e)));
                let want = reference
                    .lookup_transform(target, source, t)
                    .map_err(|e| (e.to_string(), std::mem::discriminant(&e)));
                assert_eq!(got, want, "{target} <- {source} at {time} s");
                assert_eq!(
                    held.can_transform(target, source, t)
                        .map_err(|e| e.to_string()),
                    reference
                        .can_transform(target, source, t)
                        .map_err(|e| e.to_string()),
                    "can_transform {target} <- {source} at {time} s"
                );
                compared += 1;
            }
        }
        for &fixed_frame in frames {
            let got = held
                .lookup_transform_full(target, ns(times[1]), frames[0], ns(times[2]), fixed_frame)
                .map_err(|e| e.to_string());
            let want = reference
                .lookup_transform_full(target, ns(times[1]), frames[0], ns(times[2]), fixed_frame)
                .map_err(|e| e.to_string());
            assert_eq!(got, want, "full {target} via {fixed_frame}");
        }
    }
    assert_eq!(
        held.get_all_frame_names().unwrap(),
        reference.get_all_frame_names().unwrap()
    );
    assert_eq!(
        held.all_frames_as_string().unwrap(),
        reference.all_frames_as_string().unwrap()
    );
    assert_eq!(
        held.all_frames_as_yaml(0).unwrap(),
        reference.all_frames_as_yaml(0).unwrap()
    );
    assert!(compared > 0);
}

/// A robot publishing at 10 Hz from `from` to `to` s: map -> odom -> base_link (dynamic),
/// base_link -> sensor (static).
fn robot(from: f64, to: f64, with_static: bool) -> Vec<Tf> {
    let mut v = Vec::new();
    if with_static {
        v.push(fixed("base_link", "sensor", 0.1));
    }
    let mut s = from;
    while s <= to + 1e-9 {
        v.push(dynamic("map", "odom", s, 0.01 * s, 0.0));
        v.push(dynamic("odom", "base_link", s, s % 7.0, 0.3 * s));
        s = ((s * 10.0).round() + 1.0) / 10.0;
    }
    v
}

const FRAMES: &[&str] = &["map", "odom", "base_link", "sensor", "nowhere"];
/// Before, in and after the old data, in the restart gap, in and after the new data.
const TIMES: &[f64] = &[
    0.0, 1.0, 1.05, 2.55, 4.0, 4.5, 5.25, 6.0, 6.3, 7.0, 7.45, 8.0, 9.0, 0.5, 10.0,
];

#[test]
fn before_the_new_arena_has_data_the_old_one_answers() {
    check(&robot(1.0, 4.0, true), &[], FRAMES, TIMES);
}

#[test]
fn fresh_data_answers_at_time_zero_and_the_gap_interpolates() {
    // The new bridge has /tf but not yet /tf_static: sensor comes from the old arena.
    check(
        &robot(1.0, 4.0, true),
        &robot(6.0, 7.5, false),
        FRAMES,
        TIMES,
    );
}

#[test]
fn the_new_static_replaces_the_old_one() {
    let mut new = robot(6.0, 7.5, false);
    new.push(fixed("base_link", "sensor", 0.7));
    check(&robot(1.0, 4.0, true), &new, FRAMES, TIMES);
}

#[test]
fn one_new_sample() {
    check(
        &robot(1.0, 4.0, true),
        &robot(6.0, 6.0, false),
        FRAMES,
        TIMES,
    );
}

#[test]
fn a_frame_reparented_across_the_restart() {
    // base_link hangs off odom before and off map after the restart.
    let mut new = vec![];
    for s in [6.0, 6.5, 7.0, 7.5] {
        new.push(dynamic("map", "base_link", s, s, 0.2));
    }
    check(&robot(1.0, 4.0, true), &new, FRAMES, TIMES);
}

#[test]
fn frames_only_in_the_old_or_only_in_the_new_arena() {
    let mut old = robot(1.0, 4.0, true);
    old.push(fixed("base_link", "old_only", 0.4));
    old.push(dynamic("map", "old_dyn", 2.0, 1.0, 0.0));
    old.push(dynamic("map", "old_dyn", 3.0, 2.0, 0.0));
    let mut new = robot(6.0, 7.5, false);
    new.push(fixed("sensor", "new_only", 0.9));
    new.push(dynamic("new_root", "new_dyn", 6.5, 1.0, 0.1));
    new.push(dynamic("new_root", "new_dyn", 7.0, 1.5, 0.2));
    let frames = [
        "map",
        "base_link",
        "sensor",
        "old_only",
        "old_dyn",
        "new_only",
        "new_dyn",
        "new_root",
    ];
    check(&old, &new, &frames, TIMES);
}

#[test]
fn a_frame_changing_kind_takes_the_new_kind_with_the_new_data_only() {
    // sensor: static before, dynamic after; odom: dynamic before, static after.
    let old = robot(1.0, 4.0, true);
    let mut new = vec![fixed("map", "odom", 0.3)];
    for s in [6.0, 6.5, 7.0] {
        new.push(dynamic("odom", "base_link", s, s, 0.1));
        new.push(dynamic("base_link", "sensor", s, 0.2, s));
    }
    check(&old, &new, FRAMES, TIMES);
}

#[test]
fn a_gap_longer_than_the_cache_time_prunes_as_tf2() {
    // Cache time 10 s: the old samples more than 10 s older than the newest before the last
    // new one are gone, as from tf2's cache.
    let times = [0.0, 1.0, 3.0, 5.05, 6.0, 9.0, 12.0, 14.9, 15.0, 15.45, 16.0];
    check(
        &robot(1.0, 9.0, true),
        &robot(15.0, 15.5, false),
        FRAMES,
        &times,
    );
}

#[test]
fn the_new_table_growing_after_ids_were_resolved_keeps_them() {
    let old = robot(1.0, 4.0, true);
    let (_wo, old_view) = arena(&old);
    let (mut wn, new_view) = arena(&robot(6.0, 6.5, false));
    let held = HandoverStore::new(old_view, new_view).unwrap();
    let base = held.frame_id("base_link").unwrap().unwrap();
    let count = held.frame_count();
    wn.set_transform(&input(&fixed("map", "late", 1.0)), "test", true)
        .unwrap();
    wn.set_transform(
        &input(&dynamic("map", "base_link", 7.0, 3.0, 0.0)),
        "test",
        false,
    )
    .unwrap();
    assert_eq!(held.frame_id("base_link").unwrap(), Some(base));
    assert_eq!(held.frame_count(), count + 1, "late is appended");
    assert_eq!(held.frame_id("late").unwrap(), Some(count));
    assert_eq!(held.frame_name(count).unwrap().as_deref(), Some("late"));
    let t = held.lookup_transform("map", "late", 0).unwrap();
    assert_eq!(t.transform.translation, [1.0, 0.2, 0.3]);
    // base_link now hangs off map in its newest sample.
    assert_eq!(
        held.get_parent("base_link", 0).unwrap().as_deref(),
        Some("map")
    );
}

#[test]
fn a_write_to_the_new_arena_is_seen_by_the_next_query_in_the_restart_gap() {
    // Times in the gap read the merged history, which the store keeps between writes of the
    // new arena: a write must invalidate it.
    let old = robot(1.0, 4.0, true);
    let mut new = robot(6.0, 6.5, false);
    let (_wo, old_view) = arena(&old);
    let (mut wn, new_view) = arena(&new);
    let held = HandoverStore::new(old_view, new_view).unwrap();
    let at = ns(5.0);
    let before = held.lookup_transform("map", "base_link", at).unwrap();
    let late = [
        dynamic("map", "odom", 5.5, 0.3, 0.0),
        dynamic("odom", "base_link", 5.5, 9.0, 1.0),
    ];
    for t in &late {
        wn.set_transform(&input(t), "test", false).unwrap();
    }
    new.extend(late);
    let mut reference = VecStore::default();
    for t in old.iter().chain(&new) {
        reference.set_transform(&input(t), "test", t.5).unwrap();
    }
    let after = held.lookup_transform("map", "base_link", at).unwrap();
    assert_ne!(before, after, "the new samples change the bracket");
    assert_eq!(
        after,
        reference.lookup_transform("map", "base_link", at).unwrap()
    );
}

#[test]
fn two_samples_at_the_new_oldest_stamp_answer_as_in_one_cache() {
    // At its own oldest stamp a cache answers with the first sample received there; with the
    // old samples before it, that stamp is no longer the oldest and tf2 takes the last one.
    let mut new = robot(6.0, 7.5, false);
    new.insert(2, dynamic("odom", "base_link", 6.0, 42.0, 0.5));
    check(&robot(1.0, 4.0, true), &new, FRAMES, TIMES);
}
