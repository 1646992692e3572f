//! `tf_shm lookup` and `tf_shm echo` against an in-process arena, checked against values
//! computed here independently of tf_shm.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;

const DEG: f64 = std::f64::consts::PI / 180.0;

#[test]
fn lookup_text_shows_tf2_echo_fields_with_units() {
    let dir = TestDir::new("lk");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    let r = dir.run(&["lookup", "odom", "base_link"]).expect(0);
    let out = r.stdout();
    // Latest common time of odom/base_link is the newest stamp, 1.9 s.
    assert!(out.starts_with("At time 1.900000000 s\n"), "{out}");
    assert!(
        out.contains("- Translation: [1.000, 2.000, 0.000] m\n"),
        "{out}"
    );
    assert!(
        out.contains("- Rotation: in Quaternion (xyzw) [0.000, 0.000, 0.707, 0.707]\n"),
        "{out}"
    );
    assert!(
        out.contains("- Rotation: in RPY (radian) [0.000, -0.000, 1.571] rad\n"),
        "{out}"
    );
    assert!(
        out.contains("- Rotation: in RPY (degree) [0.000, -0.000, 90.000] deg\n"),
        "{out}"
    );
    // R_z(90°) with the translation in the last column.
    assert!(
        out.contains("  0.000 -1.000  0.000  1.000\n  1.000  0.000  0.000  2.000\n  0.000  0.000  1.000  0.000\n  0.000  0.000  0.000  1.000\n"),
        "{out}"
    );
}

