//! tf2's walk and lookups (docs/tf2-semantics.md §4, §5, §6, §8, §9), one suite over every store: the
//! Vec-backed test store, an in-memory arena and a read-only memfd arena (`common/backends.rs`),
//! queried through `tf_shm::BufferCore`. Expected texts are tf2 ROS 2 Jazzy's; the ROS 1 oracle
//! gave the same links and classes (with its own decimals).

#[path = "common/backends.rs"]
mod backends;
#[path = "common/vec_store.rs"]
mod vec_store;

use backends::Backend;
use tf_shm::walk::lookup_transform_ids;
use tf_shm::BufferCore;
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
fn issue_832_store<B: Backend>() -> B {
    let mut s = B::new();
    s.add("map", "odom", 0.5, [1.0, 0.0, 0.0]);
    s.add("map", "odom", 1.0, [2.0, 0.0, 0.0]);
    s.add("odom", "base_link", 1.0, [0.0, 1.0, 0.0]);
    s.add("odom", "base_link", 9.9, [0.0, 2.0, 0.0]);
    s.add("base_link", "single", 7.25, [0.0, 0.0, 1.0]);
    s.add("world", "other", 1.0, [0.0; 3]);
    s.add("world", "other", 2.0, [0.0; 3]);
    s
}

fn issue_832_target_pass_failure_wins_even_above_common_ancestor<B: Backend>() {
    let s = issue_832_store::<B>();
    assert_eq!(
        err_text(s.lookup_transform("odom", "base_link", 10 * S)),
        (
            "Lookup would require extrapolation into the future.  Requested time 10.000000 but \
             the latest data is at time 1.000000, when looking up transform from frame \
             [base_link] to frame [odom]"
                .to_string(),
            "ForwardExtrapolationException"
        )
    );
    assert_eq!(
        err_text(s.lookup_transform("base_link", "odom", 10 * S)),
        (
            "Lookup would require extrapolation into the future.  Requested time 10.000000 but \
             the latest data is at time 9.900000, when looking up transform from frame [odom] \
             to frame [base_link]"
                .to_string(),
            "ForwardExtrapolationException"
        )
    );
}

