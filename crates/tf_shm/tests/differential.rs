//! Differential test: tf_shm's lookups must give exactly tf2's answers.
//!
//! `tests/reference/tf2_reference.py` (run with Debian's `/usr/bin/python3`) generates random
//! scenarios — trees up to depth 20, forests, dynamic frames with jitter and out-of-order
//! arrival, statics, re-parenting, two publishers, clear()/bag loops, kind switches, invalid
//! inserts and names — and answers every query with a real tf2 `BufferCore` (ROS 1 tf2 0.7.6
//! from `python3-tf2`), converted to ROS 2 Jazzy where the two differ (its docstring lists how).
//! This test replays each scenario into a fresh in-memory arena and compares every answer:
//! insert accepted or not, stamps exactly, translations within 1e-9 (relative above 1 m),
//! rotations within 1e-9 component-wise up to sign, error class and exact text.
//!
//! Also replays every scenario under `tests/reference/regressions/`.
//!
//! `TF_SHM_DIFF_SEED` / `TF_SHM_DIFF_COUNT` override the seed (default 20260611) and the number
//! of random scenarios (default 10000). Needs `apt-get install python3-tf2
//! python3-geometry-msgs`; without them the test fails (it never skips).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Value};
use tf_shm::arena::ring_bytes;
use tf_shm::validate::TransformInput;
use tf_shm::TransformStamped;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, FramePair, TransformError};
use tf_shm::{SetTransformError, WriteStatus};

const DEFAULT_SEED: u64 = 20260611;
const DEFAULT_COUNT: usize = 10_000;
/// Above this share of excluded queries ROS 1 stops being a useful reference.
const MAX_EXCLUDED_SHARE: f64 = 0.05;
const TOLERANCE: f64 = 1e-9;
const PYTHON: &str = "/usr/bin/python3";
const INSTALL_HINT: &str = "install Debian's tf2: apt-get install -y python3-tf2 \
                            python3-geometry-msgs (the test runs /usr/bin/python3)";

#[derive(Deserialize)]
struct Reference {
    summary: Summary,
    scenarios: Vec<Scenario>,
}

#[derive(Deserialize)]
struct Summary {
    scenarios: usize,
    inserts: usize,
    queries: usize,
    compared: usize,
    excluded: BTreeMap<String, usize>,
    derived: BTreeMap<String, usize>,
}

#[derive(Deserialize)]
struct Scenario {
    name: String,
    cache_time_ns: i64,
    ops: Vec<Value>,
    expect: Vec<Value>,
}

struct Mismatch {
    scenario: usize,
    op: usize,
    category: String,
    expected: Value,
    got: String,
}

#[derive(Default)]
struct Tally {
    inserts: usize,
    compared: usize,
    excluded: usize,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a valid number")),
        Err(_) => default,
    }
}

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference")
}

/// Runs the Python reference; returns the path of its output.
fn generate(seed: u64, count: usize) -> PathBuf {
    // Debian's ROS 1 tf2_py from its own dist-packages: the ROS env's PYTHONPATH holds ROS 2
    // Jazzy's tf2_py and message packages, which would shadow it.
    let probe = Command::new(PYTHON)
        .env_remove("PYTHONPATH")
        .args([
            "-c",
            "import tf2_py, rospy; from geometry_msgs.msg import TransformStamped",
        ])
        .output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "{PYTHON} cannot import tf2_py/rospy/geometry_msgs: {}\n{INSTALL_HINT}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => panic!("cannot run {PYTHON}: {e}\n{INSTALL_HINT}"),
    }
    let out_path =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tf2_reference_{seed}_{count}.json"));
    let dir = reference_dir();
    let status = Command::new(PYTHON)
        .env_remove("PYTHONPATH")
        .arg(dir.join("tf2_reference.py"))
        .args(["--seed", &seed.to_string(), "--count", &count.to_string()])
        .arg("--out")
        .arg(&out_path)
        .arg("--regressions")
        .arg(dir.join("regressions"))
        .status()
        .unwrap_or_else(|e| panic!("cannot run tf2_reference.py: {e}"));
    match status.code() {
        Some(0) => {}
        Some(3) => panic!("tf2_reference.py cannot import tf2\n{INSTALL_HINT}"),
        _ => panic!("tf2_reference.py failed ({status}); its stderr is above"),
    }
    out_path
}

fn s(v: &Value) -> &str {
    v.as_str().expect("string in scenario")
}

fn int(v: &Value) -> i64 {
    v.as_i64().expect("integer in scenario")
}

