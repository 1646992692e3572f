//! tf2's walk and lookups (docs/tf2-semantics.md §4, §5, §6, §8, §9) over the Vec-backed test store. Expected
//! texts are tf2 ROS 2 Jazzy's; the ROS 1 oracle gave the same links and classes (with its own
//! decimals).

#[path = "common/vec_store.rs"]
mod vec_store;

use tf_shm::walk::*;
use tf_shm::{ExtrapolationKind, TransformError};
use vec_store::{ns, VecStore, S};

fn err_text(r: Result<impl std::fmt::Debug, TransformError>) -> (String, &'static str) {
    let e = r.expect_err("expected an error");
    (e.to_string(), e.class_name())
}

fn approx(a: [f64; 3], b: [f64; 3]) {
    for i in 0..3 {
        assert!((a[i] - b[i]).abs() < 1e-9, "{a:?} != {b:?}");
    }
}

/// map→odom stale at 1 s, odom→base_link fresh to 9.9 s, a one-sample child, another tree.
fn issue_832_store() -> VecStore {
    let mut s = VecStore::default();
    s.add("map", "odom", 0.5, [1.0, 0.0, 0.0]);
    s.add("map", "odom", 1.0, [2.0, 0.0, 0.0]);
    s.add("odom", "base_link", 1.0, [0.0, 1.0, 0.0]);
    s.add("odom", "base_link", 9.9, [0.0, 2.0, 0.0]);
    s.add("base_link", "single", 7.25, [0.0, 0.0, 1.0]);
    s.add("world", "other", 1.0, [0.0; 3]);
    s.add("world", "other", 2.0, [0.0; 3]);
    s
}

#[test]
fn issue_832_target_pass_failure_wins_even_above_common_ancestor() {
    let s = issue_832_store();
    assert_eq!(
        err_text(lookup_transform(&s, "odom", "base_link", 10 * S)),
        (
            "Lookup would require extrapolation into the future.  Requested time 10.000000 but \
             the latest data is at time 1.000000, when looking up transform from frame \
             [base_link] to frame [odom]"
                .to_string(),
            "ForwardExtrapolationException"
        )
    );
    assert_eq!(
        err_text(lookup_transform(&s, "base_link", "odom", 10 * S)),
        (
            "Lookup would require extrapolation into the future.  Requested time 10.000000 but \
             the latest data is at time 9.900000, when looking up transform from frame [odom] \
             to frame [base_link]"
                .to_string(),
            "ForwardExtrapolationException"
        )
    );
}

#[test]
fn single_sample_problem_hidden_by_an_upper_link() {
    let s = issue_832_store();
    // Source `single` fails first, then the target pass meets the stale map→odom link.
    assert_eq!(
        err_text(lookup_transform(&s, "base_link", "single", ns(7.5))).0,
        "Lookup would require extrapolation into the future.  Requested time 7.500000 but the \
         latest data is at time 1.000000, when looking up transform from frame [single] to \
         frame [base_link]"
    );
    // Reversed, the single-sample link is in the target pass and is reported.
    let e = lookup_transform(&s, "single", "base_link", ns(7.5)).unwrap_err();
    assert_eq!(
        e,
        TransformError::Extrapolation {
            kind: ExtrapolationKind::NoData,
            message: "Lookup would require extrapolation at time 7.500000, but only time \
                      7.250000 is in the buffer, when looking up transform from frame \
                      [base_link] to frame [single]"
                .to_string()
        }
    );
}

#[test]
fn unconnected_trees_class_depends_on_source_coverage() {
    let s = issue_832_store();
    // 5 s: odom's link fails in the source pass → that extrapolation error.
    let (text, class) = err_text(lookup_transform(&s, "world", "odom", 5 * S));
    assert_eq!(class, "ForwardExtrapolationException");
    assert!(text.ends_with(
        "latest data is at time 1.000000, when looking up transform from frame [odom] to \
         frame [world]"
    ));
    // 0.75 s: covered → connectivity.
    assert_eq!(
        err_text(lookup_transform(&s, "world", "odom", ns(0.75))),
        (
            "Could not find a connection between 'world' and 'odom' because they are not part \
             of the same tree.Tf has two or more unconnected trees."
                .to_string(),
            "ConnectivityException"
        )
    );
    let (text, class) = err_text(lookup_transform(&s, "base_link", "other", ns(1.5)));
    assert_eq!(class, "ForwardExtrapolationException");
    assert!(text.contains("Requested time 1.500000 but the latest data is at time 1.000000"));
    // Past side.
    let (text, class) = err_text(lookup_transform(&s, "odom", "base_link", ns(0.5)));
    assert_eq!(class, "BackwardExtrapolationException");
    assert_eq!(
        text,
        "Lookup would require extrapolation into the past.  Requested time 0.500000 but the \
         earliest data is at time 1.000000, when looking up transform from frame [base_link] \
         to frame [odom]"
    );
}