fn single_sample_problem_hidden_by_an_upper_link<B: Backend>() {
    let s = issue_832_store::<B>();
    // Source `single` fails first, then the target pass meets the stale map→odom link.
    assert_eq!(
        err_text(s.lookup_transform("base_link", "single", ns(7.5))).0,
        "Lookup would require extrapolation into the future.  Requested time 7.500000 but the \
         latest data is at time 1.000000, when looking up transform from frame [single] to \
         frame [base_link]"
    );
    // Reversed, the single-sample link is in the target pass and is reported.
    let e = s
        .lookup_transform("single", "base_link", ns(7.5))
        .unwrap_err();
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

fn unconnected_trees_class_depends_on_source_coverage<B: Backend>() {
    let s = issue_832_store::<B>();
    // 5 s: odom's link fails in the source pass → that extrapolation error.
    let (text, class) = err_text(s.lookup_transform("world", "odom", 5 * S));
    assert_eq!(class, "ForwardExtrapolationException");
    assert!(text.ends_with(
        "latest data is at time 1.000000, when looking up transform from frame [odom] to \
         frame [world]"
    ));
    // 0.75 s: covered → connectivity.
    assert_eq!(
        err_text(s.lookup_transform("world", "odom", ns(0.75))),
        (
            "Could not find a connection between 'world' and 'odom' because they are not part \
             of the same tree.Tf has two or more unconnected trees."
                .to_string(),
            "ConnectivityException"
        )
    );
    let (text, class) = err_text(s.lookup_transform("base_link", "other", ns(1.5)));
    assert_eq!(class, "ForwardExtrapolationException");
    assert!(text.contains("Requested time 1.500000 but the latest data is at time 1.000000"));
    // Past side.
    let (text, class) = err_text(s.lookup_transform("odom", "base_link", ns(0.5)));
    assert_eq!(class, "BackwardExtrapolationException");
    assert_eq!(
        text,
        "Lookup would require extrapolation into the past.  Requested time 0.500000 but the \
         earliest data is at time 1.000000, when looking up transform from frame [base_link] \
         to frame [odom]"
    );
}

fn time_zero_and_chain_composition<B: Backend>() {
    let s = issue_832_store::<B>();
    let t = s.lookup_transform("map", "base_link", 0).unwrap();
    assert_eq!(t.stamp, S);
    assert_eq!((t.frame_id, t.child_frame_id), ("map", "base_link"));
    approx(t.transform.translation, [2.0, 1.0, 0.0]);
    assert_eq!(s.get_latest_common_time("map", "base_link"), Ok(S));
    // Inverse direction.
    let t = s.lookup_transform("base_link", "map", S).unwrap();
    approx(t.transform.translation, [-2.0, -1.0, 0.0]);
}

fn section5_latest_common_time_counts_only_links_below_the_common_ancestor<B: Backend>() {
    let mut s = B::new();
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
    assert_eq!(s.lookup_transform("map", "laser", 0).unwrap().stamp, 3 * S);
    // laser↔imu: the common ancestor is base; odom→base (3 s) fails at 4 s in the source
    // pass at the top and is tolerated.
    assert_eq!(s.lookup_transform("laser", "imu", 0).unwrap().stamp, 4 * S);
    assert_eq!(s.get_latest_common_time("laser", "imu"), Ok(4 * S));
    assert_eq!(s.get_latest_common_time("imu", "laser"), Ok(4 * S));
    // Target is an ancestor of source / source an ancestor of target.
    assert_eq!(s.get_latest_common_time("odom", "laser"), Ok(3 * S));
    assert_eq!(s.get_latest_common_time("laser", "odom"), Ok(3 * S));
    // Same frame: its newest stamp; a root has none.
    assert_eq!(s.get_latest_common_time("imu", "imu"), Ok(6 * S));
    assert_eq!(s.get_latest_common_time("map", "map"), Ok(0));
    // Names validated as tf2_py's get_latest_common_time does.
    assert_eq!(
        s.get_latest_common_time("map", "ghost"),
        Err(TransformError::Lookup(
            "\"ghost\" passed to get_latest_common_time does not exist. ".to_string()
        ))
    );
    assert_eq!(
        s.get_latest_common_time("", "ghost")
            .unwrap_err()
            .to_string(),
        "Invalid argument \"\" passed to get_latest_common_time - in tf2 frame_ids cannot be \
         empty"
    );
}

fn time_zero_fails_into_the_past_for_a_frame_that_just_started<B: Backend>() {
    let mut s = B::new();
    s.add("map", "odom", 1.0, [0.0; 3]);
    s.add("map", "odom", 5.0, [0.0; 3]);
    s.add("odom", "base", 6.0, [0.0; 3]);
    s.add("odom", "base", 7.0, [0.0; 3]);
    s.add("map", "new", 4.0, [0.0; 3]);
    s.add("map", "new", 6.5, [0.0; 3]);
    // Common time of base↔new is 5 (min over both sides); base's oldest is 6.
    let (text, class) = err_text(s.lookup_transform("new", "base", 0));
    assert_eq!(class, "BackwardExtrapolationException");
    assert!(text.starts_with(
        "Lookup would require extrapolation into the past.  Requested time 5.000000 but the \
         earliest data is at time 6.000000"
    ));
}

fn identity_rules_for_equal_names<B: Backend>() {
    let s = issue_832_store::<B>();
    // Equal names: no validation at all.
    for name in ["", "/x", "ghost"] {
        let t = s.lookup_transform(name, name, 7).unwrap();
        assert_eq!(t.stamp, 7);
        assert_eq!(t.transform, tf_shm::Transform::IDENTITY);
        assert_eq!(s.lookup_transform(name, name, 0).unwrap().stamp, 0);
        assert_eq!(s.can_transform(name, name, 3), Ok(()));
    }
    // Time 0: newest stamp of the frame's own cache.
    assert_eq!(
        s.lookup_transform("base_link", "base_link", 0)
            .unwrap()
            .stamp,
        ns(9.9)
    );
    assert_eq!(s.lookup_transform("map", "map", 0).unwrap().stamp, 0);
}

fn section43_argument_texts<B: Backend>() {
    let s = issue_832_store::<B>();
    assert_eq!(
        err_text(s.lookup_transform("", "odom", 0)),
        (
            "Invalid argument \"\" passed to lookupTransform argument target_frame - in tf2 \
             frame_ids cannot be empty"
                .to_string(),
            "InvalidArgumentException"
        )
    );
    assert_eq!(
        err_text(s.lookup_transform("/map", "odom", 0)),
        (
            "Invalid argument \"/map\" passed to lookupTransform argument target_frame - in tf2 \
             frame_ids cannot start with a '/'"
                .to_string(),
            "InvalidArgumentException"
        )
    );
    assert_eq!(
        err_text(s.lookup_transform("map", "ghost", 0)),
        (
            "\"ghost\" passed to lookupTransform argument source_frame does not exist. "
                .to_string(),
            "LookupException"
        )
    );
    // Target is validated first.
    assert!(err_text(s.lookup_transform("ghost", "", 0))
        .0
        .starts_with("\"ghost\" passed to lookupTransform argument target_frame"));
}

fn empty_cache_after_clear_has_empty_text<B: Backend>() {
    let mut s = issue_832_store::<B>();
    s.clear();
    let e = s.lookup_transform("map", "odom", S).unwrap_err();
    assert_eq!(
        e,
        TransformError::Extrapolation {
            kind: ExtrapolationKind::NoData,
            message: ", when looking up transform from frame [odom] to frame [map]".to_string()
        }
    );
    // Time 0 with cleared caches: no link has data, common time search finds no common parent.
    let (_, class) = err_text(s.lookup_transform("map", "odom", 0));
    assert_eq!(class, "ConnectivityException");
}

fn section63_can_transform_texts<B: Backend>() {
    let s = issue_832_store::<B>();
    assert_eq!(s.can_transform("map", "base_link", S), Ok(()));
    assert_eq!(
        s.can_transform("ghost", "", 0).unwrap_err().to_string(),
        "Invalid frame ID \"ghost\" passed to canTransform argument target_frame - frame does \
         not exist"
    );
    assert_eq!(
        s.can_transform("map", "", 0).unwrap_err(),
        TransformError::InvalidArgument(
            "Invalid frame ID \"\" passed to canTransform argument source_frame - in tf2 \
             frame_ids cannot be empty"
                .to_string()
        )
    );
    assert_eq!(
        s.can_transform("/map", "odom", 0).unwrap_err().to_string(),
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
            s.can_transform(t, src, time).unwrap_err(),
            s.lookup_transform(t, src, time).unwrap_err()
        );
    }
    assert_eq!(
        s.can_transform_full("map", S, "base_link", S, "ghost")
            .unwrap_err()
            .to_string(),
        "Invalid frame ID \"ghost\" passed to canTransform argument fixed_frame - frame does \
         not exist"
    );
}

