//! `Recorder` against a writer racing it at full speed, in one process (a writer thread, the
//! recorder polling the same arena): the file holds exactly what the arena stored, and the
//! miss count is exactly what it did not get — zero when the arena kept everything, including
//! samples that arrive out of order or share a stamp; the difference, to the sample, when the
//! arena had to drop history (rings that cannot grow, a clear mid-recording with the same
//! stamps sent again, as a looped replay does).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaWriter, WriteStatus};
use tf_shm_bag::{BagReader, BagRecord, BagWriter, Recorder, Topics};

/// A sample as the test identifies it: child frame, stamp, translation x (a serial number).
type Key = (String, i64, u64);

const FRAMES: usize = 8;
const TICK: i64 = 1_000_000;
const BASE: i64 = 1_000 * 1_000_000_000;

/// How the writer sends its samples.
#[derive(Clone, Copy)]
struct Traffic {
    /// Samples in all.
    samples: usize,
    /// Every n-th sample of a frame goes one tick behind its newest (0: never).
    out_of_order_every: usize,
    /// Every n-th sample of a frame repeats the previous stamp with another value (0: never).
    same_stamp_every: usize,
    /// Clear the arena after this many samples and send them all again (0: never).
    clear_after: usize,
    /// Sleep 1 ms after every n samples (0: never), so the recorder polls between bursts
    /// however loaded the machine is.
    pause_every: usize,
}

/// The writer's samples in order, each with its key.
fn plan(t: Traffic) -> Vec<(usize, i64, u64)> {
    let per_frame = t.samples / FRAMES;
    let mut out = Vec::with_capacity(t.samples);
    let mut serial = 0u64;
    for k in 0..per_frame {
        for f in 0..FRAMES {
            // Even ticks in order; an out-of-order sample takes the odd tick behind.
            let mut stamp = BASE + (2 * k as i64) * TICK;
            if t.out_of_order_every > 0 && k > 1 && k % t.out_of_order_every == 0 {
                stamp -= 3 * TICK;
            } else if t.same_stamp_every > 0 && k > 0 && k % t.same_stamp_every == 0 {
                stamp -= 2 * TICK;
            }
            serial += 1;
            out.push((f, stamp, serial));
        }
    }
    out
}

fn write(w: &mut ArenaWriter, f: usize, stamp: i64, serial: u64) -> WriteStatus {
    let child = format!("f{f}");
    w.set_transform(
        &TransformInput {
            frame_id: "base",
            child_frame_id: &child,
            stamp,
            translation: [serial as f64, 0.0, 0.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
        },
        "test",
        false,
    )
    .expect("a valid sample")
}

/// Runs the writer against a recorder polling as fast as it can; returns what the arena stored
/// (by key, with multiplicity), what the file holds, and the recorder's miss count.
fn race(config: ArenaConfig, t: Traffic, name: &str) -> (Counted, Counted, u64) {
    let (mut w, view) = Arena::in_memory(&config).unwrap();
    // The parent exists before the recording starts (as a robot's tree does).
    w.set_transform(
        &TransformInput {
            frame_id: "world",
            child_frame_id: "base",
            stamp: BASE,
            translation: [0.0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
        },
        "test",
        true,
    )
    .unwrap();
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("record_race_{name}_{}.mcap", std::process::id()));
    let mut rec = Recorder::new(BagWriter::create(&path, &Topics::default()).unwrap());
    rec.poll(&view, 1).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut stored = Counted::default();
            let plan = plan(t);
            let rounds = if t.clear_after > 0 { 2 } else { 1 };
            for round in 0..rounds {
                for (i, &(f, stamp, serial)) in plan.iter().enumerate() {
                    if round == 1 && i == 0 {
                        w.clear();
                    }
                    if round == 1 && i >= t.clear_after {
                        break;
                    }
                    match write(&mut w, f, stamp, serial) {
                        WriteStatus::Stored | WriteStatus::StoredHistoryCut => {
                            stored.add((format!("f{f}"), stamp, serial))
                        }
                        s => panic!("sample {serial} not stored: {s:?}"),
                    }
                    // Short bursts: the recorder's reads overlap writes many times.
                    if i % 64 == 0 {
                        std::thread::yield_now();
                    }
                    if t.pause_every > 0 && i % t.pause_every == 0 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            }
            done.store(true, Ordering::Release);
            stored
        })
    };
    let mut now = 2;
    while !done.load(Ordering::Acquire) {
        rec.poll(&view, now).unwrap();
        now += 1;
        std::thread::sleep(Duration::from_micros(200));
    }
    let stored = writer.join().unwrap();
    // The writer is done: this poll sees the arena at rest.
    rec.poll(&view, now).unwrap();
    let missed = rec.totals.missed;
    rec.finish().unwrap();
    let mut in_file = Counted::default();
    for r in BagReader::open(&path, &Topics::default()).unwrap() {
        if let BagRecord::Tf(m) = r.unwrap() {
            if m.is_static {
                continue;
            }
            for x in &m.message.transforms {
                in_file.add((
                    x.child_frame_id.clone(),
                    x.header.stamp.to_ns(),
                    x.transform.translation.x as u64,
                ));
            }
        }
    }
    let _ = std::fs::remove_file(&path);
    (stored, in_file, missed)
}

