//! Bags written by the reference MCAP tools, loaded into an in-memory arena: lookups equal
//! Debian's tf2 fed the same messages (read back by `mcap_ros2`), whatever the chunk
//! compression; damaged and wrong files give clear errors and no panic.

mod support;

use std::path::Path;

use tf_shm::store::FrameStore;
use tf_shm_bag::{load, BagError, LoadError, Topics};

fn compare_with_tf2(bag: &str) {
    let loaded = load(&support::bag(bag)).unwrap_or_else(|e| panic!("{bag}: {e}"));
    assert_eq!(loaded.counts.refused, 0, "{:?}", loaded.refusals);
    assert_eq!(loaded.counts.history_cut, 0);
    let cases = support::cases();
    let failing = cases.iter().filter(|c| c.answer.is_err()).count();
    assert!(cases.len() >= 4000 && failing > 50 && failing < cases.len() / 2);
    let diffs: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            support::check(
                c,
                loaded.view.lookup_transform(&c.target, &c.source, c.time),
            )
        })
        .collect();
    assert!(
        diffs.is_empty(),
        "{bag}: {} of {} lookups differ from tf2, e.g.\n{}",
        diffs.len(),
        cases.len(),
        diffs[..diffs.len().min(10)].join("\n")
    );
}

#[test]
fn zstd_chunks_match_tf2() {
    compare_with_tf2("pr2_zstd.mcap");
}

#[test]
fn lz4_chunks_match_tf2() {
    compare_with_tf2("pr2_lz4.mcap");
}

#[test]
fn uncompressed_chunks_match_tf2() {
    compare_with_tf2("pr2_plain.mcap");
}

/// The bag's own content is all there: every frame, statics as statics, the re-parented frame
/// under both grippers at the right times.
#[test]
fn load_keeps_statics_and_reparenting() {
    let b = load(&support::bag("pr2_zstd.mcap")).unwrap();
    let v = &b.view;
    let tray = v.frame_id("tray").unwrap().expect("tray frame");
    let samples = v.frame_samples(tray).unwrap();
    let parents: std::collections::BTreeSet<String> = samples
        .iter()
        .map(|s| v.frame_name(s.parent).unwrap().unwrap())
        .collect();
    assert_eq!(
        parents.into_iter().collect::<Vec<_>>(),
        ["l_gripper_palm_link", "r_gripper_palm_link"]
    );
    // 4 s at 50 Hz, both ends included.
    assert_eq!(samples.len(), 201);
    let info = &b.info;
    assert_eq!(info.static_messages.len(), 1);
    assert!(info.static_transforms > 10);
    for t in &info.static_messages[0].transforms {
        let id = v.frame_id(&t.child_frame_id).unwrap().unwrap();
        assert!(v.is_static(id).unwrap(), "{}", t.child_frame_id);
    }
    assert_eq!(
        b.counts.stored,
        info.static_transforms + info.dynamic_transforms
    );
}

fn load_err(path: &Path) -> BagError {
    match load(path) {
        Err(LoadError::Bag(e)) => e,
        Err(e) => panic!("{}: not a bag error: {e}", path.display()),
        Ok(_) => panic!("{}: loaded", path.display()),
    }
}

fn cut_copy(name: &str, keep: usize) -> std::path::PathBuf {
    let src = std::fs::read(support::bag(name)).unwrap();
    let out = support::bags().join(format!("cut_{keep}_{name}"));
    std::fs::write(&out, &src[..keep.min(src.len())]).unwrap();
    out
}

#[test]
fn truncated_files_say_so() {
    for name in ["pr2_zstd.mcap", "pr2_lz4.mcap", "pr2_plain.mcap"] {
        let len = std::fs::metadata(support::bag(name)).unwrap().len() as usize;
        for keep in [0, 5, 8, 100, len / 3, len / 2, len - 30, len - 1] {
            let path = cut_copy(name, keep);
            let e = load_err(&path);
            let text = e.to_string();
            assert!(
                matches!(e, BagError::Container { .. }),
                "{name} cut at {keep}: {text}"
            );
            assert!(
                text.contains(&path.display().to_string()),
                "names the file: {text}"
            );
            if keep >= 8 {
                assert!(text.contains("ends early"), "{name} cut at {keep}: {text}");
            }
        }
    }
}

