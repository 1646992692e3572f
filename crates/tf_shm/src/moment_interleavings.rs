//! Deterministic interleavings of a reader and the writer, one per failure class of a query
//! that reads no single moment (`crate::moment`): a frame being created, a two-time lookup and
//! an identity query, a static re-publish, a static↔dynamic switch, `clear()`, a re-parenting,
//! a plain dynamic insert.
//!
//! Two ways to interleave, both on one thread, so every run is the same:
//! * **writer paused** between two of its stores (the writer's `step()`, in both copies'
//!   passes): every query is run there, as the walk alone, as one attempt of the moment check
//!   and as the public query. A paused writer is a killed one, as far as readers can tell: the
//!   checked and public answers must be the moment before while copy 0 is being changed and
//!   the new moment once it is published, in one attempt (no reader waits for the writer);
//! * **reader paused** between two of its link and name reads (`reader_step`): the whole
//!   change is written there, at each read of each query in turn, then the query finishes.
//!
//! Each answer is compared with tf2's before and after the change (the same queries on the
//! arena before the change and on one that took it whole). The walk alone gives answers of
//! neither for every class (asserted: what reads without the check would give); the checked
//! queries (the public ones, by name and by [`crate::FramePair`]) never do.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::queries::BufferCore;
use crate::validate::TransformInput;
use crate::{walk, Arena, ArenaConfig, ArenaView, ArenaWriter, FramePair};

/// A hook slot: what runs at each step, if anything.
type Hook = std::thread::LocalKey<RefCell<Option<Box<dyn FnMut()>>>>;

thread_local! {
    static WRITER_HOOK: RefCell<Option<Box<dyn FnMut()>>> = RefCell::new(None);
    static READER_HOOK: RefCell<Option<Box<dyn FnMut()>>> = RefCell::new(None);
}

/// Called by the writer between two of its stores.
pub(crate) fn writer_step() {
    run_hook(&WRITER_HOOK);
}

/// Called by the view before each link or name read.
pub(crate) fn reader_step() {
    run_hook(&READER_HOOK);
}

fn run_hook(hook: &'static Hook) {
    // Taken out while it runs: what it calls may step again.
    if let Some(mut f) = hook.with(|h| h.borrow_mut().take()) {
        f();
        hook.with(|h| {
            let mut h = h.borrow_mut();
            if h.is_none() {
                *h = Some(f);
            }
        });
    }
}

fn set_hook(hook: &'static Hook, f: Option<Box<dyn FnMut()>>) {
    hook.with(|h| *h.borrow_mut() = f);
}

/// Whether `v`'s writer is between moments (latch even): readers then see its last moment
/// published, else the moment before the one being written.
fn published(v: &ArenaView) -> bool {
    v.header().latch.load(crate::sync::Ordering::Relaxed) & 1 == 0
}

/// Makes the reader hook write `change` with `w` (which it then owns) at the reader's `k`-th
/// read.
fn change_at_read(w: ArenaWriter, change: fn(&mut ArenaWriter), k: usize) {
    let (w, at) = (RefCell::new(w), Cell::new(0));
    set_hook(
        &READER_HOOK,
        Some(Box::new(move || {
            if at.get() == k {
                change(&mut w.borrow_mut());
            }
            at.set(at.get() + 1);
        })),
    );
}

/// How many steps of `hook` (the writer's stores or the reader's reads) `run` makes.
fn steps_of(hook: &'static Hook, run: impl FnOnce()) -> usize {
    let n = Rc::new(Cell::new(0));
    let n2 = n.clone();
    set_hook(hook, Some(Box::new(move || n2.set(n2.get() + 1))));
    run();
    set_hook(hook, None);
    n.get()
}

const T0: i64 = 1_000_000_000_000;
const P: i64 = 10_000_000;

fn put(w: &mut ArenaWriter, parent: &str, child: &str, stamp: i64, x: f64, is_static: bool) {
    w.set_transform(
        &TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp,
            translation: [x, 0.5 * x, 0.0],
            rotation: [0.0, 0.0, (x * 0.1).sin(), (x * 0.1).cos()],
        },
        "test",
        is_static,
    )
    .unwrap();
}

