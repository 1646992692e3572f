//! `lookup_pair` and the names API (tf2's walk with the arena's close link reads, bit-equal to
//! each other) against tf2's walk with tf2's slerp on every link, literally, on the same arena:
//! the same answers (to rounding, same quaternion sign) and the same errors, while the topology
//! changes under a pair that keeps its resolved ids: re-parenting, loops above the common
//! ancestor, a root that gains a parent, statics, clears, infinite translations, signed zeros.

#[path = "common/arenas.rs"]
mod arenas;
#[path = "common/pair_check.rs"]
mod pair_check;

use arenas::put;

use pair_check::{agree, random_pairs, Lcg};
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, FramePair, TransformError};

const S: i64 = 1_000_000_000;

fn config() -> ArenaConfig {
    ArenaConfig {
        max_frames: 64,
        memory_budget_bytes: 8 << 20,
        ..ArenaConfig::default()
    }
}

#[test]
fn loop_above_the_common_ancestor_is_reported_like_tf2() {
    let (mut w, view) = Arena::in_memory(&config()).unwrap();
    for k in 0..3 {
        let t = (10 + k) * S;
        put(&mut w, "m", "a", t, 1.0, 0.1, false);
        put(&mut w, "m", "b", t, 2.0, 0.2, false);
        put(&mut w, "r", "m", t, 3.0, 0.3, false);
    }
    let mut pair = FramePair::new("b", "a");
    assert!(agree(&view, &mut pair, 11 * S).is_ok());
    // r gets m as its parent: m → r → m above the common ancestor m.
    for k in 0..3 {
        put(&mut w, "m", "r", (10 + k) * S, 4.0, 0.4, false);
    }
    let e = agree(&view, &mut pair, 11 * S).expect_err("a loop");
    assert!(e.contains("contains a loop"), "{e}");
    let e = agree(&view, &mut pair, 0).expect_err("a loop");
    assert!(e.contains("contains a loop"), "{e}");
}

#[test]
fn reparenting_in_time_is_followed_in_both_directions() {
    let (mut w, view) = Arena::in_memory(&config()).unwrap();
    for k in 0..=8 {
        let t = (10 + k) * S;
        put(
            &mut w,
            "map",
            "odom",
            t,
            1.0 + k as f64,
            0.01 * k as f64,
            false,
        );
        put(&mut w, "map", "dock", t, -1.0, 0.5, false);
        // The robot is carried by the dock until 14 s, then by odom.
        let parent = if k < 4 { "dock" } else { "odom" };
        put(&mut w, parent, "base", t, 0.5, 0.02 * k as f64, false);
    }
    put(&mut w, "base", "laser", 10 * S, 0.2, 0.0, true);
    let mut pair = FramePair::new("map", "laser");
    let mut reverse = FramePair::new("laser", "odom");
    // Alternate across the switch so the compiled path is stale every other call.
    for k in 0..16 {
        let t = 10 * S + k * S / 2 + 123_456;
        let r = agree(&view, &mut pair, t);
        assert!(r.is_ok(), "map <- laser at {t}: {r:?}");
        let _ = agree(&view, &mut reverse, t);
        let t = 28 * S - t;
        let _ = agree(&view, &mut pair, t);
        let _ = agree(&view, &mut reverse, t);
    }
    assert!(agree(&view, &mut pair, 0).is_ok());
}

#[test]
fn a_root_that_gains_a_parent_keeps_answers_and_failures() {
    let (mut w, view) = Arena::in_memory(&config()).unwrap();
    for k in 0..5 {
        let t = (10 + k) * S;
        put(&mut w, "odom", "base", t, k as f64, 0.1, false);
        put(&mut w, "odom", "arm", t, 1.0, 0.2 * k as f64, false);
    }
    let mut pair = FramePair::new("arm", "base");
    let before = agree(&view, &mut pair, 12 * S + 1).unwrap();
    // odom gets a parent whose history does not cover 12 s: tf2's source pass fails above the
    // common ancestor and the target pass forgives it.
    put(&mut w, "map", "odom", 13 * S, 9.0, 1.0, false);
    put(&mut w, "map", "odom", 14 * S, 9.5, 1.1, false);
    let after = agree(&view, &mut pair, 12 * S + 1).unwrap();
    let (before, after) = (before.1, after.1);
    for i in 0..3 {
        assert!((before.translation[i] - after.translation[i]).abs() < 1e-12);
    }
    for i in 0..4 {
        assert!((before.rotation[i] - after.rotation[i]).abs() < 1e-12);
    }
    // Latest common time now includes nothing above odom: still 14 s (odom's children).
    assert_eq!(agree(&view, &mut pair, 0).unwrap().0, 14 * S);
    w.clear();
    assert!(agree(&view, &mut pair, 12 * S).is_err());
}