#[test]
fn time_zero_and_chain_composition() {
    let s = issue_832_store();
    let t = lookup_transform(&s, "map", "base_link", 0).unwrap();
    assert_eq!(t.stamp, S);
    assert_eq!((t.frame_id, t.child_frame_id), ("map", "base_link"));
    approx(t.transform.translation, [2.0, 1.0, 0.0]);
    assert_eq!(get_latest_common_time(&s, "map", "base_link"), Ok(S));
    // Inverse direction.
    let t = lookup_transform(&s, "base_link", "map", S).unwrap();
    approx(t.transform.translation, [-2.0, -1.0, 0.0]);
}

#[test]
fn section5_latest_common_time_counts_only_links_below_the_common_ancestor() {
    let mut s = VecStore::default();
    // Newest samples as in docs/tf2-semantics.md §5; each link also has an old sample so lookups can succeed.
    for (parent, child, newest) in [
        ("map", "odom", 5.0),
        ("odom", "base", 3.0),
        ("base", "laser", 4.0),
        ("base", "imu", 6.0),
    ] {
        s.add(parent, child, 0.5, [0.0; 3]);
        s.add(parent, child, newest, [0.0; 3]);
    }
    assert_eq!(
        lookup_transform(&s, "map", "laser", 0).unwrap().stamp,
        3 * S
    );
    // laser↔imu: the common ancestor is base; odom→base (3 s) fails at 4 s in the source
    // pass at the top and is tolerated.
    assert_eq!(
        lookup_transform(&s, "laser", "imu", 0).unwrap().stamp,
        4 * S
    );
    assert_eq!(get_latest_common_time(&s, "laser", "imu"), Ok(4 * S));
    assert_eq!(get_latest_common_time(&s, "imu", "laser"), Ok(4 * S));
    // Target is an ancestor of source / source an ancestor of target.
    assert_eq!(get_latest_common_time(&s, "odom", "laser"), Ok(3 * S));
    assert_eq!(get_latest_common_time(&s, "laser", "odom"), Ok(3 * S));
    // Same frame: its newest stamp; a root has none.
    assert_eq!(get_latest_common_time(&s, "imu", "imu"), Ok(6 * S));
    assert_eq!(get_latest_common_time(&s, "map", "map"), Ok(0));
    // Names validated as tf2_py's get_latest_common_time does.
    assert_eq!(
        get_latest_common_time(&s, "map", "ghost"),
        Err(TransformError::Lookup(
            "\"ghost\" passed to get_latest_common_time does not exist. ".to_string()
        ))
    );
    assert_eq!(
        get_latest_common_time(&s, "", "ghost")
            .unwrap_err()
            .to_string(),
        "Invalid argument \"\" passed to get_latest_common_time - in tf2 frame_ids cannot be \
         empty"
    );
}

#[test]
fn time_zero_fails_into_the_past_for_a_frame_that_just_started() {
    let mut s = VecStore::default();
    s.add("map", "odom", 1.0, [0.0; 3]);
    s.add("map", "odom", 5.0, [0.0; 3]);
    s.add("odom", "base", 6.0, [0.0; 3]);
    s.add("odom", "base", 7.0, [0.0; 3]);
    s.add("map", "new", 4.0, [0.0; 3]);
    s.add("map", "new", 6.5, [0.0; 3]);
    // Common time of base↔new is 5 (min over both sides); base's oldest is 6.
    let (text, class) = err_text(lookup_transform(&s, "new", "base", 0));
    assert_eq!(class, "BackwardExtrapolationException");
    assert!(text.starts_with(
        "Lookup would require extrapolation into the past.  Requested time 5.000000 but the \
         earliest data is at time 6.000000"
    ));
}

