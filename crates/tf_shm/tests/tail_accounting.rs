//! A tail accounts for every sample the arena stored: each is reported once or counted
//! missed (dropped from its history before a poll read it), never reported twice, and nothing
//! is reported that was not stored. Random streams (a fixed xorshift seed): four frames, stamps
//! mostly in order with samples landing among older stamps and at the newest stamp, rings cut
//! at a low `max_rate_hz` in half the rounds, polls after every few writes or rarely.

use std::collections::HashMap;

use tf_shm::store::FrameStore;
use tf_shm::tail::Tail;
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, Sample, Transform, WriteStatus};

/// A sample as the arena keeps it, to the bit, with its frame.
type Key = (u32, i64, u64, [u64; 7]);

fn key(id: u32, s: &Sample) -> Key {
    let (t, q) = (s.transform.translation, s.transform.rotation);
    let bits = [t[0], t[1], t[2], q[0], q[1], q[2], q[3]].map(f64::to_bits);
    (id, s.stamp, u64::from(s.parent), bits)
}

#[test]
fn every_stored_sample_is_reported_once_or_counted_missed() {
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let names = ["a", "b", "c", "d"];
    for round in 0..200 {
        let config = ArenaConfig {
            cache_time_ns: 1_000_000_000,
            max_rate_hz: if round % 2 == 0 { 20 } else { 1000 },
            memory_budget_bytes: 4 << 20,
            max_frames: 32,
            initial_ring_capacity: 4,
        };
        let (mut w, view) = Arena::in_memory(&config).unwrap();
        let mut tail = Tail::new();
        // The first poll, of the empty arena: every later sample is counted.
        assert!(tail.poll(&view).unwrap().is_empty());
        let poll_every = if round % 4 < 2 { 7 } else { 150 };
        let mut newest = [1_000_000_000_000i64; 4];
        let mut stored: HashMap<Key, i64> = HashMap::new();
        let (mut n_stored, mut reported, mut missed) = (0u64, 0u64, 0u64);
        for step in 0..3000 {
            let f = (next() % 4) as usize;
            let r = next() % 100;
            let stamp = match r {
                // Among older stamps, within the cache time.
                0..=9 => newest[f] - (next() % 500) as i64 * 1_000_000,
                // At the newest stamp, another value.
                10..=14 => newest[f],
                _ => {
                    newest[f] += (next() % 60) as i64 * 1_000_000 + 1;
                    newest[f]
                }
            };
            let x = (next() % 1000) as f64 / 10.0;
            let t = TransformInput {
                frame_id: "root",
                child_frame_id: names[f],
                stamp,
                translation: [x, 0.0, 0.0],
                rotation: [0.0, 0.0, 0.0, 1.0],
            };
            if let Ok(WriteStatus::Stored | WriteStatus::StoredHistoryCut) =
                w.set_transform(&t, "test", false)
            {
                n_stored += 1;
                let s = Sample {
                    stamp,
                    parent: view.frame_id("root").unwrap().unwrap(),
                    transform: Transform {
                        translation: [x, 0.0, 0.0],
                        rotation: [0.0, 0.0, 0.0, 1.0],
                    },
                };
                let id = view.frame_id(names[f]).unwrap().unwrap();
                *stored.entry(key(id, &s)).or_default() += 1;
            }
            if next() % poll_every == 0 || step == 2999 {
                let a = tail.poll(&view).unwrap();
                missed += a.missed;
                for (id, s) in &a.dynamic {
                    reported += 1;
                    let left = stored.get_mut(&key(*id, s)).unwrap_or_else(|| {
                        panic!("round {round}, write {step}: reported, never stored: {id} {s:?}")
                    });
                    *left -= 1;
                    assert!(
                        *left >= 0,
                        "round {round}, write {step}: reported twice: {s:?}"
                    );
                }
            }
        }
        assert_eq!(
            reported + missed,
            n_stored,
            "round {round}: {reported} reported + {missed} missed of {n_stored} stored"
        );
    }
}