/// Time 0 reuses the newest samples it read for the latest common time wherever they are the
/// answer at that time (a static; the link whose newest stamp is the common time) and reads
/// the others at the common time: links at different rates, on both sides of a fork and with
/// the slowest link on either side, as the writer moves on.
#[test]
fn time_zero_with_links_at_different_rates() {
    let (mut w, view) = Arena::in_memory(&config()).unwrap();
    put(&mut w, "base", "mast", 0, 0.7, 0.05, true);
    let mut pairs = [
        FramePair::new("base", "cam"),
        FramePair::new("cam", "base"),
        FramePair::new("tool", "cam"),
        FramePair::new("cam", "tool"),
        FramePair::new("mast", "tool"),
    ];
    // base ← arm (100 Hz) ← tool (30 Hz); base ← mast (static) ← cam (10 Hz, then 200 Hz).
    let mut checked = 0;
    for ms in (0..3000i64).step_by(5) {
        let t = 10 * S + ms * 1_000_000;
        let angle = ms as f64 * 1e-3;
        if ms % 10 == 0 {
            put(&mut w, "base", "arm", t, 1.0, angle, false);
        }
        if ms % 33 == 0 {
            put(&mut w, "arm", "tool", t, 0.3, -angle, false);
        }
        if (ms < 1500 && ms % 100 == 0) || (ms >= 1500 && ms % 5 == 0) {
            put(&mut w, "mast", "cam", t, 0.1, 0.5 * angle, false);
        }
        for pair in &mut pairs {
            if agree(&view, pair, 0).is_ok() {
                checked += 1;
            }
        }
    }
    assert!(checked > 2500, "{checked} answers");
}

/// Random trees over 10 frames with re-parenting, statics, occasional loops and clears;
/// 100 persistent pairs asked at random times (inside, between and outside the histories, and 0)
/// after every batch of inserts.
#[test]
fn random_topologies_agree_with_the_walk() {
    let names: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
    let mut rng = Lcg(2026);
    let (mut ok, mut err) = (0, 0);
    for _round in 0..40 {
        let (mut w, view) = Arena::in_memory(&config()).unwrap();
        let mut pairs = random_pairs(&mut rng, &names, 100);
        let mut stamp = 100 * S;
        for _batch in 0..30 {
            for _ in 0..12 {
                let child = 1 + rng.below(9) as usize;
                // Mostly a lower-numbered parent (a tree); sometimes any frame (loops).
                let parent = if rng.below(20) == 0 {
                    rng.below(10) as usize
                } else {
                    rng.below(child as u64) as usize
                };
                if parent == child {
                    continue;
                }
                let is_static = child.is_multiple_of(4) && rng.below(4) != 0;
                stamp += rng.below(S as u64 / 4) as i64;
                let x = rng.below(1000) as f64 / 100.0;
                let yaw = rng.below(628) as f64 / 100.0;
                let _ = w.set_transform(
                    &TransformInput {
                        frame_id: &names[parent],
                        child_frame_id: &names[child],
                        stamp,
                        translation: [x, -x, 0.1],
                        rotation: [0.0, 0.0, (yaw / 2.0).sin(), (yaw / 2.0).cos()],
                    },
                    "test",
                    is_static,
                );
            }
            if rng.below(50) == 0 {
                w.clear();
            }
            for pair in &mut pairs {
                let time = match rng.below(4) {
                    0 => 0,
                    1 => stamp - rng.below(3 * S as u64) as i64,
                    2 => stamp + rng.below(S as u64) as i64,
                    _ => 100 * S + rng.below((stamp - 100 * S) as u64 + 1) as i64,
                };
                match agree(&view, pair, time) {
                    Ok(_) => ok += 1,
                    Err(_) => err += 1,
                }
            }
        }
    }
    // Both outcomes must be well represented for the comparison to mean anything.
    assert!(ok > 20_000 && err > 20_000, "{ok} answers, {err} errors");
}

#[test]
fn errors_are_tf2s_through_a_compiled_pair() {
    let (mut w, view) = Arena::in_memory(&config()).unwrap();
    put(&mut w, "map", "odom", 10 * S, 1.0, 0.0, false);
    put(&mut w, "map", "odom", 11 * S, 2.0, 0.0, false);
    let mut pair = FramePair::new("map", "odom");
    assert!(agree(&view, &mut pair, 10 * S + 5).is_ok());
    let e = agree(&view, &mut pair, 12 * S).unwrap_err();
    assert!(e.contains("extrapolation into the future"), "{e}");
    let e = view.lookup_pair(&mut pair, 9 * S).unwrap_err();
    assert!(matches!(e, TransformError::Extrapolation { .. }), "{e:?}");
}