#[test]
fn identity_rules_for_equal_names() {
    let s = issue_832_store();
    // Equal names: no validation at all.
    for name in ["", "/x", "ghost"] {
        let t = lookup_transform(&s, name, name, 7).unwrap();
        assert_eq!(t.stamp, 7);
        assert_eq!(t.transform, tf_shm::Transform::IDENTITY);
        assert_eq!(lookup_transform(&s, name, name, 0).unwrap().stamp, 0);
        assert_eq!(can_transform(&s, name, name, 3), Ok(()));
    }
    // Time 0: newest stamp of the frame's own cache.
    assert_eq!(
        lookup_transform(&s, "base_link", "base_link", 0)
            .unwrap()
            .stamp,
        ns(9.9)
    );
    assert_eq!(lookup_transform(&s, "map", "map", 0).unwrap().stamp, 0);
}

#[test]
fn section43_argument_texts() {
    let s = issue_832_store();
    assert_eq!(
        err_text(lookup_transform(&s, "", "odom", 0)),
        (
            "Invalid argument \"\" passed to lookupTransform argument target_frame - in tf2 \
             frame_ids cannot be empty"
                .to_string(),
            "InvalidArgumentException"
        )
    );
    assert_eq!(
        err_text(lookup_transform(&s, "/map", "odom", 0)),
        (
            "Invalid argument \"/map\" passed to lookupTransform argument target_frame - in tf2 \
             frame_ids cannot start with a '/'"
                .to_string(),
            "InvalidArgumentException"
        )
    );
    assert_eq!(
        err_text(lookup_transform(&s, "map", "ghost", 0)),
        (
            "\"ghost\" passed to lookupTransform argument source_frame does not exist. "
                .to_string(),
            "LookupException"
        )
    );
    // Target is validated first.
    assert!(err_text(lookup_transform(&s, "ghost", "", 0))
        .0
        .starts_with("\"ghost\" passed to lookupTransform argument target_frame"));
}

#[test]
fn empty_cache_after_clear_has_empty_text() {
    let mut s = issue_832_store();
    s.clear();
    let e = lookup_transform(&s, "map", "odom", S).unwrap_err();
    assert_eq!(
        e,
        TransformError::Extrapolation {
            kind: ExtrapolationKind::NoData,
            message: ", when looking up transform from frame [odom] to frame [map]".to_string()
        }
    );
    // Time 0 with cleared caches: no link has data, common time search finds no common parent.
    let (_, class) = err_text(lookup_transform(&s, "map", "odom", 0));
    assert_eq!(class, "ConnectivityException");
}

#[test]
fn section63_can_transform_texts() {
    let s = issue_832_store();
    assert_eq!(can_transform(&s, "map", "base_link", S), Ok(()));
    assert_eq!(
        can_transform(&s, "ghost", "", 0).unwrap_err().to_string(),
        "Invalid frame ID \"ghost\" passed to canTransform argument target_frame - frame does \
         not exist"
    );
    assert_eq!(
        can_transform(&s, "map", "", 0).unwrap_err(),
        TransformError::InvalidArgument(
            "Invalid frame ID \"\" passed to canTransform argument source_frame - in tf2 \
             frame_ids cannot be empty"
                .to_string()
        )
    );
    assert_eq!(
        can_transform(&s, "/map", "odom", 0)
            .unwrap_err()
            .to_string(),
        "Invalid frame ID \"/map\" passed to canTransform argument target_frame - in tf2 \
         frame_ids cannot start with a '/'"
    );
    // Walk failures carry the lookup's text and class.
    for (t, src, time) in [
        ("odom", "base_link", 10 * S),
        ("world", "odom", ns(0.75)),
        ("single", "base_link", ns(7.5)),
    ] {
        assert_eq!(
            can_transform(&s, t, src, time).unwrap_err(),
            lookup_transform(&s, t, src, time).unwrap_err()
        );
    }
    assert_eq!(
        can_transform_full(&s, "map", S, "base_link", S, "ghost")
            .unwrap_err()
            .to_string(),
        "Invalid frame ID \"ghost\" passed to canTransform argument fixed_frame - frame does \
         not exist"
    );
}

#[test]
fn can_transform_does_not_interpolate_but_checks_coverage() {
    let mut s = VecStore::default();
    s.add("a", "b", 1.0, [0.0; 3]);
    s.add("a", "b", 2.0, [0.0; 3]);
    assert_eq!(can_transform(&s, "a", "b", ns(1.5)), Ok(()));
    assert!(can_transform(&s, "a", "b", ns(2.5)).is_err());
}