fn can_transform_does_not_interpolate_but_checks_coverage<B: Backend>() {
    let mut s = B::new();
    s.add("a", "b", 1.0, [0.0; 3]);
    s.add("a", "b", 2.0, [0.0; 3]);
    assert_eq!(s.can_transform("a", "b", ns(1.5)), Ok(()));
    assert!(s.can_transform("a", "b", ns(2.5)).is_err());
}

fn section62_two_time_lookup<B: Backend>() {
    let mut s = B::new();
    // A robot moving along x in odom; a sensor fixed on it.
    s.add("odom", "base", 1.0, [1.0, 0.0, 0.0]);
    s.add("odom", "base", 3.0, [3.0, 0.0, 0.0]);
    s.add_static("base", "cam", [0.0, 0.0, 1.0]);
    // Where was the camera (at 1 s) as seen from the base at 3 s, through odom?
    let t = s
        .lookup_transform_full("base", 3 * S, "cam", S, "odom")
        .unwrap();
    assert_eq!(t.stamp, 3 * S);
    assert_eq!((t.frame_id, t.child_frame_id), ("base", "cam"));
    approx(t.transform.translation, [-2.0, 0.0, 1.0]);
    assert_eq!(t.transform.rotation, [0.0, 0.0, 0.0, 1.0]);
    // Time 0 for the target half: stamp = latest common time of base↔odom.
    assert_eq!(
        s.lookup_transform_full("base", 0, "cam", S, "odom")
            .unwrap()
            .stamp,
        3 * S
    );
    // All three names are validated before anything else, in order target, source, fixed.
    assert_eq!(
        err_text(s.lookup_transform_full("base", S, "cam", S, "ghost")).0,
        "\"ghost\" passed to lookupTransform argument fixed_frame does not exist. "
    );
    assert!(err_text(s.lookup_transform_full("", S, "ghost", S, "/x"))
        .0
        .contains("target_frame"));
    // Source half errors first.
    let (text, _) = err_text(s.lookup_transform_full("base", 9 * S, "cam", 8 * S, "odom"));
    assert!(text.contains("Requested time 8.000000"), "{text}");
}

