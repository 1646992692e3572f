//! `tf_shm::cdr` against the middleware's own serialisation: r2r's `to_serialized_bytes` and
//! `from_serialized_bytes` (rmw_serialize / rmw_deserialize of the RMW in use), for TFMessage
//! and Clock.

use proptest::prelude::*;
use r2r::geometry_msgs::msg::{Quaternion, Transform, TransformStamped, Vector3};
use r2r::tf2_msgs::msg::TFMessage;
use r2r::WrappedTypesupport;
use tf_shm::cdr::{decode, decode_clock};
use tf_shm::validate::TransformInput;

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_/]{0,12}",
        any::<String>().prop_map(|s| s.replace('\0', "")),
    ]
}

fn transform() -> impl Strategy<Value = TransformStamped> {
    (
        (any::<i32>(), any::<u32>(), name(), name()),
        prop::array::uniform7(any::<f64>()),
    )
        .prop_map(|((sec, nanosec, parent, child), v)| {
            let mut t = TransformStamped::default();
            t.header.stamp.sec = sec;
            t.header.stamp.nanosec = nanosec;
            t.header.frame_id = parent;
            t.child_frame_id = child;
            t.transform = Transform {
                translation: Vector3 {
                    x: v[0],
                    y: v[1],
                    z: v[2],
                },
                rotation: Quaternion {
                    x: v[3],
                    y: v[4],
                    z: v[5],
                    w: v[6],
                },
            };
            t
        })
}

fn message() -> impl Strategy<Value = TFMessage> {
    prop::collection::vec(transform(), 0..6).prop_map(|transforms| TFMessage { transforms })
}

/// Field by field, f64 by their bits (NaN payloads included).
fn same(ours: &[TransformInput<'_>], theirs: &TFMessage) -> Result<(), TestCaseError> {
    prop_assert_eq!(ours.len(), theirs.transforms.len());
    for (a, b) in ours.iter().zip(&theirs.transforms) {
        let (p, q) = (&b.transform.translation, &b.transform.rotation);
        prop_assert_eq!(a.frame_id, b.header.frame_id.as_str());
        prop_assert_eq!(a.child_frame_id, b.child_frame_id.as_str());
        let stamp =
            i64::from(b.header.stamp.sec) * 1_000_000_000 + i64::from(b.header.stamp.nanosec);
        prop_assert_eq!(a.stamp, stamp);
        let theirs = [p.x, p.y, p.z, q.x, q.y, q.z, q.w].map(f64::to_bits);
        let ours = [a.translation.as_slice(), a.rotation.as_slice()].concat();
        prop_assert_eq!(ours.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), theirs);
    }
    Ok(())
}

/// Both readers accept `bytes` and read the same transforms, or both refuse them.
fn compare(bytes: &[u8]) -> Result<(), TestCaseError> {
    let theirs = TFMessage::from_serialized_bytes(bytes);
    match (decode(bytes), theirs) {
        (Ok(ours), Ok(theirs)) => same(&ours.collect::<Vec<_>>(), &theirs),
        (Err(_), Err(_)) => Ok(()),
        (Ok(ours), Err(e)) => Err(TestCaseError::fail(format!(
            "accepted {} transforms the middleware refuses ({e})",
            ours.len()
        ))),
        (Err(e), Ok(theirs)) => Err(TestCaseError::fail(format!(
            "refused ({e}) {} transforms the middleware reads",
            theirs.transforms.len()
        ))),
    }
}

/// A TFMessage of two transforms in XCDR1 in either byte order (r2r writes little-endian only).
fn two(be: bool) -> Vec<u8> {
    fn pad(m: &mut Vec<u8>, align: usize) {
        m.resize(4 + (m.len() - 4).next_multiple_of(align), 0);
    }
    fn u32(m: &mut Vec<u8>, v: u32, be: bool) {
        pad(m, 4);
        m.extend(if be { v.to_be_bytes() } else { v.to_le_bytes() });
    }
    let mut m = vec![0, u8::from(!be), 0, 0];
    u32(&mut m, 2, be);
    for (parent, child, base) in [("map", "odom", 1.0), ("odom", "base_link", 10.0)] {
        u32(&mut m, 7, be);
        u32(&mut m, 500, be);
        for name in [parent, child] {
            u32(&mut m, name.len() as u32 + 1, be);
            m.extend(name.as_bytes());
            m.push(0);
        }
        for i in 0..7 {
            pad(&mut m, 8);
            let v = base + f64::from(i);
            m.extend(if be { v.to_be_bytes() } else { v.to_le_bytes() });
        }
    }
    m
}

/// Every encapsulation id, on a message of each byte order: accepted and read alike, or
/// refused by both.
#[test]
fn every_encapsulation_is_read_as_the_middleware_reads_it() {
    for be in [false, true] {
        let mut bytes = two(be);
        for id in 0..=u16::MAX {
            bytes[..2].copy_from_slice(&id.to_be_bytes());
            if let Err(e) = compare(&bytes) {
                panic!("encapsulation 0x{id:04x}, big-endian payload {be}: {e}");
            }
        }
    }
}

/// A Clock in either byte order, each encapsulation id and each cut of it: read as the
/// middleware reads it, or refused by both.
#[test]
fn clocks_are_read_as_the_middleware_reads_them() {
    use r2r::rosgraph_msgs::msg::Clock;
    let compare = |bytes: &[u8]| {
        let theirs = Clock::from_serialized_bytes(bytes)
            .map(|c| i64::from(c.clock.sec) * 1_000_000_000 + i64::from(c.clock.nanosec));
        match (decode_clock(bytes), theirs) {
            (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "{bytes:?}"),
            (Err(_), Err(_)) => {}
            (ours, theirs) => panic!("{bytes:?}: ours {ours:?}, the middleware's {theirs:?}"),
        }
    };
    for be in [false, true] {
        let mut m = vec![0, u8::from(!be), 0, 0];
        for v in [-3i32 as u32, 999_999_999] {
            m.extend(if be { v.to_be_bytes() } else { v.to_le_bytes() });
        }
        for n in 0..=m.len() {
            compare(&m[..n]);
        }
        for id in 0..=u16::MAX {
            m[..2].copy_from_slice(&id.to_be_bytes());
            compare(&m);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn reads_what_the_middleware_writes(m in message()) {
        let bytes = m.to_serialized_bytes().unwrap();
        let ours: Vec<_> = decode(&bytes).unwrap().collect();
        same(&ours, &m)?;
        compare(&bytes)?;
    }

    #[test]
    fn cut_messages_are_refused_as_the_middleware_refuses_them(
        m in message(), cut in any::<prop::sample::Index>()
    ) {
        let bytes = m.to_serialized_bytes().unwrap();
        compare(&bytes[..cut.index(bytes.len() + 1)])?;
    }

    #[test]
    fn corrupted_messages_agree_with_the_middleware(
        m in message(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)
    ) {
        let mut bytes = m.to_serialized_bytes().unwrap();
        for (at, v) in edits {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        compare(&bytes)?;
    }
}
