//! `tf_shm replay` and `tf_shm record` as real processes on bags written by the reference MCAP
//! tools: the served arena answers as Debian's tf2 fed the same messages; a loop clears dynamic
//! history and keeps statics; record → replay gives back the same transforms in a file the
//! Python `mcap` reader accepts; bad bags are refused before anything is served.

mod common;
#[path = "../../tf_shm_bag/tests/support/mod.rs"]
mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::running::{replay, replay_json, signal, Running};
use common::TestDir;
use tf_shm::store::FrameStore;
use tf_shm::{Buffer, Join};

fn buffer(dir: &TestDir) -> Buffer {
    Join::new()
        .runtime_dir(dir.path())
        .await_open(Duration::from_secs(20))
        .expect("open the replayed arena")
}

fn path_str(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn replayed_arena_answers_as_tf2() {
    let dir = TestDir::new("replay");
    let bag = support::bag("pr2_zstd.mcap");
    let r = replay(
        &dir,
        &[
            "--as-fast-as-possible",
            "--hold",
            "--cache-time",
            "30",
            path_str(&bag),
        ],
    );
    let done = r.wait_for("replayed", Duration::from_secs(30));
    assert!(done.contains(" 0 refused"), "{done}");
    r.wait_for("serving until interrupted", Duration::from_secs(5));
    let b = buffer(&dir);
    let cases = support::cases();
    let diffs: Vec<String> = cases
        .iter()
        .filter_map(|c| support::check(c, b.lookup_transform(&c.target, &c.source, c.time)))
        .collect();
    assert!(
        diffs.is_empty(),
        "{} of {} lookups differ from tf2:\n{}",
        diffs.len(),
        cases.len(),
        diffs[..diffs.len().min(10)].join("\n")
    );
    // The other commands see it like a bridge's arena.
    let out = dir.run(&["lookup", "odom", "base_footprint", "--time", "1001.5"]);
    assert_eq!(out.0.status.code(), Some(0), "{}", out.stderr());
    drop(b);
    r.stop();
    let gone = Join::new().runtime_dir(dir.path()).open();
    assert!(gone.is_err(), "the arena outlived tf_shm replay");
}

#[test]
fn loop_clears_dynamic_history_and_keeps_statics() {
    let dir = TestDir::new("loop");
    let bag = support::bag("short.mcap");
    let info = tf_shm_bag::scan(&bag, &Default::default()).unwrap();
    let st = &info.static_messages[0].transforms[0];
    let (sp, sc) = (st.header.frame_id.clone(), st.child_frame_id.clone());
    let r = replay(&dir, &["--loop", "--rate", "4", path_str(&bag)]);
    let b = buffer(&dir);
    let end = Instant::now() + Duration::from_secs(20);
    // The arena is served from its creation; the statics land right after.
    while b.lookup_transform(&sp, &sc, 0).is_err() {
        assert!(Instant::now() < end, "statics never arrived");
        std::thread::sleep(Duration::from_millis(1));
    }
    let (mut newest_seen, mut went_back) = (i64::MIN, false);
    let mut clears = 0;
    while Instant::now() < end && (clears < 2 || !went_back) {
        let v = b.view();
        clears = v.stats().clears_total;
        if let Some(id) = v.frame_id("base_footprint").unwrap() {
            if let Some(span) = v.history_span(id).unwrap() {
                went_back |= span.newest < newest_seen;
                newest_seen = span.newest;
                // Never more than one pass of history: each pass starts from empty.
                let (lo, hi) = info.stamp_range.unwrap();
                assert!(span.oldest >= lo && span.newest <= hi);
            }
        }
        b.lookup_transform(&sp, &sc, 0)
            .unwrap_or_else(|e| panic!("static {sp} <- {sc} lost: {e}"));
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(clears >= 2, "no clear per pass: {clears}");
    assert!(went_back, "dynamic history never restarted");
    drop(b);
    r.stop();
}

/// A sample as names and numbers: stamp, parent, translation and rotation.
type NamedSample = (i64, String, [f64; 7]);

/// Every frame's samples, by name, from an in-memory load.
fn samples_by_name(path: &std::path::Path) -> Vec<(String, Vec<NamedSample>)> {
    let b = tf_shm_bag::load(path).unwrap_or_else(|e| panic!("{e}"));
    let v = &b.view;
    let mut out = Vec::new();
    for id in 1..v.frame_count() {
        let name = v.frame_name(id).unwrap().unwrap();
        let s = v
            .frame_samples(id)
            .unwrap()
            .into_iter()
            .map(|s| {
                let (t, q) = (s.transform.translation, s.transform.rotation);
                let parent = v.frame_name(s.parent).unwrap().unwrap();
                (s.stamp, parent, [t[0], t[1], t[2], q[0], q[1], q[2], q[3]])
            })
            .collect();
        out.push((name, s));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn record_then_replay_gives_the_same_transforms() {
    let dir = TestDir::new("record");
    let bag = support::bag("short.mcap");
    let out = support::bags().join("recorded.mcap");
    let _ = std::fs::remove_file(&out);
    // A cache time shorter than the replay: the recorder must keep up, not copy at the end.
    let r = replay(
        &dir,
        &[
            "--rate",
            "0.5",
            "--cache-time",
            "0.5",
            "--hold",
            path_str(&bag),
        ],
    );
    drop(buffer(&dir));
    let rec = dir
        // --duration bounds it should the test fail before its SIGINT.
        .cmd(&[
            "record",
            "-q",
            "--poll",
            "50",
            "--duration",
            "60",
            path_str(&out),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tf_shm record");
    r.wait_for("serving until interrupted", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(200));
    signal(&rec, rustix::process::Signal::INT);
    let o = rec.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "tf_shm record: {text}");
    assert!(text.contains(" 0 missed"), "{text}");
    r.stop();

    let want = samples_by_name(&bag);
    let got = samples_by_name(&out);
    assert_eq!(want.len(), got.len());
    for ((wn, ws), (gn, gs)) in want.iter().zip(&got) {
        assert_eq!(wn, gn);
        assert_eq!(ws.len(), gs.len(), "{wn}: sample count");
        for (w, g) in ws.iter().zip(gs) {
            assert_eq!((w.0, &w.1), (g.0, &g.1), "{wn}");
            let d = (0..7).map(|i| (w.2[i] - g.2[i]).abs()).fold(0.0, f64::max);
            assert!(d <= 1e-15, "{wn} at {}: {:?} vs {:?}", w.0, w.2, g.2);
        }
    }

    // The reference reader takes the file: ros2 profile, the TFMessage schema, indexed, and
    // rosbag2 Jazzy's metadata (version 9: QoS policies by name) per channel and in the
    // `rosbag2` metadata record.
    let check = r#"
import sys, yaml
from mcap.reader import make_reader
from mcap_ros2.reader import read_ros2_messages
INF = {"sec": 9223372036, "nsec": 854775807}
def qos(durability):
    return [{"history": "unknown", "depth": 0, "reliability": "reliable", "durability": durability,
             "deadline": INF, "lifespan": INF, "liveliness": "automatic",
             "liveliness_lease_duration": INF, "avoid_ros_namespace_conventions": False}]
HASH = "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087"
want_qos = {"/tf": qos("volatile"), "/tf_static": qos("transient_local")}
with open(sys.argv[1], "rb") as f:
    r = make_reader(f)
    h = r.get_header()
    s = r.get_summary()
    assert h.profile == "ros2", h.profile
    assert s is not None and s.chunk_indexes, "no summary or chunk index"
    names = {(c.topic, s.schemas[c.schema_id].name, s.schemas[c.schema_id].encoding, c.message_encoding) for c in s.channels.values()}
    for c in s.channels.values():
        assert yaml.safe_load(c.metadata["offered_qos_profiles"]) == want_qos[c.topic], c.metadata
        assert c.metadata["topic_type_hash"] == HASH, c.metadata
    records = [m for m in r.iter_metadata() if m.name == "rosbag2"]
    assert len(records) == 1, records
    meta = yaml.safe_load(records[0].metadata["serialized_metadata"])
n = {"/tf": 0, "/tf_static": 0}
msgs = {"/tf": 0, "/tf_static": 0}
times = []
for m in read_ros2_messages(sys.argv[1]):
    n[m.channel.topic] += len(m.ros_msg.transforms)
    msgs[m.channel.topic] += 1
    times.append(m.log_time_ns)
assert meta["version"] == 9 and meta["storage_identifier"] == "mcap", meta
assert meta["ros_distro"] == "jazzy" and meta["custom_data"] is None, meta
assert meta["message_count"] == sum(msgs.values()), meta
assert meta["starting_time"]["nanoseconds_since_epoch"] == min(times), meta
assert meta["duration"]["nanoseconds"] == max(times) - min(times), meta
file = sys.argv[1].rsplit("/", 1)[-1]
assert meta["relative_file_paths"] == [file] and meta["files"][0]["path"] == file, meta
assert meta["files"][0]["message_count"] == meta["message_count"], meta
for t in meta["topics_with_message_count"]:
    tm = t["topic_metadata"]
    assert t["message_count"] == msgs[tm["name"]], t
    assert tm["type"] == "tf2_msgs/msg/TFMessage" and tm["serialization_format"] == "cdr", tm
    assert tm["offered_qos_profiles"] == want_qos[tm["name"]], tm
    assert tm["type_description_hash"] == HASH, tm
assert sorted(t["topic_metadata"]["name"] for t in meta["topics_with_message_count"]) == ["/tf", "/tf_static"]
print(sorted(names), n["/tf"], n["/tf_static"])
"#;
    let py = support::run_python(&["-c".as_ref(), check.as_ref(), out.as_os_str()]);
    let line = String::from_utf8_lossy(&py.stdout).trim().to_string();
    let info = tf_shm_bag::scan(&bag, &Default::default()).unwrap();
    assert_eq!(
        line,
        format!(
            "[('/tf', 'tf2_msgs/msg/TFMessage', 'ros2msg', 'cdr'), ('/tf_static', \
             'tf2_msgs/msg/TFMessage', 'ros2msg', 'cdr')] {} {}",
            info.dynamic_transforms, info.static_transforms
        )
    );
}

#[test]
fn bad_bags_are_refused_before_serving() {
    let dir = TestDir::new("badbag");
    // A live arena must not be touched by a failed replay.
    let mut owner = dir.owner(tf_shm::ArenaConfig::default());
    owner
        .writer()
        .set_transform(
            &tf_shm::validate::TransformInput {
                frame_id: "map",
                child_frame_id: "robot",
                stamp: 5,
                translation: [1.0, 0.0, 0.0],
                rotation: [0.0, 0.0, 0.0, 1.0],
            },
            "test",
            true,
        )
        .unwrap();
    let full = support::bag("pr2_zstd.mcap");
    let bytes = std::fs::read(&full).unwrap();
    let cut = support::bags().join("cli_cut.mcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    for (bag, says) in [
        (cut, "ends early"),
        (
            support::bag("wrong_schema.mcap"),
            "geometry_msgs/msg/PoseStamped",
        ),
        (support::bag("no_tf.mcap"), "no TF in this bag"),
        (support::bag("undecodable.mcap"), "does not decode"),
    ] {
        let run = dir.run(&["replay", "--as-fast-as-possible", path_str(&bag)]);
        assert_eq!(run.0.status.code(), Some(3), "{}", run.stderr());
        let err = run.stderr();
        assert!(
            err.starts_with(&format!("tf_shm replay: {}: ", bag.display())) && err.contains(says),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let t = owner.view().lookup_transform("map", "robot", 0).unwrap();
    assert_eq!(t.transform.translation, [1.0, 0.0, 0.0]);
    assert_eq!(owner.view().frame_count(), 3);
}

#[test]
fn record_refuses_to_overwrite_and_needs_an_arena() {
    let dir = TestDir::new("recbad");
    let out = support::bags().join("existing.mcap");
    std::fs::write(&out, b"keep me").unwrap();
    let run = dir.run(&["record", path_str(&out)]);
    assert_eq!(run.0.status.code(), Some(3), "{}", run.stderr());
    assert!(run.stderr().contains("--force"), "{}", run.stderr());
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    // --force, but no arena is served here: nothing written either.
    let run = dir.run(&["record", "--force", path_str(&out)]);
    assert_eq!(run.0.status.code(), Some(3), "{}", run.stderr());
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
}

/// The JSON event `name` from a `--json` replay, with the events before it.
fn wait_for_event(r: &Running, name: &str, timeout: Duration) -> (serde_json::Value, Vec<String>) {
    let end = Instant::now() + timeout;
    let mut before = Vec::new();
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let l = r
            .lines
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("no {name} event from tf_shm replay: {e}"));
        let v: serde_json::Value =
            serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}"));
        let event = v["event"].as_str().expect("an event name").to_string();
        if event == name {
            return (v, before);
        }
        before.push(event);
    }
}

/// A bag recorded across a simulation reset, replayed as `ros2 bag play` runs it for a
/// `use_sim_time` tf2_ros node: the served arena is cleared at the backward /clock jump and
/// answers as tf2 does after it (expect_reset.json); the --json events say so, with the
/// end-of-bag event last.
#[test]
fn replay_follows_the_bags_clock_across_a_reset() {
    let dir = TestDir::new("reset");
    let bag = support::bag("reset.mcap");
    let r = replay_json(
        &dir,
        &[
            "--as-fast-as-possible",
            "--hold",
            "--cache-time",
            "10",
            path_str(&bag),
        ],
    );
    let (serving, _) = wait_for_event(&r, "serving", Duration::from_secs(30));
    assert_eq!(serving["clock_jumps"], 1, "{serving}");
    let (end, before) = wait_for_event(&r, "end_of_bag", Duration::from_secs(30));
    assert_eq!(before, ["clock_jump"], "{end}");
    assert_eq!(end["clock_clears"], 1, "{end}");
    assert_eq!(
        (end["refused"].as_u64(), end["duplicates"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(end["clock_messages"].as_u64().unwrap() > 200, "{end}");
    let b = buffer(&dir);
    assert_eq!(b.view().stats().clears_total, 1);
    let cases = support::cases_of("expect_reset.json");
    let diffs: Vec<String> = cases
        .iter()
        .filter_map(|c| support::check(c, b.lookup_transform(&c.target, &c.source, c.time)))
        .collect();
    assert!(
        diffs.is_empty(),
        "{} of {} lookups differ from tf2:\n{}",
        diffs.len(),
        cases.len(),
        diffs[..diffs.len().min(10)].join("\n")
    );
    drop(b);
    r.stop();

    // --ignore-clock: no clear; the second pass is stored behind the first (time 0 still
    // answers the first pass's end).
    let dir = TestDir::new("reset_ignored");
    let r = replay_json(
        &dir,
        &[
            "--as-fast-as-possible",
            "--hold",
            "--ignore-clock",
            "--cache-time",
            "10",
            path_str(&bag),
        ],
    );
    let (end, _) = wait_for_event(&r, "end_of_bag", Duration::from_secs(30));
    assert_eq!(
        (end["clock_clears"].as_u64(), end["clock_messages"].as_u64()),
        (Some(0), Some(0))
    );
    let b = buffer(&dir);
    let newest = tf_shm_bag::scan(&bag, &Default::default())
        .unwrap()
        .stamp_range
        .unwrap()
        .1;
    assert_eq!(
        b.lookup_transform("odom", "base_footprint", 0)
            .unwrap()
            .stamp,
        newest
    );
    drop(b);
    r.stop();
}

/// Without /clock, stamps that go back by more than the cache time are warned about before
/// anything is served (naming --start at the jump), and the refusals that follow are counted
/// per reason in the summary.
#[test]
fn stamps_jumping_back_without_a_clock_are_warned_about_and_refusals_counted() {
    let dir = TestDir::new("noclock");
    let bag = support::bag("reset_noclock.mcap");
    let run = dir.run(&[
        "replay",
        "--as-fast-as-possible",
        "--cache-time",
        "1",
        path_str(&bag),
    ]);
    let err = run.stderr();
    assert_eq!(run.0.status.code(), Some(0), "{err}");
    let warning = err
        .lines()
        .find(|l| l.starts_with("tf_shm replay: warning: the /tf stamps jump back by 1.5"))
        .unwrap_or_else(|| panic!("no warning: {err}"));
    assert!(
        warning.contains("no /clock") && warning.contains("--start 1.5"),
        "{warning}"
    );
    let per_reason = err
        .lines()
        .find(|l| l.contains(" refused TF_OLD_DATA: "))
        .unwrap_or_else(|| panic!("no per-reason count: {err}"));
    let n: u64 = per_reason
        .trim_start_matches("tf_shm replay: ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let summary = err.lines().find(|l| l.contains(" refused, ")).unwrap();
    assert!(
        n > 100 && summary.contains(&format!(", {n} refused")),
        "{summary}\n{per_reason}"
    );
    // The same with --json: the warning and the counts per reason in the events.
    let run = dir.run(&[
        "--json",
        "replay",
        "--as-fast-as-possible",
        "--cache-time",
        "1",
        path_str(&bag),
    ]);
    let out = String::from_utf8_lossy(&run.0.stdout).to_string();
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 2, "{out}");
    assert_eq!(events[0]["event"], "serving");
    assert_eq!(events[0]["warnings"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(events[1]["event"], "end_of_bag");
    assert_eq!(
        events[1]["refused_by"]["TF_OLD_DATA"].as_u64(),
        Some(n),
        "{out}"
    );
}