fn floats<const N: usize>(v: &Value) -> [f64; N] {
    let a = v.as_array().expect("array in scenario");
    assert_eq!(a.len(), N, "array of {N} numbers expected");
    // JSON has no NaN; the reference spells it "NaN".
    std::array::from_fn(|i| match &a[i] {
        Value::String(t) if t == "NaN" => f64::NAN,
        v => v.as_f64().expect("number in scenario"),
    })
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= TOLERANCE * want.abs().max(1.0)
}

fn describe_err(e: &TransformError) -> String {
    format!("{} {:?}", e.class_name(), e.to_string())
}

fn describe_ok(t: &TransformStamped<'_>) -> String {
    format!(
        "stamp {} translation {:?} rotation {:?}",
        t.stamp, t.transform.translation, t.transform.rotation
    )
}

/// Compares a lookup; `Err((category, got))` on mismatch.
fn check_lookup(
    want: &Value,
    got: Result<TransformStamped<'_>, TransformError>,
    target: &str,
    source: &str,
) -> Result<(), (&'static str, String)> {
    match (want.get("e"), got) {
        (None, Ok(t)) => {
            let stamp = want["s"].as_i64().expect("stamp");
            let tr: [f64; 3] = floats(&want["t"]);
            let q: [f64; 4] = floats(&want["q"]);
            let g = t.transform;
            let got = || describe_ok(&t);
            if t.frame_id != target || t.child_frame_id != source {
                return Err(("frames", got()));
            }
            if t.stamp != stamp {
                return Err(("stamp", got()));
            }
            if !(0..3).all(|i| close(g.translation[i], tr[i])) {
                return Err(("translation", got()));
            }
            // tf2 ROS 1 and ROS 2 may return q or -q (docs/tf2-semantics.md §6.4); both are unit length.
            let same = (0..4).all(|i| close(g.rotation[i], q[i]));
            let flipped = (0..4).all(|i| close(g.rotation[i], -q[i]));
            let norm = g.rotation.iter().map(|c| c * c).sum::<f64>().sqrt();
            if !(same || flipped) || (norm - 1.0).abs() > TOLERANCE {
                return Err(("rotation", got()));
            }
            Ok(())
        }
        (None, Err(e)) => Err(("ok vs error", describe_err(&e))),
        (Some(_), Ok(t)) => Err(("error vs ok", describe_ok(&t))),
        (Some(class), Err(e)) => {
            if e.class_name() != class {
                Err(("class", describe_err(&e)))
            } else if e.to_string() != want["m"] {
                Err(("text", describe_err(&e)))
            } else {
                Ok(())
            }
        }
    }
}

fn check_can(want: &Value, got: Result<(), TransformError>) -> Result<(), (&'static str, String)> {
    match (want["ok"].as_bool().expect("can ok"), got) {
        (true, Ok(())) => Ok(()),
        (true, Err(e)) => Err(("ok vs error", describe_err(&e))),
        (false, Ok(())) => Err(("error vs ok", "Ok(())".into())),
        (false, Err(e)) => {
            if want["e"].as_str().is_some_and(|c| c != e.class_name()) {
                Err(("class", describe_err(&e)))
            } else if e.to_string() != want["m"] {
                Err(("text", describe_err(&e)))
            } else {
                Ok(())
            }
        }
    }
}

fn check_lct(want: &Value, got: Result<i64, TransformError>) -> Result<(), (&'static str, String)> {
    match (want.get("e"), got) {
        (None, Ok(t)) if Some(t) == want["s"].as_i64() => Ok(()),
        (None, Ok(t)) => Err(("stamp", t.to_string())),
        (None, Err(e)) => Err(("ok vs error", describe_err(&e))),
        (Some(_), Ok(t)) => Err(("error vs ok", t.to_string())),
        (Some(class), Err(e)) if e.class_name() != class => Err(("class", describe_err(&e))),
        (Some(_), Err(e)) if e.to_string() != want["m"] => Err(("text", describe_err(&e))),
        (Some(_), Err(_)) => Ok(()),
    }
}

fn check_insert(
    want: &Value,
    got: Result<WriteStatus, SetTransformError>,
) -> Result<(), (&'static str, String)> {
    let want_ok = want["ok"].as_bool().expect("insert ok");
    match got {
        // tf2 keeps every sample within the cache time; a cut history is a deviation.
        Ok(WriteStatus::StoredHistoryCut) => Err(("history cut", "StoredHistoryCut".into())),
        Ok(_) if want_ok => Ok(()),
        Ok(st) => Err(("accepted vs refused", format!("{st:?}"))),
        Err(SetTransformError::Capacity(c)) => Err(("capacity", c.to_string())),
        Err(e) if want_ok => Err(("refused vs accepted", e.to_string())),
        Err(_) => Ok(()),
    }
}

