//! A reference for what an interpolated chain lookup costs on this machine when nothing but the
//! work itself is done: the *minimal* arm.
//!
//! Per link it does what `lookup_pair` must do in the common case — a seqlock read of the two
//! samples around the query time from a ring laid out as the arena's (80-byte slots, a dense
//! stamp index, head/tail/epoch/claim words and the header's hint of the history's span; the
//! slots located where a uniform rate puts the time and checked by their own stamps), tf_shm's
//! interpolation (`math::lerp`, `math::slerp`), tf2's composition (`math::accumulate`) and
//! ROS 2's sign canonicalisation — inline, over plain process memory, and nothing else: no
//! frame records or ring descriptors, no compiled path, no fallback to tf2's walk, no error
//! texts. It only answers chains of dynamic links queried strictly inside their history
//! (every other cell shows "—"); there it must agree with tf2 like every arm before it is
//! timed.
//!
//! `tf_shm pair / minimal` is then the price of everything tf_shm does beyond that work
//! (checks that make a damaged or racing arena an error instead of a wrong answer, the path's
//! validation, the general API), and `minimal` itself is what this ring layout and tf2's
//! arithmetic cost on this machine: a lookup target below it needs another layout or other
//! arithmetic, not a leaner lookup.

use std::hint::black_box;
use std::sync::atomic::{fence, AtomicI64, AtomicU64, Ordering};

use tf_shm::math::{accumulate, canonicalize_unit, lerp, slerp};
use tf_shm::Transform;

use crate::arms::{Answer, Arm, Cell};
use crate::scenario::{Query, Scenario};

/// Slots per ring: a power of two, as the arena's, holding a link's whole history.
const CAPACITY: usize = 1024;

/// One sample under its seqlock, as the arena's `Slot`.
#[repr(C)]
struct Slot {
    seq: AtomicU64,
    stamp: AtomicI64,
    parent: AtomicU64,
    /// `x, y, z, qx, qy, qz, qw` as `f64::to_bits`.
    words: [AtomicU64; 7],
}

/// One link's history, as the arena's ring (logical indices `tail..head`).
struct Ring {
    head: AtomicU64,
    tail: AtomicU64,
    epoch: AtomicU64,
    claim: AtomicU64,
    /// The header's hint of where a time lies: the oldest and newest stamp, and samples per
    /// ns as a 64-bit fraction rounded up, as the arena's `RingHeader` keeps them.
    oldest_stamp: AtomicI64,
    newest_stamp: AtomicI64,
    samples_per_ns: AtomicU64,
    stamps: Box<[AtomicI64]>,
    slots: Box<[Slot]>,
}

impl Ring {
    /// The samples of `link`, written as the arena's writer writes them (seq even when whole).
    fn new(link: &crate::scenario::Link, parent: u64) -> Ring {
        assert!(link.samples.len() <= CAPACITY);
        let ring = Ring {
            head: AtomicU64::new(link.samples.len() as u64),
            tail: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
            claim: AtomicU64::new(link.samples.len() as u64),
            oldest_stamp: AtomicI64::new(link.samples.first().map_or(0, |s| s.stamp)),
            newest_stamp: AtomicI64::new(link.samples.last().map_or(0, |s| s.stamp)),
            samples_per_ns: AtomicU64::new(match (link.samples.first(), link.samples.last()) {
                (Some(a), Some(b)) if b.stamp > a.stamp => {
                    let steps = (link.samples.len() - 1) as u128;
                    ((steps << 64).div_ceil((b.stamp - a.stamp) as u128)).min(u64::MAX as u128)
                        as u64
                }
                _ => 0,
            }),
            stamps: (0..CAPACITY).map(|_| AtomicI64::new(0)).collect(),
            slots: (0..CAPACITY)
                .map(|_| Slot {
                    seq: AtomicU64::new(0),
                    stamp: AtomicI64::new(0),
                    parent: AtomicU64::new(0),
                    words: Default::default(),
                })
                .collect(),
        };
        for (i, s) in link.samples.iter().enumerate() {
            let slot = &ring.slots[i];
            slot.seq.store(2, Ordering::Relaxed);
            slot.stamp.store(s.stamp, Ordering::Relaxed);
            slot.parent.store(parent, Ordering::Relaxed);
            let words = [
                s.translation[0],
                s.translation[1],
                s.translation[2],
                s.rotation[0],
                s.rotation[1],
                s.rotation[2],
                s.rotation[3],
            ];
            for (w, v) in slot.words.iter().zip(words) {
                w.store(v.to_bits(), Ordering::Relaxed);
            }
            ring.stamps[i].store(s.stamp, Ordering::Relaxed);
        }
        ring
    }

