//! Adversarial checks of the kept time-0 answer (`FramePair` and the names API's cached pair):
//! after every writer operation, the pair lookup and the lookup by names (two calls each)
//! must equal tf2's walk that keeps nothing (`tf_shm::walk::lookup_transform`), values bit
//! for bit and errors by class and text, on an in-process arena and on a read-only mapping.
//!
//! The two `*_prunes_history_*` tests reproduce a stale kept answer this file found: a history
//! pruned by a sample that is then not stored (tf2 prunes before it decides) moved no change
//! count; they fail if the writer stops counting that change.

#[path = "common/arenas.rs"]
mod arenas;

use arenas::bits;

use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, FramePair};

const S: i64 = 1_000_000_000;
const T0: i64 = 1_000 * S;

/// Sets `parent → child` at `stamp` with a transform derived from `x`; the writer's answer is
/// returned (refusals and capacity errors included: they are operations too).
fn put(
    w: &mut ArenaWriter,
    parent: &str,
    child: &str,
    stamp: i64,
    x: f64,
    is_static: bool,
) -> String {
    let yaw = 0.3 + 0.1 * x;
    let (s, c) = (yaw / 2.0).sin_cos();
    let r = w.set_transform(
        &TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp,
            translation: [x, 0.5, -0.25],
            rotation: [0.0, 0.0, s, c],
        },
        "breaker",
        is_static,
    );
    format!("{r:?}")
}

/// An in-process arena and a read-only mapping of a shared one, same config.
fn arenas(config: &ArenaConfig) -> Vec<(&'static str, ArenaView, ArenaWriter)> {
    arenas::in_process_and_mapped(config, "tf_shm_kept_adversarial")
}

fn config() -> ArenaConfig {
    ArenaConfig {
        max_frames: 64,
        memory_budget_bytes: 4 << 20,
        ..ArenaConfig::default()
    }
}

/// Pairs kept across all operations of one arena, checked against the reference.
struct Checker {
    names: Vec<(String, String)>,
    pairs: Vec<FramePair>,
}

impl Checker {
    fn new(names: &[(&str, &str)]) -> Checker {
        Checker {
            names: names
                .iter()
                .map(|(t, s)| (t.to_string(), s.to_string()))
                .collect(),
            pairs: names.iter().map(|(t, s)| FramePair::new(t, s)).collect(),
        }
    }

    fn check(&mut self, view: &ArenaView, what: &str, after: &str) {
        for (pair, (t, s)) in self.pairs.iter_mut().zip(&self.names) {
            let want =
                tf_shm::walk::lookup_transform(view, t, s, 0).map(|a| bits(a.stamp, &a.transform));
            for round in 0..2 {
                let got = view.lookup_pair(pair, 0).map(|(st, tr)| bits(st, &tr));
                assert_eq!(
                    got, want,
                    "{what}, after {after}: pair {t} <- {s}, call {round}"
                );
                let got = view
                    .lookup_transform(t, s, 0)
                    .map(|a| bits(a.stamp, &a.transform));
                assert_eq!(
                    got, want,
                    "{what}, after {after}: names {t} <- {s}, call {round}"
                );
            }
        }
    }
}

