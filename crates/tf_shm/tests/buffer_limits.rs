//! `BufferLimits` on a real served arena: a buffer's own shorter cache time and `clear()`
//! answer as tf2's would (`BufferCore(cache_time)`, `BufferCore::clear()`: tf2's texts and
//! classes), the plain buffer and the arena untouched, and the clear survives a bridge
//! restart by frame name.

mod rendezvous_support;

use std::time::{Duration, Instant};

use rendezvous_support::*;
use tf_shm::{Buffer, BufferCore, BufferLimits, Owner};

const S: i64 = 1_000_000_000;

fn owner(dir: &TestDir) -> Owner {
    dir.serve().require_create(true).serve().expect("owner")
}

/// `map → child` at `time` through `limits` as (stamp, x), or the error's class and text.
fn look(limits: &BufferLimits, b: &Buffer, child: &str, time: i64) -> Result<(i64, f64), String> {
    limits.query(b, |q| {
        q.lookup_transform("map", child, time)
            .map(|t| (t.stamp, t.transform.translation[0]))
            .map_err(|e| format!("{}: {e}", e.class_name()))
    })
}

/// tf2's text of a lookup at `time` of a cache holding one sample, stamped `only`.
fn one_sample(time: &str, only: &str, child: &str) -> String {
    format!(
        "NoDataForExtrapolationException: Lookup would require extrapolation at time {time}, \
         but only time {only} is in the buffer, when looking up transform from frame [{child}] \
         to frame [map]"
    )
}

fn past(time: &str, earliest: &str, child: &str) -> String {
    format!(
        "BackwardExtrapolationException: Lookup would require extrapolation into the past.  \
         Requested time {time} but the earliest data is at time {earliest}, when looking up \
         transform from frame [{child}] to frame [map]"
    )
}

/// tf2's `TimeCache` of cache time c, fed 1..=5 s in order, prunes before each insert against
/// the newest stamp it held: it keeps 5 s and every sample with `stamp + c >= 4 s`.
#[test]
fn a_lookup_older_than_the_shorter_cache_time_fails_as_tf2s_while_the_buffer_answers() {
    let dir = TestDir::new("limits-cache");
    let mut o = owner(&dir);
    for k in 1..=5 {
        put(&mut o, "odom", k * S, k as f64, false);
    }
    let buffer = dir.open().open().expect("consumer");
    let plain = BufferLimits::default();
    let one_s = BufferLimits::new(Some(S));
    assert!(!plain.applies(&buffer) && one_s.applies(&buffer));

    // Kept: 3, 4, 5 s.
    assert_eq!(
        look(&one_s, &buffer, "odom", 2 * S + S / 2),
        Err(past("2.500000", "3.000000", "odom"))
    );
    assert_eq!(look(&one_s, &buffer, "odom", 3 * S), Ok((3 * S, 3.0)));
    assert_eq!(look(&one_s, &buffer, "odom", 0), Ok((5 * S, 5.0)));
    assert_eq!(one_s.query(&buffer, |q| q.get_cache_length()), S);
    assert_eq!(one_s.get_cache_length(&buffer), S);
    // The plain buffer, and the buffer itself, still hold 1 s.
    assert_eq!(
        look(&plain, &buffer, "odom", S + S / 2),
        Ok((S + S / 2, 1.5))
    );
    let t = buffer.lookup_transform("map", "odom", 2 * S).unwrap();
    assert_eq!(t.transform.translation[0], 2.0);

    // tf2 keeps a zero cache time as given: the second newest and the newest stay.
    let zero = BufferLimits::new(Some(0));
    assert_eq!(
        look(&zero, &buffer, "odom", 4 * S + S / 2),
        Ok((4 * S + S / 2, 4.5))
    );
    assert_eq!(
        look(&zero, &buffer, "odom", 3 * S),
        Err(past("3.000000", "4.000000", "odom"))
    );
    // And a negative one: every insert prunes all, so only the newest stays (one sample).
    let negative = BufferLimits::new(Some(-1));
    assert_eq!(negative.get_cache_length(&buffer), -1);
    assert_eq!(look(&negative, &buffer, "odom", 5 * S), Ok((5 * S, 5.0)));
    assert_eq!(
        look(&negative, &buffer, "odom", 4 * S + S / 2),
        Err(one_sample("4.500000", "5.000000", "odom"))
    );
    // A cache time longer than the arena's changes nothing: the plain buffer answers.
    let long = BufferLimits::new(Some(buffer.get_cache_length() + S));
    assert!(!long.applies(&buffer));
    assert_eq!(look(&long, &buffer, "odom", S), Ok((S, 1.0)));
}