#[test]
fn lookup_json_through_a_chain_matches_hand_composition() {
    let dir = TestDir::new("lkj");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    // T_map_laser at 1.5 s: odom at x = 0.5; base_link at odom + [1, 2, 0] rotated 90°;
    // laser at base_link + R_z(90°)·[0.2, 0, 0.1] = [0, 0.2, 0.1], total yaw 120°.
    let r = dir
        .run(&["--json", "lookup", "map", "laser", "--time", "1.5"])
        .expect(0);
    let j = r.json();
    assert_eq!(j["ok"], true);
    assert_eq!(j["target"], "map");
    assert_eq!(j["source"], "laser");
    assert_eq!(j["stamp_ns"], 1_500_000_000i64);
    let t = f64s(&j["translation_m"]);
    for (got, want) in t.iter().zip([1.5, 2.2, 0.1]) {
        assert!(close(*got, want, 1e-9), "{t:?}");
    }
    let rpy = f64s(&j["rpy_rad"]);
    assert!(
        close(rpy[0], 0.0, 1e-9) && close(rpy[1], 0.0, 1e-9) && close(rpy[2], 120.0 * DEG, 1e-9),
        "{rpy:?}"
    );
    let deg = f64s(&j["rpy_deg"]);
    assert!(close(deg[2], 120.0, 1e-7), "{deg:?}");
    let q = f64s(&j["rotation_xyzw"]);
    let want = quat([0.0, 0.0, 1.0], 120.0 * DEG);
    for (a, b) in q.iter().zip(want) {
        assert!(close(*a, b, 1e-9), "{q:?}");
    }
    let m = j["matrix"].as_array().unwrap();
    let row0 = f64s(&m[0]);
    assert!(
        close(row0[0], (120.0 * DEG).cos(), 1e-9) && close(row0[1], -(120.0 * DEG).sin(), 1e-9)
    );
    assert!(close(row0[3], 1.5, 1e-9));
    assert_eq!(f64s(&m[3]), [0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn rpy_of_a_known_roll_pitch_yaw() {
    let dir = TestDir::new("rpy");
    let mut owner = dir.owner(small_config());
    // q = Rz(yaw)·Ry(pitch)·Rx(roll), composed by hand as quaternions.
    let (roll, pitch, yaw) = (0.3, -0.4, 2.5);
    let qmul = |a: [f64; 4], b: [f64; 4]| {
        [
            a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
        ]
    };
    let q = qmul(
        qmul(quat([0.0, 0.0, 1.0], yaw), quat([0.0, 1.0, 0.0], pitch)),
        quat([1.0, 0.0, 0.0], roll),
    );
    set(&mut owner, "a", "b", S, [0.0; 3], q, true);
    let j = dir.run(&["--json", "lookup", "a", "b"]).expect(0).json();
    let rpy = f64s(&j["rpy_rad"]);
    for (got, want) in rpy.iter().zip([roll, pitch, yaw]) {
        assert!(close(*got, want, 1e-9), "{rpy:?}");
    }
}

#[test]
fn lookup_failure_prints_tf2_text_and_exits_1() {
    let dir = TestDir::new("lkf");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    let r = dir.run(&["lookup", "map", "nope"]).expect(1);
    assert_eq!(r.stdout(), "");
    assert!(
        r.stderr().contains("LookupException: \"nope\" passed to lookupTransform argument source_frame does not exist. "),
        "{}",
        r.stderr()
    );
    let j = dir
        .run(&["--json", "lookup", "map", "odom", "--time", "5"])
        .expect(1)
        .json();
    assert_eq!(j["ok"], false);
    assert_eq!(j["error_class"], "ForwardExtrapolationException");
    assert_eq!(
        j["error"],
        "Lookup would require extrapolation into the future.  Requested time 5.000000 but the latest data \
         is at time 1.900000, when looking up transform from frame [odom] to frame [map]"
    );
}

#[test]
fn two_time_lookup_uses_the_fixed_frame() {
    let dir = TestDir::new("lk2");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    // odom moved from x = 0.2 (1.2 s) to x = 0.7 (1.7 s) in map: seen from odom at 1.7 s, odom
    // at 1.2 s is 0.5 m behind.
    let j = dir
        .run(&[
            "--json",
            "lookup",
            "odom",
            "odom",
            "--target-time",
            "1.7",
            "--source-time",
            "1.2",
            "--fixed",
            "map",
        ])
        .expect(0)
        .json();
    let t = f64s(&j["translation_m"]);
    assert!(close(t[0], -0.5, 1e-9) && close(t[1], 0.0, 1e-12), "{t:?}");
    // Usage errors are clap's (status 2).
    dir.run(&["lookup", "a", "b", "--target-time", "1"])
        .expect(2);
}

#[test]
fn no_bridge_is_exit_3_with_the_library_message() {
    let dir = TestDir::new("nb");
    let r = dir.run(&["lookup", "map", "odom"]).expect(3);
    assert!(
        r.stderr()
            .contains("no bridge is serving domain 0 name 'default'"),
        "{}",
        r.stderr()
    );
}

#[test]
fn echo_repeats_at_its_rate() {
    let dir = TestDir::new("ec");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    let t0 = Instant::now();
    let r = dir
        .run(&["echo", "map", "odom", "--rate", "20", "--count", "3"])
        .expect(0);
    assert!(
        t0.elapsed() >= Duration::from_millis(100),
        "3 prints at 20 Hz take 2 periods"
    );
    assert_eq!(
        r.stdout()
            .matches("At time 1.900000000 s\n- Translation: [0.900, 0.000, 0.000] m\n")
            .count(),
        3,
        "{}",
        r.stdout()
    );
    let r = dir
        .run(&["--json", "echo", "map", "odom", "--once", "-p", "5"])
        .expect(0);
    assert_eq!(r.stdout().lines().count(), 1);
    assert_eq!(r.json()["translation_m"][0], 0.9);
}

#[test]
fn echo_keeps_trying_until_the_frame_appears() {
    let dir = TestDir::new("ecw");
    let mut owner = dir.owner(small_config());
    set(
        &mut owner,
        "map",
        "odom",
        S,
        [1.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
        true,
    );
    let mut child = dir
        .cmd(&["echo", "map", "late", "--rate", "50", "--count", "500"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert_eq!(
        line,
        "Waiting for transform map -> late: \"late\" passed to lookupTransform argument source_frame does not exist. \n"
    );
    set(
        &mut owner,
        "odom",
        "late",
        S,
        [0.0, 3.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
        true,
    );
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let mut second = String::new();
    out.read_line(&mut second).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(first, "At time 0.000000000 s\n");
    assert_eq!(second, "- Translation: [1.000, 3.000, 0.000] m\n");
}

#[test]
fn echo_once_fails_with_exit_1() {
    let dir = TestDir::new("eco");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    let r = dir.run(&["echo", "map", "nope", "--once"]).expect(1);
    assert!(
        r.stderr()
            .starts_with("Waiting for transform map -> nope: "),
        "{}",
        r.stderr()
    );
}

/// tf2 composes without checks: translations near f64::MAX overflow to ±∞, and rotating or
/// differencing infinite values gives NaN. JSON names them as the library answers them, instead
/// of writing `null`.
#[test]
fn lookup_json_names_non_finite_numbers() {
    let dir = TestDir::new("lknf");
    let mut owner = dir.owner(small_config());
    let id = [0.0, 0.0, 0.0, 1.0];
    set(&mut owner, "map", "a", 0, [1e308, 0.0, 0.0], id, true);
    set(&mut owner, "a", "c", 0, [1e308, 0.0, 0.0], id, true);
    set(&mut owner, "map", "b", 0, [-1e308, 0.0, 0.0], id, true);
    let buffer = tf_shm::Join::new().runtime_dir(dir.path()).open().unwrap();
    let named = |x: f64| {
        if x.is_nan() {
            serde_json::json!("NaN")
        } else if x == f64::INFINITY {
            serde_json::json!("Infinity")
        } else if x == f64::NEG_INFINITY {
            serde_json::json!("-Infinity")
        } else {
            serde_json::json!(x)
        }
    };
    let mut seen = Vec::new();
    for (target, source) in [("map", "c"), ("b", "a"), ("a", "b"), ("c", "map")] {
        let t = buffer
            .lookup_transform(target, source, 0)
            .unwrap()
            .transform;
        let j = dir
            .run(&["--json", "lookup", target, source])
            .expect(0)
            .json();
        eprintln!("{target} {source}: {:?} {j}", t.translation);
        assert_eq!(j["ok"], true);
        let want: Vec<_> = t.translation.iter().map(|&x| named(x)).collect();
        assert_eq!(j["translation_m"], serde_json::json!(want), "{j}");
        assert_eq!(j["matrix"][0][3], want[0], "{j}");
        let want: Vec<_> = t.rotation.iter().map(|&x| named(x)).collect();
        assert_eq!(j["rotation_xyzw"], serde_json::json!(want), "{j}");
        seen.extend(t.translation.iter().map(|x| format!("{x}")));
    }
    for form in ["NaN", "inf", "-inf"] {
        assert!(seen.iter().any(|s| s == form), "no {form} among {seen:?}");
    }
}

#[test]
fn echo_and_monitor_end_quietly_when_their_reader_goes() {
    // `tf_shm echo … | head -1`: once the pipe's reader has gone, the command ends with status
    // 0 and says nothing, as other Unix tools do (it panicked on the write before).
    let dir = TestDir::new("epipe");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    for args in [
        &["echo", "map", "odom", "--rate", "50"][..],
        &["monitor", "--rate", "20"][..],
    ] {
        let mut child = dir
            .cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        assert!(!first.is_empty(), "{args:?} printed nothing");
        drop(out);
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "{args:?} still runs with no reader"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}
