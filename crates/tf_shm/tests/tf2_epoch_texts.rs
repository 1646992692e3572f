//! tf2's extrapolation texts at epoch-clock stamps (≈ 1.7e9 s), through the arena: every time in
//! a text is tf2's `displayTimePoint`, i.e. `durationToSec` (whole seconds and nanoseconds
//! narrowed to 32 bits, `double(sec) + 1e-9 * double(nsec)`) printed `%.6f`. At these stamps
//! that differs from `ns / 1e9` in the sixth decimal for some stamps; the expected texts here
//! compute tf2's formula on their own.

use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, TransformError};

/// tf2/src/time.cpp `durationToSec`, then `%.6f`.
fn tf2_display(count: i64) -> String {
    let nsec: i32 = (count % 1_000_000_000i64) as i32;
    let sec: i32 = ((count - i64::from(nsec)) / 1_000_000_000i64) as i32;
    format!("{:.6}", f64::from(sec) + 1e-9 * f64::from(nsec))
}

fn put(w: &mut ArenaWriter, parent: &str, child: &str, stamp: i64) {
    let t = TransformInput {
        frame_id: parent,
        child_frame_id: child,
        stamp,
        translation: [1.0, 0.0, 0.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };
    w.set_transform(&t, "test", false).unwrap();
}

fn text(r: Result<impl std::fmt::Debug, TransformError>) -> String {
    r.expect_err("expected an error").to_string()
}

fn arena() -> (ArenaWriter, ArenaView) {
    let cfg = ArenaConfig {
        memory_budget_bytes: 8 << 20,
        ..Default::default()
    };
    Arena::in_memory(&cfg).unwrap()
}

#[test]
fn the_reported_one_sample_case_prints_tf2s_digits() {
    let (mut w, v) = arena();
    put(&mut w, "a", "b", 1_706_574_072_226_037_172);
    let expected = "Lookup would require extrapolation at time 1706574072.341049, but only time \
                    1706574072.226037 is in the buffer, when looking up transform from frame [b] \
                    to frame [a]";
    assert_eq!(
        text(v.lookup_transform("a", "b", 1_706_574_072_341_048_699)),
        expected
    );
    assert_eq!(
        text(v.can_transform("a", "b", 1_706_574_072_341_048_699)),
        expected
    );
}

/// Random epoch stamps: a two-sample history and queries past both ends, through every query
/// form that prints a time.
#[test]
fn every_extrapolation_text_at_random_epoch_stamps_is_tf2s() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut off_by_division = 0;
    for _ in 0..400 {
        let (mut w, v) = arena();
        let t0 = 1_700_000_000_000_000_000 + (next() % 50_000_000_000_000_000) as i64;
        let t1 = t0 + 1 + (next() % 2_000_000_000) as i64;
        put(&mut w, "map", "base", t0);
        put(&mut w, "map", "base", t1);
        let future = t1 + 1 + (next() % 5_000_000_000) as i64;
        let past = t0 - 1 - (next() % 5_000_000_000) as i64;
        for t in [t0, t1, future, past] {
            off_by_division += usize::from(format!("{:.6}", t as f64 / 1e9) != tf2_display(t));
        }
        let fwd = format!(
            "Lookup would require extrapolation into the future.  Requested time {} but the \
             latest data is at time {}, when looking up transform from frame [base] to frame \
             [map]",
            tf2_display(future),
            tf2_display(t1)
        );
        let back = format!(
            "Lookup would require extrapolation into the past.  Requested time {} but the \
             earliest data is at time {}, when looking up transform from frame [base] to frame \
             [map]",
            tf2_display(past),
            tf2_display(t0)
        );
        assert_eq!(text(v.lookup_transform("map", "base", future)), fwd);
        assert_eq!(text(v.can_transform("map", "base", future)), fwd);
        assert_eq!(text(v.lookup_transform("map", "base", past)), back);
        assert_eq!(text(v.can_transform("map", "base", past)), back);
        // Two-time forms: the source leg (base at `future`, into map) fails first.
        assert_eq!(
            text(v.lookup_transform_full("map", t1, "base", future, "map")),
            fwd
        );
        assert_eq!(
            text(v.can_transform_full("map", t1, "base", future, "map")),
            fwd
        );
    }
    // The draw must contain stamps where `ns / 1e9` prints another digit, or it proves nothing.
    assert!(off_by_division > 10, "{off_by_division}");
}
