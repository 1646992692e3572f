//! Linearizability against ROS 2 Jazzy's tf2: a writer *process* fills an arena (owner:
//! `tf_shm::Serve`) while two reader *processes* (joined with `tf_shm::Join`) loop over tf2's
//! queries; every answer must equal what `tf2::BufferCore` answers after some prefix of the
//! writer's inserts inside the read's window [inserts completed before the call, inserts
//! started before it returned], at a moment boundary (one batch = one `TFMessage` = one
//! moment, so a read never sees half a message; a single insert or a `clear()` is a moment).
//!
//! Scenarios: the differential test's random ones (`tests/reference/tf2_reference.py`'s
//! generator: trees, forests, statics, re-parenting, kind switches, clear()/bag loops, invalid
//! inserts and names; their inserts grouped at random into batches) and hand-shaped ones: a
//! 10 kHz frame, a depth-50 chain published one batch per tick, ring wrap, re-parenting, a
//! static↔dynamic switch, a static re-published with new values, `clear()` with a clock
//! jump, frames created while being looked up.
//!
//! Queries, on the reader paths a user has: `Buffer::lookup_transform` (names),
//! `Buffer::lookup_pair` (a `FramePair` kept across the run), `ArenaView::lookup_transform`,
//! two-time lookups, identity queries, `can_transform` (both forms), the latest common time,
//! the frame listing. The writer publishes its progress in a small shared file of the test's
//! own (two counters stored around each moment); readers log (window, query, answer).
//!
//! The checker (`tf2_linearizable/checker.cpp`, built here with the system C++ compiler against
//! the ROS 2 Jazzy tf2 of `$TF_SHM_TF2_PREFIX` / `$CMAKE_PREFIX_PATH` / `$AMENT_PREFIX_PATH`, as
//! `crates/tf_shm_c/tests/run.sh` finds it) feeds one `BufferCore` the inserts in order and
//! checks each logged read at the prefixes of its window: stamps exactly, translations and
//! rotations within 1e-9 (relative above 1 m; rotations up to sign), errors by class and text
//! (as `differential.rs` compares). A missing tf2 or compiler fails the test; it never skips.
//! Every read is held to it: no reader waits for the writer, and none answers without the
//! check.
//!
//! A Rust integration test rather than a step of `crates/tf_shm_c/tests/run.sh`: the processes
//! under test are the library's own owner and consumers (`Serve`, `Join`, `FramePair`), the
//! random scenarios come from the differential test's generator, and `scripts/test.sh` runs
//! `cargo test --workspace` with the ROS environment loaded, so the test runs in CI with the
//! other differential tests; only the reference is C++.
//!
//! On a mismatch the checker's input (the scenario, the writer's results, the failing reads)
//! is saved to `$TF_SHM_REPRO_DIR` (default: cargo's test tmpdir) and the message says how to
//! replay it: `TF_SHM_LIN_REPLAY=<file> cargo test -p tf_shm --release --test tf2_linearizable`.
//! `TF_SHM_LIN_SEED`, `TF_SHM_LIN_COUNT` (random scenarios, default 24) and `TF_SHM_LIN_ROUNDS`
//! (runs of each scenario, default 1) vary the run.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tf_shm::rendezvous::{Join, Serve};
use tf_shm::validate::TransformInput;
use tf_shm::{ArenaConfig, ArenaView, Buffer, FramePair, TransformError, TransformStamped};
use tf_shm::{ArenaWriter, SetTransformError, WriteStatus};

const TEST: &str = "racing_answers_are_tf2s_after_a_prefix_in_their_window";
const ROLE: &str = "TF_SHM_LIN_ROLE";
const READERS: usize = 2;
/// Reads each reader logs per run at most (racing reads first; a sample of the others).
const LOG_CAP: usize = 300_000;
const WAIT: Duration = Duration::from_secs(30);
const NS: i64 = 1_000_000_000;

// ---------------------------------------------------------------------------------------------
// Scenarios

#[derive(Clone, Debug, Serialize, Deserialize)]
enum Op {
    Insert {
        parent: String,
        child: String,
        stamp: i64,
        #[serde(with = "bits")]
        t: [f64; 3],
        #[serde(with = "bits")]
        q: [f64; 4],
        is_static: bool,
        authority: String,
    },
    Clear,
}

