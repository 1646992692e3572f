//! Lookups racing a writer answer as of one moment: a writer thread applies a scripted
//! sequence of inserts (random scenarios of dynamic samples, static re-publishes, kind
//! switches, re-parentings, new frames and `clear()`, each one moment) while reader threads
//! loop over tf2's queries through the public paths (by name, through a `FramePair`, two-time,
//! `can_transform`, the latest common time, the frame listing). Each answer must equal the
//! answer after some prefix of the inserts inside the read's window: [inserts completed before
//! the call, inserts started before it returned].
//!
//! The reference is this crate's sequential answer at each prefix (the same queries on an
//! arena that took the prefix with no reader racing it), which the differential tests hold
//! equal to tf2's. On a mismatch the scenario is written to `$TF_SHM_REPRO_DIR` (default: the
//! system temp dir) as `one_moment_race-<seed>.txt`. Bounded: 6 scenarios, ~1 s.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, BufferCore, FramePair};

const T0: i64 = 1_000_000_000_000;
const P: i64 = 10_000_000;
const FRAMES: [&str; 6] = ["map", "odom", "base", "arm", "cam", "tool"];

#[derive(Clone, Debug)]
enum Op {
    Set {
        parent: usize,
        child: usize,
        stamp: i64,
        x: f64,
        is_static: bool,
    },
    Clear,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random scenario: a tree over `FRAMES` (each child's parent has a lower index), mostly
/// dynamic samples moving forward in time, with static re-publishes, kind switches,
/// re-parentings and the occasional `clear()`.
fn scenario(seed: u64, len: usize) -> Vec<Op> {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut ops = Vec::with_capacity(len);
    let mut parent: Vec<usize> = (0..FRAMES.len()).map(|c| c.saturating_sub(1)).collect();
    let mut stamp = T0;
    for _ in 0..len {
        let roll = r.below(100);
        if roll < 2 {
            ops.push(Op::Clear);
            continue;
        }
        let child = 1 + r.below(FRAMES.len() as u64 - 1) as usize;
        if roll < 8 {
            parent[child] = r.below(child as u64) as usize;
        }
        stamp += r.below(P as u64) as i64;
        ops.push(Op::Set {
            parent: parent[child],
            child,
            stamp,
            x: r.below(1000) as f64 * 0.01,
            is_static: (8..20).contains(&roll),
        });
    }
    ops
}

fn apply(w: &mut ArenaWriter, op: &Op) {
    match *op {
        Op::Set {
            parent,
            child,
            stamp,
            x,
            is_static,
        } => {
            // Refusals (old data after a clear is not one: tf2 accepts it) are tf2's too.
            let _ = w.set_transform(
                &TransformInput {
                    frame_id: FRAMES[parent],
                    child_frame_id: FRAMES[child],
                    stamp,
                    translation: [x, -x, 0.5],
                    rotation: [0.0, (x * 0.2).sin(), 0.0, (x * 0.2).cos()],
                },
                "race",
                is_static,
            );
        }
        Op::Clear => w.clear(),
    }
}

#[derive(Clone, Copy, Debug)]
enum Query {
    Names(usize, usize, i64),
    Pair(usize, usize),
    Full(usize, usize),
    Can(usize, usize),
    LatestCommon(usize, usize),
    Listing,
}

fn queries() -> Vec<Query> {
    let mut q = vec![Query::Listing];
    for a in 0..FRAMES.len() {
        for b in 0..FRAMES.len() {
            if (a + b) % 2 == 0 {
                q.push(Query::Names(a, b, 0));
                q.push(Query::Pair(a, b));
                q.push(Query::Full(a, b));
            } else {
                q.push(Query::Can(a, b));
                q.push(Query::LatestCommon(a, b));
            }
        }
    }
    q
}

fn answer(v: &ArenaView, q: Query, pairs: &mut [FramePair]) -> String {
    let f = |i: usize| FRAMES[i];
    match q {
        Query::Names(a, b, t) => format!(
            "{:?}",
            v.lookup_transform(f(a), f(b), t)
                .map(|x| (x.stamp, x.transform))
        ),
        Query::Pair(a, b) => format!("{:?}", v.lookup_pair(&mut pairs[a * 8 + b], 0)),
        Query::Full(a, b) => format!(
            "{:?}",
            v.lookup_transform_full(f(a), 0, f(b), 0, f(0))
                .map(|x| (x.stamp, x.transform))
        ),
        Query::Can(a, b) => format!("{:?}", v.can_transform(f(a), f(b), 0)),
        Query::LatestCommon(a, b) => format!("{:?}", v.get_latest_common_time(f(a), f(b))),
        Query::Listing => format!("{:?}", BufferCore::all_frames_as_string(v)),
    }
}

fn pairs() -> Vec<FramePair> {
    (0..64)
        .map(|k| FramePair::new(FRAMES[(k / 8) % 6], FRAMES[(k % 8) % 6]))
        .collect()
}

fn arena() -> (ArenaWriter, ArenaView) {
    Arena::in_memory(&ArenaConfig {
        max_frames: 16,
        memory_budget_bytes: 4 << 20,
        ..ArenaConfig::default()
    })
    .unwrap()
}

/// (query index, answer, window low, window high).
type Seen = (usize, String, usize, usize);

fn race(ops: &[Op], qs: &[Query]) -> Vec<Seen> {
    let (mut w, view) = arena();
    let started = Arc::new(AtomicUsize::new(0));
    let completed = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (view, started, completed, done) = (
                view.clone(),
                started.clone(),
                completed.clone(),
                done.clone(),
            );
            let qs = qs.to_vec();
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                let mut pairs = pairs();
                let mut k = r;
                while !done.load(Ordering::Acquire) {
                    k = (k + 7) % qs.len();
                    let lo = completed.load(Ordering::SeqCst);
                    let a = answer(&view, qs[k], &mut pairs);
                    let hi = started.load(Ordering::SeqCst);
                    seen.push((k, a, lo, hi));
                }
                seen
            })
        })
        .collect();
    for (i, op) in ops.iter().enumerate() {
        started.store(i + 1, Ordering::SeqCst);
        apply(&mut w, op);
        completed.store(i + 1, Ordering::SeqCst);
        // Give readers room to land inside and between inserts.
        for _ in 0..200 {
            std::hint::spin_loop();
        }
    }
    done.store(true, Ordering::Release);
    readers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect()
}