/// A multiset of keys.
#[derive(Default, Debug, PartialEq)]
struct Counted(BTreeMap<Key, u64>);

impl Counted {
    fn add(&mut self, k: Key) {
        *self.0.entry(k).or_default() += 1;
    }
    fn total(&self) -> u64 {
        self.0.values().sum()
    }
    /// Keys of `self` beyond what `other` has, with multiplicity.
    fn minus(&self, other: &Counted) -> Vec<Key> {
        let mut out = Vec::new();
        for (k, &n) in &self.0 {
            let m = other.0.get(k).copied().unwrap_or(0);
            for _ in m..n {
                out.push(k.clone());
            }
        }
        out
    }
}

/// Rings that grow as needed and a cache time covering every stamp: nothing is dropped.
fn roomy() -> ArenaConfig {
    ArenaConfig {
        cache_time_ns: 3600 * 1_000_000_000,
        max_rate_hz: 100,
        memory_budget_bytes: 64 << 20,
        ..ArenaConfig::default()
    }
}

fn assert_complete(t: Traffic, name: &str) {
    for round in 0..3 {
        let (stored, in_file, missed) = race(roomy(), t, name);
        assert_eq!(stored.total(), t.samples as u64);
        let lost = stored.minus(&in_file);
        let extra = in_file.minus(&stored);
        assert!(
            lost.is_empty() && extra.is_empty() && missed == 0,
            "round {round}: {} stored, {} in the file, {} reported missed; not in the file: \
             {:?}; in the file but not stored: {:?}",
            stored.total(),
            in_file.total(),
            missed,
            &lost[..lost.len().min(5)],
            &extra[..extra.len().min(5)]
        );
    }
}

#[test]
fn fast_writer_in_order_nothing_missed() {
    assert_complete(
        Traffic {
            samples: 24_000,
            out_of_order_every: 0,
            same_stamp_every: 0,
            clear_after: 0,
            pause_every: 0,
        },
        "in_order",
    );
}

#[test]
fn out_of_order_and_same_stamp_arrivals_are_recorded() {
    assert_complete(
        Traffic {
            samples: 24_000,
            out_of_order_every: 7,
            same_stamp_every: 11,
            clear_after: 0,
            pause_every: 0,
        },
        "out_of_order",
    );
}

/// Rings capped at 8 samples and a clear mid-recording followed by the same stamps again:
/// the arena drops history faster than any poll; every sample it stored is either in the file
/// or counted as missed, never both, never neither.
#[test]
fn dropped_history_is_counted_to_the_sample() {
    let config = ArenaConfig {
        cache_time_ns: 1_000_000_000,
        max_rate_hz: 8,
        initial_ring_capacity: 8,
        ..ArenaConfig::default()
    };
    let t = Traffic {
        samples: 24_000,
        out_of_order_every: 7,
        same_stamp_every: 0,
        clear_after: 8_000,
        pause_every: 1_000,
    };
    let (stored, in_file, missed) = race(config, t, "dropping");
    let extra = in_file.minus(&stored);
    assert!(
        extra.is_empty(),
        "in the file but not stored: {:?}",
        &extra[..extra.len().min(5)]
    );
    let lost = stored.total() - in_file.total();
    assert_eq!(
        missed,
        lost,
        "{} stored, {} in the file",
        stored.total(),
        in_file.total()
    );
    assert!(missed > 0 && in_file.total() > 0, "{missed} missed");
    // What came after the clear is in the file again (same keys, second copies).
    let twice = in_file.0.values().filter(|&&n| n == 2).count();
    assert!(twice > 0, "nothing after the clear recorded again");
}
