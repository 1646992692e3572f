//! tf2 ROS 2 Jazzy `TimeCache` reads and inserts (docs/tf2-semantics.md §2.1, §3), including a literal model of
//! tf2's newest-first `std::list` code to compare against.

#[path = "common/vec_store.rs"]
mod vec_store;

use proptest::prelude::*;
use tf_shm::history::{get_data, insert_decision, InsertDecision};
use tf_shm::store::{CacheError, History};
use tf_shm::walk::lookup_transform;
use tf_shm::{Sample, Transform};
use vec_store::{ns, VecHistory, VecStore, S};

fn sample(stamp: i64, parent: u32, x: f64) -> Sample {
    Sample {
        stamp,
        parent,
        transform: Transform {
            translation: [x, 0.0, 0.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
        },
    }
}

fn x_at(s: &VecStore, secs: f64) -> f64 {
    lookup_transform(s, "a", "b", ns(secs))
        .unwrap()
        .transform
        .translation[0]
}

#[test]
fn section21_duplicate_stamps_example() {
    let mut s = VecStore::default();
    for (t, x) in [(1.0, 1.0), (2.0, 2.0), (2.0, 5.0), (3.0, 3.0)] {
        s.add("a", "b", t, [x, 0.0, 0.0]);
    }
    // Stored oldest first, the later arrival after the earlier one.
    let xs: Vec<f64> = s
        .history("b")
        .unwrap()
        .0
        .iter()
        .map(|v| v.transform.translation[0])
        .collect();
    assert_eq!(xs, [1.0, 2.0, 5.0, 3.0]);
    assert_eq!(x_at(&s, 1.5), 1.5);
    assert_eq!(x_at(&s, 2.0), 5.0);
    assert_eq!(x_at(&s, 2.5), 4.0);
}

#[test]
fn duplicates_at_the_ends_follow_tf2s_list_ends() {
    let mut s = VecStore::default();
    for (t, x) in [(1.0, 1.0), (1.0, 7.0), (2.0, 2.0), (2.0, 9.0)] {
        s.add("a", "b", t, [x, 0.0, 0.0]);
    }
    // Oldest stamp: tf2 returns the list's back = the first received.
    assert_eq!(x_at(&s, 1.0), 1.0);
    // Newest stamp: the list's front = the most recently received.
    assert_eq!(x_at(&s, 2.0), 9.0);
    // In between: from the latest 1 s sample towards the first 2 s sample.
    assert_eq!(x_at(&s, 1.5), 4.5);
}

#[test]
fn exact_duplicate_is_dropped_silently() {
    let mut s = VecStore::default();
    s.add("a", "b", 1.0, [1.0, 0.0, 0.0]);
    s.add("a", "b", 2.0, [2.0, 0.0, 0.0]);
    s.add("a", "b", 1.0, [1.0, 0.0, 0.0]);
    s.add("a", "b", 1.0, [1.5, 0.0, 0.0]);
    s.add("a", "b", 1.0, [1.0, 0.0, 0.0]);
    assert_eq!(s.history("b").unwrap().0.len(), 3);
    let h = s.history("b").unwrap();
    let d = insert_decision(h, &h.0[2], 10 * S);
    assert_eq!(d, InsertDecision::DropDuplicate { prune: 0 });
}

#[test]
fn too_old_is_strict() {
    let mut s = VecStore::default();
    s.add("a", "b", 12.0, [0.0; 3]);
    // Exactly cache_time older: accepted.
    s.add("a", "b", 2.0, [0.0; 3]);
    let e = s
        .insert("a", "b", ns(1.999), [0.0; 3], [0.0, 0.0, 0.0, 1.0])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "TF_OLD_DATA ignoring data from the past for frame b at time 1.999000 according to \
         authority test\nPossible reasons are listed at \
         http://wiki.ros.org/tf/Errors%20explained"
    );
}

#[test]
fn ros2_prunes_before_inserting() {
    let mut s = VecStore::default();
    s.add("a", "b", 1.0, [1.0, 0.0, 0.0]);
    s.add("a", "b", 2.0, [2.0, 0.0, 0.0]);
    s.add("a", "b", 12.0, [12.0, 0.0, 0.0]);
    // ROS 2 pruned with the newest before the insert (2 s): 1 s survives.
    assert_eq!(x_at(&s, 1.5), 1.5);
    // The next insert prunes with 12 s: 1 s goes (strict), 2 s stays (2 + 10 == 12).
    s.add("a", "b", 13.0, [13.0, 0.0, 0.0]);
    let stamps: Vec<i64> = s.history("b").unwrap().0.iter().map(|v| v.stamp).collect();
    assert_eq!(stamps, [2 * S, 12 * S, 13 * S]);
}