/// The answer of every query after every prefix (index = prefix length).
fn reference(ops: &[Op], qs: &[Query]) -> Vec<Vec<String>> {
    let (mut w, view) = arena();
    let mut pairs = pairs();
    let mut out = Vec::with_capacity(ops.len() + 1);
    out.push(qs.iter().map(|&q| answer(&view, q, &mut pairs)).collect());
    for op in ops {
        apply(&mut w, op);
        out.push(qs.iter().map(|&q| answer(&view, q, &mut pairs)).collect());
    }
    out
}

#[test]
fn every_racing_answer_is_the_answer_after_a_prefix_in_its_window() {
    let qs = queries();
    let mut checked = 0;
    for seed in 1..=6u64 {
        let ops = scenario(seed, 400);
        let reference = reference(&ops, &qs);
        let seen = race(&ops, &qs);
        let bad: Vec<&Seen> = seen
            .iter()
            .filter(|(k, a, lo, hi)| !(*lo..=*hi).any(|p| &reference[p][*k] == a))
            .collect();
        checked += seen.len();
        if let Some((k, a, lo, hi)) = bad.first() {
            let dir = std::env::var_os("TF_SHM_REPRO_DIR")
                .map_or_else(std::env::temp_dir, std::path::PathBuf::from);
            let path = dir.join(format!("one_moment_race-{seed}.txt"));
            let text = format!(
                "seed {seed}; {} of {} answers of no prefix in their window\nquery {:?}\nanswer {a}\nwindow {lo}..={hi}\nreference in the window:\n{}\nops:\n{:#?}\n",
                bad.len(),
                seen.len(),
                qs[*k],
                (*lo..=*hi)
                    .map(|p| format!("  {p}: {}", reference[p][*k]))
                    .collect::<Vec<_>>()
                    .join("\n"),
                ops
            );
            std::fs::write(&path, text).unwrap();
            panic!(
                "seed {seed}: {} answers of no prefix (first: {:?} = {a} in {lo}..={hi}); \
                 reproducer in {}",
                bad.len(),
                qs[*k],
                path.display()
            );
        }
    }
    eprintln!("{checked} racing answers, each the answer after a prefix in its window");
    assert!(checked > 1000, "only {checked} answers checked");
}