fn two_time_result_is_matrix_canonical<B: Backend>() {
    let mut s = B::new();
    let half = std::f64::consts::FRAC_1_SQRT_2;
    // Two 90° steps about z make 180°; Bullet's matrix→quaternion picks +z (trace −1).
    s.insert("w", "a", S, [0.0; 3], [0.0, 0.0, half, half]);
    s.insert("a", "b", S, [0.0; 3], [0.0, 0.0, half, half]);
    let t = s.lookup_transform_full("w", S, "b", S, "a").unwrap();
    let q = t.transform.rotation;
    assert!(q[2] > 0.999_999 && q[3].abs() < 1e-9, "{q:?}");
}

fn section8_statics_any_time_and_never_limit_time_zero<B: Backend>() {
    let mut s = B::new();
    s.add_static("base", "laser", [0.5, 0.0, 0.0]);
    s.add("odom", "base", 2.0, [1.0, 0.0, 0.0]);
    s.add("odom", "base", 4.0, [3.0, 0.0, 0.0]);
    let t = s.lookup_transform("odom", "laser", 0).unwrap();
    assert_eq!(t.stamp, 4 * S);
    approx(t.transform.translation, [3.5, 0.0, 0.0]);
    let t = s.lookup_transform("odom", "laser", 3 * S).unwrap();
    approx(t.transform.translation, [2.5, 0.0, 0.0]);
    // Static only: any time, stamp as requested (0 for 0).
    let t = s.lookup_transform("base", "laser", 123 * S).unwrap();
    assert_eq!(t.stamp, 123 * S);
    assert_eq!(s.lookup_transform("laser", "base", 0).unwrap().stamp, 0);
    // Last static insert wins; survives clear.
    s.add_static("base", "laser", [0.7, 0.0, 0.0]);
    s.clear();
    approx(
        s.lookup_transform("base", "laser", S)
            .unwrap()
            .transform
            .translation,
        [0.7, 0.0, 0.0],
    );
    assert!(s.lookup_transform("odom", "laser", 3 * S).is_err());
}

fn ros2_kind_switch_drops_history<B: Backend>() {
    let mut s = B::new();
    s.add("a", "b", 1.0, [1.0, 0.0, 0.0]);
    s.add("a", "b", 2.0, [2.0, 0.0, 0.0]);
    s.add_static("a", "b", [5.0, 0.0, 0.0]);
    approx(
        s.lookup_transform("a", "b", ns(1.5))
            .unwrap()
            .transform
            .translation,
        [5.0, 0.0, 0.0],
    );
    s.add("a", "b", 3.0, [3.0, 0.0, 0.0]);
    assert!(s.lookup_transform("a", "b", ns(1.5)).is_err());
    assert_eq!(s.lookup_transform("a", "b", 0).unwrap().stamp, 3 * S);
}

fn section9_reparenting_returns_older_sample_unchanged<B: Backend>() {
    let mut s = B::new();
    s.add("odom", "base", 1.0, [1.0, 0.0, 0.0]);
    s.add("map", "base", 3.0, [3.0, 0.0, 0.0]);
    s.add("map", "odom", 1.0, [10.0, 0.0, 0.0]);
    s.add("map", "odom", 3.0, [10.0, 0.0, 0.0]);
    // Between the samples: the older one (parent odom), no blending.
    let t = s.lookup_transform("odom", "base", 2 * S).unwrap();
    approx(t.transform.translation, [1.0, 0.0, 0.0]);
    let t = s.lookup_transform("map", "base", 2 * S).unwrap();
    approx(t.transform.translation, [11.0, 0.0, 0.0]);
    // At the new sample the chain goes through map directly.
    let t = s.lookup_transform("map", "base", 3 * S).unwrap();
    approx(t.transform.translation, [3.0, 0.0, 0.0]);
    // Time 0 uses the newest parent.
    assert_eq!(s.get_parent("base", 0).unwrap().as_deref(), Some("map"));
    assert_eq!(
        s.get_parent("base", 2 * S).unwrap().as_deref(),
        Some("odom")
    );
    assert_eq!(s.get_parent("base", 9 * S).unwrap(), None);
    assert_eq!(s.get_parent("map", 0).unwrap(), None);
}