#[test]
fn pruning_happens_even_when_the_sample_is_refused() {
    let h = VecHistory(vec![
        sample(S, 1, 1.0),
        sample(2 * S, 1, 2.0),
        sample(12 * S, 1, 12.0),
    ]);
    assert_eq!(
        insert_decision(&h, &sample(S / 2, 1, 0.0), 10 * S),
        InsertDecision::RejectOld { prune: 1 }
    );
    assert_eq!(
        insert_decision(&h, &h.0[2], 10 * S),
        InsertDecision::DropDuplicate { prune: 1 }
    );
    // Out-of-order arrival: index counts in the pruned history.
    assert_eq!(
        insert_decision(&h, &sample(5 * S, 1, 5.0), 10 * S),
        InsertDecision::Insert { prune: 1, index: 1 }
    );
}

#[test]
fn get_data_table_of_spec_section3() {
    let empty = VecHistory::default();
    assert_eq!(
        get_data(&empty, 5, true),
        Err(CacheError::NoData { time: 5 })
    );
    assert_eq!(
        get_data(&empty, 0, true),
        Err(CacheError::NoData { time: 0 })
    );

    let one = VecHistory(vec![sample(3 * S, 1, 3.0)]);
    assert_eq!(get_data(&one, 3 * S, true), Ok(one.0[0]));
    assert_eq!(get_data(&one, 0, true), Ok(one.0[0]));
    assert_eq!(
        get_data(&one, ns(3.5), true),
        Err(CacheError::OneSample {
            time: ns(3.5),
            only: 3 * S
        })
    );

    let h = VecHistory(vec![sample(10 * S, 1, 0.0), sample(11 * S, 1, 1.0)]);
    assert_eq!(get_data(&h, 0, true), Ok(h.0[1]));
    assert_eq!(
        get_data(&h, ns(11.5), true),
        Err(CacheError::Future {
            time: ns(11.5),
            latest: 11 * S
        })
    );
    assert_eq!(
        get_data(&h, ns(9.5), true),
        Err(CacheError::Past {
            time: ns(9.5),
            earliest: 10 * S
        })
    );
    // Interpolated sample keeps the older stamp and parent.
    let mid = get_data(&h, ns(10.25), true).unwrap();
    assert_eq!((mid.stamp, mid.parent), (10 * S, 1));
    assert_eq!(mid.transform.translation, [0.25, 0.0, 0.0]);
    // getParent: no interpolation, the older sample.
    assert_eq!(get_data(&h, ns(10.25), false), Ok(h.0[0]));
}

#[test]
fn parent_change_inside_bracket_returns_older_unchanged() {
    let h = VecHistory(vec![sample(S, 1, 1.0), sample(2 * S, 2, 2.0)]);
    assert_eq!(get_data(&h, ns(1.9), true), Ok(h.0[0]));
}

#[test]
fn ratio_uses_integer_nanoseconds() {
    // 1 ns into a 3 ns bracket: r = 1.0 / 3.0 exactly as ROS 2 computes it.
    let h = VecHistory(vec![sample(S, 1, 0.0), sample(S + 3, 1, 3.0)]);
    let r = 1.0f64 / 3.0;
    let x = get_data(&h, S + 1, true).unwrap().transform.translation[0];
    assert_eq!(x, (1.0 - r) * 0.0 + r * 3.0);
}

/// tf2's `findClosest` + `getData` over a newest-first list, written as the C++ reads.
fn model_get_data(newest_first: &[Sample], t: i64) -> Result<Sample, CacheError> {
    let n = newest_first.len();
    if n == 0 {
        return Err(CacheError::NoData { time: t });
    }
    if t == 0 {
        return Ok(newest_first[0]);
    }
    if n == 1 {
        return if newest_first[0].stamp == t {
            Ok(newest_first[0])
        } else {
            Err(CacheError::OneSample {
                time: t,
                only: newest_first[0].stamp,
            })
        };
    }
    let (latest, earliest) = (newest_first[0].stamp, newest_first[n - 1].stamp);
    if t == latest {
        return Ok(newest_first[0]);
    }
    if t == earliest {
        return Ok(newest_first[n - 1]);
    }
    if t > latest {
        return Err(CacheError::Future { time: t, latest });
    }
    if t < earliest {
        return Err(CacheError::Past { time: t, earliest });
    }
    let i = newest_first.iter().position(|s| s.stamp <= t).unwrap();
    let (one, two) = (newest_first[i], newest_first[i - 1]);
    if one.parent != two.parent {
        return Ok(one);
    }
    Ok(tf_shm::history::interpolate_samples(&one, &two, t))
}

