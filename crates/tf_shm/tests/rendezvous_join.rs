//! Creating, joining and refusing: real processes, real sockets, real lock bytes.

mod rendezvous_support;

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use rendezvous_support::*;
use tf_shm::arena::boot_id;
use tf_shm::arena::{layout_hash, FORMAT_VERSION};
use tf_shm::rendezvous::wire::{Request, Status};
use tf_shm::rendezvous::{JoinError, Mode, ServeError};

const T: Duration = Duration::from_secs(10);

fn hello(version: u32, layout: u64, mode: Mode, boot: [u8; 16]) -> [u8; 96] {
    Request::new(version, layout, mode, std::process::id(), boot, "raw").encode()
}

#[test]
fn create_then_join_and_list_participants() {
    let dir = TestDir::new("join");
    let (owner, _) = owner_child(&dir, 1.5);
    let buffer = dir.open().participant_name("reader").open().expect("join");
    let t = buffer.lookup_transform("map", "base", 0).expect("lookup");
    assert_eq!(t.transform.translation[0], 1.5);
    assert!(buffer.owner_alive());
    assert_eq!(buffer.arena_swaps(), 0);

    let p = dir.open().participants().expect("participants");
    let o = p.owner.clone().expect("owner record");
    assert_eq!(
        (o.pid, o.alive, o.mode),
        (owner.pid(), true, Some(Mode::ReadWrite))
    );
    let alive: Vec<_> = p.alive().collect();
    assert_eq!(alive.len(), 1);
    assert_eq!(alive[0].pid, std::process::id());
    assert_eq!(alive[0].name, "reader");
    assert_eq!(alive[0].index, Some(buffer.slot()));
    assert_eq!(alive[0].instance_uuid, buffer.identity().instance_uuid);

    drop(buffer);
    let p = dir.open().participants().expect("participants");
    assert_eq!(
        p.alive().count(),
        0,
        "a dropped buffer releases its slot byte"
    );
    assert_eq!(p.consumers.len(), 1, "its record stays for tools");
}

#[test]
fn writing_through_the_mapping_faults() {
    let dir = TestDir::new("segv");
    let (_owner, _) = owner_child(&dir, 1.0);
    let mut probe = Peer::spawn(&["write-probe"], &dir);
    probe.expect("WRITING", T);
    let status = probe.child.wait().expect("wait");
    assert_eq!(
        status.signal(),
        Some(libc::SIGSEGV),
        "expected SIGSEGV, got {status:?}"
    );
}

#[test]
fn second_creator_is_refused_and_leaves_nothing_behind() {
    let dir = TestDir::new("second");
    let (owner, _) = owner_child(&dir, 1.0);
    let sock_before = std::fs::metadata(dir.sock()).expect("socket").ino();
    let before = dir.open().participants().expect("participants");

    let e = dir
        .serve()
        .require_create(true)
        .serve()
        .err()
        .expect("refused");
    match &e {
        ServeError::ArenaAlreadyLive { pid, .. } => assert_eq!(*pid, Some(owner.pid())),
        other => panic!("expected ArenaAlreadyLive, got {other}"),
    }
    assert!(
        e.to_string().contains(&format!("pid {}", owner.pid())),
        "{e}"
    );

    assert_eq!(
        std::fs::metadata(dir.sock()).expect("socket").ino(),
        sock_before,
        "socket untouched"
    );
    assert_eq!(
        dir.open().participants().expect("participants"),
        before,
        "no slot, no record"
    );
    let buffer = dir.open().open().expect("the first owner still serves");
    assert_eq!(
        buffer
            .lookup_transform("map", "base", 0)
            .unwrap()
            .transform
            .translation[0],
        1.0
    );
}

#[test]
fn absent_arena_says_what_to_do() {
    let dir = TestDir::new("absent");
    let e = dir.open().open().err().expect("absent");
    assert!(matches!(e, JoinError::NotServing { .. }));
    assert!(e.is_retryable());
    assert!(!dir.path().exists(), "a joiner creates no directory");
    assert_eq!(
        e.to_string(),
        format!(
            "no bridge is serving domain 0 name 'default' under {}: start tf_shm_bridge",
            dir.path().display()
        )
    );
    let e = dir
        .open()
        .domain(7)
        .name("sim")
        .open()
        .err()
        .expect("absent");
    assert!(e.to_string().contains("domain 7 name 'sim'"), "{e}");
}