#[test]
fn section62_two_time_lookup() {
    let mut s = VecStore::default();
    // A robot moving along x in odom; a sensor fixed on it.
    s.add("odom", "base", 1.0, [1.0, 0.0, 0.0]);
    s.add("odom", "base", 3.0, [3.0, 0.0, 0.0]);
    s.add_static("base", "cam", [0.0, 0.0, 1.0]);
    // Where was the camera (at 1 s) as seen from the base at 3 s, through odom?
    let t = lookup_transform_full(&s, "base", 3 * S, "cam", S, "odom").unwrap();
    assert_eq!(t.stamp, 3 * S);
    assert_eq!((t.frame_id, t.child_frame_id), ("base", "cam"));
    approx(t.transform.translation, [-2.0, 0.0, 1.0]);
    assert_eq!(t.transform.rotation, [0.0, 0.0, 0.0, 1.0]);
    // Time 0 for the target half: stamp = latest common time of base↔odom.
    assert_eq!(
        lookup_transform_full(&s, "base", 0, "cam", S, "odom")
            .unwrap()
            .stamp,
        3 * S
    );
    // All three names are validated before anything else, in order target, source, fixed.
    assert_eq!(
        err_text(lookup_transform_full(&s, "base", S, "cam", S, "ghost")).0,
        "\"ghost\" passed to lookupTransform argument fixed_frame does not exist. "
    );
    assert!(err_text(lookup_transform_full(&s, "", S, "ghost", S, "/x"))
        .0
        .contains("target_frame"));
    // Source half errors first.
    let (text, _) = err_text(lookup_transform_full(
        &s,
        "base",
        9 * S,
        "cam",
        8 * S,
        "odom",
    ));
    assert!(text.contains("Requested time 8.000000"), "{text}");
}

#[test]
fn two_time_result_is_matrix_canonical() {
    let mut s = VecStore::default();
    let half = std::f64::consts::FRAC_1_SQRT_2;
    // Two 90° steps about z make 180°; Bullet's matrix→quaternion picks +z (trace −1).
    s.insert("w", "a", S, [0.0; 3], [0.0, 0.0, half, half])
        .unwrap();
    s.insert("a", "b", S, [0.0; 3], [0.0, 0.0, half, half])
        .unwrap();
    let t = lookup_transform_full(&s, "w", S, "b", S, "a").unwrap();
    let q = t.transform.rotation;
    assert!(q[2] > 0.999_999 && q[3].abs() < 1e-9, "{q:?}");
}

#[test]
fn section8_statics_any_time_and_never_limit_time_zero() {
    let mut s = VecStore::default();
    s.add_static("base", "laser", [0.5, 0.0, 0.0]);
    s.add("odom", "base", 2.0, [1.0, 0.0, 0.0]);
    s.add("odom", "base", 4.0, [3.0, 0.0, 0.0]);
    let t = lookup_transform(&s, "odom", "laser", 0).unwrap();
    assert_eq!(t.stamp, 4 * S);
    approx(t.transform.translation, [3.5, 0.0, 0.0]);
    let t = lookup_transform(&s, "odom", "laser", 3 * S).unwrap();
    approx(t.transform.translation, [2.5, 0.0, 0.0]);
    // Static only: any time, stamp as requested (0 for 0).
    let t = lookup_transform(&s, "base", "laser", 123 * S).unwrap();
    assert_eq!(t.stamp, 123 * S);
    assert_eq!(lookup_transform(&s, "laser", "base", 0).unwrap().stamp, 0);
    // Last static insert wins; survives clear.
    s.add_static("base", "laser", [0.7, 0.0, 0.0]);
    s.clear();
    approx(
        lookup_transform(&s, "base", "laser", S)
            .unwrap()
            .transform
            .translation,
        [0.7, 0.0, 0.0],
    );
    assert!(lookup_transform(&s, "odom", "laser", 3 * S).is_err());
}

#[test]
fn ros2_kind_switch_drops_history() {
    let mut s = VecStore::default();
    s.add("a", "b", 1.0, [1.0, 0.0, 0.0]);
    s.add("a", "b", 2.0, [2.0, 0.0, 0.0]);
    s.add_static("a", "b", [5.0, 0.0, 0.0]);
    approx(
        lookup_transform(&s, "a", "b", ns(1.5))
            .unwrap()
            .transform
            .translation,
        [5.0, 0.0, 0.0],
    );
    s.add("a", "b", 3.0, [3.0, 0.0, 0.0]);
    assert!(lookup_transform(&s, "a", "b", ns(1.5)).is_err());
    assert_eq!(lookup_transform(&s, "a", "b", 0).unwrap().stamp, 3 * S);
}