/// Numbers as their bits between the test's processes: JSON has no NaN (the invalid inserts
/// have them).
mod bits {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, const N: usize>(v: &[f64; N], s: S) -> Result<S::Ok, S::Error> {
        v.map(f64::to_bits).to_vec().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
        d: D,
    ) -> Result<[f64; N], D::Error> {
        let v = Vec::<u64>::deserialize(d)?;
        <[u64; N]>::try_from(v)
            .map(|b| b.map(f64::from_bits))
            .map_err(|_| serde::de::Error::custom(format!("{N} numbers expected")))
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
enum Query {
    Lookup(String, String, i64),
    Full(String, i64, String, i64, String),
    Can(String, String, i64),
    CanFull(String, i64, String, i64, String),
    Lct(String, String),
    Frames,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Scenario {
    name: String,
    cache_time_ns: i64,
    ops: Vec<Op>,
    /// Each moment's op count, in order (a batch of inserts, or one op).
    moments: Vec<usize>,
    queries: Vec<Query>,
    /// Moments per burst of the writer, on average.
    pace: u32,
    /// The queries are in the order of the ops they are about: readers ask those of the ops
    /// being made (else any query).
    follow: bool,
}

struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn f(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a valid number")),
        Err(_) => default,
    }
}

fn jstr(v: &Value) -> String {
    v.as_str().expect("string in scenario").to_string()
}

fn jint(v: &Value) -> i64 {
    v.as_i64().expect("integer in scenario")
}

fn jfloats<const N: usize>(v: &Value) -> [f64; N] {
    let a = v.as_array().expect("array in scenario");
    std::array::from_fn(|i| match &a[i] {
        Value::String(t) if t == "NaN" => f64::NAN,
        v => v.as_f64().expect("number in scenario"),
    })
}

/// The differential test's random scenarios (its generator, without its ROS 1 answers); the
/// inserts are grouped at random into batches of up to 4 as the bridge makes them of messages.
fn random_scenarios(seed: u64, count: usize) -> Vec<Scenario> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference");
    let script = format!(
        "import json, random, sys\nsys.path.insert(0, {dir:?})\nimport tf2_reference as r\n\
         print(json.dumps([r.gen_scenario(random.Random(f'{seed}/{{i}}'), f'random {seed}/{{i}}') \
         for i in range({count})]))",
        dir = dir.display().to_string()
    );
    // Debian's tf2_py (the generator's module imports it) without the ROS env's PYTHONPATH.
    let out = Command::new("/usr/bin/python3")
        .env_remove("PYTHONPATH")
        .args(["-c", &script])
        .output()
        .unwrap_or_else(|e| panic!("cannot run /usr/bin/python3: {e}"));
    assert!(
        out.status.success(),
        "the differential generator failed ({}): {}\ninstall Debian's tf2: apt-get install -y \
         python3-tf2 python3-geometry-msgs",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let all: Vec<Value> = serde_json::from_slice(&out.stdout).expect("generator output");
    let mut rng = Rng::new(seed ^ 0x5eed);
    all.iter()
        .map(|sc| {
            let mut ops = Vec::new();
            let mut queries = Vec::new();
            for op in sc["ops"].as_array().expect("ops") {
                let o = op.as_array().expect("op");
                match o[0].as_str().expect("op kind") {
                    "insert" => ops.push(Op::Insert {
                        parent: jstr(&o[1]),
                        child: jstr(&o[2]),
                        stamp: jint(&o[3]),
                        t: jfloats(&o[4]),
                        q: jfloats(&o[5]),
                        is_static: o[6].as_bool().expect("is_static"),
                        authority: jstr(&o[7]),
                    }),
                    "clear" => ops.push(Op::Clear),
                    "lookup" => queries.push(Query::Lookup(jstr(&o[1]), jstr(&o[2]), jint(&o[3]))),
                    "lookup_full" => queries.push(Query::Full(
                        jstr(&o[1]),
                        jint(&o[2]),
                        jstr(&o[3]),
                        jint(&o[4]),
                        jstr(&o[5]),
                    )),
                    "can" => queries.push(Query::Can(jstr(&o[1]), jstr(&o[2]), jint(&o[3]))),
                    "can_full" => queries.push(Query::CanFull(
                        jstr(&o[1]),
                        jint(&o[2]),
                        jstr(&o[3]),
                        jint(&o[4]),
                        jstr(&o[5]),
                    )),
                    "lct" => queries.push(Query::Lct(jstr(&o[1]), jstr(&o[2]))),
                    other => panic!("unknown op {other:?} from the generator"),
                }
            }
            queries.push(Query::Frames);
            let mut moments = Vec::new();
            let mut i = 0;
            while i < ops.len() {
                let mut n = 1;
                if matches!(ops[i], Op::Insert { .. }) && rng.below(2) == 0 {
                    let run = ops[i..]
                        .iter()
                        .take_while(|o| matches!(o, Op::Insert { .. }))
                        .count();
                    n = (1 + rng.below(4) as usize).min(run);
                }
                moments.push(n);
                i += n;
            }
            // Replayed after a clear() (a bag loop) until the writer has a few thousand
            // moments to race with.
            let (one_ops, one_moments) = (ops.clone(), moments.clone());
            while ops.len() < 20_000 {
                ops.push(Op::Clear);
                moments.push(1);
                ops.extend(one_ops.iter().cloned());
                moments.extend(one_moments.iter().copied());
            }
            Scenario {
                name: jstr(&sc["name"]),
                cache_time_ns: jint(&sc["cache_time_ns"]),
                ops,
                moments,
                queries,
                pace: 16,
                follow: false,
            }
        })
        .collect()
}

/// Builds a hand-shaped scenario.
struct Shape {
    sc: Scenario,
    rng: Rng,
}

impl Shape {
    fn new(name: &str, seed: u64, cache_time_ns: i64) -> Shape {
        Shape {
            sc: Scenario {
                name: name.to_string(),
                cache_time_ns,
                ops: Vec::new(),
                moments: Vec::new(),
                queries: Vec::new(),
                pace: 16,
                follow: false,
            },
            rng: Rng::new(seed ^ name.len() as u64 ^ (name.as_bytes()[0] as u64) << 20),
        }
    }

    fn sample(&mut self, parent: &str, child: &str, stamp: i64, is_static: bool) -> Op {
        let r = &mut self.rng;
        let (ax, ay, az) = (r.f(-1.0, 1.0), r.f(-1.0, 1.0), r.f(-1.0, 1.0));
        let w = r.f(0.2, 1.0);
        Op::Insert {
            parent: parent.into(),
            child: child.into(),
            stamp,
            t: [r.f(-3.0, 3.0), r.f(-3.0, 3.0), r.f(-1.0, 1.0)],
            q: [ax, ay, az, w],
            is_static,
            authority: "shape".into(),
        }
    }

    /// One moment of one op.
    fn one(&mut self, op: Op) {
        self.sc.ops.push(op);
        self.sc.moments.push(1);
    }

    fn set(&mut self, parent: &str, child: &str, stamp: i64, is_static: bool) {
        let op = self.sample(parent, child, stamp, is_static);
        self.one(op);
    }

    /// One batch (one message) of links at one stamp.
    fn message(&mut self, links: &[(&str, &str)], stamp: i64, is_static: bool) {
        for &(p, c) in links {
            let op = self.sample(p, c, stamp, is_static);
            self.sc.ops.push(op);
        }
        self.sc.moments.push(links.len());
    }

    /// The usual queries over `frames`: lookups at time 0 and at `times`, identities, two-time
    /// lookups, can_transform, the latest common time, the listing.
    fn queries(&mut self, frames: &[&str], times: &[i64], n: usize) {
        let q = &mut self.sc.queries;
        q.push(Query::Frames);
        for f in frames.iter().take(4) {
            q.push(Query::Lookup(f.to_string(), f.to_string(), 0));
            q.push(Query::Full(
                f.to_string(),
                0,
                f.to_string(),
                0,
                frames[0].to_string(),
            ));
        }
        let r = &mut self.rng;
        for _ in 0..n {
            let a = r.pick(frames).to_string();
            let b = r.pick(frames).to_string();
            let t = if r.below(2) == 0 { 0 } else { *r.pick(times) };
            let t2 = if r.below(2) == 0 { 0 } else { *r.pick(times) };
            let fixed = r.pick(frames).to_string();
            q.push(match r.below(6) {
                0 | 1 => Query::Lookup(a, b, t),
                2 => Query::Full(a, t, b, t2, fixed),
                3 => Query::Can(a, b, t),
                4 => Query::CanFull(a, t, b, t2, fixed),
                _ => Query::Lct(a, b),
            });
        }
    }
}

fn hand_shaped(seed: u64) -> Vec<Scenario> {
    let t0 = 1000 * NS;
    let mut out = Vec::new();

    // A 10 kHz frame under a 100 Hz tree with a static sensor on it, single inserts.
    let mut s = Shape::new("hot 10 kHz frame", seed, 2 * NS);
    s.set("base", "laser", 0, true);
    let mut times = Vec::new();
    for k in 0..20_000i64 {
        let t = t0 + k * 100_000;
        s.set("odom", "base", t, false);
        if k % 100 == 0 {
            s.set("map", "odom", t, false);
            s.set("base", "arm", t, false);
            times.push(t);
        }
    }
    s.queries(&["map", "odom", "base", "laser", "arm"], &times, 60);
    out.push(s.sc);

    // A depth-50 chain, one message per 100 Hz tick (robot_state_publisher's shape).
    let mut s = Shape::new("depth-50 chain in batches", seed, 10 * NS);
    let names: Vec<String> = (0..=50).map(|i| format!("c{i}")).collect();
    let links: Vec<(&str, &str)> = (0..50)
        .map(|i| (names[i].as_str(), names[i + 1].as_str()))
        .collect();
    let mut times = Vec::new();
    for k in 0..1000i64 {
        let t = t0 + k * 10_000_000;
        s.message(&links, t, false);
        times.push(t);
    }
    let frames: Vec<&str> = names.iter().map(String::as_str).collect();
    s.queries(&frames, &times, 80);
    s.sc.queries
        .push(Query::Lookup("c0".into(), "c50".into(), 0));
    s.sc.queries
        .push(Query::Lookup("c50".into(), "c0".into(), 0));
    out.push(s.sc);

    // Ring wrap: 1 kHz links with a 50 ms cache, far more samples than any ring holds.
    let mut s = Shape::new("ring wrap", seed, 50_000_000);
    let mut times = Vec::new();
    for k in 0..10_000i64 {
        let t = t0 + k * 1_000_000;
        s.set("a", "b", t, false);
        s.set("b", "c", t + 500_000, false);
        if k % 1000 == 0 {
            times.push(t);
        }
    }
    s.queries(&["a", "b", "c"], &times, 40);
    out.push(s.sc);

    // Re-parenting: x hops between a and b (and b between w and a) every few samples.
    let mut s = Shape::new("re-parenting", seed, 10 * NS);
    let mut times = Vec::new();
    s.set("w", "a", 0, true);
    for k in 0..8000i64 {
        let t = t0 + k * 1_000_000;
        let p = if (k / 5) % 2 == 0 { "a" } else { "b" };
        s.set(p, "x", t, false);
        if k % 7 == 0 {
            let pb = if (k / 21) % 2 == 0 { "w" } else { "a" };
            s.set(pb, "b", t, false);
        }
        if k % 800 == 0 {
            times.push(t);
        }
    }
    s.queries(&["w", "a", "b", "x"], &times, 40);
    out.push(s.sc);

    // Static <-> dynamic: s switches kind every few inserts (each switch drops its history).
    let mut s = Shape::new("static-dynamic switch", seed, 10 * NS);
    let mut times = Vec::new();
    s.set("w", "a", t0, false);
    for k in 0..8000i64 {
        let t = t0 + k * 1_000_000;
        s.set("a", "s", t, (k / 4) % 2 == 0);
        s.set("w", "a", t, false);
        if k % 800 == 0 {
            times.push(t);
        }
    }
    s.queries(&["w", "a", "s"], &times, 40);
    out.push(s.sc);

    // A static re-published with new values while dynamic samples flow: identity and
    // two-time queries across it.
    let mut s = Shape::new("static re-publish", seed, 10 * NS);
    let mut times = Vec::new();
    for k in 0..8000i64 {
        let t = t0 + k * 1_000_000;
        if k % 3 == 0 {
            s.set("base", "cam", 0, true);
        }
        s.set("odom", "base", t, false);
        if k % 800 == 0 {
            times.push(t);
        }
    }
    s.queries(&["odom", "base", "cam"], &times, 40);
    for f in ["odom", "base", "cam"] {
        s.sc.queries
            .push(Query::Full(f.into(), 0, f.into(), 0, "cam".into()));
        s.sc.queries
            .push(Query::Full("cam".into(), 0, f.into(), 0, "odom".into()));
    }
    out.push(s.sc);

    // clear() as a clock jump (a bag loop): the same 2 s of stamps replayed after each clear.
    let mut s = Shape::new("clear with clock jump", seed, 10 * NS);
    let mut times = Vec::new();
    s.set("map", "odom", 0, true);
    for lap in 0..30 {
        for k in 0..200i64 {
            let t = t0 + k * 10_000_000;
            s.message(&[("odom", "base"), ("base", "arm")], t, false);
            if lap == 0 && k % 20 == 0 {
                times.push(t);
            }
        }
        s.one(Op::Clear);
    }
    s.queries(&["map", "odom", "base", "arm"], &times, 40);
    out.push(s.sc);

    // A control loop's time-0 lookups over one hot link: what a lookup keeps of its last
    // answer (ArenaView's names table, a FramePair) must not outlive a sample stored while it
    // was read.
    let mut s = Shape::new("time-0 lookups of a hot link", seed, 10 * NS);
    s.set("w", "a", 0, true);
    for k in 0..20_000i64 {
        s.set("a", "b", t0 + k * 1_000_000, false);
    }
    for (t, f) in [("w", "b"), ("b", "w"), ("a", "b")] {
        s.sc.queries.push(Query::Lookup(t.into(), f.into(), 0));
    }
    s.sc.queries.push(Query::Lct("w".into(), "b".into()));
    out.push(s.sc);

    // Frame creation: each insert makes a new child, under a new parent (a new tree) or under
    // the previous insert's parent. The readers ask about the frames being made now (follow).
    let mut s = Shape::new("frame creation", seed, 10 * NS);
    for k in 0..2000i64 {
        let t = t0 + k * 1_000_000;
        let parent = format!("g{}", k - k % 2);
        let child = format!("h{k}");
        s.set(&parent, &child, t, false);
        s.sc.queries.extend([
            Query::Lookup(parent.clone(), child.clone(), 0),
            Query::Lookup(child.clone(), parent.clone(), 0),
            Query::Can(parent.clone(), child.clone(), 0),
            Query::Lct(child.clone(), parent.clone()),
            Query::Full(child.clone(), 0, parent.clone(), 0, parent.clone()),
        ]);
    }
    s.sc.follow = true;
    s.sc.pace = 1;
    out.push(s.sc);
    out
}

// ---------------------------------------------------------------------------------------------
// The progress file: counters shared by the test's processes

/// Word indices in the progress file.
const STARTED: usize = 0;
const COMPLETED: usize = 1;
const SERVING: usize = 2;
const READY: usize = 3;
const DONE: usize = 4;
const FINISHED: usize = 5;
const WORDS: usize = 8;

struct Progress {
    map: memmap2::MmapMut,
}

impl Progress {
    fn create(path: &Path) {
        std::fs::write(path, [0u8; WORDS * 8]).expect("progress file");
    }

    fn open(path: &Path) -> Progress {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .expect("progress file");
        // SAFETY: the file is the test's own, WORDS * 8 bytes long, and only ever changed
        // through the atomics below (by this test's processes) or not at all.
        let map = unsafe { memmap2::MmapMut::map_mut(&file) }.expect("map progress file");
        assert!(map.len() >= WORDS * 8);
        Progress { map }
    }

    fn word(&self, i: usize) -> &AtomicU64 {
        assert!(i < WORDS);
        // SAFETY: in bounds (above), 8-aligned (a page-aligned mapping), and every access to
        // these bytes, in any process, is atomic.
        unsafe { &*(self.map.as_ptr() as *const AtomicU64).add(i) }
    }

    fn get(&self, i: usize) -> u64 {
        self.word(i).load(Ordering::SeqCst)
    }

    fn set(&self, i: usize, v: u64) {
        self.word(i).store(v, Ordering::SeqCst);
    }

    fn wait(&self, i: usize, at_least: u64, what: &str) {
        let until = Instant::now() + WAIT;
        while self.get(i) < at_least {
            assert!(Instant::now() < until, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The processes

fn config(sc: &Scenario) -> ArenaConfig {
    ArenaConfig {
        cache_time_ns: sc.cache_time_ns,
        max_frames: 4096,
        max_rate_hz: 20_000,
        memory_budget_bytes: 48 << 20,
        ..ArenaConfig::default()
    }
}

/// What the writer tells the checker about an insert: '1' accepted, '0' refused, 'C' a
/// deviation from tf2 (history cut, capacity), '-' for a clear.
fn write_op(w: &mut ArenaWriter, op: &Op) -> char {
    match op {
        Op::Insert {
            parent,
            child,
            stamp,
            t,
            q,
            is_static,
            authority,
        } => {
            let input = TransformInput {
                frame_id: parent,
                child_frame_id: child,
                stamp: *stamp,
                translation: *t,
                rotation: *q,
            };
            match w.set_transform(&input, authority, *is_static) {
                Ok(WriteStatus::Stored | WriteStatus::DuplicateDropped) => '1',
                Ok(_) => 'C',
                Err(SetTransformError::Refused(_)) => '0',
                Err(_) => 'C',
            }
        }
        Op::Clear => {
            w.clear();
            '-'
        }
    }
}

fn writer_role(dir: &Path, sc: &Scenario, round: u64) {
    let progress = Progress::open(&dir.join("progress"));
    let mut owner = Serve::new(config(sc))
        .runtime_dir(dir.join("rt"))
        .require_create(true)
        .serve()
        .expect("serve the arena");
    progress.set(SERVING, 1);
    progress.wait(READY, READERS as u64, "the readers to join");
    let mut rng = Rng::new(round.wrapping_add(0x77));
    let mut results = String::with_capacity(sc.ops.len());
    let mut at = 0;
    for &n in &sc.moments {
        let ops = &sc.ops[at..at + n];
        progress.set(STARTED, (at + n) as u64);
        if n == 1 {
            results.push(write_op(owner.writer(), &ops[0]));
        } else {
            owner.writer().batch(|w| {
                for op in ops {
                    results.push(write_op(w, op));
                }
            });
        }
        at += n;
        progress.set(COMPLETED, at as u64);
        // Bursts of moments (a few µs, racing readers on the other core) between sleeps that
        // leave the readers the CPUs: a writer that never sleeps finishes within one
        // scheduler slice, before the readers have run.
        if rng.below(sc.pace as u64) == 0 {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    progress.set(DONE, 1);
    std::fs::write(dir.join("writes"), results).expect("write results");
    progress.wait(FINISHED, READERS as u64, "the readers to finish");
}

/// `s` with every byte outside printable ASCII, space and '%' as %XX, behind a '=' (so the
/// empty string is a token too).
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 1);
    o.push('=');
    for b in s.bytes() {
        if b.is_ascii_graphic() && b != b'%' {
            o.push(b as char);
        } else {
            let _ = write!(o, "%{b:02X}");
        }
    }
    o
}

fn lookup_answer(r: Result<TransformStamped<'_>, TransformError>) -> String {
    match r {
        Ok(t) => ok_answer(t.stamp, &t.transform),
        Err(e) => err_answer(&e),
    }
}

fn ok_answer(stamp: i64, t: &tf_shm::Transform) -> String {
    let (p, q) = (t.translation, t.rotation);
    format!(
        "ok {stamp} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
        p[0], p[1], p[2], q[0], q[1], q[2], q[3]
    )
}

fn err_answer(e: &TransformError) -> String {
    format!("err {} {}", e.class_name(), esc(&e.to_string()))
}

/// The paths a lookup at one time can take.
const LOOKUP_PATHS: [&str; 3] = ["names", "pair", "view"];

fn answer(b: &Buffer, v: &ArenaView, q: &Query, path: usize, pair: &mut FramePair) -> String {
    match q {
        Query::Lookup(t, s, time) => match path {
            0 => lookup_answer(b.lookup_transform(t, s, *time)),
            1 => match b.lookup_pair(pair, *time) {
                Ok((stamp, tr)) => ok_answer(stamp, &tr),
                Err(e) => err_answer(&e),
            },
            _ => lookup_answer(v.lookup_transform(t, s, *time)),
        },
        Query::Full(t, tt, s, st, f) => lookup_answer(b.lookup_transform_full(t, *tt, s, *st, f)),
        Query::Can(t, s, time) => match b.can_transform(t, s, *time) {
            Ok(()) => "ok".into(),
            Err(e) => err_answer(&e),
        },
        Query::CanFull(t, tt, s, st, f) => match b.can_transform_full(t, *tt, s, *st, f) {
            Ok(()) => "ok".into(),
            Err(e) => err_answer(&e),
        },
        Query::Lct(t, s) => match b.get_latest_common_time(t, s) {
            Ok(time) => format!("t {time}"),
            Err(e) => err_answer(&e),
        },
        Query::Frames => match b.all_frames_as_string() {
            Ok(s) => format!("s {}", esc(&s)),
            Err(e) => format!("err ArenaError {}", esc(&e.to_string())),
        },
    }
}

fn reader_role(dir: &Path, sc: &Scenario, reader: u64) {
    let progress = Progress::open(&dir.join("progress"));
    progress.wait(SERVING, 1, "the writer to serve");
    let buffer = Join::new()
        .runtime_dir(dir.join("rt"))
        .participant_name(&format!("reader{reader}"))
        .timeout(WAIT)
        .open()
        .expect("join the arena");
    let view = buffer.view();
    let mut pairs: Vec<FramePair> = sc
        .queries
        .iter()
        .map(|q| match q {
            Query::Lookup(t, s, _) => FramePair::new(t, s),
            _ => FramePair::new("", ""),
        })
        .collect();
    let mut rng = Rng::new(reader * 0x1234 + 99);
    let mut log = String::new();
    let (mut reads, mut racing, mut logged) = (0u64, 0u64, 0usize);
    // Reads that retried (moment_retry moved) and their time, and the others' time, ns.
    let (mut retried_reads, mut retried_ns, mut plain_ns) = (0u64, 0u64, 0u64);
    tf_shm::fast_path::reset_declines();
    progress.word(READY).fetch_add(1, Ordering::SeqCst);
    let mut record = |lo: u64, hi: u64, qi: usize, path: usize, a: &str| {
        let _ = writeln!(log, "R {lo} {hi} {qi} {path} {a}");
    };
    // A query asked again and again, as a control loop asks for its one pair: what a lookup
    // keeps between calls (the time-0 answer, the resolved pair) is used, and must hold.
    let (mut qi, mut path, mut run) = (0, 0, 0);
    while progress.get(DONE) == 0 {
        if run == 0 {
            qi = if sc.follow {
                let per_op = sc.queries.len() / sc.ops.len();
                let next = progress.get(COMPLETED) as usize + rng.below(2) as usize;
                (next * per_op + rng.below(per_op as u64) as usize).min(sc.queries.len() - 1)
            } else {
                rng.below(sc.queries.len() as u64) as usize
            };
            path = rng.below(LOOKUP_PATHS.len() as u64) as usize;
            run = 1 + rng.below(64);
        }
        run -= 1;
        let before = tf_shm::fast_path::declines();
        let lo = progress.get(COMPLETED);
        let t = Instant::now();
        let a = answer(&buffer, &view, &sc.queries[qi], path, &mut pairs[qi]);
        let ns = t.elapsed().as_nanos() as u64;
        let hi = progress.get(STARTED);
        let after = tf_shm::fast_path::declines();
        if after.moment_retry != before.moment_retry {
            retried_reads += 1;
            retried_ns += ns;
        } else {
            plain_ns += ns;
        }
        reads += 1;
        let race = hi > lo;
        racing += u64::from(race);
        if logged < LOG_CAP && (race || rng.below(32) == 0) {
            record(lo, hi, qi, path, &a);
            logged += 1;
        }
    }
    // Every query on every path once more at the end state: the sequential check.
    let end = progress.get(COMPLETED);
    for (qi, q) in sc.queries.iter().enumerate() {
        for path in 0..LOOKUP_PATHS.len() {
            if path > 0 && !matches!(q, Query::Lookup(..)) {
                break;
            }
            let a = answer(&buffer, &view, q, path, &mut pairs[qi]);
            record(end, end, qi, path, &a);
        }
    }
    let d = tf_shm::fast_path::declines();
    let head = format!(
        "D {reads} {racing} {} {retried_reads} {retried_ns} {plain_ns}\n",
        d.moment_retry
    );
    std::fs::write(dir.join(format!("reads{reader}")), head + &log).expect("write reads");
    progress.word(FINISHED).fetch_add(1, Ordering::SeqCst);
}

fn spawn_role(role: &str, dir: &Path) -> Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env("TF_SHM_LIN_DIR", dir)
        .env_remove("TF_SHM_DOMAIN")
        .env_remove("ROS_DOMAIN_ID")
        .env_remove("TF_SHM_NAME")
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn a role process")
}

fn run_role(role: &str) {
    let dir = PathBuf::from(std::env::var_os("TF_SHM_LIN_DIR").expect("TF_SHM_LIN_DIR"));
    let sc: Scenario =
        serde_json::from_slice(&std::fs::read(dir.join("scenario.json")).expect("scenario"))
            .expect("parse scenario");
    let round: u64 = std::fs::read_to_string(dir.join("round"))
        .expect("round")
        .trim()
        .parse()
        .expect("round number");
    match role {
        "writer" => writer_role(&dir, &sc, round),
        r => reader_role(
            &dir,
            &sc,
            r.trim_start_matches("reader").parse().expect("reader"),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// The checker: ROS 2 Jazzy's tf2

/// The prefixes and include directories of ROS 2 Jazzy's tf2 and the message headers its
/// `buffer_core.h` includes, found as `crates/tf_shm_c/tests/run.sh` finds them.
fn tf2_build_args() -> Vec<String> {
    let var = |n: &str| std::env::var(n).unwrap_or_default();
    let prefixes = format!(
        "{}:{}:{}",
        var("TF_SHM_TF2_PREFIX"),
        var("CMAKE_PREFIX_PATH"),
        var("AMENT_PREFIX_PATH")
    );
    let dirs: Vec<&str> = prefixes.split(':').filter(|p| !p.is_empty()).collect();
    let find = |rel: &str| dirs.iter().find(|p| Path::new(p).join(rel).exists());
    let hint = "these tests need ROS 2 Jazzy's tf2 (the ROS environment): scripts/ros-env.sh \
                setup && eval \"$(scripts/ros-env.sh env)\"";
    let tf2 = dirs
        .iter()
        .find(|p| {
            Path::new(p).join("include/tf2/tf2/buffer_core.h").exists()
                && Path::new(p).join("lib/libtf2.so").exists()
        })
        .unwrap_or_else(|| {
            panic!("tf2 (include/tf2/tf2/buffer_core.h, lib/libtf2.so) not in {prefixes:?}; {hint}")
        });
    let msgs = find("include/geometry_msgs").unwrap_or_else(|| {
        panic!("geometry_msgs' headers not in {prefixes:?}; {hint}");
    });
    let rcutils =
        find("lib/librcutils.so").unwrap_or_else(|| panic!("librcutils.so not in {prefixes:?}"));
    let mut args = vec!["-isystem".to_string(), format!("{tf2}/include/tf2")];
    for p in [
        "geometry_msgs",
        "std_msgs",
        "builtin_interfaces",
        "rosidl_runtime_cpp",
        "rosidl_runtime_c",
        "rosidl_typesupport_interface",
        "rcutils",
    ] {
        args.push("-isystem".into());
        args.push(format!("{msgs}/include/{p}"));
    }
    args.push(format!("{tf2}/lib/libtf2.so"));
    args.push(format!("{rcutils}/lib/librcutils.so"));
    args.push(format!(
        "-Wl,--disable-new-dtags,-rpath,{tf2}/lib:{rcutils}/lib"
    ));
    args
}

fn build_checker() -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tf2_linearizable/checker.cpp");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tf2_linearizable_checker");
    let args = tf2_build_args();
    let stamp = out.with_extension("args");
    let want = format!("{args:?}");
    let newer = |a: &Path, b: &Path| {
        let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        matches!((m(a), m(b)), (Some(x), Some(y)) if x >= y)
    };
    if newer(&out, &src) && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&want) {
        return out;
    }
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let status = Command::new(&cxx)
        .args(["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .args(&args)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C++ compiler {cxx:?}: {e}"));
    assert!(
        status.success(),
        "building the tf2 checker failed ({status})"
    );
    std::fs::write(&stamp, want).expect("checker stamp");
    out
}

/// The checker's input: the scenario, the writer's results, then the reads.
fn checker_input(sc: &Scenario, writes: &str, reads: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "S {}", esc(&sc.name));
    let _ = writeln!(o, "cache {}", sc.cache_time_ns);
    let mut ends = vec![false; sc.ops.len()];
    let mut at = 0;
    for &n in &sc.moments {
        at += n;
        ends[at - 1] = true;
    }
    let w: Vec<char> = writes.chars().collect();
    assert_eq!(w.len(), sc.ops.len(), "the writer reported every op");
    for (i, op) in sc.ops.iter().enumerate() {
        let e = u8::from(ends[i]);
        match op {
            Op::Insert {
                parent,
                child,
                stamp,
                t,
                q,
                is_static,
                authority,
            } => {
                let _ = writeln!(
                    o,
                    "I {} {} {stamp} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {} {e} {}",
                    esc(parent),
                    esc(child),
                    t[0],
                    t[1],
                    t[2],
                    q[0],
                    q[1],
                    q[2],
                    q[3],
                    u8::from(*is_static),
                    esc(authority),
                    w[i]
                );
            }
            Op::Clear => {
                let _ = writeln!(o, "C {e}");
            }
        }
    }
    for q in &sc.queries {
        let _ = match q {
            Query::Lookup(t, s, time) => writeln!(o, "Q lookup {} {} {time}", esc(t), esc(s)),
            Query::Full(t, tt, s, st, f) => {
                writeln!(o, "Q full {} {tt} {} {st} {}", esc(t), esc(s), esc(f))
            }
            Query::Can(t, s, time) => writeln!(o, "Q can {} {} {time}", esc(t), esc(s)),
            Query::CanFull(t, tt, s, st, f) => {
                writeln!(o, "Q canfull {} {tt} {} {st} {}", esc(t), esc(s), esc(f))
            }
            Query::Lct(t, s) => writeln!(o, "Q lct {} {}", esc(t), esc(s)),
            Query::Frames => writeln!(o, "Q frames"),
        };
    }
    o.push_str(reads);
    o
}

/// The checker's verdict on one input: its summary lines, and whether every read matched.
struct Verdict {
    ok: bool,
    out: String,
}

fn check(checker: &Path, input: &Path, repro: Option<&Path>) -> Verdict {
    let out = Command::new(checker)
        .arg(input)
        .args(repro)
        .stderr(Stdio::piped())
        .output()
        .unwrap_or_else(|e| panic!("cannot run the tf2 checker: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    match out.status.code() {
        Some(0) => Verdict {
            ok: true,
            out: text,
        },
        Some(1) => Verdict {
            ok: false,
            out: text,
        },
        _ => panic!(
            "the tf2 checker failed on {} ({}): {}\n{}",
            input.display(),
            out.status,
            text,
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn repro_dir() -> PathBuf {
    std::env::var_os("TF_SHM_REPRO_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from)
}

/// Runs one scenario once: a writer and the readers, then the checker. Returns the verdict,
/// the readers' counters (reads, racing, moment_retry, retried reads, their ns, the other
/// reads' ns) and the checker input's path.
fn session(sc: &Scenario, round: u64, checker: &Path) -> (Verdict, [u64; 6], PathBuf) {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = PathBuf::from(format!(
        "/tmp/tfl-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("session dir");
    std::fs::write(dir.join("scenario.json"), serde_json::to_vec(sc).unwrap()).unwrap();
    std::fs::write(dir.join("round"), round.to_string()).unwrap();
    Progress::create(&dir.join("progress"));
    let mut children = vec![spawn_role("writer", &dir)];
    for r in 0..READERS {
        children.push(spawn_role(&format!("reader{r}"), &dir));
    }
    for (i, c) in children.iter_mut().enumerate() {
        let st = c.wait().expect("wait for a role process");
        assert!(st.success(), "{}: role process {i} failed ({st})", sc.name);
    }
    let writes = std::fs::read_to_string(dir.join("writes")).expect("writer results");
    let mut reads = String::new();
    let mut counts = [0u64; 6];
    for r in 0..READERS {
        let text = std::fs::read_to_string(dir.join(format!("reads{r}"))).expect("reads");
        let (head, body) = text.split_once('\n').expect("reader header");
        for (c, v) in counts.iter_mut().zip(head.split(' ').skip(1)) {
            *c += v.parse::<u64>().expect("counter");
        }
        reads.push_str(body);
    }
    let input = dir.join("check.txt");
    std::fs::write(&input, checker_input(sc, &writes, &reads)).expect("checker input");
    let repro = repro_dir().join(format!(
        "tf2_linearizable-{}-{round}.txt",
        sc.name.replace([' ', '/'], "_")
    ));
    let _ = std::fs::remove_file(&repro);
    // The checker writes the scenario and the failing reads there, if any fail.
    let verdict = check(checker, &input, Some(&repro));
    let _ = std::fs::remove_dir_all(&dir);
    (verdict, counts, repro)
}

#[test]
fn racing_answers_are_tf2s_after_a_prefix_in_their_window() {
    if let Ok(role) = std::env::var(ROLE) {
        run_role(&role);
        std::process::exit(0);
    }
    let checker = build_checker();
    if let Some(path) = std::env::var_os("TF_SHM_LIN_REPLAY") {
        let v = check(&checker, Path::new(&path), None);
        print!("{}", v.out);
        assert!(v.ok, "reads of no prefix in {}", Path::new(&path).display());
        return;
    }
    let seed = env_or("TF_SHM_LIN_SEED", 20261202u64);
    let count = env_or("TF_SHM_LIN_COUNT", 24usize);
    let rounds = env_or("TF_SHM_LIN_ROUNDS", 1u64);
    let started = Instant::now();
    let mut scenarios = random_scenarios(seed, count);
    scenarios.extend(hand_shaped(seed));
    let mut failures = Vec::new();
    let mut total = [0u64; 6];
    let mut stats: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    let mut report = String::new();
    for round in 0..rounds {
        for sc in &scenarios {
            let (v, counts, repro) = session(sc, round, &checker);
            for (t, c) in total.iter_mut().zip(counts) {
                *t += c;
            }
            // "STAT <class> <checked> <racing> <failed> <stale>" lines, per query kind and path.
            for line in v.out.lines() {
                let w: Vec<&str> = line.split(' ').collect();
                if w[0] == "STAT" && w.len() == 6 {
                    let key = if sc.name.starts_with("random") {
                        format!("random / {}", w[1])
                    } else {
                        format!("{} / {}", sc.name, w[1])
                    };
                    let e = stats.entry(key).or_default();
                    for (x, y) in e.iter_mut().zip(&w[2..]) {
                        *x += y.parse::<u64>().expect("STAT count");
                    }
                }
            }
            if !v.ok && failures.len() < 8 {
                let _ = writeln!(
                    report,
                    "\n--- {} (round {round}): reproducer {}\n{}",
                    sc.name,
                    repro.display(),
                    v.out
                        .lines()
                        .filter(|l| !l.starts_with("STAT"))
                        .take(12)
                        .collect::<Vec<_>>()
                        .join("\n")
                );
            }
            if !v.ok {
                failures.push(repro);
            }
        }
    }
    let mut table = String::new();
    for (k, [checked, racing, failed, stale]) in &stats {
        if *failed > 0 || std::env::var_os("TF_SHM_LIN_TABLE").is_some() {
            let _ = writeln!(
                table,
                "  {k}: {checked} checked, {racing} racing, {failed} of no prefix ({stale} stale)"
            );
        }
    }
    let [reads, racing, retry, retried, retried_ns, plain_ns] = total;
    println!(
        "tf2_linearizable (seed {seed}, {} scenarios x {rounds}): {reads} reads, {racing} \
         racing the writer, moment_retry {retry} ({:.3}% of reads; a read that retried took \
         {:.2} us on average, one that did not {:.3} us); {} runs with reads of no prefix; \
         {:.1} s\n{table}",
        scenarios.len(),
        100.0 * retry as f64 / reads.max(1) as f64,
        retried_ns as f64 / retried.max(1) as f64 / 1e3,
        plain_ns as f64 / (reads - retried).max(1) as f64 / 1e3,
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    let _ = std::io::stdout().flush();
    assert!(
        failures.is_empty(),
        "{} runs gave answers tf2 gives at no prefix of their window (the first 8 shown):{report}\n{table}\nreplay \
         one: TF_SHM_LIN_REPLAY=<reproducer> cargo test -p tf_shm --release --test \
         tf2_linearizable -- --nocapture",
        failures.len()
    );
    assert!(racing > 1000, "only {racing} reads raced the writer");
}