#[test]
fn await_open_waits_for_a_late_owner() {
    let dir = TestDir::new("await");
    let d = dir.path().to_owned();
    let waiter = std::thread::spawn(move || {
        tf_shm::rendezvous::Join::new()
            .runtime_dir(d)
            .await_open(Duration::from_secs(10))
            .map(|b| {
                b.lookup_transform("map", "base", 0)
                    .unwrap()
                    .transform
                    .translation[0]
            })
    });
    std::thread::sleep(Duration::from_millis(200));
    let (_owner, _) = owner_child(&dir, 4.0);
    assert_eq!(waiter.join().unwrap().expect("joined"), 4.0);
    // And a bounded wait gives up with the retryable error.
    let empty = TestDir::new("await-none");
    let t0 = Instant::now();
    let e = empty
        .open()
        .await_open(Duration::from_millis(100))
        .err()
        .expect("nobody");
    assert!(e.is_retryable());
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn mismatched_hellos_get_their_status() {
    let dir = TestDir::new("mismatch");
    let owner = owner_in_process(&dir, 1.0, serve());
    let boot = boot_id();
    let mut other_boot = boot;
    other_boot[0] ^= 1;
    let cases = [
        (
            hello(FORMAT_VERSION + 1, layout_hash(), Mode::ReadOnly, boot),
            Status::VersionMismatch,
        ),
        (
            hello(FORMAT_VERSION, layout_hash() ^ 1, Mode::ReadOnly, boot),
            Status::LayoutMismatch,
        ),
        (
            hello(FORMAT_VERSION, layout_hash(), Mode::ReadOnly, other_boot),
            Status::BootMismatch,
        ),
        (
            hello(FORMAT_VERSION, layout_hash(), Mode::ReadWrite, boot),
            Status::ModeNotPermitted,
        ),
    ];
    for (bytes, want) in cases {
        let fd = raw_connect(&dir);
        let r = raw_exchange(&fd, &bytes).expect("an answer");
        assert_eq!(r.status, want);
        assert_eq!(
            (r.format_version, r.layout_hash),
            (FORMAT_VERSION, layout_hash())
        );
        assert_eq!(r.instance_uuid, owner.identity().instance_uuid);
    }
    // Another wire version is a version mismatch too.
    let mut bytes = hello(FORMAT_VERSION, layout_hash(), Mode::ReadOnly, boot);
    bytes[8] = 2;
    assert_eq!(
        raw_exchange(&raw_connect(&dir), &bytes).unwrap().status,
        Status::VersionMismatch
    );

    assert_eq!(owner.stats().granted, 0);
    assert_eq!(owner.participants().unwrap().consumers.len(), 0);
}

#[test]
fn join_latency() {
    let dir = TestDir::new("latency");
    let _owner = owner_in_process(&dir, 1.0, serve());
    let mut us: Vec<f64> = (0..100)
        .map(|_| {
            let t0 = Instant::now();
            let b = dir.open().open().expect("join");
            let dt = t0.elapsed().as_secs_f64() * 1e6;
            drop(b);
            dt
        })
        .collect();
    us.sort_by(f64::total_cmp);
    println!(
        "join latency over 100 joins: p50 {:.0} µs, max {:.0} µs",
        us[50], us[99]
    );
}

#[test]
fn waiting_lookup_polls_until_the_frame_appears() {
    let dir = TestDir::new("wait");
    let mut owner = owner_in_process(&dir, 1.0, serve());
    let buffer = dir.open().open().unwrap();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let input = tf_shm::validate::TransformInput {
            frame_id: "map",
            child_frame_id: "late",
            stamp: 1_000_000_000,
            translation: [3.0, 0.0, 0.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        owner.writer().set_transform(&input, "test", true).unwrap();
        owner
    });
    let t = buffer
        .lookup_transform_timeout("map", "late", 0, Duration::from_secs(5))
        .expect("appears while waiting");
    assert_eq!(t.transform.translation[0], 3.0);
    let _owner = writer.join().unwrap();

    // Timing out ends with the plain lookup's error, as tf2_ros's lookupTransform(…, timeout).
    let t0 = Instant::now();
    let e = buffer
        .lookup_transform_timeout("map", "nowhere", 0, Duration::from_millis(50))
        .unwrap_err();
    assert!(t0.elapsed() >= Duration::from_millis(50));
    assert_eq!(e, buffer.lookup_transform("map", "nowhere", 0).unwrap_err());
}