fn two_publishers_bracketed_by_the_other_tree_is_connectivity<B: Backend>() {
    let mut s = B::new();
    s.add("tree_a", "x", 1.0, [0.0; 3]);
    s.add("tree_b", "x", 2.0, [0.0; 3]);
    s.add("tree_a", "x", 3.0, [0.0; 3]);
    assert!(s.lookup_transform("tree_a", "x", ns(1.5)).is_ok());
    let (_, class) = err_text(s.lookup_transform("tree_a", "x", ns(2.5)));
    assert_eq!(class, "ConnectivityException");
    assert!(s.lookup_transform("tree_b", "x", ns(2.5)).is_ok());
}

fn non_unit_and_rotated_chain_matches_hand_computation<B: Backend>() {
    let mut s = B::new();
    let half = std::f64::consts::FRAC_1_SQRT_2;
    // base is at (1,0,0) in odom, rotated 90° about z; laser at (1,0,0) in base.
    s.insert("odom", "base", S, [1.0, 0.0, 0.0], [0.0, 0.0, half, half]);
    s.insert("base", "laser", S, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]);
    let t = s.lookup_transform("odom", "laser", S).unwrap();
    approx(t.transform.translation, [1.0, 1.0, 0.0]);
    let t = s.lookup_transform("laser", "odom", S).unwrap();
    approx(t.transform.translation, [-1.0, 1.0, 0.0]);
    let q = t.transform.rotation;
    assert!(
        (q[2] + half).abs() < 1e-12 && (q[3] - half).abs() < 1e-12,
        "{q:?}"
    );
}