    /// The link at `time` (strictly inside the history) if both samples around it hang from
    /// `parent` and the read is consistent.
    #[inline(always)]
    fn at(&self, time: i64, parent: u64) -> Option<Transform> {
        let epoch = self.epoch.load(Ordering::Acquire);
        let head = self.head.load(Ordering::Acquire);
        let tail = self.tail.load(Ordering::Acquire);
        let n = head.wrapping_sub(tail);
        if epoch & 1 == 1 || !(2..=CAPACITY as u64).contains(&n) {
            return None;
        }
        let mask = CAPACITY as u64 - 1;
        let (earliest, latest) = (
            self.oldest_stamp.load(Ordering::Relaxed),
            self.newest_stamp.load(Ordering::Relaxed),
        );
        if !(earliest < time && time < latest) {
            return None;
        }
        let per_ns = self.samples_per_ns.load(Ordering::Relaxed);
        let steps = (((time - earliest) as u64 as u128 * per_ns as u128) >> 64) as u64;
        let mut i = tail + steps.min(n - 2);
        let slots = |i: u64| {
            (
                &self.slots[(i & mask) as usize],
                &self.slots[((i + 1) & mask) as usize],
            )
        };
        let (mut a, mut b) = slots(i);
        let (mut seq_a, mut seq_b) = (a.seq.load(Ordering::Acquire), b.seq.load(Ordering::Acquire));
        let (mut t_a, mut t_b) = (
            a.stamp.load(Ordering::Relaxed),
            b.stamp.load(Ordering::Relaxed),
        );
        if !(t_a <= time && time < t_b) {
            // One step along the index, which a uniform-rate history needs at most.
            i = if t_a > time { i.checked_sub(1)? } else { i + 1 };
            (a, b) = slots(i);
            (seq_a, seq_b) = (a.seq.load(Ordering::Acquire), b.seq.load(Ordering::Acquire));
            (t_a, t_b) = (
                a.stamp.load(Ordering::Relaxed),
                b.stamp.load(Ordering::Relaxed),
            );
            if !(t_a <= time && time < t_b && i >= tail && i + 1 < head) {
                return None;
            }
        }
        let w = |s: &Slot, k: usize| f64::from_bits(s.words[k].load(Ordering::Relaxed));
        let r = (time - t_a) as f64 / (t_b - t_a) as f64;
        let t = Transform {
            translation: lerp(
                &[w(a, 0), w(a, 1), w(a, 2)],
                &[w(b, 0), w(b, 1), w(b, 2)],
                r,
            ),
            rotation: slerp(
                &[w(a, 3), w(a, 4), w(a, 5), w(a, 6)],
                &[w(b, 3), w(b, 4), w(b, 5), w(b, 6)],
                r,
            ),
        };
        let parents = a.parent.load(Ordering::Relaxed) == parent
            && b.parent.load(Ordering::Relaxed) == parent;
        fence(Ordering::Acquire);
        (parents
            && a.seq.load(Ordering::Relaxed) == seq_a
            && b.seq.load(Ordering::Relaxed) == seq_b
            && (seq_a | seq_b) & 1 == 0
            && self.epoch.load(Ordering::Relaxed) == epoch
            && self.claim.load(Ordering::Relaxed) <= tail + CAPACITY as u64)
            .then_some(t)
    }
}

/// The minimal arm: per scenario, the rings of a chain `c0 → … → cN` (link `i` is
/// `c<i> → c<i+1>`), or `None` for anything else.
pub struct Minimal {
    chains: Vec<Option<Vec<Ring>>>,
}

impl Minimal {
    pub fn new(scenarios: &[Scenario]) -> Minimal {
        let chains = scenarios
            .iter()
            .map(|sc| {
                let is_chain = sc.links.iter().enumerate().all(|(i, l)| {
                    !l.is_static && l.parent == format!("c{i}") && l.child == format!("c{}", i + 1)
                }) && sc.pairs
                    == [("c0".to_string(), format!("c{}", sc.links.len()))];
                is_chain.then(|| {
                    (sc.links.iter().enumerate())
                        .map(|(i, l)| Ring::new(l, i as u64))
                        .collect()
                })
            })
            .collect();
        Minimal { chains }
    }

    /// `T_c0_cN` at `time`: the source branch composed as tf2's walk composes it.
    #[inline(always)]
    fn lookup(rings: &[Ring], time: i64) -> Option<Transform> {
        let (last, rest) = rings.split_last()?;
        let mut acc = last.at(time, rest.len() as u64)?;
        for (i, ring) in rest.iter().enumerate().rev() {
            acc = accumulate(&ring.at(time, i as u64)?, &acc);
        }
        Some(Transform {
            rotation: canonicalize_unit(&acc.rotation),
            ..acc
        })
    }
}

impl Arm for Minimal {
    fn name(&self) -> &'static str {
        "minimal"
    }

    fn supports(&self, cell: &Cell) -> bool {
        self.chains[cell.sc].is_some() && cell.queries.iter().all(|q| q.time != 0)
    }

    fn answer(&mut self, cell: &Cell, q: &Query) -> Result<Answer, String> {
        let rings = self.chains[cell.sc].as_ref().ok_or("not a chain")?;
        let t = Minimal::lookup(rings, q.time).ok_or("outside the minimal case")?;
        Ok(Answer {
            stamp: Some(q.time),
            translation: t.translation,
            rotation: t.rotation,
        })
    }

    fn run(&mut self, cell: &Cell, n: usize) -> f64 {
        let Some(rings) = self.chains[cell.sc].as_ref() else {
            return f64::NAN;
        };
        let qs = &cell.queries;
        let (mut sum, mut i) = (0.0, 0);
        for _ in 0..n {
            sum += match Minimal::lookup(rings, black_box(qs[i].time)) {
                Some(t) => t.translation[0],
                None => f64::NAN,
            };
            i = if i + 1 == qs.len() { 0 } else { i + 1 };
        }
        sum
    }
}