/// tf2's `clear()` empties every `TimeCache` and keeps the `StaticCache`s: until new data, the
/// dynamic frame has nothing; after it, only the samples that came after the clear.
#[test]
fn after_clear_only_samples_newer_than_the_mark_answer() {
    let dir = TestDir::new("limits-clear");
    let mut o = owner(&dir);
    put(&mut o, "laser", 0, 0.3, true);
    put(&mut o, "odom", S, 1.0, false);
    put(&mut o, "odom", 2 * S, 2.0, false);
    let buffer = dir.open().open().expect("consumer");
    let limits = BufferLimits::default();
    limits.clear(&buffer).expect("clear");
    assert!(limits.applies(&buffer));

    assert!(look(&limits, &buffer, "odom", 0).is_err());
    assert!(look(&limits, &buffer, "odom", S).is_err());
    assert_eq!(
        look(&limits, &buffer, "laser", 0),
        Ok((0, 0.3)),
        "static stays"
    );
    // The arena, and so every other buffer, still holds them.
    assert_eq!(buffer.lookup_transform("map", "odom", S).unwrap().stamp, S);

    put(&mut o, "odom", 3 * S, 3.0, false);
    put(&mut o, "odom", 4 * S, 4.0, false);
    assert_eq!(look(&limits, &buffer, "odom", 0), Ok((4 * S, 4.0)));
    assert_eq!(
        look(&limits, &buffer, "odom", 3 * S + S / 2),
        Ok((3 * S + S / 2, 3.5))
    );
    assert_eq!(
        look(&limits, &buffer, "odom", 2 * S + S / 2),
        Err(past("2.500000", "3.000000", "odom"))
    );
    // With a shorter cache time too, both apply (tf2: a cleared buffer of that cache time).
    limits.set_cache_time(Some(0));
    put(&mut o, "odom", 5 * S, 5.0, false);
    assert_eq!(
        look(&limits, &buffer, "odom", 3 * S + S / 2),
        Err(past("3.500000", "4.000000", "odom"))
    );
    assert_eq!(
        look(&limits, &buffer, "odom", 4 * S + S / 2),
        Ok((4 * S + S / 2, 4.5))
    );
}

/// A restarted bridge makes a new arena whose ids differ (frames created in another order); the
/// clear taken on the old one still hides, by frame name, the samples it hid there.
#[test]
fn after_a_bridge_restart_the_mark_still_hides_the_old_samples_by_frame_name() {
    let dir = TestDir::new("limits-swap");
    let mut first = owner(&dir);
    put(&mut first, "a", S, 1.0, false);
    put(&mut first, "a", 2 * S, 2.0, false);
    put(&mut first, "b", 10 * S, 10.0, false);
    put(&mut first, "b", 11 * S, 11.0, false);
    let buffer = dir.open().open().expect("consumer");
    let limits = BufferLimits::default();
    limits.clear(&buffer).expect("clear");
    assert!(look(&limits, &buffer, "a", 0).is_err());
    let position = |b: &Buffer, name: &str| {
        let names = b.get_all_frame_names().unwrap();
        names.iter().position(|n| n == name)
    };
    let old_a = position(&buffer, "a");

    drop(first);
    let mut second = owner(&dir);
    put(&mut second, "c", S, 0.0, false);
    for k in [10, 11, 12] {
        put(&mut second, "b", k * S, k as f64, false);
    }
    for k in [1, 2, 3] {
        put(&mut second, "a", k * S, k as f64, false);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while buffer.arena_swaps() == 0 {
        assert!(Instant::now() < deadline, "no swap to the new arena");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_ne!(position(&buffer, "a"), old_a, "the new arena's ids differ");

    // Hidden as before the restart: a up to 2 s, b up to 11 s; what came after answers.
    assert_eq!(
        look(&limits, &buffer, "a", S + S / 2),
        Err(one_sample("1.500000", "3.000000", "a"))
    );
    assert_eq!(look(&limits, &buffer, "a", 0), Ok((3 * S, 3.0)));
    assert_eq!(
        look(&limits, &buffer, "b", 10 * S + S / 2),
        Err(one_sample("10.500000", "12.000000", "b"))
    );
    assert_eq!(look(&limits, &buffer, "b", 0), Ok((12 * S, 12.0)));
    assert_eq!(
        look(&limits, &buffer, "c", S),
        Ok((S, 0.0)),
        "new frame: untouched"
    );
    // The plain buffer holds them all.
    assert_eq!(
        buffer
            .lookup_transform("map", "a", S + S / 2)
            .unwrap()
            .stamp,
        S + S / 2
    );
}