#[test]
fn corrupt_chunk_fails_its_crc() {
    let mut bytes = std::fs::read(support::bag("pr2_plain.mcap")).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    let path = support::bags().join("corrupt_plain.mcap");
    std::fs::write(&path, &bytes).unwrap();
    let e = load_err(&path);
    assert!(
        matches!(e, BagError::Container { .. } | BagError::Undecodable { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("corrupt_plain.mcap"), "{e}");
}

#[test]
fn wrong_schema_is_named() {
    let e = load_err(&support::bag("wrong_schema.mcap"));
    let text = e.to_string();
    assert!(matches!(e, BagError::WrongSchema { .. }), "{text}");
    assert!(
        text.contains("/tf") && text.contains("geometry_msgs/msg/PoseStamped"),
        "{text}"
    );
    assert!(text.contains("tf2_msgs/msg/TFMessage"), "{text}");
}

#[test]
fn wrong_encoding_is_named() {
    let e = load_err(&support::bag("wrong_encoding.mcap"));
    assert!(matches!(e, BagError::WrongEncoding { .. }), "{e}");
    assert!(e.to_string().contains("\"json\""), "{e}");
}

#[test]
fn bag_without_tf_lists_its_topics() {
    let e = load_err(&support::bag("no_tf.mcap"));
    let text = e.to_string();
    assert!(matches!(e, BagError::NoTf { .. }), "{text}");
    assert!(
        text.contains("no TF") && text.contains("/chatter [std_msgs/msg/String]"),
        "{text}"
    );
    // The same bag read for other topic names: /chatter is not a TF topic either way.
    let other = Topics {
        tf: "/robot/tf".into(),
        tf_static: "/robot/tf_static".into(),
        clock: None,
    };
    let e = tf_shm_bag::load_with(&support::bag("pr2_zstd.mcap"), &other, None)
        .err()
        .expect("no /robot/tf in the PR2 bag");
    assert!(
        e.to_string().contains("/robot/tf or /robot/tf_static"),
        "{e}"
    );
}

#[test]
fn undecodable_message_is_named_and_nothing_is_loaded() {
    let e = load_err(&support::bag("undecodable.mcap"));
    let text = e.to_string();
    match &e {
        BagError::Undecodable {
            index,
            topic,
            source,
            ..
        } => {
            assert_eq!(*index, 3);
            assert_eq!(topic, "/tf");
            // 7 bytes: the transform count itself is cut.
            assert!(
                matches!(source, tf_shm::cdr::CdrError::Truncated { at: 4, .. }),
                "{source:?}"
            );
        }
        _ => panic!("{text}"),
    }
    assert!(text.contains("does not decode"), "{text}");
}

#[test]
fn missing_file_is_an_io_error() {
    let e = load_err(&support::bags().join("no_such.mcap"));
    assert!(matches!(e, BagError::Io { .. }), "{e}");
    assert!(e.to_string().contains("no_such.mcap"), "{e}");
}

/// `--start`/`--duration` select a span of receive times; pacing waits for them (scaled by the
/// rate); statics are loaded whatever the span.
#[test]
fn replay_span_and_pacing() {
    use std::sync::atomic::AtomicBool;
    use tf_shm_bag::{replay, ReplayOptions, ScannedBag};

    let bag = ScannedBag::open(&support::bag("short.mcap"), &Topics::default()).unwrap();
    let (first_log, _) = bag.info.log_time_range.unwrap();
    let config = tf_shm::ArenaConfig {
        cache_time_ns: 60_000_000_000,
        ..Default::default()
    };
    let (mut w, v) = tf_shm::Arena::in_memory(&config).unwrap();
    let mut feed = tf_shm_bag::feed::Feed::default();
    let opts = ReplayOptions {
        rate: Some(2.0),
        looped: false,
        start_ns: 200_000_000,
        duration_ns: Some(300_000_000),
    };
    let stop = AtomicBool::new(false);
    let mut seen = Vec::new();
    let end = replay(&bag, &mut w, &mut feed, &opts, &stop, |e| {
        if let tf_shm_bag::Event::Message(p) = e {
            seen.push(p.bag_time_ns)
        }
    })
    .unwrap();
    assert!(!end.stopped && end.loops == 1);
    assert!(!seen.is_empty());
    let (lo, hi) = (first_log + 200_000_000, first_log + 500_000_000);
    assert!(seen.iter().all(|&t| t >= lo && t <= hi), "{lo}..{hi}");
    // The last message is due 0.3 s / 2 after the first.
    let due = std::time::Duration::from_secs_f64((seen.last().unwrap() - seen[0]) as f64 / 2e9);
    assert!(end.elapsed >= due, "{:?} < {due:?}", end.elapsed);
    // Stamps are receive time − 1 ms in this bag: the history holds only the span.
    let id = v.frame_id("base_footprint").unwrap().unwrap();
    let span = v.history_span(id).unwrap().unwrap();
    assert!(span.oldest >= lo as i64 - 1_000_000 && span.newest <= hi as i64 - 1_000_000);
    let st = &bag.info.static_messages[0].transforms[0];
    let sid = v.frame_id(&st.child_frame_id).unwrap().unwrap();
    assert!(v.is_static(sid).unwrap());

    // A raised stop flag ends the replay before the first wait is over.
    let (mut w2, _v2) = tf_shm::Arena::in_memory(&config).unwrap();
    let stop = AtomicBool::new(true);
    let opts = ReplayOptions {
        rate: Some(0.001),
        ..ReplayOptions::default()
    };
    let end = replay(&bag, &mut w2, &mut feed, &opts, &stop, |_| {}).unwrap();
    assert!(end.stopped && end.messages == 0);
}

fn compare_cases(view: &tf_shm::ArenaView, file: &str) -> usize {
    let cases = support::cases_of(file);
    let diffs: Vec<String> = cases
        .iter()
        .filter_map(|c| support::check(c, view.lookup_transform(&c.target, &c.source, c.time)))
        .collect();
    assert!(
        diffs.is_empty(),
        "{file}: {} of {} lookups differ from tf2, e.g.\n{}",
        diffs.len(),
        cases.len(),
        diffs[..diffs.len().min(10)].join("\n")
    );
    cases.len()
}

/// A simulation reset in the bag (/clock and the /tf stamps start over, /tf_static re-sent):
/// loaded as a `use_sim_time` tf2_ros node holds it after `ros2 bag play`, cleared at the
/// backward clock jump, so lookups (time 0 included) answer the second pass as tf2 does.
#[test]
fn reset_bag_is_cleared_at_the_clock_jump() {
    let b = load(&support::bag("reset.mcap")).unwrap();
    assert_eq!(b.clock_clears, 1);
    assert_eq!(b.info.clock_jumps.len(), 1);
    assert!(b.info.clock_messages > 200, "{}", b.info.clock_messages);
    assert_eq!(
        b.info.static_messages.len(),
        2,
        "/tf_static sent again at the reset"
    );
    assert_eq!(
        (b.counts.refused, b.counts.duplicates),
        (0, 0),
        "{:?}",
        b.refusals
    );
    assert!(compare_cases(&b.view, "expect_reset.json") >= 2000);

    // Without the clock, the second pass lands in the first one's history: time 0 still
    // answers the first pass's last stamp (what tf_shm replay did before following /clock).
    let topics = Topics {
        clock: None,
        ..Topics::default()
    };
    let ignored = tf_shm_bag::load_with(&support::bag("reset.mcap"), &topics, None).unwrap();
    assert_eq!((ignored.clock_clears, ignored.info.clock_messages), (0, 0));
    let newest = ignored.info.stamp_range.unwrap().1;
    let t = ignored
        .view
        .lookup_transform("odom", "base_footprint", 0)
        .unwrap();
    assert_eq!(t.stamp, newest);
    let t = b
        .view
        .lookup_transform("odom", "base_footprint", 0)
        .unwrap();
    assert!(t.stamp < newest - 400_000_000, "{} vs {newest}", t.stamp);
    // No clock to follow: the scan lists where each frame's stamps went back.
    let steps = &ignored.info.stamp_steps;
    assert!(!steps.is_empty() && steps.iter().all(|s| s.from - s.to >= 1_400_000_000));
}

/// A clock topic with another schema is refused like a TF topic with one, naming what it must
/// be; the same bag read without its clock loads.
#[test]
fn clock_with_another_schema_is_named_and_can_be_ignored() {
    use std::collections::BTreeMap;
    let path = support::bags().join("wrong_clock.mcap");
    {
        let mut w = mcap::WriteOptions::new()
            .profile("ros2")
            .create(std::io::BufWriter::new(
                std::fs::File::create(&path).unwrap(),
            ))
            .unwrap();
        let tf = w
            .add_schema(
                tf_shm_bag::msg::SCHEMA_NAME,
                "ros2msg",
                tf_shm_bag::msg::SCHEMA_TEXT.as_bytes(),
            )
            .unwrap();
        let float = w
            .add_schema("std_msgs/msg/Float64", "ros2msg", b"float64 data\n")
            .unwrap();
        let tf = w.add_channel(tf, "/tf", "cdr", &BTreeMap::new()).unwrap();
        let clock = w
            .add_channel(float, "/clock", "cdr", &BTreeMap::new())
            .unwrap();
        let msg = tf_shm_bag::msg::TfMessage {
            transforms: vec![tf_shm_bag::msg::TransformStamped {
                header: tf_shm_bag::msg::Header {
                    stamp: tf_shm_bag::msg::Time { sec: 5, nanosec: 0 },
                    frame_id: "map".into(),
                },
                child_frame_id: "base".into(),
                transform: tf_shm_bag::msg::Transform {
                    rotation: tf_shm_bag::msg::Quaternion {
                        w: 1.0,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            }],
        };
        let header = |channel_id, t| mcap::records::MessageHeader {
            channel_id,
            sequence: 0,
            log_time: t,
            publish_time: t,
        };
        w.write_to_known_channel(&header(clock, 1), &[0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
        w.write_to_known_channel(&header(tf, 2), &tf_shm_bag::msg::encode(&msg))
            .unwrap();
        w.finish().unwrap();
    }
    let e = load_err(&path);
    let text = e.to_string();
    assert!(matches!(e, BagError::WrongSchema { .. }), "{text}");
    assert_eq!(e.topic(), Some("/clock"));
    assert!(
        text.contains("std_msgs/msg/Float64") && text.contains("expected rosgraph_msgs/msg/Clock"),
        "{text}"
    );
    let topics = Topics {
        clock: None,
        ..Topics::default()
    };
    let b = tf_shm_bag::load_with(&path, &topics, None).unwrap();
    assert_eq!(b.counts.stored, 1);
    assert_eq!(b.info.clock_messages, 0);
}