/// Applies one op; inserts and queries are checked against `want`.
fn apply(
    writer: &mut ArenaWriter,
    view: &ArenaView,
    op: &[Value],
    want: &Value,
    tally: &mut Tally,
    pairs: &mut HashMap<(String, String), FramePair>,
) -> Result<(), (&'static str, String)> {
    let kind = s(&op[0]);
    if want.get("x").is_some() {
        tally.excluded += 1;
        return Ok(());
    }
    match kind {
        "insert" => {
            tally.inserts += 1;
            let input = TransformInput {
                frame_id: s(&op[1]),
                child_frame_id: s(&op[2]),
                stamp: int(&op[3]),
                translation: floats(&op[4]),
                rotation: floats(&op[5]),
            };
            let is_static = op[6].as_bool().expect("is_static");
            return check_insert(want, writer.set_transform(&input, s(&op[7]), is_static));
        }
        "clear" => {
            writer.clear();
            return Ok(());
        }
        _ => {}
    }
    tally.compared += 1;
    match kind {
        "lookup" => {
            let (t, src, time) = (s(&op[1]), s(&op[2]), int(&op[3]));
            // tf2's walk itself, then the names API twice (its first call may resolve and
            // compile this thread's cached pair, the second goes through it).
            check_lookup(
                want,
                tf_shm::walk::lookup_transform(view, t, src, time),
                t,
                src,
            )
            .map_err(|(what, got)| (if what == "text" { "walk text" } else { "walk" }, got))?;
            for _ in 0..2 {
                check_lookup(want, view.lookup_transform(t, src, time), t, src)?;
            }
            // The hot-loop form, with a pair kept across the scenario's inserts and clears so
            // what it recorded (ids, where the walk's passes met) goes stale. Both calls must
            // give tf2's answer.
            let pair = pairs
                .entry((t.to_string(), src.to_string()))
                .or_insert_with(|| FramePair::new(t, src));
            for _ in 0..2 {
                let got = view
                    .lookup_pair(pair, time)
                    .map(|(stamp, transform)| TransformStamped {
                        stamp,
                        frame_id: t,
                        child_frame_id: src,
                        transform,
                    });
                check_lookup(want, got, t, src).map_err(|(what, got)| {
                    (if what == "text" { "pair text" } else { "pair" }, got)
                })?;
            }
            Ok(())
        }
        "lookup_full" => {
            let (t, src) = (s(&op[1]), s(&op[3]));
            let got = view.lookup_transform_full(t, int(&op[2]), src, int(&op[4]), s(&op[5]));
            check_lookup(want, got, t, src)
        }
        "can" => check_can(want, view.can_transform(s(&op[1]), s(&op[2]), int(&op[3]))),
        "can_full" => check_can(
            want,
            view.can_transform_full(s(&op[1]), int(&op[2]), s(&op[3]), int(&op[4]), s(&op[5])),
        ),
        "lct" => check_lct(want, view.get_latest_common_time(s(&op[1]), s(&op[2]))),
        other => panic!("unknown op {other:?} in reference output"),
    }
}

/// An arena just big enough for the scenario: creating one costs time linear in its size, and
/// the test creates thousands. Rings grow 16, 32, … and old rings are not reused, so a frame
/// with `n` samples may use up to twice the ring of the next power of two above `n`.
fn config_for(sc: &Scenario) -> ArenaConfig {
    let mut samples: BTreeMap<&str, usize> = BTreeMap::new();
    let mut names = std::collections::BTreeSet::new();
    for op in &sc.ops {
        if s(&op[0]) == "insert" {
            names.insert(s(&op[1]));
            names.insert(s(&op[2]));
            *samples.entry(s(&op[2])).or_default() += 1;
        }
    }
    let rings: usize = samples
        .values()
        .map(|&n| 2 * ring_bytes((n + 1).next_power_of_two().max(16)))
        .sum();
    let max_frames = (names.len() as u32 + 2).max(8);
    ArenaConfig {
        cache_time_ns: sc.cache_time_ns,
        max_frames,
        memory_budget_bytes: (64 << 10) + max_frames as usize * (512 + ring_bytes(16)) + 2 * rings,
        ..Default::default()
    }
}