#[test]
fn section9_reparenting_returns_older_sample_unchanged() {
    let mut s = VecStore::default();
    s.add("odom", "base", 1.0, [1.0, 0.0, 0.0]);
    s.add("map", "base", 3.0, [3.0, 0.0, 0.0]);
    s.add("map", "odom", 1.0, [10.0, 0.0, 0.0]);
    s.add("map", "odom", 3.0, [10.0, 0.0, 0.0]);
    // Between the samples: the older one (parent odom), no blending.
    let t = lookup_transform(&s, "odom", "base", 2 * S).unwrap();
    approx(t.transform.translation, [1.0, 0.0, 0.0]);
    let t = lookup_transform(&s, "map", "base", 2 * S).unwrap();
    approx(t.transform.translation, [11.0, 0.0, 0.0]);
    // At the new sample the chain goes through map directly.
    let t = lookup_transform(&s, "map", "base", 3 * S).unwrap();
    approx(t.transform.translation, [3.0, 0.0, 0.0]);
    // Time 0 uses the newest parent.
    assert_eq!(get_parent(&s, "base", 0).unwrap().as_deref(), Some("map"));
    assert_eq!(
        get_parent(&s, "base", 2 * S).unwrap().as_deref(),
        Some("odom")
    );
    assert_eq!(get_parent(&s, "base", 9 * S).unwrap(), None);
    assert_eq!(get_parent(&s, "map", 0).unwrap(), None);
}

#[test]
fn two_publishers_bracketed_by_the_other_tree_is_connectivity() {
    let mut s = VecStore::default();
    s.add("tree_a", "x", 1.0, [0.0; 3]);
    s.add("tree_b", "x", 2.0, [0.0; 3]);
    s.add("tree_a", "x", 3.0, [0.0; 3]);
    assert!(lookup_transform(&s, "tree_a", "x", ns(1.5)).is_ok());
    let (_, class) = err_text(lookup_transform(&s, "tree_a", "x", ns(2.5)));
    assert_eq!(class, "ConnectivityException");
    assert!(lookup_transform(&s, "tree_b", "x", ns(2.5)).is_ok());
}

#[test]
fn non_unit_and_rotated_chain_matches_hand_computation() {
    let mut s = VecStore::default();
    let half = std::f64::consts::FRAC_1_SQRT_2;
    // base is at (1,0,0) in odom, rotated 90° about z; laser at (1,0,0) in base.
    s.insert("odom", "base", S, [1.0, 0.0, 0.0], [0.0, 0.0, half, half])
        .unwrap();
    s.insert("base", "laser", S, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])
        .unwrap();
    let t = lookup_transform(&s, "odom", "laser", S).unwrap();
    approx(t.transform.translation, [1.0, 1.0, 0.0]);
    let t = lookup_transform(&s, "laser", "odom", S).unwrap();
    approx(t.transform.translation, [-1.0, 1.0, 0.0]);
    let q = t.transform.rotation;
    assert!(
        (q[2] + half).abs() < 1e-12 && (q[3] - half).abs() < 1e-12,
        "{q:?}"
    );
}

#[test]
fn slerp_170_to_minus_170_passes_through_180_and_is_canonicalised() {
    let mut s = VecStore::default();
    let (s85, c85) = (85f64.to_radians().sin(), 85f64.to_radians().cos());
    s.insert("a", "b", S, [0.0; 3], [0.0, 0.0, s85, c85])
        .unwrap();
    s.insert("a", "b", 3 * S, [0.0; 3], [0.0, 0.0, -s85, c85])
        .unwrap();
    let q = lookup_transform(&s, "a", "b", 2 * S)
        .unwrap()
        .transform
        .rotation;
    assert!((q[2] - 1.0).abs() < 1e-12 && q[3].abs() < 1e-12, "{q:?}");
    let q = lookup_transform(&s, "a", "b", ns(1.5))
        .unwrap()
        .transform
        .rotation;
    // 175°: w = cos(87.5°) > 0, z = sin(87.5°).
    let (s875, c875) = (87.5f64.to_radians().sin(), 87.5f64.to_radians().cos());
    assert!(
        (q[2] - s875).abs() < 1e-12 && (q[3] - c875).abs() < 1e-12,
        "{q:?}"
    );
}