type Op = (&'static str, Box<dyn Fn(&mut ArenaWriter) -> String>);

/// Applies `ops` in turn to each arena, checking `pairs` after setup and after every op.
fn run(config: &ArenaConfig, pairs: &[(&str, &str)], setup: &dyn Fn(&mut ArenaWriter), ops: &[Op]) {
    for (what, view, mut w) in arenas(config) {
        let mut c = Checker::new(pairs);
        c.check(&view, what, "nothing");
        setup(&mut w);
        c.check(&view, what, "setup");
        for (name, op) in ops {
            let status = op(&mut w);
            c.check(&view, what, &format!("{name} ({status})"));
        }
    }
}

/// `map → a` with samples at T0 and T0 + 20 s (cache time 10 s: the T0 sample is kept until
/// the next insert attempt prunes it), `map → b` at T0 + 5 s. The latest common time of
/// a ↔ b is T0 + 5 s, inside a's history: an interpolated answer.
fn two_links(w: &mut ArenaWriter) {
    put(w, "map", "a", T0, 1.0, false);
    put(w, "map", "a", T0 + 20 * S, 2.0, false);
    put(w, "map", "b", T0 + 5 * S, 3.0, false);
}

/// A duplicate of a's newest sample is dropped, but the insert attempt first prunes a's T0
/// sample, so a's link at T0 + 5 s is now an extrapolation into the past.
#[test]
fn a_dropped_duplicate_that_prunes_history_changes_the_answer() {
    run(
        &config(),
        &[("a", "b"), ("b", "a")],
        &two_links,
        &[(
            "duplicate of a's newest sample",
            Box::new(|w| put(w, "map", "a", T0 + 20 * S, 2.0, false)),
        )],
    );
}

/// A sample older than the cache time is refused (`TF_OLD_DATA`), but the insert attempt first
/// prunes a's T0 sample; the same change.
#[test]
fn a_refused_old_sample_that_prunes_history_changes_the_answer() {
    run(
        &config(),
        &[("a", "b"), ("b", "a")],
        &two_links,
        &[(
            "sample older than the cache time",
            Box::new(|w| put(w, "map", "a", T0 + S, 5.0, false)),
        )],
    );
}

/// A chain of `n` dynamic links `f0 → f1 → … → fn`, stamps staggered.
fn chain(w: &mut ArenaWriter, n: usize, k: i64) {
    for i in 0..n {
        let (p, c) = (format!("f{i}"), format!("f{}", i + 1));
        put(
            w,
            &p,
            &c,
            T0 + k * S + i as i64 * 1000,
            i as f64 * 0.1,
            false,
        );
    }
}

#[test]
fn chains_longer_than_kept_links() {
    let ops: Vec<Op> = vec![
        (
            "newer samples",
            Box::new(|w| {
                chain(w, 40, 1);
                "ok".into()
            }),
        ),
        (
            "leaf newer",
            Box::new(|w| put(w, "f39", "f40", T0 + 3 * S, 9.0, false)),
        ),
        (
            "mid newer",
            Box::new(|w| put(w, "f15", "f16", T0 + 4 * S, 9.0, false)),
        ),
        (
            "17th link newer",
            Box::new(|w| put(w, "f16", "f17", T0 + 5 * S, 9.5, false)),
        ),
        (
            "reparent f20 to root",
            Box::new(|w| put(w, "f0", "f20", T0 + 6 * S, 1.5, false)),
        ),
        (
            "static in the middle",
            Box::new(|w| put(w, "f9", "f10", 0, 2.5, true)),
        ),
        (
            "clear",
            Box::new(|w| {
                w.clear();
                "cleared".into()
            }),
        ),
        (
            "again",
            Box::new(|w| {
                chain(w, 40, 10);
                "ok".into()
            }),
        ),
    ];
    run(
        &config(),
        &[
            ("f0", "f40"),
            ("f40", "f0"),
            ("f0", "f16"),
            ("f16", "f0"),
            ("f0", "f17"),
            ("f5", "f25"),
            ("f20", "f33"),
        ],
        &|w| chain(w, 40, 0),
        &ops,
    );
}

#[test]
fn loops_and_reparenting() {
    let ops: Vec<Op> = vec![
        (
            "c -> a: loop a b c",
            Box::new(|w| put(w, "c", "a", T0 + 3 * S, 1.0, false)),
        ),
        (
            "break loop: a to root",
            Box::new(|w| put(w, "root", "a", T0 + 4 * S, 1.0, false)),
        ),
        (
            "b reparented to c (loop b c)",
            Box::new(|w| put(w, "c", "b", T0 + 5 * S, 1.0, false)),
        ),
        (
            "c reparented to root",
            Box::new(|w| put(w, "root", "c", T0 + 6 * S, 2.0, false)),
        ),
        (
            "older sample of c with old parent",
            Box::new(|w| put(w, "b", "c", T0 + 5 * S + 1, 2.0, false)),
        ),
        (
            "static loop edge",
            Box::new(|w| put(w, "c", "root", 0, 2.0, true)),
        ),
    ];
    run(
        &config(),
        &[
            ("a", "c"),
            ("c", "a"),
            ("root", "c"),
            ("b", "root"),
            ("a", "root"),
        ],
        &|w| {
            put(w, "a", "b", T0, 1.0, false);
            put(w, "b", "c", T0 + S, 2.0, false);
            put(w, "a", "b", T0 + 2 * S, 1.0, false);
        },
        &ops,
    );
}

#[test]
fn frames_created_later_unknown_and_equal_names() {
    let ops: Vec<Op> = vec![
        (
            "x created under map",
            Box::new(|w| put(w, "map", "x", T0 + S, 1.0, false)),
        ),
        (
            "y created as x's parent (x re-parented)",
            Box::new(|w| put(w, "y", "x", T0 + 2 * S, 1.0, false)),
        ),
        (
            "y joins map",
            Box::new(|w| put(w, "map", "y", T0 + 2 * S, 3.0, false)),
        ),
        (
            "base newer",
            Box::new(|w| put(w, "map", "base", T0 + 3 * S, 3.0, false)),
        ),
        (
            "base out of order",
            Box::new(|w| put(w, "map", "base", T0 + S / 2, 3.0, false)),
        ),
        (
            "base at equal stamp, other value",
            Box::new(|w| put(w, "map", "base", T0 + 3 * S, 4.0, false)),
        ),
        ("y static", Box::new(|w| put(w, "map", "y", 0, 5.0, true))),
    ];
    run(
        &config(),
        &[
            ("map", "x"),
            ("x", "base"),
            ("y", "x"),
            ("base", "base"),
            ("x", "x"),
            ("nope", "x"),
            ("x", ""),
            ("/x", "map"),
        ],
        &|w| {
            put(w, "map", "base", T0, 1.0, false);
        },
        &ops,
    );
}

#[test]
fn ring_pool_and_frame_table_near_full() {
    // Small rings that cannot grow far: samples past the ring are cut or dropped.
    let config = ArenaConfig {
        max_frames: 6,
        memory_budget_bytes: 256 << 10,
        cache_time_ns: 10 * S,
        max_rate_hz: 1,
        initial_ring_capacity: 2,
    };
    let ops: Vec<Op> = (0..40i64)
        .map(|k| {
            let op: Op = (
                "write",
                Box::new(move |w: &mut ArenaWriter| {
                    let mut out = String::new();
                    // Dense in-cache samples (history cut), an old one (dropped or refused),
                    // new frames until the table is full.
                    out += &put(w, "map", "a", T0 + k * S / 4, k as f64, false);
                    out += &put(w, "map", "a", T0 + (k - 6) * S / 4 + 1, k as f64, false);
                    out += &put(w, "map", "b", T0 + k * S / 3, 0.5 * k as f64, false);
                    out += &put(w, "a", &format!("n{}", k % 8), T0 + k * S / 3, 1.0, false);
                    out
                }),
            );
            op
        })
        .collect();
    run(
        &config,
        &[
            ("a", "b"),
            ("b", "a"),
            ("map", "n3"),
            ("n3", "b"),
            ("n7", "b"),
        ],
        &|_| {},
        &ops,
    );
}

#[test]
fn long_names_sharing_their_first_and_last_bytes() {
    // Names the cache key cannot tell apart (same length, same first and last 8 bytes).
    let a = "robot1/camera_a_optical_frame";
    let b = "robot1/camera_b_optical_frame";
    let c = "robot1/camera_c_optical_frame";
    let ops: Vec<Op> = vec![
        (
            "a newer",
            Box::new(move |w| put(w, "robot1/base_link_frame", a, T0 + S, 7.0, false)),
        ),
        (
            "b newer",
            Box::new(move |w| put(w, "robot1/base_link_frame", b, T0 + 2 * S, 8.0, false)),
        ),
        (
            "c created",
            Box::new(move |w| put(w, "robot1/base_link_frame", c, T0 + 2 * S, 9.0, false)),
        ),
    ];
    run(
        &config(),
        &[
            (a, "robot1/base_link_frame"),
            (b, "robot1/base_link_frame"),
            (c, "robot1/base_link_frame"),
            ("robot1/base_link_frame", a),
            ("robot1/base_link_frame", b),
            (a, b),
            (b, a),
        ],
        &move |w| {
            put(w, "robot1/base_link_frame", a, T0, 1.0, false);
            put(w, "robot1/base_link_frame", b, T0, 2.0, false);
        },
        &ops,
    );
}

#[test]
fn short_names_of_every_length_class() {
    // 1-, 2-, 3-, 4-, 7-, 8-, 9-, 16-byte names whose packed words overlap.
    let names = [
        "a",
        "ab",
        "aba",
        "abab",
        "abababa",
        "abababab",
        "ababababa",
        "abababababababab",
    ];
    let ops: Vec<Op> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let n = n.to_string();
            let op: Op = (
                "newer",
                Box::new(move |w: &mut ArenaWriter| {
                    put(w, "m", &n, T0 + (i as i64 + 1) * S, 3.0 + i as f64, false)
                }),
            );
            op
        })
        .collect();
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for t in names {
        for s in names {
            pairs.push((t, s));
        }
    }
    run(
        &config(),
        &pairs,
        &move |w| {
            for (i, n) in names.iter().enumerate() {
                put(w, "m", n, T0, i as f64, false);
            }
        },
        &ops,
    );
}

