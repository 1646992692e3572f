//! `tf_shm record` when the arena's owner is SIGKILLed mid-recording, all as real processes (a
//! `tf_shm replay` owns the arena): the recording goes on, says when the owner went away,
//! follows a new owner from its arena's beginning, and the summary, `--json` and the exit
//! status (4) state the span without an owner instead of a bare "0 missed".

mod common;
#[path = "../../tf_shm_bag/tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use common::running::{replay, Running};
use common::TestDir;
use rustix::process::Signal;

/// A replay of the short bag slowed to 5 s, then held: an owner storing as a bridge does.
fn owner(dir: &TestDir) -> Running {
    let bag = support::bag("short.mcap");
    let r = replay(dir, &["--rate", "0.2", "--hold", bag.to_str().unwrap()]);
    drop(
        tf_shm::Join::new()
            .runtime_dir(dir.path())
            .await_open(Duration::from_secs(20))
            .expect("the owner serves"),
    );
    r
}

/// Waits until `pid` is a live participant of the arena (it has joined and reads it).
fn joined(dir: &TestDir, pid: u32) {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let v = dir.run(&["--json", "participants"]).json();
        let list = v["participants"].as_array().cloned().unwrap_or_default();
        if list
            .iter()
            .any(|p| p["pid"] == pid && p["alive"] == true && p["entry"] != "owner")
        {
            return;
        }
        assert!(Instant::now() < end, "pid {pid} never joined: {v}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The seconds of "no owner from A s to B s" in `line`.
fn span(line: &str) -> f64 {
    let num = |after: &str| -> f64 {
        let rest = &line[line.find(after).unwrap() + after.len()..];
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    num(" to ") - num(" from ")
}

#[test]
fn record_follows_a_sigkilled_owners_restart_and_reports_the_gap() {
    let dir = TestDir::new("recgap");
    let out = support::bags().join("recgap.mcap");
    let _ = std::fs::remove_file(&out);
    let old = owner(&dir);
    let rec = Running::spawn(
        &dir,
        "record",
        // --duration bounds it should the test fail before its SIGINT.
        &["record", "--duration", "60", out.to_str().unwrap()],
        false,
    );
    rec.wait_for("recording arena", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    let old_pid = old.pid();
    let (code, _) = old.end(Signal::KILL);
    assert_eq!(code, None, "killed by the signal");
    rec.wait_for(
        &format!("(pid {old_pid}) went away (last seen at "),
        Duration::from_secs(10),
    );
    std::thread::sleep(Duration::from_millis(300));
    let new = owner(&dir);
    let back = rec.wait_for("a new owner", Duration::from_secs(20));
    assert!(
        back.contains(&format!("(pid {}) serves arena default at ", new.pid()))
            && back.contains(&format!("after pid {old_pid} was last seen")),
        "{back}"
    );
    std::thread::sleep(Duration::from_millis(300));
    let (code, rest) = rec.end(Signal::INT);
    let text = rest.join("\n");
    assert_eq!(code, Some(4), "{text}");
    let summary = rest.iter().find(|l| l.contains(" wrote ")).expect(&text);
    assert!(
        summary.contains(" 0 missed; no owner for ")
            && summary.contains("1 new owner followed")
            && summary.contains("not in the bag"),
        "{summary}"
    );
    let gap = rest
        .iter()
        .find(|l| l.contains("no owner from "))
        .expect(&text);
    assert!(
        gap.contains(&format!(
            "(pid {old_pid} went away, pid {} followed)",
            new.pid()
        )),
        "{gap}"
    );
    assert!((0.3..20.0).contains(&span(gap)), "{gap}");
    // Both arenas are in the bag: each one's statics, as its owner stored them.
    let info = tf_shm_bag::scan(&out, &Default::default()).unwrap();
    assert_eq!(info.static_messages.len(), 2, "one /tf_static per arena");
    assert!(info.dynamic_transforms > 0);
    new.stop();
}

#[test]
fn record_whose_owner_never_comes_back_says_so_in_json_and_exits_4() {
    let dir = TestDir::new("recgone");
    let out = support::bags().join("recgone.mcap");
    let _ = std::fs::remove_file(&out);
    let old = owner(&dir);
    let rec = Running::spawn(
        &dir,
        "record",
        &[
            "--json",
            "record",
            "--duration",
            "60",
            out.to_str().unwrap(),
        ],
        true,
    );
    joined(&dir, rec.pid());
    let old_pid = old.pid();
    old.end(Signal::KILL);
    std::thread::sleep(Duration::from_secs(1));
    let (code, rest) = rec.end(Signal::INT);
    let doc: serde_json::Value =
        serde_json::from_str(rest.last().expect("a JSON summary")).unwrap();
    assert_eq!(code, Some(4), "{doc}");
    assert_eq!(
        (doc["missed"].as_u64(), doc["complete"].as_bool()),
        (Some(0), Some(false)),
        "{doc}"
    );
    assert_eq!(
        (doc["owner_losses"].as_u64(), doc["owner_restarts"].as_u64()),
        (Some(1), Some(0)),
        "{doc}"
    );
    let gap = &doc["owner_gaps"][0];
    assert_eq!(gap["owner_pid"], old_pid, "{doc}");
    assert!(
        gap["to"].is_null() && gap["new_owner_pid"].is_null(),
        "{doc}"
    );
    let without = doc["seconds_without_owner"].as_f64().unwrap();
    assert!((1.0..20.0).contains(&without), "{doc}");
    assert!(
        tf_shm_bag::scan(&out, &Default::default())
            .unwrap()
            .dynamic_transforms
            > 0
    );
}