/// ROS 2 Jazzy `TimeCache::insertData` over a newest-first list.
fn model_insert(list: &mut Vec<Sample>, new: Sample, cache: i64) -> bool {
    let latest = list.first().map_or(0, |s| s.stamp);
    while let Some(back) = list.last() {
        if back.stamp + cache < latest {
            list.pop();
        } else {
            break;
        }
    }
    if !list.is_empty() && new.stamp < latest - cache {
        return false;
    }
    let pos = list
        .iter()
        .position(|s| s.stamp <= new.stamp)
        .unwrap_or(list.len());
    let dup = list[pos..]
        .iter()
        .take_while(|s| s.stamp == new.stamp)
        .any(|s| *s == new);
    if !dup {
        list.insert(pos, new);
    }
    true
}

fn arb_sample() -> impl Strategy<Value = Sample> {
    // Few distinct stamps, parents and values, so duplicates and parent changes are common.
    (0i64..30, 1u32..3, 0u8..3).prop_map(|(t, p, x)| sample(t * S / 2, p, f64::from(x)))
}

proptest! {
    #[test]
    fn insert_and_read_match_the_list_model(
        samples in prop::collection::vec(arb_sample(), 0..40),
        queries in prop::collection::vec(0i64..40, 1..20),
    ) {
        let cache = 4 * S;
        let mut ours = VecHistory::default();
        let mut model: Vec<Sample> = Vec::new();
        for s in samples {
            let d = insert_decision(&ours, &s, cache);
            ours.0.drain(..d.prune());
            let accepted = match d {
                InsertDecision::RejectOld { .. } => false,
                InsertDecision::DropDuplicate { .. } => true,
                InsertDecision::Insert { index, .. } => {
                    ours.0.insert(index, s);
                    true
                }
            };
            prop_assert_eq!(accepted, model_insert(&mut model, s, cache));
            let reversed: Vec<Sample> = ours.0.iter().rev().copied().collect();
            prop_assert_eq!(&reversed, &model);
        }
        for q in queries {
            let t = q * S / 4;
            prop_assert_eq!(get_data(&ours, t, true), model_get_data(&model, t));
        }
    }

    #[test]
    fn garbage_histories_never_panic(
        stamps in prop::collection::vec(any::<i64>(), 0..12),
        t in any::<i64>(),
        new_stamp in any::<i64>(),
        cache in any::<i64>(),
    ) {
        let h = VecHistory(stamps.iter().map(|&s| sample(s, 1, 0.0)).collect());
        let _ = get_data(&h, t, true);
        let _ = get_data(&h, t, false);
        let d = insert_decision(&h, &sample(new_stamp, 1, 0.0), cache);
        prop_assert!(d.prune() <= h.len());
        if let InsertDecision::Insert { prune, index } = d {
            prop_assert!(index <= h.len() - prune);
        }
    }
}

/// A history whose stamps change on every read, like a snapshot a writer is racing with.
struct Racing(std::cell::Cell<u64>, usize);

impl History for Racing {
    fn len(&self) -> usize {
        self.1
    }
    fn stamp(&self, _: usize) -> i64 {
        // xorshift: arbitrary, unsorted, different each call.
        let mut x = self.0.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0.set(x);
        (x % 100) as i64
    }
    fn sample(&self, i: usize) -> Sample {
        assert!(i < self.1, "index {i} out of bounds");
        sample(self.stamp(i), 1, 0.0)
    }
}

#[test]
fn inconsistent_reads_stay_in_bounds() {
    for seed in 1..2000u64 {
        for len in 0..6 {
            let h = Racing(std::cell::Cell::new(seed), len);
            for t in [0, 1, 50, 99, 200] {
                let _ = get_data(&h, t, true);
                let _ = get_data(&h, t, false);
                let d = insert_decision(&h, &sample(t, 1, 0.0), 20);
                assert!(d.prune() <= len);
            }
        }
    }
}
