//! The hold (the store a consumer answers from after a bridge restart, [`HandoverStore`] over
//! the old and the new arena) while the new arena's writer races its readers: every answer
//! must be the hold's own answer at some moment of the new arena inside the read's window
//! [moments completed before the call, moments begun before it returned]. The hold's answers
//! at one moment are tested against tf2's elsewhere (`tests/handover_store.rs`); this holds
//! them to one moment while the hold keeps its copies of the new histories between moments.
//!
//! Real threads, a writer and [`READERS`] reader on one hold (the writer waits, never long,
//! for a read to begin inside each moment, so reads overlap moments however the threads are
//! scheduled); the new arena fills as a new bridge's does: frames created one message at a time (a frame first seen as a parent), then ticks of
//! one message each (some split in two), a static re-published, a frame only the new arena
//! has. The reference replays the writer's moments into a second arena and asks a fresh hold
//! at each moment a read could have seen.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tf_shm::handover_store::HandoverStore;
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, BufferCore};

const S: i64 = 1_000_000_000;
const TICK: i64 = S / 50;
const FRAMES: &[&str] = &["map", "odom", "base", "arm", "tool", "laser", "cam"];

/// One `setTransform`: parent, child, stamp (ns), x, static.
type Tf = (&'static str, &'static str, i64, f64, bool);

fn arena() -> (ArenaWriter, ArenaView) {
    Arena::in_memory(&ArenaConfig {
        max_frames: 32,
        memory_budget_bytes: 4 << 20,
        ..ArenaConfig::default()
    })
    .unwrap()
}

fn put(w: &mut ArenaWriter, &(parent, child, stamp, x, is_static): &Tf) {
    let yaw = 0.1 * x;
    w.set_transform(
        &TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp,
            translation: [x, 0.5 * x, 0.1],
            rotation: [0.0, 0.0, (yaw / 2.0).sin(), (yaw / 2.0).cos()],
        },
        "test",
        is_static,
    )
    .unwrap();
}

/// The old bridge's arena: two seconds of a robot, its writer gone.
fn old_arena() -> ArenaView {
    let (mut w, v) = arena();
    put(&mut w, &("map", "odom", 0, 1.0, true));
    put(&mut w, &("base", "laser", 0, 0.2, true));
    for k in 0..100 {
        let t = S + k * TICK;
        let x = k as f64 * 0.01;
        put(&mut w, &("odom", "base", t, x, false));
        put(&mut w, &("base", "arm", t, 0.5 + x, false));
        put(&mut w, &("arm", "tool", t, 0.1 + x, false));
    }
    v
}

/// The new bridge's moments, each one message.
fn new_moments() -> Vec<Vec<Tf>> {
    let start = 3 * S + S / 10;
    let mut m: Vec<Vec<Tf>> = vec![
        // Transient-local statics first; `arm` is a parent before it has a sample.
        vec![
            ("map", "odom", 0, 1.0, true),
            ("base", "laser", 0, 0.2, true),
        ],
        vec![("arm", "tool", start, 0.3, false)],
        vec![("odom", "base", start, 1.0, false)],
        vec![("base", "arm", start, 0.6, false)],
    ];
    for k in 1..300 {
        let t = start + k * TICK;
        let x = 1.0 + k as f64 * 0.01;
        let tick = vec![
            ("odom", "base", t, x, false),
            ("base", "arm", t, x - 0.4, false),
            ("arm", "tool", t, x - 0.7, false),
        ];
        if k % 7 == 0 {
            // A message in two parts (two publishers' halves).
            m.push(tick[..1].to_vec());
            m.push(tick[1..].to_vec());
        } else {
            m.push(tick);
        }
        if k == 40 {
            m.push(vec![("base", "cam", t, 0.05, false)]);
        }
        if k > 40 && k % 3 == 0 {
            m.push(vec![("base", "cam", t, 0.05 + x * 0.001, false)]);
        }
        if k == 150 {
            m.push(vec![("map", "odom", 0, 2.0, true)]);
        }
    }
    m
}

/// Reader threads: with the writer, one per core of a 2-core machine.
const READERS: u64 = 1;

/// The longest a writer waits for readers between two moments.
const PAUSE: Duration = Duration::from_millis(2);

fn write(w: &mut ArenaWriter, moment: &[Tf]) {
    w.batch(|w| moment.iter().for_each(|t| put(w, t)));
}

#[derive(Clone, Copy, Debug)]
enum Query {
    Lookup(usize, usize, i64),
    Can(usize, usize, i64),
    Latest(usize, usize),
}

fn queries() -> Vec<Query> {
    let times = [
        0,
        S + S / 2,
        2 * S + S / 2,
        3 * S + S / 10,
        3 * S + S / 10 + 5,
        4 * S,
        5 * S,
        9 * S,
    ];
    let mut q = Vec::new();
    for a in 0..FRAMES.len() {
        for b in 0..FRAMES.len() {
            for &t in &times {
                q.push(Query::Lookup(a, b, t));
            }
            q.push(Query::Can(a, b, 0));
            q.push(Query::Can(a, b, 4 * S));
            q.push(Query::Latest(a, b));
        }
    }
    q
}