fn replay(index: usize, sc: &Scenario, tally: &mut Tally, mismatches: &mut Vec<Mismatch>) {
    let config = config_for(sc);
    let (mut writer, view) = Arena::in_memory(&config).expect("in-memory arena");
    let mut pairs = HashMap::new();
    assert_eq!(
        sc.ops.len(),
        sc.expect.len(),
        "{}: ops and answers differ in length",
        sc.name
    );
    for (i, (op, want)) in sc.ops.iter().zip(&sc.expect).enumerate() {
        let op = op.as_array().expect("op is an array");
        if let Err((what, got)) = apply(&mut writer, &view, op, want, tally, &mut pairs) {
            mismatches.push(Mismatch {
                scenario: index,
                op: i,
                category: format!("{} {what}", s(&op[0])),
                expected: want.clone(),
                got,
            });
        }
    }
}

/// The scenario up to the failing op, without the other queries (they change nothing), in the
/// format of `tests/reference/regressions/*.json`.
fn minimised(sc: &Scenario, op: usize) -> Value {
    let is_query = |v: &Value| !matches!(s(&v[0]), "insert" | "clear");
    let ops: Vec<&Value> = sc.ops[..op]
        .iter()
        .filter(|v| !is_query(v))
        .chain(std::iter::once(&sc.ops[op]))
        .collect();
    json!({ "name": sc.name, "cache_time_ns": sc.cache_time_ns, "ops": ops })
}

#[test]
fn lookups_match_tf2() {
    let seed = env_or("TF_SHM_DIFF_SEED", DEFAULT_SEED);
    let count = env_or("TF_SHM_DIFF_COUNT", DEFAULT_COUNT);

    let started = Instant::now();
    let path = generate(seed, count);
    let generated = started.elapsed();
    let started = Instant::now();
    let bytes = std::fs::read(&path).expect("read the reference output");
    let reference: Reference = serde_json::from_slice(&bytes).expect("parse the reference output");
    drop(bytes);
    let parsed = started.elapsed();

    // Scenarios are independent: replay them on every core.
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = reference.scenarios.len().div_ceil(threads).max(1);
    let parts: Vec<(Tally, Vec<Mismatch>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = reference
            .scenarios
            .chunks(chunk)
            .enumerate()
            .map(|(c, scenarios)| {
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    let mut mismatches = Vec::new();
                    for (i, sc) in scenarios.iter().enumerate() {
                        replay(c * chunk + i, sc, &mut tally, &mut mismatches);
                    }
                    (tally, mismatches)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("replay thread"))
            .collect()
    });
    let mut tally = Tally::default();
    let mut mismatches = Vec::new();
    for (t, m) in parts {
        tally.inserts += t.inserts;
        tally.compared += t.compared;
        tally.excluded += t.excluded;
        mismatches.extend(m);
    }
    let replayed = started.elapsed();

    let sum = &reference.summary;
    let excluded: usize = sum.excluded.values().sum();
    println!(
        "differential (seed {seed}): {} scenarios, {} inserts, {} queries: {} compared, \
         {excluded} excluded {:?}, derived through variants {:?}; {} mismatches; \
         tf2 reference {:.1} s, parse {:.1} s, replay {:.1} s",
        sum.scenarios,
        sum.inserts,
        sum.queries,
        tally.compared,
        sum.excluded,
        sum.derived,
        mismatches.len(),
        generated.as_secs_f64(),
        parsed.as_secs_f64(),
        replayed.as_secs_f64()
    );
    assert_eq!(tally.inserts, sum.inserts, "inserts replayed vs generated");
    assert_eq!(
        tally.compared, sum.compared,
        "queries compared vs generated"
    );
    assert_eq!(tally.excluded, excluded, "queries excluded vs generated");

    let mut report = String::new();
    if !mismatches.is_empty() {
        let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
        for m in &mismatches {
            *by_category.entry(&m.category).or_default() += 1;
        }
        for m in mismatches.iter().take(20) {
            let sc = &reference.scenarios[m.scenario];
            let _ = writeln!(
                report,
                "\n--- {} op {} ({}): {}\n    tf2 (ROS 2): {}\n    tf_shm:      {}\n    scenario: {}",
                sc.name,
                m.op,
                m.category,
                sc.ops[m.op],
                m.expected,
                m.got,
                minimised(sc, m.op)
            );
        }
        let _ = writeln!(report, "\nmismatches per category: {by_category:?}");
    }
    assert!(
        mismatches.is_empty(),
        "{} answers differ from tf2 (first 20 shown):{report}",
        mismatches.len()
    );
    let share = excluded as f64 / sum.queries.max(1) as f64;
    assert!(
        share <= MAX_EXCLUDED_SHARE,
        "{:.1}% of queries excluded (ROS 1 not a reference for them): {:?}; the generator must \
         produce fewer of these cases",
        share * 100.0,
        sum.excluded
    );
}
