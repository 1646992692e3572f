//! `tf_shm doctor`: a healthy arena passes; each failing condition is staged and must fail
//! its check (and only make the exit status 1 when it is a failure, not a warning).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::*;
use tf_shm::rendezvous::lockfile::{LockFile, Record};
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig};

/// Runs `doctor --json` (plus `extra`), checks the exit status, returns code → status.
fn doctor(dir: &TestDir, extra: &[&str], code: i32) -> Vec<(String, String, String)> {
    let mut args = vec!["--json", "doctor"];
    args.extend_from_slice(extra);
    let j = dir.run(&args).expect(code).json();
    assert_eq!(j["ok"], code == 0);
    j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["code"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
                c["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn status<'a>(checks: &'a [(String, String, String)], code: &str) -> (&'a str, &'a str) {
    let c = checks
        .iter()
        .find(|c| c.0 == code)
        .unwrap_or_else(|| panic!("no check {code}: {checks:?}"));
    (&c.1, &c.2)
}

/// The hint of check `code` in `doctor --json` (which exits with `exit`).
fn hint(dir: &TestDir, code: &str, exit: i32) -> String {
    let j = dir.run(&["--json", "doctor"]).expect(exit).json();
    j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == code)
        .unwrap_or_else(|| panic!("no check {code}: {j}"))["hint"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Only `failing` fail; everything else is ok.
fn only_fails(checks: &[(String, String, String)], failing: &[&str]) {
    for (code, st, verdict) in checks {
        let want = if failing.contains(&code.as_str()) {
            "fail"
        } else {
            "ok"
        };
        assert_eq!(st, want, "{code}: {verdict}\nall: {checks:#?}");
    }
}

fn healthy(owner: &mut tf_shm::Owner) {
    // 1 Hz: 10 periods is 10 s, far longer than the test.
    for i in 0..5 {
        set(
            owner,
            "map",
            "odom",
            (i + 1) * S,
            [i as f64, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
            false,
        );
    }
    set(
        owner,
        "odom",
        "laser",
        0,
        [0.1, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
        true,
    );
}

fn write(
    owner: &mut tf_shm::Owner,
    parent: &str,
    child: &str,
    stamp: i64,
    is_static: bool,
) -> bool {
    owner
        .writer()
        .set_transform(
            &TransformInput {
                frame_id: parent,
                child_frame_id: child,
                stamp,
                translation: [0.0; 3],
                rotation: [0.0, 0.0, 0.0, 1.0],
            },
            "test_pub",
            is_static,
        )
        .is_ok()
}

#[test]
fn healthy_arena_passes_every_check() {
    let dir = TestDir::new("dok");
    let mut owner = dir.owner(small_config());
    healthy(&mut owner);
    let checks = doctor(&dir, &[], 0);
    let codes: Vec<&str> = checks.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        codes,
        [
            "RUNTIME_DIR",
            "BRIDGE",
            "COMPAT",
            "CAPACITY",
            "HISTORY",
            "PARENTS",
            "DATA",
            "STALE",
            "REFUSED",
            "INTAKE",
            "READY",
            "STATICS",
            "PARTICIPANTS",
            // The same check under its former code, for scripts, until the next release.
            "SLOTS"
        ]
    );
    only_fails(&checks, &[]);
    let j = dir.run(&["--json", "doctor"]).expect(0).json();
    let listed = j["checks"].as_array().unwrap();
    let by_code = |code: &str| listed.iter().find(|c| c["code"] == code).unwrap();
    let (current, former) = (by_code("PARTICIPANTS"), by_code("SLOTS"));
    assert_eq!(former["replaced_by"], "PARTICIPANTS", "{j}");
    assert!(current.get("replaced_by").is_none(), "{j}");
    for key in ["status", "verdict", "hint"] {
        assert_eq!(former[key], current[key], "{key}: {j}");
    }
    let text = dir.run(&["doctor"]).expect(0).stdout();
    eprintln!("{text}");
    assert!(
        text.lines()
            .next()
            .unwrap()
            .starts_with("ok    RUNTIME_DIR  "),
        "{text}"
    );
    assert!(text.ends_with("13 checks: 0 failed, 0 warned\n"), "{text}");
    assert!(
        !text.contains("SLOTS"),
        "text shows current codes only:\n{text}"
    );
}

#[test]
fn no_bridge_fails_and_skips_the_arena_checks() {
    let dir = TestDir::new("dnb");
    let checks = doctor(&dir, &[], 1);
    assert_eq!(status(&checks, "BRIDGE").0, "fail");
    assert_eq!(status(&checks, "RUNTIME_DIR").0, "warn");
    for c in [
        "COMPAT", "CAPACITY", "HISTORY", "PARENTS", "STALE", "REFUSED", "INTAKE", "READY",
        "STATICS",
    ] {
        assert_eq!(status(&checks, c).0, "skip", "{c}");
    }
    // A bridge that was there and left.
    drop(dir.owner(small_config()));
    let checks = doctor(&dir, &[], 1);
    let (st, verdict) = status(&checks, "BRIDGE");
    assert_eq!(st, "fail");
    assert!(verdict.contains("no bridge is serving"), "{verdict}");
    let text = dir.run(&["doctor"]).expect(1).stdout();
    assert!(
        text.contains("FAIL  BRIDGE") && text.contains("hint: start tf_shm_bridge"),
        "{text}"
    );
    // Both ways to start one: `ros2 launch` needs a colcon install, a cargo build does not.
    assert!(
        text.contains("ros2 launch tf_shm_bridge tf_shm_bridge.launch.py")
            && text.contains("target/release/tf_shm_bridge --ros-args"),
        "{text}"
    );
}

#[test]
fn stale_frame_fails() {
    let dir = TestDir::new("dst");
    let mut owner = dir.owner(small_config());
    healthy(&mut owner);
    // 100 Hz: stale after 10 × 10 ms without a sample.
    for i in 0..5 {
        set(
            &mut owner,
            "odom",
            "wheel",
            S + i * 10_000_000,
            [0.0; 3],
            [0.0, 0.0, 0.0, 1.0],
            false,
        );
    }
    std::thread::sleep(Duration::from_millis(300));
    let checks = doctor(&dir, &[], 1);
    only_fails(&checks, &["STALE"]);
    let verdict = status(&checks, "STALE").1;
    assert!(
        verdict.starts_with("1 stale frame(s): wheel (no sample for ")
            && verdict.contains("period 0.010 s"),
        "{verdict}"
    );
    // With a laxer threshold it is not stale yet.
    only_fails(&doctor(&dir, &["--stale-periods", "100000"], 0), &[]);
}

#[test]
fn frame_with_two_parents_recently_fails() {
    let dir = TestDir::new("dpa");
    let mut owner = dir.owner(small_config());
    healthy(&mut owner);
    set(
        &mut owner,
        "map",
        "robot",
        10 * S,
        [0.0; 3],
        [0.0, 0.0, 0.0, 1.0],
        false,
    );
    set(
        &mut owner,
        "odom",
        "robot",
        11 * S,
        [0.0; 3],
        [0.0, 0.0, 0.0, 1.0],
        false,
    );
    set(
        &mut owner,
        "odom",
        "robot",
        12 * S,
        [0.0; 3],
        [0.0, 0.0, 0.0, 1.0],
        false,
    );
    let checks = doctor(&dir, &["--stale-periods", "1000"], 1);
    only_fails(&checks, &["PARENTS"]);
    let verdict = status(&checks, "PARENTS").1;
    assert!(
        verdict.contains("robot (1 change(s)") && verdict.contains("now under odom"),
        "{verdict}"
    );
    // Outside a short window it is history.
    std::thread::sleep(Duration::from_millis(50));
    only_fails(
        &doctor(&dir, &["--recent", "0.01", "--stale-periods", "1000"], 0),
        &[],
    );
}

/// The smallest memory budget an arena of `max_frames` accepts.
fn smallest_budget(max_frames: u32) -> usize {
    (1..)
        .map(|k| k * 4096)
        .find(|&b| {
            Arena::in_memory(&ArenaConfig {
                max_frames,
                memory_budget_bytes: b,
                ..ArenaConfig::default()
            })
            .is_ok()
        })
        .unwrap()
}

#[test]
fn exhausted_ring_pool_gives_short_history() {
    let dir = TestDir::new("dhi");
    let config = ArenaConfig {
        max_frames: 8,
        memory_budget_bytes: smallest_budget(8),
        ..ArenaConfig::default()
    };
    let mut owner = dir.owner(config);
    // 6 frames at 100 Hz over 3 s (within the 10 s cache time): rings want 512 samples each.
    for i in 0..300 {
        for f in ["f0", "f1", "f2", "f3", "f4", "f5"] {
            write(&mut owner, "map", f, S + i * 10_000_000, false);
        }
    }
    let checks = doctor(&dir, &["--stale-periods", "1e9"], 1);
    let (st, verdict) = status(&checks, "HISTORY");
    assert_eq!(st, "fail", "{checks:#?}");
    assert!(
        verdict.contains("keep less than the cache time (10.0 s)") && verdict.contains("f0"),
        "{verdict}"
    );
    let tree = dir.run(&["tree"]).expect(0).stdout();
    assert!(tree.contains("dynamic (history short)"), "{tree}");
}

#[test]
fn refused_transforms_fail_and_old_data_only_warns() {
    let dir = TestDir::new("dre");
    let mut owner = dir.owner(small_config());
    healthy(&mut owner);
    // TF_OLD_DATA: older than the newest sample minus the cache time (10 s).
    write(&mut owner, "map", "odom", 100 * S, false);
    assert!(!write(&mut owner, "map", "odom", S, false));
    let checks = doctor(&dir, &["--stale-periods", "1e9"], 0);
    let (st, verdict) = status(&checks, "REFUSED");
    assert_eq!((st, verdict), ("warn", "transforms refused: TF_OLD_DATA 1"));
    dir.run(&["doctor", "--strict", "--stale-periods", "1e9"])
        .expect(1);
    // TF_SELF_TRANSFORM and TF_NAN_INPUT fail.
    assert!(!write(&mut owner, "odom", "odom", 101 * S, false));
    let nan = TransformInput {
        frame_id: "map",
        child_frame_id: "odom",
        stamp: 101 * S,
        translation: [f64::NAN, 0.0, 0.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };
    assert!(owner.writer().set_transform(&nan, "bad", false).is_err());
    let checks = doctor(&dir, &["--stale-periods", "1e9"], 1);
    only_fails(&checks, &["REFUSED"]);
    assert_eq!(
        status(&checks, "REFUSED").1,
        "transforms refused: TF_SELF_TRANSFORM 1, TF_NAN_INPUT 1, TF_OLD_DATA 1"
    );
}

#[test]
fn lost_messages_fail_intake() {
    let dir = TestDir::new("din");
    let mut owner = dir.owner(small_config());
    healthy(&mut owner);
    owner.writer().set_messages_lost(3);
    let checks = doctor(&dir, &[], 1);
    only_fails(&checks, &["INTAKE"]);
    assert_eq!(
        status(&checks, "INTAKE").1,
        "3 messages lost on the way in (not delivered by the middleware, or dropped by the \
         bridge's full intake queue)"
    );
    // The hint names every cause a loss can have, a network outage between hosts first.
    let hint = hint(&dir, "INTAKE", 1);
    for cause in [
        "network between the publisher's host and the bridge's was down",
        "outage",
        "KEEP_LAST history replaced samples",
        "QoS depth (tf_depth / tf_static_depth)",
        "starved, stopped or throttled",
        "intake queue was full",
        "warn lines",
    ] {
        assert!(
            hint.contains(cause),
            "INTAKE's hint lacks {cause:?}: {hint}"
        );
    }
}

#[test]
fn an_arena_not_declared_ready_warns() {
    let dir = TestDir::new("drd");
    let mut owner = tf_shm::Serve::new(small_config())
        .runtime_dir(dir.path())
        .require_create(true)
        .defer_ready(true)
        .serve()
        .expect("owner");
    healthy(&mut owner);
    let checks = doctor(&dir, &[], 0);
    assert_eq!(status(&checks, "READY").0, "warn");
    assert!(status(&checks, "READY").1.starts_with("not ready"));
    owner.writer().declare_ready();
    let checks = doctor(&dir, &[], 0);
    only_fails(&checks, &[]);
}

#[test]
fn static_publishers_the_bridge_never_heard_warn() {
    let dir = TestDir::new("dst");
    let mut owner = dir.owner(small_config());
    healthy(&mut owner);
    owner.writer().set_static_publishers_unheard(2);
    let checks = doctor(&dir, &[], 0);
    let (st, verdict) = status(&checks, "STATICS");
    assert_eq!(st, "warn");
    assert!(
        verdict.starts_with("2 /tf_static publisher(s) in the ROS graph delivered nothing"),
        "{verdict}"
    );
    let hint = hint(&dir, "STATICS", 0);
    for cause in [
        "volatile",
        "transient-local",
        "restart the bridge or the publisher",
    ] {
        assert!(
            hint.contains(cause),
            "STATICS' hint lacks {cause:?}: {hint}"
        );
    }
    // One delivered (or left the graph): the bridge lowers the count.
    owner.writer().set_static_publishers_unheard(0);
    let checks = doctor(&dir, &[], 0);
    only_fails(&checks, &[]);
    assert_eq!(status(&checks, "STATICS").0, "ok");
}

#[test]
fn full_frame_table_fails_capacity() {
    let dir = TestDir::new("dca");
    let mut owner = dir.owner(ArenaConfig {
        max_frames: 4,
        ..small_config()
    });
    write(&mut owner, "map", "a", 0, true);
    write(&mut owner, "map", "b", 0, true);
    write(&mut owner, "map", "c", 0, true);
    assert!(!write(&mut owner, "map", "d", 0, true));
    let checks = doctor(&dir, &[], 1);
    only_fails(&checks, &["CAPACITY", "REFUSED"]);
    assert!(status(&checks, "CAPACITY")
        .1
        .contains("the frame table is full (4 of 4 frames)"));
    assert_eq!(
        status(&checks, "REFUSED").1,
        "transforms refused: CAPACITY 1"
    );
}

#[test]
fn participant_entry_held_by_a_dead_process_fails() {
    let dir = TestDir::new("dsl");
    let mut owner = dir.owner(small_config());
    healthy(&mut owner);
    let lock_path = dir.path().join("0/default.lock");
    // A process that is gone (reaped), recorded in entry 200 ...
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    let writer = LockFile::open_owner(&lock_path, 0o600).unwrap();
    writer
        .write_slot(
            200,
            &Record {
                pid: dead_pid,
                start_time: 1,
                mode: 1,
                instance_uuid: owner.identity().instance_uuid,
                name: "ghost".into(),
            },
        )
        .unwrap();
    // ... whose lock byte is still held (as by a child that inherited the descriptor).
    let holder = LockFile::open_read(&lock_path).unwrap();
    holder.hold_participant(200).unwrap();
    let checks = doctor(&dir, &[], 1);
    only_fails(&checks, &["PARTICIPANTS", "SLOTS"]);
    let verdict = status(&checks, "PARTICIPANTS").1;
    assert!(
        verdict.contains(&format!("entry 200 (pid {dead_pid} ghost)")),
        "{verdict}"
    );
    assert_eq!(status(&checks, "SLOTS").1, verdict);
    let p = dir.run(&["participants"]).expect(0).stdout();
    assert!(p.contains("lock held but process gone"), "{p}");
    let line = p.lines().find(|l| l.contains("ghost")).unwrap();
    assert!(line.contains("stuck"), "{line}");
    assert!(
        verdict.contains("0 of 256 participant entries alive, 1 stuck"),
        "{verdict}"
    );
    drop(holder);
    only_fails(&doctor(&dir, &[], 0), &[]);
}

#[test]
fn unsafe_runtime_dir_permissions_fail() {
    let dir = TestDir::new("drd");
    let mut owner = dir.owner(small_config());
    healthy(&mut owner);
    let lock_path = dir.path().join("0/default.lock");
    std::fs::set_permissions(&lock_path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let checks = doctor(&dir, &[], 1);
    only_fails(&checks, &["RUNTIME_DIR"]);
    assert!(status(&checks, "RUNTIME_DIR")
        .1
        .ends_with("default.lock is writable by other users"));
    std::fs::set_permissions(&lock_path, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let checks = doctor(&dir, &[], 1);
    let (st, verdict) = status(&checks, "RUNTIME_DIR");
    assert_eq!(st, "fail");
    assert!(verdict.ends_with("is writable by other users"), "{verdict}");
    // The library refuses to join through such a directory, too.
    assert_eq!(status(&checks, "BRIDGE").0, "fail");
}

#[test]
fn incompatible_bridge_fails_compat() {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    use tf_shm::rendezvous::wire::{Response, Status, NO_SLOT, RESPONSE_LEN};
    let dir = TestDir::new("dco");
    let domain = dir.path().join("0");
    std::fs::create_dir_all(&domain).unwrap();
    for d in [dir.path(), domain.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    // A fake owner: holds byte 0 and answers every hello with a layout mismatch.
    let lock = LockFile::open_owner(&domain.join("default.lock"), 0o600).unwrap();
    assert!(lock.try_own().unwrap());
    let sock = domain.join("default.sock");
    let listener = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )
    .unwrap();
    rustix::net::bind(&listener, &SocketAddrUnix::new(&sock).unwrap()).unwrap();
    rustix::net::listen(&listener, 8).unwrap();
    std::thread::spawn(move || loop {
        let Ok(c) = rustix::net::accept(&listener) else {
            return;
        };
        let mut hello = [0u8; 256];
        let _ = rustix::net::recv(&c, &mut hello[..], rustix::net::RecvFlags::empty());
        let r = Response {
            status: Status::LayoutMismatch,
            slot: NO_SLOT,
            format_version: tf_shm::arena::FORMAT_VERSION,
            layout_hash: 0xdead_beef,
            arena_size: 0,
            instance_uuid: [0; 16],
            owner_pid: std::process::id(),
        };
        let b: [u8; RESPONSE_LEN] = r.encode();
        let _ = rustix::net::send(&c, &b, rustix::net::SendFlags::empty());
    });
    let checks = doctor(&dir, &[], 1);
    assert_eq!(status(&checks, "BRIDGE").0, "ok");
    let (st, verdict) = status(&checks, "COMPAT");
    assert_eq!(st, "fail");
    assert!(
        verdict.contains("layout hash 0x00000000deadbeef is not ours"),
        "{verdict}"
    );
    drop(lock);
}

#[test]
fn bridge_without_transforms_warns_data() {
    let dir = TestDir::new("dnd");
    let mut owner = dir.owner(small_config());
    // Serving, but nothing ever arrived (publishers on another domain): a warning, which
    // --strict turns into a failure.
    let checks = doctor(&dir, &[], 0);
    let (st, verdict) = status(&checks, "DATA");
    assert_eq!(st, "warn", "{verdict}");
    assert!(
        verdict.starts_with("no transform arrived since the bridge started"),
        "{verdict}"
    );
    doctor(&dir, &["--strict"], 1);
    let text = dir.run(&["doctor"]).expect(0).stdout();
    assert!(
        text.contains("ROS_DOMAIN_ID"),
        "the hint names the usual cause:\n{text}"
    );
    // Static transforms alone expect nothing new.
    set(
        &mut owner,
        "map",
        "odom",
        0,
        [0.0; 3],
        [0.0, 0.0, 0.0, 1.0],
        true,
    );
    let checks = doctor(&dir, &[], 0);
    assert_eq!(status(&checks, "DATA").0, "ok");
    assert!(status(&checks, "DATA").1.contains("all static"));
    // Dynamic frames that stopped: quiet for longer than --no-data-after.
    healthy(&mut owner);
    let checks = doctor(&dir, &["--no-data-after", "0.5"], 0);
    assert_eq!(status(&checks, "DATA").0, "ok", "{checks:?}");
    std::thread::sleep(Duration::from_millis(800));
    let checks = doctor(&dir, &["--no-data-after", "0.5"], 0);
    let (st, verdict) = status(&checks, "DATA");
    assert_eq!(st, "warn", "{verdict}");
    assert!(
        verdict.starts_with("no transform arrived for 0."),
        "{verdict}"
    );
    assert_eq!(status(&doctor(&dir, &[], 0), "DATA").0, "ok");
}

#[test]
fn participants_and_doctor_agree_on_entries() {
    let dir = TestDir::new("dag");
    let mut owner = dir.owner(small_config());
    healthy(&mut owner);
    let consumer = tf_shm::Join::new()
        .runtime_dir(dir.path())
        .participant_name("rviz_like")
        .open()
        .unwrap();
    // CLI runs join and exit: their entries are released by the kernel and granted again.
    for _ in 0..3 {
        dir.run(&["tree"]).expect(0);
    }
    let j = dir.run(&["--json", "participants"]).expect(0).json();
    let ps = j["participants"].as_array().unwrap();
    let count = |state: &str| {
        ps.iter()
            .filter(|p| p["entry"] != "owner" && p["state"] == state)
            .count()
    };
    assert_eq!(ps[0]["state"], "alive");
    assert!(ps
        .iter()
        .any(|p| p["name"] == "rviz_like" && p["state"] == "alive"));
    let free = count("free");
    assert!(free >= 1, "{j}");
    assert!(ps
        .iter()
        .filter(|p| p["name"] == "tf_shm")
        .all(|p| p["state"] == "free" && p["alive"] == false));
    let text = dir.run(&["participants"]).expect(0).stdout();
    let line = text.lines().find(|l| l.contains(" tf_shm ")).unwrap();
    assert!(
        line.contains("free") && line.contains("process ended; entry reclaimed"),
        "{text}"
    );
    assert!(!text.contains("dead"), "{text}");
    // doctor counts the same records the same way. The doctor run itself holds an entry while it
    // reads, so it may see one more alive than participants did.
    let checks = doctor(&dir, &[], 0);
    let (st, verdict) = status(&checks, "PARTICIPANTS");
    assert_eq!(st, "ok", "{verdict}");
    let alive = count("alive");
    assert!(
        verdict.starts_with(&format!(
            "{alive} of 256 participant entries alive, 0 stuck; "
        )) || verdict.starts_with(&format!(
            "{} of 256 participant entries alive, 0 stuck; ",
            alive + 1
        )),
        "{verdict} vs {j}"
    );
    assert!(
        verdict.contains(&format!("{free} free again"))
            || verdict.contains(&format!("{} free again", free - 1)),
        "{verdict} vs {j}"
    );
    drop(consumer);
}