fn answer(hold: &HandoverStore, q: Query) -> String {
    match q {
        Query::Lookup(a, b, t) => format!(
            "{:?}",
            hold.lookup_transform(FRAMES[a], FRAMES[b], t)
                .map(|x| (x.stamp, x.transform))
        ),
        Query::Can(a, b, t) => format!("{:?}", hold.can_transform(FRAMES[a], FRAMES[b], t)),
        Query::Latest(a, b) => format!("{:?}", hold.get_latest_common_time(FRAMES[a], FRAMES[b])),
    }
}

/// One read: moments completed before it, moments begun before it returned, the query, the
/// answer.
struct Read {
    lo: usize,
    hi: usize,
    q: usize,
    answer: String,
}

/// Rounds of the race; each writes every moment once, on a hold of its own.
const ROUNDS: usize = 4;

#[test]
fn a_hold_answers_at_one_moment_of_the_new_arena_while_it_is_written() {
    let (mut reads, mut racing, mut failures) = (0, 0, Vec::new());
    for _ in 0..ROUNDS {
        let r = round();
        reads += r.0;
        racing += r.1;
        failures.extend(r.2);
    }
    eprintln!(
        "{ROUNDS} rounds: {reads} reads, {racing} racing a moment, {} of no moment",
        failures.len()
    );
    assert!(
        racing > 100,
        "only {racing} reads raced the writer: the test did not exercise the race"
    );
    assert!(
        failures.is_empty(),
        "{} of {reads} reads answered at no moment of their window; first: {}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n  ")
    );
}

/// One race: (reads, reads racing a moment, reads of no moment).
fn round() -> (usize, usize, Vec<String>) {
    let old = old_arena();
    let moments = new_moments();
    let qs = queries();
    let (mut w, new) = arena();
    let hold = Arc::new(HandoverStore::new(old.clone(), new).unwrap());
    let (begun, done, stop, count, starts) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (hold, begun, done, stop, count, starts, qs) = (
                hold.clone(),
                begun.clone(),
                done.clone(),
                stop.clone(),
                count.clone(),
                starts.clone(),
                qs.clone(),
            );
            std::thread::spawn(move || {
                let mut reads = Vec::new();
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ r;
                let (mut at, mut here) = (usize::MAX, 0);
                while !stop.load(Ordering::SeqCst) {
                    // At most a few reads while a moment is written and a few between two:
                    // the reads that matter start while one is being written.
                    let now = begun.load(Ordering::SeqCst) + done.load(Ordering::SeqCst);
                    let most = if now % 2 == 1 { 8 } else { 2 };
                    if now != at {
                        (at, here) = (now, 0);
                    } else if here >= most {
                        std::thread::yield_now();
                        continue;
                    }
                    here += 1;
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let q = (x % qs.len() as u64) as usize;
                    starts.fetch_add(1, Ordering::SeqCst);
                    let lo = done.load(Ordering::SeqCst);
                    let answer = answer(&hold, qs[q]);
                    let hi = begun.load(Ordering::SeqCst);
                    reads.push(Read { lo, hi, q, answer });
                    count.fetch_add(1, Ordering::SeqCst);
                }
                reads
            })
        })
        .collect();
    let started = Instant::now();
    for (i, m) in moments.iter().enumerate() {
        // A read between two moments, never waiting long for a stalled reader.
        let (seen, since) = (count.load(Ordering::SeqCst), Instant::now());
        while count.load(Ordering::SeqCst) < seen + 1 && since.elapsed() < PAUSE {
            std::thread::yield_now();
        }
        begun.store(i + 1, Ordering::SeqCst);
        // A read begun inside the moment after each of its transforms (it answers the moment
        // before, or this one once published): reads overlap moments however the threads are
        // scheduled.
        w.batch(|w| {
            for t in m {
                put(w, t);
                let (seen, since) = (starts.load(Ordering::SeqCst), Instant::now());
                while starts.load(Ordering::SeqCst) == seen && since.elapsed() < PAUSE {
                    std::thread::yield_now();
                }
            }
        });
        done.store(i + 1, Ordering::SeqCst);
    }
    stop.store(true, Ordering::SeqCst);
    let writing = started.elapsed();
    let mut reads: Vec<Read> = readers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    reads.sort_by_key(|r| r.lo);

    // The hold's answers at each moment, on a fresh hold over a replay of the new arena.
    let (mut replay, replayed) = arena();
    let mut matched = vec![false; reads.len()];
    let mut racing = 0;
    for p in 0..=moments.len() {
        if p > 0 {
            write(&mut replay, &moments[p - 1]);
        }
        let at_p = HandoverStore::new(old.clone(), replayed.clone()).unwrap();
        let mut memo: HashMap<usize, String> = HashMap::new();
        for (i, r) in reads.iter().enumerate() {
            if r.lo > p {
                break;
            }
            if matched[i] || r.hi < p {
                continue;
            }
            let want = memo.entry(r.q).or_insert_with(|| answer(&at_p, qs[r.q]));
            if *want == r.answer {
                matched[i] = true;
            }
        }
    }
    let mut failures = Vec::new();
    for (r, matched) in reads.iter().zip(&matched) {
        if r.hi > r.lo {
            racing += 1;
        }
        if !matched {
            failures.push(format!(
                "{:?} in moments [{}, {}]: {}",
                qs[r.q], r.lo, r.hi, r.answer
            ));
        }
    }
    eprintln!(
        "{} reads ({racing} racing a moment) over {} moments written in {writing:?}",
        reads.len(),
        moments.len(),
    );
    (reads.len(), racing, failures)
}