fn arena() -> (ArenaWriter, ArenaView) {
    Arena::in_memory(&ArenaConfig {
        max_frames: 16,
        memory_budget_bytes: 1 << 20,
        ..ArenaConfig::default()
    })
    .unwrap()
}

/// One tf2 query.
#[derive(Clone, Debug)]
enum Query {
    Lookup(&'static str, &'static str, i64),
    Pair(&'static str, &'static str, i64),
    Full(&'static str, i64, &'static str, i64, &'static str),
    Can(&'static str, &'static str, i64),
    LatestCommon(&'static str, &'static str),
    Names,
    Listing,
}

fn queries(frames: &[&'static str]) -> Vec<Query> {
    let mut q = vec![Query::Names, Query::Listing];
    for &a in frames {
        for &b in frames {
            for t in [0, T0 + 2 * P + P / 2, T0 + 4 * P] {
                q.push(Query::Lookup(a, b, t));
                q.push(Query::Can(a, b, t));
            }
            q.push(Query::Pair(a, b, 0));
            q.push(Query::LatestCommon(a, b));
            q.push(Query::Full(a, 0, b, 0, frames[0]));
            q.push(Query::Full(a, T0 + 3 * P, b, 0, frames[0]));
        }
    }
    q
}

/// The walk alone, no moment check, on copy 0 only: what a query reads without the latch.
fn raw(v: &ArenaView, q: &Query) -> String {
    walk_on(&v.pinned_to_copy_0(), q)
}

/// The walk alone on `v`, reading the copies its accessors choose.
fn walk_on(v: &ArenaView, q: &Query) -> String {
    match *q {
        Query::Lookup(a, b, t) | Query::Pair(a, b, t) => {
            format!(
                "{:?}",
                walk::lookup_transform(v, a, b, t).map(|x| (x.stamp, x.transform))
            )
        }
        Query::Full(a, ta, b, tb, f) => format!(
            "{:?}",
            walk::lookup_transform_full(v, a, ta, b, tb, f).map(|x| (x.stamp, x.transform))
        ),
        Query::Can(a, b, t) => format!("{:?}", walk::can_transform(v, a, b, t)),
        Query::LatestCommon(a, b) => format!("{:?}", walk::get_latest_common_time(v, a, b)),
        Query::Names => format!("{:?}", walk::get_all_frame_names(v)),
        Query::Listing => format!("{:?}", walk::all_frames_as_string(v)),
    }
}

/// The public query (names cache, pair and kept answers, the moment check).
fn public(v: &ArenaView, q: &Query, pair: &mut FramePair) -> String {
    match *q {
        Query::Pair(_, _, t) => format!("{:?}", v.lookup_pair(pair, t)),
        _ => tf2_query(v, q),
    }
}

/// The query through [`BufferCore`] on any store (a pair's query as the lookup by name).
fn tf2_query<S: BufferCore>(s: &S, q: &Query) -> String {
    match *q {
        Query::Lookup(a, b, t) | Query::Pair(a, b, t) => format!(
            "{:?}",
            s.lookup_transform(a, b, t).map(|x| (x.stamp, x.transform))
        ),
        Query::Full(a, ta, b, tb, f) => format!(
            "{:?}",
            s.lookup_transform_full(a, ta, b, tb, f)
                .map(|x| (x.stamp, x.transform))
        ),
        Query::Can(a, b, t) => format!("{:?}", s.can_transform(a, b, t)),
        Query::LatestCommon(a, b) => format!("{:?}", s.get_latest_common_time(a, b)),
        Query::Names => format!("{:?}", s.get_all_frame_names()),
        Query::Listing => format!("{:?}", s.all_frames_as_string()),
    }
}

fn pair_of(q: &Query) -> FramePair {
    match *q {
        Query::Pair(a, b, _) => FramePair::new(a, b),
        _ => FramePair::new("", ""),
    }
}

/// A failure class: the arena before, and the change (one moment).
struct Class {
    name: &'static str,
    frames: &'static [&'static str],
    setup: fn(&mut ArenaWriter),
    change: fn(&mut ArenaWriter),
}

/// tf2's answers before and after `class`'s change, per query.
fn before_after(class: &Class, qs: &[Query]) -> (Vec<String>, Vec<String>) {
    let answers = |changed: bool| {
        let (mut w, v) = arena();
        (class.setup)(&mut w);
        if changed {
            (class.change)(&mut w);
        }
        qs.iter()
            .map(|q| public(&v, q, &mut pair_of(q)))
            .collect::<Vec<_>>()
    };
    (answers(false), answers(true))
}

/// Runs every query at every pause of the writer inside the change. Returns how many walk
/// answers matched neither moment.
fn writer_paused(class: &Class, qs: &[Query], before: &[String], after: &[String]) -> usize {
    let (mut w, v) = arena();
    (class.setup)(&mut w);
    let off = Rc::new(Cell::new(0));
    let steps = Rc::new(Cell::new(0));
    let (qs2, b2, a2, off2, steps2, v2) = (
        qs.to_vec(),
        before.to_vec(),
        after.to_vec(),
        off.clone(),
        steps.clone(),
        v.clone(),
    );
    set_hook(
        &WRITER_HOOK,
        Some(Box::new(move || {
            steps2.set(steps2.get() + 1);
            for (i, q) in qs2.iter().enumerate() {
                let r = raw(&v2, q);
                if r != b2[i] && r != a2[i] {
                    off2.set(off2.get() + 1);
                }
                // While the writer changes copy 0 (latch odd) every query answers the moment
                // before, from copy 1; once the moment is published (latch even), the moment
                // itself: at once, in one attempt — nothing waits for the paused writer.
                let published = published(&v2);
                let expected = if published { &a2[i] } else { &b2[i] };
                let checked = crate::moment::try_once(&v2.header().latch, |_| walk_on(&v2, q));
                assert_eq!(
                    checked.as_ref(),
                    Some(expected),
                    "{q:?}, published: {published}"
                );
                assert_eq!(&public(&v2, q, &mut pair_of(q)), expected, "{q:?}");
            }
        })),
    );
    (class.change)(&mut w);
    set_hook(&WRITER_HOOK, None);
    for (i, q) in qs.iter().enumerate() {
        assert_eq!(
            public(&v, q, &mut pair_of(q)),
            after[i],
            "{}: {q:?}",
            class.name
        );
    }
    off.get()
}

/// For each query and each of its reads, writes the whole change at that read. Returns how
/// many walk answers matched neither moment; asserts the public answers always match one.
fn reader_paused(class: &Class, qs: &[Query], before: &[String], after: &[String]) -> usize {
    let mut off = 0;
    for (i, q) in qs.iter().enumerate() {
        // How many reads the query makes.
        let reads = {
            let (mut w, v) = arena();
            (class.setup)(&mut w);
            steps_of(&READER_HOOK, || {
                raw(&v, q);
            })
        };
        for k in 0..reads {
            for checked in [false, true] {
                let (mut w, v) = arena();
                (class.setup)(&mut w);
                let mut pair = pair_of(q);
                if checked {
                    // The pair's first lookup (and a kept answer) before the change.
                    public(&v, q, &mut pair);
                }
                // The hook owns the writer for the query's duration.
                change_at_read(w, class.change, k);
                let r = if checked {
                    public(&v, q, &mut pair)
                } else {
                    raw(&v, q)
                };
                set_hook(&READER_HOOK, None);
                if r != before[i] && r != after[i] {
                    assert!(
                        !checked,
                        "{}: {q:?} with the change written at read {k}: {r}\n  before: {}\n  after: {}",
                        class.name, before[i], after[i]
                    );
                    off += 1;
                }
            }
        }
    }
    off
}

fn check(class: Class) {
    let qs = queries(class.frames);
    let (before, after) = before_after(&class, &qs);
    let by_writer = writer_paused(&class, &qs, &before, &after);
    let by_reader = reader_paused(&class, &qs, &before, &after);
    eprintln!(
        "{}: {} queries; walk answers of no moment: {by_writer} with the writer paused, \
         {by_reader} with the reader paused",
        class.name,
        qs.len()
    );
    assert!(
        by_writer + by_reader > 0,
        "{}: the walk alone never answered outside both moments: the class is not exercised",
        class.name
    );
}

fn chain(w: &mut ArenaWriter) {
    put(w, "map", "odom", 0, 1.0, true);
    for k in 0..5 {
        put(w, "odom", "base", T0 + k * P, k as f64, false);
        put(w, "base", "arm", T0 + k * P, 0.5 + k as f64, false);
    }
}

#[test]
fn a_frame_being_created_is_never_visible_in_steps() {
    check(Class {
        name: "frame created",
        frames: &["map", "base", "cam", "tool"],
        setup: chain,
        change: |w| put(w, "tool", "cam", T0 + 4 * P, 3.0, false),
    });
}

#[test]
fn a_message_creating_a_branch_is_one_moment() {
    check(Class {
        name: "message",
        frames: &["map", "base", "cam", "lens"],
        setup: chain,
        change: |w| {
            w.batch(|w| {
                put(w, "base", "cam", T0 + 4 * P, 3.0, false);
                put(w, "cam", "lens", T0 + 4 * P, 4.0, false);
            })
        },
    });
}

#[test]
fn a_plain_dynamic_insert_and_identity_queries_are_one_moment() {
    check(Class {
        name: "dynamic insert",
        frames: &["map", "base", "arm"],
        setup: chain,
        change: |w| put(w, "odom", "base", T0 + 5 * P, 7.0, false),
    });
}

#[test]
fn a_static_re_publish_is_one_moment() {
    check(Class {
        name: "static re-publish",
        frames: &["map", "odom", "arm"],
        setup: chain,
        change: |w| put(w, "map", "odom", 0, 9.0, true),
    });
}

#[test]
fn a_dynamic_to_static_switch_is_one_moment() {
    check(Class {
        name: "dynamic to static",
        frames: &["map", "base", "arm"],
        setup: chain,
        change: |w| put(w, "odom", "base", T0 + 4 * P, 5.0, true),
    });
}

#[test]
fn a_static_to_dynamic_switch_is_one_moment() {
    check(Class {
        name: "static to dynamic",
        frames: &["map", "odom", "arm"],
        setup: chain,
        change: |w| put(w, "map", "odom", T0 + 4 * P, 5.0, false),
    });
}

#[test]
fn a_clear_is_one_moment() {
    check(Class {
        name: "clear",
        frames: &["map", "base", "arm"],
        setup: chain,
        change: |w| w.clear(),
    });
}

#[test]
fn a_re_parenting_is_one_moment() {
    check(Class {
        name: "re-parenting",
        frames: &["map", "odom", "base", "arm", "other"],
        setup: chain,
        change: |w| put(w, "other", "base", T0 + 5 * P, 6.0, false),
    });
}

/// A lookup through a [`FramePair`] that the writer overtook: the reader is paused at each of
/// its reads in turn while a writer (on its own thread) makes `change` and stops after each of
/// its stores in turn, mid-moment. The read the writer overtook is read again, and what it
/// read must not outlive it in the pair: a time-0 answer kept (a new sample behind an old
/// count, which the other copy's counts, still the moment before, would match) or frame ids
/// resolved (of a frame the moment before does not have). Every answer must be the moment the
/// latch names: before the change while the writer is stopped in copy 0, after it once
/// published.
fn overtaken(change: fn(&mut ArenaWriter), source: &'static str, time: i64, resolved_first: bool) {
    use std::sync::mpsc;
    let answer = |v: &ArenaView| {
        format!(
            "{:?}",
            v.lookup_pair(&mut FramePair::new("map", source), time)
        )
    };
    let (before, after) = {
        let (mut w, v) = arena();
        chain(&mut w);
        let before = answer(&v);
        change(&mut w);
        (before, answer(&v))
    };
    assert_ne!(before, after);
    // How many stores the change makes and how many reads the lookup does.
    let (mut w, _) = arena();
    chain(&mut w);
    let stores = steps_of(&WRITER_HOOK, || change(&mut w));
    // The pair as the lookup below gets it: resolved before (nothing kept: its time-0
    // lookup walks), or new.
    let pair_for = |v: &ArenaView| {
        let mut pair = FramePair::new("map", source);
        if resolved_first {
            v.lookup_pair(&mut pair, T0 + 2 * P).unwrap();
        }
        pair
    };
    let (mut w, v2) = arena();
    chain(&mut w);
    let mut pair = pair_for(&v2);
    let reads = steps_of(&READER_HOOK, || {
        let _ = v2.lookup_pair(&mut pair, time);
    });
    assert!(stores > 0 && reads > 0, "{stores} stores, {reads} reads");
    for j in 0..=stores {
        for k in 0..reads {
            let (mut w, v) = arena();
            chain(&mut w);
            let mut pair = pair_for(&v);
            let (stopped_tx, stopped_rx) = mpsc::channel::<()>();
            let (go_tx, go_rx) = mpsc::channel::<()>();
            let mut go_rx = Some(go_rx);
            let writer = Rc::new(RefCell::new(None));
            let (writer2, n) = (writer.clone(), Cell::new(0));
            let mut w = Some(w);
            set_hook(
                &READER_HOOK,
                Some(Box::new(move || {
                    if n.get() == k {
                        let (mut w, stopped) = (w.take().unwrap(), stopped_tx.clone());
                        let go = go_rx.take().unwrap();
                        *writer2.borrow_mut() = Some(std::thread::spawn(move || {
                            let (s, at) = (stopped.clone(), Cell::new(0));
                            set_hook(
                                &WRITER_HOOK,
                                Some(Box::new(move || {
                                    if at.get() == j {
                                        s.send(()).unwrap();
                                        go.recv().unwrap();
                                    }
                                    at.set(at.get() + 1);
                                })),
                            );
                            change(&mut w);
                            set_hook(&WRITER_HOOK, None);
                            let _ = stopped.send(());
                        }));
                        // The writer stopped mid-moment, or finished.
                        stopped_rx.recv().unwrap();
                    }
                    n.set(n.get() + 1);
                })),
            );
            let first = format!("{:?}", v.lookup_pair(&mut pair, time));
            set_hook(&READER_HOOK, None);
            let again = format!("{:?}", v.lookup_pair(&mut pair, time));
            let published = published(&v);
            let expected = if published { &after } else { &before };
            assert_eq!(
                (&first, &again),
                (expected, expected),
                "writer stopped after store {j}, reader paused at read {k}, published: {published}"
            );
            let _ = go_tx.send(());
            let handle = writer.borrow_mut().take();
            if let Some(h) = handle {
                h.join().unwrap();
            }
        }
    }
}

#[test]
fn a_read_the_writer_overtook_keeps_no_answer() {
    overtaken(|w| put(w, "map", "odom", 0, 9.0, true), "arm", 0, true);
}

#[test]
fn a_read_the_writer_overtook_resolves_no_frame() {
    // One message: the new frame is whole in copy 0 while the writer is in its second transform.
    let change = |w: &mut ArenaWriter| {
        w.batch(|w| {
            put(w, "arm", "tool", T0 + 4 * P, 2.0, false);
            put(w, "odom", "base", T0 + 5 * P, 3.0, false);
        })
    };
    overtaken(change, "tool", T0 + 4 * P, false);
}

/// A consumer holding its old arena after a bridge restart answers from both (the handover
/// store, `crate::follow`), and keeps its copies of the new arena's histories between the new
/// writer's moments: each query must read one moment of the new arena, and a copy must be of
/// that moment, not of an earlier one. The old arena: `chain` (its writer gone). The new one:
/// `new_setup`, then `change`; at every pause of the new writer, every query on a hold that
/// answered them all before the change must answer the moment the latch names.
fn hold_check(new_setup: fn(&mut ArenaWriter), change: fn(&mut ArenaWriter)) {
    use crate::handover_store::HandoverStore;
    let qs = queries(&["map", "odom", "base", "arm", "tool"]);
    let old = {
        let (mut w, v) = arena();
        chain(&mut w);
        v
    };
    let new_arena = || {
        let (mut w, v) = arena();
        new_setup(&mut w);
        (w, v)
    };
    let answers = |changed: bool| {
        let (mut w, new) = new_arena();
        if changed {
            change(&mut w);
        }
        let hold = HandoverStore::new(old.clone(), new).unwrap();
        qs.iter().map(|q| tf2_query(&hold, q)).collect::<Vec<_>>()
    };
    let (before, after) = (answers(false), answers(true));
    assert_ne!(before, after);
    let (mut w, new) = new_arena();
    let hold = Rc::new(HandoverStore::new(old.clone(), new.clone()).unwrap());
    for (i, q) in qs.iter().enumerate() {
        assert_eq!(tf2_query(&*hold, q), before[i], "{q:?}");
    }
    let (hold2, qs2, steps) = (hold.clone(), qs.clone(), Rc::new(Cell::new(0)));
    let (steps2, before2, after2) = (steps.clone(), before.clone(), after.clone());
    set_hook(
        &WRITER_HOOK,
        Some(Box::new(move || {
            steps2.set(steps2.get() + 1);
            let published = published(&new);
            let expected = if published { &after2 } else { &before2 };
            for (i, q) in qs2.iter().enumerate() {
                assert_eq!(
                    &tf2_query(&*hold2, q),
                    &expected[i],
                    "{q:?}, writer stopped after store {}, published: {published}",
                    steps2.get()
                );
            }
        })),
    );
    change(&mut w);
    set_hook(&WRITER_HOOK, None);
    for (i, q) in qs.iter().enumerate() {
        assert_eq!(tf2_query(&*hold, q), after[i], "{q:?}");
    }
    // The reader paused at each of its reads in turn, the whole change written there, on a
    // hold that answered the query once before.
    let mut paused = 0;
    for (i, q) in qs.iter().enumerate() {
        let reads = {
            let (_w, new) = new_arena();
            let hold = HandoverStore::new(old.clone(), new).unwrap();
            steps_of(&READER_HOOK, || {
                tf2_query(&hold, q);
            })
        };
        for k in 0..reads {
            let (w, new) = new_arena();
            let hold = HandoverStore::new(old.clone(), new).unwrap();
            assert_eq!(tf2_query(&hold, q), before[i], "{q:?}");
            change_at_read(w, change, k);
            let r = tf2_query(&hold, q);
            set_hook(&READER_HOOK, None);
            assert!(
                r == before[i] || r == after[i],
                "{q:?} with the change written at read {k}: {r}\n  before: {}\n  after: {}",
                before[i],
                after[i]
            );
            paused += 1;
        }
    }
    assert!(
        steps.get() + paused > 0,
        "neither the writer nor the reader paused"
    );
}

fn new_statics(w: &mut ArenaWriter) {
    put(w, "map", "odom", 0, 1.0, true);
}

/// A frame the new arena knew only as a parent gets its first sample: found live for the
/// latest common time, its history must not come from a copy kept without it (a time-0 lookup
/// then failed with an extrapolation into the future while the writer was between publishing
/// and notifying).
#[test]
fn a_hold_reads_a_first_sample_at_one_moment() {
    hold_check(
        |w| {
            new_statics(w);
            put(w, "base", "arm", T0 + 6 * P, 7.0, false);
        },
        |w| put(w, "odom", "base", T0 + 6 * P, 8.0, false),
    );
}

/// A frame's second sample in the new arena: the hold moves from the merged history to the
/// new arena's own.
#[test]
fn a_hold_reads_a_second_sample_at_one_moment() {
    hold_check(
        |w| {
            new_statics(w);
            put(w, "odom", "base", T0 + 6 * P, 8.0, false);
            put(w, "base", "arm", T0 + 6 * P, 7.0, false);
        },
        |w| {
            w.batch(|w| {
                put(w, "odom", "base", T0 + 7 * P, 9.0, false);
                put(w, "base", "arm", T0 + 7 * P, 6.0, false);
            })
        },
    );
}

/// A frame only the new arena has (an id appended to the old ones), in a message that also
/// re-publishes a static with a new value.
#[test]
fn a_hold_reads_a_new_frame_and_a_static_at_one_moment() {
    hold_check(
        |w| {
            new_statics(w);
            put(w, "odom", "base", T0 + 6 * P, 8.0, false);
        },
        |w| {
            w.batch(|w| {
                put(w, "arm", "tool", T0 + 6 * P, 2.0, false);
                put(w, "map", "odom", 0, 3.0, true);
            })
        },
    );
}

/// `clear()` in the new arena (a clock jump).
#[test]
fn a_hold_reads_a_clear_at_one_moment() {
    hold_check(
        |w| {
            new_statics(w);
            put(w, "odom", "base", T0 + 6 * P, 8.0, false);
            put(w, "base", "arm", T0 + 6 * P, 7.0, false);
            put(w, "odom", "base", T0 + 7 * P, 9.0, false);
        },
        |w| w.clear(),
    );
}
