//! The writer on the arena: growth of history to the cache time, capacity limits, clear,
//! kind switching, read-only sharing through the memfd, and damaged arenas.

use tf_shm::store::FrameStore;
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, CapacityError, SetTransformError, TransformError, WriteStatus};

const S: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;

fn input<'a>(parent: &'a str, child: &'a str, stamp: i64, x: f64) -> TransformInput<'a> {
    TransformInput {
        frame_id: parent,
        child_frame_id: child,
        stamp,
        translation: [x, 0.0, 0.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
    }
}

#[test]
fn history_grows_to_cover_the_cache_time_at_1khz() {
    let (mut w, view) = Arena::in_memory(&ArenaConfig::default()).unwrap();
    for k in 0..=20_000i64 {
        let status = w
            .set_transform(&input("world", "fast", k * MS, k as f64), "t", false)
            .unwrap();
        assert_eq!(status, WriteStatus::Stored, "sample {k}");
    }
    let id = view.frame_id("fast").unwrap().unwrap();
    let span = view.history_span(id).unwrap().unwrap();
    // ROS 2 prunes before inserting, against the newest stamp before the insert (19.999 s):
    // 9.999 s ..= 20 s stay, 10 002 samples at 1 kHz.
    assert_eq!(span.newest, 20 * S);
    assert_eq!(span.oldest, 10 * S - MS);
    assert_eq!(span.len, 10_002);
    let t = view
        .lookup_transform("world", "fast", 10 * S + MS / 2)
        .unwrap();
    assert!((t.transform.translation[0] - 10_000.5).abs() < 1e-9);
    assert!(!view.stats().ring_pool_exhausted);
}

#[test]
fn exhausted_pool_cuts_history_of_the_greedy_frame_only() {
    let cfg = ArenaConfig {
        max_frames: 64,
        memory_budget_bytes: 1 << 20,
        ..ArenaConfig::default()
    };
    let (mut w, view) = Arena::in_memory(&cfg).unwrap();
    w.set_transform(&input("world", "slow", 0, 1.0), "t", false)
        .unwrap();
    w.set_transform(&input("world", "slow", 20 * S, 3.0), "t", false)
        .unwrap();
    let mut cut = 0;
    for k in 0..=20_000i64 {
        if w.set_transform(&input("world", "fast", k * MS, k as f64), "t", false)
            .unwrap()
            == WriteStatus::StoredHistoryCut
        {
            cut += 1;
        }
    }
    assert!(cut > 0, "a 1 MiB arena cannot hold 10 s at 1 kHz");
    assert!(view.stats().ring_pool_exhausted);
    // The greedy frame still answers for its recent past; the other frame is untouched.
    let recent = view
        .lookup_transform("world", "fast", 20 * S - 5 * MS)
        .unwrap();
    assert!((recent.transform.translation[0] - 19_995.0).abs() < 1e-9);
    let slow = view.lookup_transform("world", "slow", 15 * S).unwrap();
    assert!((slow.transform.translation[0] - 2.5).abs() < 1e-12);
}

#[test]
fn full_frame_table_refuses_new_frames_and_keeps_old_ones() {
    let cfg = ArenaConfig {
        max_frames: 4,
        memory_budget_bytes: 1 << 20,
        ..ArenaConfig::default()
    };
    let (mut w, view) = Arena::in_memory(&cfg).unwrap();
    // Ids 1..=4 (0 is tf2's "no parent" and does not count).
    w.set_transform(&input("a", "b", S, 1.0), "t", false)
        .unwrap();
    w.set_transform(&input("b", "c", S, 1.0), "t", false)
        .unwrap();
    // Both names are new, one id is left: refused whole, naming the frame that did not fit,
    // and neither frame is created.
    let err = w
        .set_transform(&input("p", "q", S, 1.0), "t", false)
        .unwrap_err();
    match err {
        SetTransformError::Capacity(CapacityError::FrameTableFull { frame, max_frames }) => {
            assert_eq!(frame, "p");
            assert_eq!(max_frames, 4);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(view.frame_id("q").unwrap(), None);
    // The last id is still there for a sample that needs one.
    w.set_transform(&input("c", "d", S, 1.0), "t", false)
        .unwrap();
    assert!(w
        .set_transform(&input("d", "e", S, 1.0), "t", false)
        .is_err());
    assert!(err_text(&view, "a", "d").is_none());
    // Tools see it typed: which capacity ran out, and how many samples it cost.
    let stats = view.stats();
    assert!(stats.frame_table_full && !stats.names_full && !stats.ring_pool_exhausted);
    assert_eq!(stats.capacity_refusals, 2);
    assert!(stats.refusals.iter().all(|&(_, n)| n == 0), "{stats:?}");
}

#[test]
fn full_names_region_is_reported_apart_from_the_frame_table() {
    let cfg = ArenaConfig {
        max_frames: 32,
        memory_budget_bytes: 1 << 20,
        ..ArenaConfig::default()
    };
    let (mut w, view) = Arena::in_memory(&cfg).unwrap();
    // Names of 1000 bytes: the names region (8 KiB at least) fills long before 32 frames.
    let mut stored = 0;
    let err = loop {
        let child = format!("{stored:04}{}", "n".repeat(996));
        match w.set_transform(&input("map", &child, S, 1.0), "t", false) {
            Ok(_) => stored += 1,
            Err(e) => break e,
        }
        assert!(stored < 31, "the names region never filled");
    };
    assert!(
        matches!(
            err,
            SetTransformError::Capacity(CapacityError::NamesFull { .. })
        ),
        "{err:?}"
    );
    let stats = view.stats();
    assert!(stats.names_full && !stats.frame_table_full, "{stats:?}");
    assert_eq!(stats.capacity_refusals, 1);
    assert_eq!(stats.frames, stored + 1, "map and the children that fit");
}

fn err_text(view: &tf_shm::ArenaView, target: &str, source: &str) -> Option<String> {
    view.lookup_transform(target, source, S)
        .err()
        .map(|e| e.to_string())
}

#[test]
fn clear_empties_dynamic_history_keeps_statics_and_names() {
    let (mut w, view) = Arena::in_memory(&ArenaConfig::default()).unwrap();
    w.set_transform(&input("map", "odom", S, 1.0), "t", false)
        .unwrap();
    w.set_transform(&input("map", "odom", 2 * S, 2.0), "t", false)
        .unwrap();
    w.set_transform(&input("odom", "laser", 0, 0.5), "t", true)
        .unwrap();
    w.clear();
    // Names survive: not a LookupException, but no data (tf2 Jazzy: empty text + suffix).
    let e = view
        .lookup_transform("map", "odom", 1_500_000_000)
        .unwrap_err();
    assert!(matches!(e, TransformError::Extrapolation { .. }), "{e:?}");
    // The static link still answers at any time.
    let s = view.lookup_transform("odom", "laser", 123).unwrap();
    assert_eq!(s.transform.translation[0], 0.5);
    assert_eq!(s.stamp, 123);
    // Old data is accepted again after a clear (the history really is empty).
    w.set_transform(&input("map", "odom", S / 2, 7.0), "t", false)
        .unwrap();
    let t = view.lookup_transform("map", "odom", 0).unwrap();
    assert_eq!(t.transform.translation[0], 7.0);
    assert_eq!(t.stamp, S / 2);
}

#[test]
fn switching_kind_loses_the_old_cache_as_ros2_does() {
    let (mut w, view) = Arena::in_memory(&ArenaConfig::default()).unwrap();
    w.set_transform(&input("map", "f", S, 1.0), "t", false)
        .unwrap();
    w.set_transform(&input("map", "f", 2 * S, 2.0), "t", false)
        .unwrap();
    w.set_transform(&input("map", "f", 0, 9.0), "t", true)
        .unwrap();
    let t = view.lookup_transform("map", "f", 1_500_000_000).unwrap();
    assert_eq!(
        t.transform.translation[0], 9.0,
        "static now answers any time"
    );
    w.set_transform(&input("map", "f", 5 * S, 5.0), "t", false)
        .unwrap();
    // A fresh TimeCache: one sample, so only its exact stamp works.
    assert_eq!(
        view.lookup_transform("map", "f", 5 * S)
            .unwrap()
            .transform
            .translation[0],
        5.0
    );
    let e = view
        .lookup_transform("map", "f", 1_500_000_000)
        .unwrap_err();
    assert_eq!(e.class_name(), "NoDataForExtrapolationException", "{e}");
}

#[test]
fn shared_arena_is_read_only_for_consumers() {
    let mut shared = Arena::create_shared(&ArenaConfig::default(), "tf_shm_test").unwrap();
    shared
        .writer
        .set_transform(&input("map", "odom", S, 1.0), "t", false)
        .unwrap();
    let fd = shared.reader_fd().unwrap();
    let view = Arena::attach(&fd).unwrap();
    assert_eq!(view.identity(), shared.view.identity());
    let t = view.lookup_transform("map", "odom", S).unwrap();
    assert_eq!(t.transform.translation[0], 1.0);
    // The consumer's descriptor is read-only, and the memfd is sealed against new writers:
    // even a read-write reopen through /proc cannot write.
    let mode = rustix::fs::fcntl_getfl(&fd).unwrap() & rustix::fs::OFlags::RWMODE;
    assert_eq!(mode, rustix::fs::OFlags::RDONLY);
    let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
    let mut rw = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let e = std::io::Write::write(&mut rw, b"x").unwrap_err();
    assert_eq!(
        e.raw_os_error(),
        Some(rustix::io::Errno::PERM.raw_os_error())
    );
    // Data written later is visible through the consumer's mapping.
    shared
        .writer
        .set_transform(&input("map", "odom", 2 * S, 2.0), "t", false)
        .unwrap();
    assert_eq!(
        view.lookup_transform("map", "odom", 0)
            .unwrap()
            .transform
            .translation[0],
        2.0
    );
}

#[test]
fn full_ring_that_cannot_grow_reports_what_it_drops() {
    let cfg = ArenaConfig {
        max_frames: 8,
        max_rate_hz: 10,
        memory_budget_bytes: 1 << 20,
        ..ArenaConfig::default()
    };
    let (mut w, view) = Arena::in_memory(&cfg).unwrap();
    // 10 Hz × 10 s gives rings of at most 128 samples; 1 kHz overflows them.
    let mut statuses = Vec::new();
    for k in 0..1000i64 {
        statuses.push(
            w.set_transform(&input("a", "b", S + k * MS, k as f64), "t", false)
                .unwrap(),
        );
    }
    assert_eq!(statuses[0], WriteStatus::Stored);
    assert_eq!(*statuses.last().unwrap(), WriteStatus::StoredHistoryCut);
    // Older than all 128 kept samples but within the cache time: tf2 would keep it, we
    // cannot, and say so instead of claiming it was stored.
    let old = w.set_transform(&input("a", "b", S + 5 * MS, -1.0), "t", false);
    assert_eq!(old, Ok(WriteStatus::DroppedHistoryFull));
    let e = view.lookup_transform("a", "b", S + 5 * MS).unwrap_err();
    assert_eq!(e.class_name(), "BackwardExtrapolationException");
}
