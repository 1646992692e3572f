//! tf2 ROS 2 Jazzy `setTransform` checks and log texts (docs/tf2-semantics.md §2, §7).

use tf_shm::validate::{old_data_message, strip_slash, validate, RefusalCode, TransformInput};

fn input<'a>(parent: &'a str, child: &'a str, p: [f64; 3], q: [f64; 4]) -> TransformInput<'a> {
    TransformInput {
        frame_id: parent,
        child_frame_id: child,
        stamp: 3_400_000_000,
        translation: p,
        rotation: q,
    }
}

const ID: [f64; 4] = [0.0, 0.0, 0.0, 1.0];

fn codes(t: &TransformInput<'_>) -> Vec<RefusalCode> {
    match validate(t, "A") {
        Ok(_) => vec![],
        Err(r) => r.codes().collect(),
    }
}

#[test]
fn accepted_sample_is_stripped_and_normalised() {
    let v = validate(
        &input("/map", "/odom", [1.0, 2.0, 3.0], [0.0, 0.0, 0.0, 2.0]),
        "A",
    )
    .unwrap();
    assert_eq!((v.parent, v.child, v.stamp), ("map", "odom", 3_400_000_000));
    assert_eq!(v.transform.translation, [1.0, 2.0, 3.0]);
    assert_eq!(v.transform.rotation, [0.0, 0.0, 0.0, 1.0]);
    // Only one slash is stripped.
    assert_eq!(strip_slash("//map"), "/map");
    // w < 0 comes back sign-canonical.
    let v = validate(&input("a", "b", [0.0; 3], [0.0, 0.0, 0.0, -1.0]), "A").unwrap();
    assert_eq!(v.transform.rotation, [0.0, 0.0, 0.0, 1.0]);
    // A quaternion with |q|² = 1.5 (ROS 1 would refuse it) is accepted, normalised.
    let v = validate(
        &input("a", "b", [0.0; 3], [0.0, 0.0, 0.5f64.sqrt(), 1.0]),
        "A",
    )
    .unwrap();
    let q = v.transform.rotation;
    assert!((q.iter().map(|c| c * c).sum::<f64>() - 1.0).abs() < 1e-15);
}

#[test]
fn self_transform_after_stripping_and_texts() {
    let r = validate(&input("/base", "base", [0.0; 3], ID), "node_a").unwrap_err();
    assert_eq!(r.codes().collect::<Vec<_>>(), [RefusalCode::SelfTransform]);
    assert_eq!(
        r.reasons[0].message,
        "TF_SELF_TRANSFORM: Ignoring transform from authority \"node_a\" with frame_id and  \
         child_frame_id \"base\" because they are the same"
    );
}

#[test]
fn empty_names_log_every_check() {
    let r = validate(&input("", "", [0.0; 3], ID), "A").unwrap_err();
    assert_eq!(
        r.codes().collect::<Vec<_>>(),
        [
            RefusalCode::SelfTransform,
            RefusalCode::NoChildFrameId,
            RefusalCode::NoFrameId
        ]
    );
    assert_eq!(
        r.reasons[1].message,
        "TF_NO_CHILD_FRAME_ID: Ignoring transform from authority \"A\" because child_frame_id \
         not set "
    );
    assert_eq!(
        r.reasons[2].message,
        "TF_NO_FRAME_ID: Ignoring transform with child_frame_id \"\"  from authority \"A\" \
         because frame_id not set"
    );
    let r = validate(&input("/", "x", [0.0; 3], ID), "A").unwrap_err();
    assert_eq!(r.codes().collect::<Vec<_>>(), [RefusalCode::NoFrameId]);
    assert_eq!(r.codes().next().unwrap().as_str(), "TF_NO_FRAME_ID");
}

#[test]
fn nan_translation_text() {
    let r = validate(&input("a", "b", [f64::NAN, 1.0, -2.5], ID), "A").unwrap_err();
    assert_eq!(r.codes().collect::<Vec<_>>(), [RefusalCode::NanInput]);
    assert_eq!(
        r.reasons[0].message,
        "TF_NAN_INPUT: Ignoring transform for child_frame_id \"b\" from authority \"A\" because \
         of a nan value in the transform (nan 1.000000 -2.500000) (0.000000 0.000000 0.000000 \
         1.000000)"
    );
}

#[test]
fn zero_quaternion_is_nan_and_denormalized() {
    let r = validate(&input("a", "b", [0.0; 3], [0.0; 4]), "A").unwrap_err();
    assert_eq!(
        r.codes().collect::<Vec<_>>(),
        [RefusalCode::NanInput, RefusalCode::DenormalizedQuaternion]
    );
    // The printed quaternion is the NaN one from the matrix round trip; glibc prints its sign.
    let text = &r.reasons[1].message;
    let prefix = "TF_DENORMALIZED_QUATERNION: Ignoring transform for child_frame_id \"b\" from \
                  authority \"A\" because of an invalid quaternion in the transform (";
    assert!(text.starts_with(prefix), "{text}");
    let values = text[prefix.len()..].trim_end_matches(')');
    assert!(
        values.split(' ').all(|v| v == "nan" || v == "-nan"),
        "{text}"
    );
    assert_eq!(values.split(' ').count(), 4);
}

#[test]
fn infinities_translation_passes_quaternion_fails() {
    // tf2 tests translations with isnan only.
    let v = validate(&input("a", "b", [f64::INFINITY, 0.0, 0.0], ID), "A").unwrap();
    assert_eq!(v.transform.translation[0], f64::INFINITY);
    assert_eq!(
        codes(&input("a", "b", [0.0; 3], [f64::INFINITY, 0.0, 0.0, 1.0])),
        [RefusalCode::NanInput, RefusalCode::DenormalizedQuaternion]
    );
    // |q|² overflowing to infinity makes the matrix the identity: accepted as identity.
    let v = validate(&input("a", "b", [0.0; 3], [1e200, 0.0, 0.0, 0.0]), "A").unwrap();
    assert_eq!(v.transform.rotation, [0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn tiny_quaternion_is_accepted() {
    let v = validate(&input("a", "b", [0.0; 3], [0.0, 0.0, 1e-3, 1e-3]), "A").unwrap();
    let q = v.transform.rotation;
    let h = std::f64::consts::FRAC_1_SQRT_2;
    assert!((q[2] - h).abs() < 1e-12 && (q[3] - h).abs() < 1e-12);
}

#[test]
fn old_data_text() {
    assert_eq!(
        old_data_message("odom", 3_400_000_000, "Authority undetectable"),
        "TF_OLD_DATA ignoring data from the past for frame odom at time 3.400000 according to \
         authority Authority undetectable\nPossible reasons are listed at \
         http://wiki.ros.org/tf/Errors%20explained"
    );
    assert_eq!(RefusalCode::OldData.as_str(), "TF_OLD_DATA");
}