/// An accepted infinite translation (tf2 accepts it, `validate`): tf2's walk turns it into NaN
/// in every component its rotations touch (a rotation of an infinite vector multiplies it by
/// zeros). The pair's repeated calls and the names API must give the walk's NaNs, not the
/// infinity itself, for the target above the source (a root target, and one with its own
/// link), below it, and across a fork; interpolated, exact and time 0. (A root target is
/// where the two differed: tf2 ends that walk with `inverse_times` of the identity, which
/// rotates the infinite vector.)
#[test]
fn infinite_translations_give_the_walks_nans() {
    let (s, c) = 0.3f64.sin_cos();
    for (shape, translation) in [
        ("x", [f64::INFINITY, 0.0, 0.0]),
        ("-y", [1.0, f64::NEG_INFINITY, 0.0]),
    ] {
        let (mut w, view) = Arena::in_memory(&config()).unwrap();
        for k in 1..4 {
            for (parent, child, t) in [
                ("map", "odom", translation),
                ("odom", "base", [1.0, 2.0, 3.0]),
                ("map", "other", [1.0, 2.0, 3.0]),
            ] {
                w.set_transform(
                    &TransformInput {
                        frame_id: parent,
                        child_frame_id: child,
                        stamp: k * S,
                        translation: t,
                        rotation: [0.0, 0.0, s, c],
                    },
                    "test",
                    false,
                )
                .expect("accepted");
            }
        }
        let mut nan_seen = false;
        for (t, src) in [
            ("map", "odom"),
            ("map", "base"),
            ("odom", "base"),
            ("base", "map"),
            ("other", "base"),
            ("base", "other"),
        ] {
            for time in [0, 3 * S / 2, 2 * S] {
                let mut pair = FramePair::new(t, src);
                let want = agree(&view, &mut pair, time).expect("answers");
                nan_seen |= want.1.translation.iter().any(|v| v.is_nan());
                for _ in 0..2 {
                    let got = view.lookup_transform(t, src, time).unwrap();
                    let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
                    assert!(
                        (0..3).all(|i| same(got.transform.translation[i], want.1.translation[i])),
                        "{shape}: {t} <- {src} at {time}: names {got:?} vs walk {want:?}"
                    );
                }
            }
        }
        assert!(nan_seen, "{shape}: the case must produce tf2's NaNs");
    }
}

/// A root target: tf2's walk ends with `inverse_times` of the identity, which turns a -0.0
/// translation component into +0.0. The pair and the names API give the walk's bits.
#[test]
fn a_root_target_gives_the_walks_signed_zeros() {
    let (mut w, view) = Arena::in_memory(&config()).unwrap();
    for k in 1..4 {
        w.set_transform(
            &TransformInput {
                frame_id: "map",
                child_frame_id: "odom",
                stamp: k * S,
                translation: [-0.0, 1.0, -0.0],
                rotation: [0.0, 0.0, 0.0, 1.0],
            },
            "test",
            false,
        )
        .expect("accepted");
    }
    for time in [0, 3 * S / 2, 2 * S] {
        let (_, want) = pair_check::tf2_walk(&view, "map", "odom", time).unwrap();
        let bits = |t: [f64; 3]| t.map(f64::to_bits);
        assert_eq!(bits(want.translation), bits([0.0, 1.0, 0.0]));
        let mut pair = FramePair::new("map", "odom");
        for _ in 0..2 {
            let (_, got) = view.lookup_pair(&mut pair, time).unwrap();
            assert_eq!(bits(got.translation), bits(want.translation));
            let got = view.lookup_transform("map", "odom", time).unwrap();
            assert_eq!(bits(got.transform.translation), bits(want.translation));
        }
    }
}

/// The first call of a pair (which compiles its path) and every later call give the same bits,
/// and so does the names API: an answer never depends on whether a path was compiled before.
#[test]
fn first_and_later_calls_give_the_same_bits() {
    let (mut w, view) = Arena::in_memory(&config()).unwrap();
    let mut rng = Lcg(7);
    let frames = ["c0", "c1", "c2", "c3", "c4"];
    for k in 0..50i64 {
        for i in 1..frames.len() {
            let jitter = rng.below(1000) as f64 / 1000.0;
            let yaw = 0.37 * i as f64 + 0.011 * k as f64 * (1.0 + jitter);
            put(
                &mut w,
                frames[i - 1],
                frames[i],
                k * S / 10,
                1e3 * i as f64,
                yaw,
                false,
            );
        }
    }
    for q in 0..400 {
        let (t, s) = (frames[q % 5], frames[(q / 5 + 1 + q % 5) % 5]);
        // Off-grid times inside the history, and time 0.
        let time = if q % 7 == 0 {
            0
        } else {
            S / 10 + rng.below(4_700_000_000) as i64
        };
        let first = view.lookup_pair(&mut FramePair::new(t, s), time).unwrap();
        let mut pair = FramePair::new(t, s);
        let _ = view.lookup_pair(&mut pair, time).unwrap();
        let later = view.lookup_pair(&mut pair, time).unwrap();
        let bits = |(stamp, tf): (i64, tf_shm::Transform)| {
            let mut v = vec![stamp as u64];
            v.extend(
                tf.translation
                    .iter()
                    .chain(&tf.rotation)
                    .map(|x| x.to_bits()),
            );
            v
        };
        assert_eq!(bits(first), bits(later), "{t} <- {s} at {time}");
        let by_name = view.lookup_transform(t, s, time).unwrap();
        assert_eq!(
            bits((by_name.stamp, by_name.transform)),
            bits(later),
            "names, {t} <- {s} at {time}"
        );
    }
}