#[test]
fn one_pair_used_on_two_arenas_with_equal_counts() {
    // Same frames, ids and counts, other values; the pair alternates between the arenas at
    // time 0 only (a kept answer of one must never answer the other).
    let config = config();
    let (mut wa, a) = Arena::in_memory(&config).unwrap();
    let (mut wb, b) = Arena::in_memory(&config).unwrap();
    for k in 0..5 {
        put(&mut wa, "map", "base", T0 + k * S, 1.0, false);
        put(&mut wb, "map", "base", T0 + k * S, 2.0, false);
        put(&mut wa, "map", "odom", T0 + k * S, 1.5, false);
        put(&mut wb, "map", "odom", T0 + k * S, 3.0, false);
    }
    let mut pair = FramePair::new("odom", "base");
    for view in [&a, &b, &a, &b, &b, &a] {
        let want = tf_shm::walk::lookup_transform(view, "odom", "base", 0)
            .map(|t| bits(t.stamp, &t.transform));
        for _ in 0..2 {
            assert_eq!(
                view.lookup_pair(&mut pair, 0).map(|(s, t)| bits(s, &t)),
                want
            );
            assert_eq!(
                view.lookup_transform("odom", "base", 0)
                    .map(|t| bits(t.stamp, &t.transform)),
                want
            );
        }
    }
}