fn slerp_170_to_minus_170_passes_through_180_and_is_canonicalised<B: Backend>() {
    let mut s = B::new();
    let (s85, c85) = (85f64.to_radians().sin(), 85f64.to_radians().cos());
    s.insert("a", "b", S, [0.0; 3], [0.0, 0.0, s85, c85]);
    s.insert("a", "b", 3 * S, [0.0; 3], [0.0, 0.0, -s85, c85]);
    let q = s
        .lookup_transform("a", "b", 2 * S)
        .unwrap()
        .transform
        .rotation;
    assert!((q[2] - 1.0).abs() < 1e-12 && q[3].abs() < 1e-12, "{q:?}");
    let q = s
        .lookup_transform("a", "b", ns(1.5))
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

fn loop_is_reported_with_frame_dump<B: Backend>() {
    let mut s = B::new();
    s.insert("b", "a", S, [0.0; 3], [0.0, 0.0, 0.0, 1.0]);
    s.insert("a", "b", S, [0.0; 3], [0.0, 0.0, 0.0, 1.0]);
    s.add("root", "c", 1.0, [0.0; 3]);
    let (text, class) = err_text(s.lookup_transform("c", "a", S));
    assert_eq!(class, "LookupException");
    assert_eq!(
        text,
        "The tf tree is invalid because it contains a loop.\nFrame a exists with parent b.\n\
         Frame b exists with parent a.\nFrame c exists with parent root.\n\n"
    );
    let (text, _) = err_text(s.lookup_transform("c", "a", 0));
    assert!(text.starts_with("The tf tree is invalid because it contains a loop.\n"));
    let (text, _) = err_text(s.lookup_transform("a", "c", S));
    assert!(text.starts_with("The tf tree is invalid because it contains a loop.\n"));
}

fn ids_lookup_matches_string_lookup<B: Backend>() {
    let s = issue_832_store::<B>();
    let map = s.frame_id("map").unwrap().unwrap();
    let base = s.frame_id("base_link").unwrap().unwrap();
    let by_name = s
        .lookup_transform("map", "base_link", ns(0.95))
        .unwrap_err();
    assert_eq!(
        lookup_transform_ids(&s, map, base, ns(0.95)).unwrap_err(),
        by_name
    );
    let by_name = s.lookup_transform("map", "base_link", S).unwrap();
    let (stamp, t) = lookup_transform_ids(&s, map, base, S).unwrap();
    assert_eq!((stamp, t), (by_name.stamp, by_name.transform));
    assert_eq!(
        lookup_transform_ids(&s, base, map, 10 * S).unwrap_err(),
        s.lookup_transform("base_link", "map", 10 * S).unwrap_err()
    );
    assert!(lookup_transform_ids(&s, 0, map, S).is_err());
    assert!(lookup_transform_ids(&s, 999, map, S).is_err());
    assert_eq!(lookup_transform_ids(&s, base, base, 0).unwrap().0, ns(9.9));
}

fn listings<B: Backend>() {
    let mut s = B::new();
    assert_eq!(s.all_frames_as_yaml(0).unwrap(), "[]");
    assert_eq!(s.all_frames_as_string().unwrap(), "");
    s.add("map", "odom", 1.0, [0.0; 3]);
    s.add("map", "odom", 3.0, [0.0; 3]);
    s.add_static("odom", "cam", [0.0; 3]);
    assert_eq!(
        s.all_frames_as_string().unwrap(),
        "Frame odom exists with parent map.\nFrame cam exists with parent odom.\n"
    );
    assert_eq!(
        s.all_frames_as_yaml(ns(3.5)).unwrap(),
        "odom: \n  parent: 'map'\n  broadcaster: 'test'\n  rate: 1.000\n  \
         most_recent_transform: 3.000000\n  oldest_transform: 1.000000\n  \
         transform_delay: 0.500\n  buffer_length: 2.000\n\
         cam: \n  parent: 'odom'\n  broadcaster: 'test'\n  rate: 10000.000\n  \
         most_recent_transform: 0.000000\n  oldest_transform: 0.000000\n  \
         transform_delay: 3.500\n  buffer_length: 0.000\n"
    );
    assert!(!s.all_frames_as_yaml(0).unwrap().contains("transform_delay"));
    // A cleared frame is listed with NO_PARENT as a string, skipped in YAML.
    s.clear();
    assert_eq!(
        s.all_frames_as_string().unwrap(),
        "Frame odom exists with parent NO_PARENT.\nFrame cam exists with parent odom.\n"
    );
    assert!(!s.all_frames_as_yaml(0).unwrap().contains("odom: "));
    assert_eq!(
        s.get_all_frame_names().unwrap(),
        ["odom", "map", "cam"].map(String::from)
    );
    assert!(s.frame_exists("map").unwrap());
    assert!(!s.frame_exists("ghost").unwrap());
    assert!(s.frame_exists("NO_PARENT").unwrap());
    assert_eq!(s.get_cache_length(), 10 * S);
}

over_every_store!(
    issue_832_target_pass_failure_wins_even_above_common_ancestor,
    single_sample_problem_hidden_by_an_upper_link,
    unconnected_trees_class_depends_on_source_coverage,
    time_zero_and_chain_composition,
    section5_latest_common_time_counts_only_links_below_the_common_ancestor,
    time_zero_fails_into_the_past_for_a_frame_that_just_started,
    identity_rules_for_equal_names,
    section43_argument_texts,
    empty_cache_after_clear_has_empty_text,
    section63_can_transform_texts,
    can_transform_does_not_interpolate_but_checks_coverage,
    section62_two_time_lookup,
    two_time_result_is_matrix_canonical,
    section8_statics_any_time_and_never_limit_time_zero,
    ros2_kind_switch_drops_history,
    section9_reparenting_returns_older_sample_unchanged,
    two_publishers_bracketed_by_the_other_tree_is_connectivity,
    non_unit_and_rotated_chain_matches_hand_computation,
    slerp_170_to_minus_170_passes_through_180_and_is_canonicalised,
    loop_is_reported_with_frame_dump,
    ids_lookup_matches_string_lookup,
    listings,
);