#[test]
fn loop_is_reported_with_frame_dump() {
    let mut s = VecStore::default();
    s.force_link("b", "a", S);
    s.force_link("a", "b", S);
    s.add("root", "c", 1.0, [0.0; 3]);
    let (text, class) = err_text(lookup_transform(&s, "c", "a", S));
    assert_eq!(class, "LookupException");
    assert_eq!(
        text,
        "The tf tree is invalid because it contains a loop.\nFrame a exists with parent b.\n\
         Frame b exists with parent a.\nFrame c exists with parent root.\n\n"
    );
    let (text, _) = err_text(lookup_transform(&s, "c", "a", 0));
    assert!(text.starts_with("The tf tree is invalid because it contains a loop.\n"));
    let (text, _) = err_text(lookup_transform(&s, "a", "c", S));
    assert!(text.starts_with("The tf tree is invalid because it contains a loop.\n"));
}

#[test]
fn ids_lookup_matches_string_lookup() {
    use tf_shm::store::FrameStore;
    let s = issue_832_store();
    let map = s.frame_id("map").unwrap().unwrap();
    let base = s.frame_id("base_link").unwrap().unwrap();
    let by_name = lookup_transform(&s, "map", "base_link", ns(0.95)).unwrap_err();
    assert_eq!(
        lookup_transform_ids(&s, map, base, ns(0.95)).unwrap_err(),
        by_name
    );
    let by_name = lookup_transform(&s, "map", "base_link", S).unwrap();
    let (stamp, t) = lookup_transform_ids(&s, map, base, S).unwrap();
    assert_eq!((stamp, t), (by_name.stamp, by_name.transform));
    assert_eq!(
        lookup_transform_ids(&s, base, map, 10 * S).unwrap_err(),
        lookup_transform(&s, "base_link", "map", 10 * S).unwrap_err()
    );
    assert!(lookup_transform_ids(&s, 0, map, S).is_err());
    assert!(lookup_transform_ids(&s, 999, map, S).is_err());
    assert_eq!(lookup_transform_ids(&s, base, base, 0).unwrap().0, ns(9.9));
}

#[test]
fn listings() {
    let mut s = VecStore::default();
    assert_eq!(all_frames_as_yaml(&s, 0).unwrap(), "[]");
    assert_eq!(all_frames_as_string(&s).unwrap(), "");
    s.add("map", "odom", 1.0, [0.0; 3]);
    s.add("map", "odom", 3.0, [0.0; 3]);
    s.add_static("odom", "cam", [0.0; 3]);
    assert_eq!(
        all_frames_as_string(&s).unwrap(),
        "Frame odom exists with parent map.\nFrame cam exists with parent odom.\n"
    );
    assert_eq!(
        all_frames_as_yaml(&s, ns(3.5)).unwrap(),
        "odom: \n  parent: 'map'\n  broadcaster: 'test'\n  rate: 1.000\n  \
         most_recent_transform: 3.000000\n  oldest_transform: 1.000000\n  \
         transform_delay: 0.500\n  buffer_length: 2.000\n\
         cam: \n  parent: 'odom'\n  broadcaster: 'test'\n  rate: 10000.000\n  \
         most_recent_transform: 0.000000\n  oldest_transform: 0.000000\n  \
         transform_delay: 3.500\n  buffer_length: 0.000\n"
    );
    assert!(!all_frames_as_yaml(&s, 0)
        .unwrap()
        .contains("transform_delay"));
    // A cleared frame is listed with NO_PARENT as a string, skipped in YAML.
    s.clear();
    assert_eq!(
        all_frames_as_string(&s).unwrap(),
        "Frame odom exists with parent NO_PARENT.\nFrame cam exists with parent odom.\n"
    );
    assert!(!all_frames_as_yaml(&s, 0).unwrap().contains("odom: "));
    assert_eq!(
        get_all_frame_names(&s).unwrap(),
        ["odom", "map", "cam"].map(String::from)
    );
    assert!(frame_exists(&s, "map").unwrap());
    assert!(!frame_exists(&s, "ghost").unwrap());
    assert!(frame_exists(&s, "NO_PARENT").unwrap());
}
