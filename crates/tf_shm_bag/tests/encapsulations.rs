//! TF messages in every encapsulation the middleware reads (XCDR1 and XCDR2, their parameter-list
//! and delimited kinds, either byte order) load from a bag as rosbag2 would have stored them;
//! a malformed one stops the bag at that message with its typed [`CdrError`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tf_shm::cdr::CdrError;
use tf_shm_bag::{load, BagError, BagReader, BagRecord, LoadError, Topics};

/// A TFMessage of one transform written field by field: `id` is the encapsulation id, whose
/// bit 0 is the byte order; XCDR2 ids (0x06–0x0b) align an `f64` to 4, XCDR1 ids to 8.
fn tf_message(id: u8, parent: &str, child: &str, sec: i32, x: f64) -> Vec<u8> {
    let little = id & 1 == 1;
    let f64_align = if id >= 0x06 { 4 } else { 8 };
    let mut m = vec![0, id, 0, 0];
    let pad =
        |m: &mut Vec<u8>, align: usize| m.resize(4 + (m.len() - 4).next_multiple_of(align), 0);
    let u32 = |m: &mut Vec<u8>, v: u32| {
        pad(m, 4);
        m.extend(if little {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
    };
    u32(&mut m, 1);
    u32(&mut m, sec as u32);
    u32(&mut m, 0);
    for name in [parent, child] {
        u32(&mut m, name.len() as u32 + 1);
        m.extend(name.as_bytes());
        m.push(0);
    }
    for v in [x, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0] {
        pad(&mut m, f64_align);
        m.extend(if little {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
    }
    m
}

/// A bag of `/tf_static` then `/tf` messages (receive times 1, 2, ...), as rosbag2 lays it out.
fn write_bag(name: &str, statics: &[Vec<u8>], dynamic: &[Vec<u8>]) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "tf_shm_bag_encapsulations_{}_{name}.mcap",
        std::process::id()
    ));
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut w = mcap::WriteOptions::new()
        .profile("ros2")
        .create(file)
        .unwrap();
    let schema = w
        .add_schema(
            tf_shm_bag::msg::SCHEMA_NAME,
            "ros2msg",
            tf_shm_bag::msg::SCHEMA_TEXT.as_bytes(),
        )
        .unwrap();
    let tf_static = w
        .add_channel(schema, "/tf_static", "cdr", &BTreeMap::new())
        .unwrap();
    let tf = w
        .add_channel(schema, "/tf", "cdr", &BTreeMap::new())
        .unwrap();
    let messages = statics.iter().map(|m| (tf_static, m));
    for ((channel_id, data), t) in messages.chain(dynamic.iter().map(|m| (tf, m))).zip(1..) {
        let header = mcap::records::MessageHeader {
            channel_id,
            sequence: 0,
            log_time: t,
            publish_time: t,
        };
        w.write_to_known_channel(&header, data).unwrap();
    }
    w.finish().unwrap();
    path
}

#[test]
fn xcdr1_and_xcdr2_messages_load_alike() {
    // Names of 3 and 9 bytes end at byte 34 of the body: XCDR1 puts the first f64 at 40,
    // XCDR2 at 36.
    assert_eq!(
        tf_message(0x01, "map", "base_link", 0, 0.0).len(),
        4 + 40 + 56
    );
    assert_eq!(
        tf_message(0x07, "map", "base_link", 0, 0.0).len(),
        4 + 36 + 56
    );
    let dynamic: Vec<Vec<u8>> = [0x00, 0x01, 0x02, 0x03, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b]
        .into_iter()
        .zip(1..)
        .map(|(id, sec)| tf_message(id, "map", "base_link", sec, f64::from(id)))
        .collect();
    let statics = [tf_message(0x07, "base_link", "laser", 0, 0.25)];
    let path = write_bag("all", &statics, &dynamic);
    let bag = load(&path).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_file(&path);
    assert_eq!(bag.counts.stored, 11, "{:?}", bag.refusals);
    assert_eq!(bag.info.static_transforms, 1);
    for (id, sec) in [0x00u8, 0x01, 0x02, 0x03, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b]
        .into_iter()
        .zip(1i64..)
    {
        let t = bag
            .view
            .lookup_transform("map", "base_link", sec * 1_000_000_000)
            .unwrap();
        assert_eq!(
            t.transform.translation,
            [f64::from(id), 0.0, 0.0],
            "{id:#04x}"
        );
    }
    let t = bag.view.lookup_transform("base_link", "laser", 0).unwrap();
    assert_eq!(t.transform.translation, [0.25, 0.0, 0.0]);
}

/// A malformed message fails the bag at that message, as any undecodable one does: the reader
/// returns the messages before it, then [`BagError::Undecodable`] with the decoder's own error,
/// then nothing; loading the bag fails with the same error.
#[test]
fn a_malformed_message_is_a_typed_error_after_the_messages_before_it() {
    let good = |sec| tf_message(0x07, "map", "robot", sec, 1.0);
    let mut cut = good(2);
    cut.truncate(cut.len() - 1);
    let mut other_id = good(2);
    other_id[1] = 0x04;
    let cases = [(cut, "cut"), (other_id, "other_id")];
    for (bad, name) in cases {
        let path = write_bag(name, &[], &[good(1), bad.clone(), good(3)]);
        let mut reader = BagReader::open(&path, &Topics::default()).unwrap();
        match reader.next() {
            Some(Ok(BagRecord::Tf(t))) => {
                assert_eq!(t.message.transforms[0].header.stamp.to_ns(), 1_000_000_000)
            }
            other => panic!("{name}: first message {other:?}"),
        }
        let e = reader.next().expect("an error").unwrap_err();
        let source = match &e {
            BagError::Undecodable {
                index,
                topic,
                log_time,
                source,
                ..
            } => {
                assert_eq!((*index, topic.as_str(), *log_time), (1, "/tf", 2), "{e}");
                *source
            }
            _ => panic!("{name}: {e}"),
        };
        assert_eq!(Err(source), tf_shm::cdr::decode(&bad).map(|_| ()), "{name}");
        match name {
            "cut" => assert!(matches!(source, CdrError::Truncated { .. }), "{e}"),
            _ => assert_eq!(source, CdrError::Encapsulation(0x0004), "{e}"),
        }
        assert!(e.to_string().contains("does not decode"), "{e}");
        let src = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<CdrError>());
        assert_eq!(src, Some(&source));
        assert!(
            reader.next().is_none(),
            "{name}: the reader stops at the error"
        );
        match load(&path) {
            Err(LoadError::Bag(BagError::Undecodable { source: s, .. })) => assert_eq!(s, source),
            Err(e) => panic!("{name}: {e}"),
            Ok(_) => panic!("{name}: loaded"),
        }
        let _ = std::fs::remove_file(&path);
    }
}
