//! The seqlock ring: one writer, any number of readers, no locks, no syscalls.
//!
//! Protocol (architecture §3, plus two ring-level words for what per-slot seqlocks alone
//! cannot tell a reader: that a slot it read was reused, or that samples moved):
//!
//! * **Slot** — writer: `seq` odd (Relaxed), Release fence, payload (Relaxed atomics), `seq` even
//!   (Release). Reader: `seq` (Acquire), payload (Relaxed), Acquire fence, `seq` again; a
//!   change or an odd value means torn. An odd `seq` left by a killed writer is healed by the
//!   next write to that slot.
//! * **Append** — `claim` = logical index + 1 first (ordered before the payload by the slot's
//!   Release fence), then the slot, the stamp index entry, `tail` if the ring was full, and
//!   `head` (Release).
//! * **Reordering insert** (a sample older than the newest, which tf2 accepts) shifts newer
//!   samples up by one slot; `epoch` is odd around it, like a ring-wide seqlock.
//! * **Reader** — loads `epoch`, `generation`, `head`, then `tail`, searches the dense stamp
//!   index, reads the slots it needs, then (Acquire fence) re-checks: no slot torn, `epoch` and
//!   `generation` unchanged, and `claim` not past the oldest logical index it touched plus the
//!   capacity (no slot it read was reused: lap detection). Otherwise the read fails, in one
//!   attempt: inside a moment (`crate::moment`) that means the writer came back to the copy
//!   being read, and the whole query is read again on the other copy. The snapshot is the history as of the `head` load, less what was pruned
//!   by the `tail` load (pruning never removes the newest sample, so an empty snapshot is
//!   re-checked against `head`). Appends and pruning never invalidate a read — pruned slots
//!   stay intact until reused — so a writer at full speed cannot starve readers.
//!
//! Rings are never resized in place: a growing frame gets a new ring (see `crate::writer`), so
//! a reader still on the old one reads a frozen, consistent history.

use std::cell::Cell;

use crate::arena::layout::{RingHeader, Slot};
use crate::arena::region::RingRef;
use crate::sample::{Sample, Transform};
use crate::store::History;
use crate::sync::{fence, Ordering};

/// Writes `s` into `slot` under its seqlock. Writer only.
pub(crate) fn write_slot(slot: &Slot, s: &Sample) {
    let odd = slot.seq.load(Ordering::Relaxed) | 1;
    slot.seq.store(odd, Ordering::Relaxed);
    fence(Ordering::Release);
    slot.stamp.store(s.stamp, Ordering::Relaxed);
    slot.parent.store(u64::from(s.parent), Ordering::Relaxed);
    let t = &s.transform;
    let words = [
        t.translation[0],
        t.translation[1],
        t.translation[2],
        t.rotation[0],
        t.rotation[1],
        t.rotation[2],
        t.rotation[3],
    ];
    for (w, v) in slot.words.iter().zip(words) {
        w.store(v.to_bits(), Ordering::Relaxed);
    }
    slot.seq.store(odd.wrapping_add(1), Ordering::Release);
}

/// The payload of `slot` (Relaxed loads; the caller brackets them with the slot's `seq`).
#[inline(always)]
fn load_payload(slot: &Slot) -> Sample {
    let w = |k: usize| f64::from_bits(slot.words[k].load(Ordering::Relaxed));
    Sample {
        stamp: slot.stamp.load(Ordering::Relaxed),
        // A parent that does not fit is left for the caller's range check to refuse.
        parent: u32::try_from(slot.parent.load(Ordering::Relaxed)).unwrap_or(u32::MAX),
        transform: Transform {
            translation: [w(0), w(1), w(2)],
            rotation: [w(3), w(4), w(5), w(6)],
        },
    }
}

/// Reads `slot` once; `None` when the read raced a write (or a writer died mid-write).
#[inline(always)]
pub(crate) fn try_read_slot(slot: &Slot) -> Option<Sample> {
    let seq = slot.seq.load(Ordering::Acquire);
    let s = load_payload(slot);
    fence(Ordering::Acquire);
    let again = slot.seq.load(Ordering::Relaxed);
    (seq == again && seq & 1 == 0).then_some(s)
}

/// Reads two slots once, as two [`try_read_slot`]s sharing one fence (each payload still lies
/// between its slot's two `seq` loads).
#[inline(always)]
fn try_read_pair(a: &Slot, b: &Slot) -> Option<(Sample, Sample)> {
    let (seq_a, seq_b) = (a.seq.load(Ordering::Acquire), b.seq.load(Ordering::Acquire));
    let (sa, sb) = (load_payload(a), load_payload(b));
    fence(Ordering::Acquire);
    let (again_a, again_b) = (a.seq.load(Ordering::Relaxed), b.seq.load(Ordering::Relaxed));
    (seq_a == again_a && seq_b == again_b && (seq_a | seq_b) & 1 == 0).then_some((sa, sb))
}

/// Writer-side operations on one ring. Only the single writer calls these.
#[derive(Clone, Copy)]
pub(crate) struct RingWriter<'a> {
    pub ring: RingRef<'a>,
}

impl<'a> RingWriter<'a> {
    pub(crate) fn capacity(&self) -> u64 {
        self.ring.slots.len() as u64
    }

    fn mask(&self) -> u64 {
        self.capacity() - 1
    }

    pub(crate) fn head(&self) -> u64 {
        self.ring.header.head.load(Ordering::Relaxed)
    }

    pub(crate) fn tail(&self) -> u64 {
        self.ring.header.tail.load(Ordering::Relaxed)
    }

    pub(crate) fn len(&self) -> u64 {
        self.head() - self.tail()
    }

    pub(crate) fn generation(&self) -> u64 {
        self.ring.header.generation.load(Ordering::Relaxed)
    }

    /// Loads what the next insert reads first (the oldest and the newest stamp, the next
    /// slot's sequence word) and returns a word of them: see [`crate::writer`]'s `warm_up`.
    pub(crate) fn touch(&self) -> u64 {
        let (t, h) = (self.tail(), self.head());
        let m = self.mask();
        let stamp = |i: u64| self.ring.stamps[(i & m) as usize].load(Ordering::Relaxed) as u64;
        let seq = self.ring.slots[(h & m) as usize]
            .seq
            .load(Ordering::Relaxed);
        stamp(t) ^ stamp(h.wrapping_sub(1)) ^ seq
    }

    /// The writer's own view of the history (no race: nobody else writes).
    pub(crate) fn history(&self) -> WriterHistory<'a> {
        WriterHistory {
            ring: self.ring,
            tail: self.tail(),
            len: self.len() as usize,
        }
    }

    /// Keeps the header's hint of where a time lies ([`RingHeader::oldest_stamp`] and the
    /// next two words) after a change of `tail..head` or of its stamps.
    pub(crate) fn note_span(&self) {
        let (t, h) = (self.tail(), self.head());
        let m = self.mask();
        let stamp = |i: u64| self.ring.stamps[(i & m) as usize].load(Ordering::Relaxed);
        let hdr = self.ring.header;
        let (oldest, newest, per_ns) = match h.wrapping_sub(t) {
            0 => (0, 0, 0),
            1 => (stamp(t), stamp(t), 0),
            n => {
                let (o, nw) = (stamp(t), stamp(h - 1));
                (o, nw, samples_per_ns(n - 1, nw.wrapping_sub(o) as u64))
            }
        };
        hdr.oldest_stamp.store(oldest, Ordering::Relaxed);
        hdr.newest_stamp.store(newest, Ordering::Relaxed);
        hdr.samples_per_ns.store(per_ns, Ordering::Relaxed);
    }

    fn put(&self, idx: u64, s: &Sample) {
        let p = (idx & self.mask()) as usize;
        write_slot(&self.ring.slots[p], s);
        self.ring.stamps[p].store(s.stamp, Ordering::Relaxed);
    }

    /// Drops the `n` oldest samples (tf2's pruning). Leaves the header's span hint to the
    /// insert that follows within the same store, or to [`RingWriter::note_span`] where none
    /// does (a stale hint costs readers a step, never an answer).
    pub(crate) fn drop_oldest(&self, n: u64) {
        if n > 0 {
            let t = (self.tail() + n).min(self.head());
            self.ring.header.tail.store(t, Ordering::Release);
        }
    }

    /// Appends `s` as the newest sample, dropping the oldest when full.
    pub(crate) fn append(&self, s: &Sample) {
        let h = self.head();
        // Ordered before the slot's payload by the Release fence inside `write_slot`.
        self.ring.header.claim.store(h + 1, Ordering::Relaxed);
        self.put(h, s);
        if h - self.tail() == self.capacity() {
            self.ring
                .header
                .tail
                .store(h + 1 - self.capacity(), Ordering::Relaxed);
        }
        self.ring.header.head.store(h + 1, Ordering::Release);
        self.note_span();
    }

    /// Inserts `s` at history position `pos` (0 = oldest), shifting newer samples up. The ring
    /// must not be full (callers grow it or drop the oldest first).
    pub(crate) fn insert(&self, pos: u64, s: &Sample) {
        let (t, h) = (self.tail(), self.head());
        debug_assert!(h - t < self.capacity() && pos <= h - t);
        if t + pos == h {
            return self.append(s);
        }
        let odd = self.ring.header.epoch.load(Ordering::Relaxed) | 1;
        self.ring.header.epoch.store(odd, Ordering::Relaxed);
        self.ring.header.claim.store(h + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        let mut j = h;
        while j > t + pos {
            let p = ((j - 1) & self.mask()) as usize;
            let moved = try_read_slot(&self.ring.slots[p]).unwrap_or_else(|| Sample {
                stamp: self.ring.stamps[p].load(Ordering::Relaxed),
                ..HEALED
            });
            self.put(j, &moved);
            j -= 1;
        }
        self.put(t + pos, s);
        self.ring.header.head.store(h + 1, Ordering::Relaxed);
        self.note_span();
        self.ring
            .header
            .epoch
            .store(odd.wrapping_add(1), Ordering::Release);
    }

    /// Empties the ring and marks it as belonging to clear generation `generation`.
    pub(crate) fn reset(&self, generation: u64) {
        self.ring.header.tail.store(self.head(), Ordering::Release);
        self.note_span();
        self.ring
            .header
            .generation
            .store(generation, Ordering::Release);
    }

    /// Copies this ring's samples into `dst` (a fresh, larger ring) at the same logical
    /// indices; `dst` becomes visible when the caller publishes its descriptor (Release).
    pub(crate) fn copy_into(&self, dst: &RingWriter<'_>) {
        let (t, h) = (self.tail(), self.head());
        for idx in t..h {
            let p = (idx & self.mask()) as usize;
            let s = try_read_slot(&self.ring.slots[p]).unwrap_or(Sample {
                stamp: self.ring.stamps[p].load(Ordering::Relaxed),
                ..HEALED
            });
            dst.put(idx, &s);
        }
        let d = &dst.ring.header;
        d.head.store(h, Ordering::Relaxed);
        d.tail.store(t, Ordering::Relaxed);
        d.claim.store(h, Ordering::Relaxed);
        d.generation.store(self.generation(), Ordering::Relaxed);
        dst.note_span();
    }
}

/// What a slot left odd by a killed writer is rewritten as: the writer's own ring can only be
/// torn that way, and a killed writer is a new arena anyway, so this never reaches readers in
/// practice; it keeps the writer total.
const HEALED: Sample = Sample {
    stamp: 0,
    parent: 0,
    transform: Transform::IDENTITY,
};

/// The writer's view of a ring as a [`History`].
pub(crate) struct WriterHistory<'a> {
    ring: RingRef<'a>,
    tail: u64,
    len: usize,
}

impl History for WriterHistory<'_> {
    fn len(&self) -> usize {
        self.len
    }
    fn stamp(&self, i: usize) -> i64 {
        let p = ((self.tail + i as u64) as usize) & (self.ring.slots.len() - 1);
        self.ring.stamps[p].load(Ordering::Relaxed)
    }
    fn sample(&self, i: usize) -> Sample {
        let p = ((self.tail + i as u64) as usize) & (self.ring.slots.len() - 1);
        try_read_slot(&self.ring.slots[p]).unwrap_or(HEALED)
    }
}

/// A reader's snapshot of one ring, valid only if [`Snapshot::validate`] says so afterwards.
pub(crate) struct Snapshot<'a> {
    ring: RingRef<'a>,
    tail: u64,
    len: usize,
    /// `head` as loaded: samples ever inserted into the frame's history (rings keep logical
    /// indices when they grow), of which the snapshot holds those not yet dropped.
    head: u64,
    epoch: u64,
    generation: u64,
    /// The ring belongs to an older clear generation: reads as empty, nothing to validate.
    stale: bool,
    torn: Cell<bool>,
    min_read: Cell<u64>,
}

impl<'a> Snapshot<'a> {
    /// Starts a read; `None` when the writer is visibly mid-update.
    fn begin(ring: RingRef<'a>, generation: u64) -> Option<Snapshot<'a>> {
        let h = ring.header;
        let epoch = h.epoch.load(Ordering::Acquire);
        if epoch & 1 == 1 {
            return None;
        }
        let g = h.generation.load(Ordering::Acquire);
        let head = h.head.load(Ordering::Acquire);
        let tail = h.tail.load(Ordering::Acquire);
        let cap = ring.slots.len() as u64;
        let stale = g != generation;
        let raced = tail > head
            || head - tail > cap
            || (tail == head && h.head.load(Ordering::Acquire) != head);
        if !stale && raced {
            return None;
        }
        Some(Snapshot {
            ring,
            tail,
            len: if stale { 0 } else { (head - tail) as usize },
            head,
            epoch,
            generation: g,
            stale,
            torn: Cell::new(false),
            min_read: Cell::new(u64::MAX),
        })
    }

    fn physical(&self, i: usize) -> usize {
        let idx = self.tail + i as u64;
        if idx < self.min_read.get() {
            self.min_read.set(idx);
        }
        (idx as usize) & (self.ring.slots.len() - 1)
    }

    /// Samples ever inserted into the frame's history, as of this snapshot (also for a ring
    /// of an older clear generation, which reads as empty).
    pub(crate) fn inserted(&self) -> u64 {
        self.head
    }

    /// The clear generation the ring's contents belong to.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether everything read through this snapshot was consistent.
    fn validate(&self) -> bool {
        fence(Ordering::Acquire);
        let h = self.ring.header;
        if self.stale {
            // Still of the older generation: `head` was loaded before the writer reset the
            // ring for a new one (it resets before it inserts), so it counts what the ring held.
            return h.generation.load(Ordering::Relaxed) == self.generation;
        }
        let cap = self.ring.slots.len() as u64;
        !self.torn.get()
            && h.epoch.load(Ordering::Relaxed) == self.epoch
            && h.generation.load(Ordering::Relaxed) == self.generation
            && h.claim.load(Ordering::Relaxed) <= self.min_read.get().saturating_add(cap)
    }
}

impl History for Snapshot<'_> {
    fn len(&self) -> usize {
        self.len
    }
    fn stamp(&self, i: usize) -> i64 {
        let p = self.physical(i);
        self.ring.stamps[p].load(Ordering::Relaxed)
    }
    fn sample(&self, i: usize) -> Sample {
        let p = self.physical(i);
        match try_read_slot(&self.ring.slots[p]) {
            Some(s) => s,
            None => {
                self.torn.set(true);
                HEALED
            }
        }
    }
}

/// Runs `f` over a consistent snapshot of `ring` (clear generation `generation`), in one
/// attempt; `None` when the writer raced it. Inside a moment (`crate::moment`) the copy read is
/// one the writer does not touch, so a race means the writer came back to it, the moment check
/// fails and the whole query is read again on the other copy: retrying here would only wait
/// for the writer.
pub(crate) fn read<R>(
    ring: RingRef<'_>,
    generation: u64,
    f: impl FnOnce(&Snapshot<'_>) -> R,
) -> Option<R> {
    let snap = Snapshot::begin(ring, generation)?;
    let r = f(&snap);
    snap.validate().then_some(r)
}

/// The start of a single-attempt read: the ring words a [`Snapshot`] starts from.
struct Quick {
    epoch: u64,
    head: u64,
    tail: u64,
    cap: u64,
}

impl Quick {
    /// `None` when the writer is mid-reorder, the ring is of another clear generation, or
    /// the ring is empty (or its indices are inconsistent).
    #[inline(always)]
    fn begin(ring: RingRef<'_>, generation: u64) -> Option<Quick> {
        let h = ring.header;
        let epoch = h.epoch.load(Ordering::Acquire);
        if epoch & 1 == 1 || h.generation.load(Ordering::Acquire) != generation {
            return None;
        }
        let head = h.head.load(Ordering::Acquire);
        let tail = h.tail.load(Ordering::Acquire);
        let cap = ring.slots.len() as u64;
        (tail < head && head - tail <= cap).then_some(Quick {
            epoch,
            head,
            tail,
            cap,
        })
    }
}

/// Where a uniform rate puts `time` in `ring` (clear generation `generation`): a logical
/// index `i` with `i + 1` in the history, usually the bracket itself (`stamp(i) ≤ time <
/// stamp(i + 1)`), so that its slots can be read straight away — their own stamps tell —
/// rather than after a probe of the stamp index, which would be a second dependent cache miss.
/// `None` unless `time` lies strictly between the oldest and the newest stamp as the header's
/// hint has them (and the ring is not visibly mid-update); a stale hint (a reader racing the
/// writer outside a moment) only misplaces the guess, which the slots' stamps then refuse.
#[inline(always)]
fn guess_bracket(ring: RingRef<'_>, generation: u64, time: i64) -> Option<(Quick, u64)> {
    let q = Quick::begin(ring, generation)?;
    let n = q.head - q.tail;
    if n < 2 {
        return None;
    }
    // From the header's line alone: no load of the stamp index and no division wait on the
    // way to the slots (the guess is checked by the slots' stamps).
    let h = ring.header;
    let (oldest, newest) = (
        h.oldest_stamp.load(Ordering::Relaxed),
        h.newest_stamp.load(Ordering::Relaxed),
    );
    if !(oldest < time && time < newest) {
        return None;
    }
    // One multiplication (the high word of a 64 × 64-bit product): `time − oldest` > 0 here.
    let per_ns = h.samples_per_ns.load(Ordering::Relaxed);
    let steps = ((u128::from(time.wrapping_sub(oldest) as u64) * u128::from(per_ns)) >> 64) as u64;
    let guess = q.tail + steps.min(n - 2);
    Some((q, guess))
}

/// [`RingHeader::samples_per_ns`] of `steps` sample intervals over `span_ns`: a fraction with
/// 64 bits after the point, rounded up, so that at a sample's own stamp on a uniform grid the
/// guess lands on that sample (`k · P · f ≥ k · 2⁶⁴` for `f ≥ 2⁶⁴/P`), not one below.
/// Computed in `f64` (one division on the write path) and raised by 2⁻⁵⁰ of itself plus two
/// units, more than the division's and the conversion's rounding: it may exceed the exact
/// fraction by that much, which moves a guess by one sample only 2⁵⁰ samples or 1/(P · 2⁻⁵⁰)
/// samples (at 100 Hz, 10⁸) into a history. Saturates from one sample per ns up (1.0 does not
/// fit; equal stamps).
fn samples_per_ns(steps: u64, span_ns: u64) -> u64 {
    // Signed conversions (one instruction each): both are below 2⁶³.
    let x = steps as i64 as f64 / span_ns as i64 as f64;
    if !(0.0..1.0).contains(&x) {
        return u64::MAX;
    }
    // x · 2⁶³ < 2⁶³ fits an i64; doubled, the last bit is lost (covered by the +2).
    let f = ((x * 9_223_372_036_854_775_808.0) as i64 as u64) << 1;
    f.saturating_add(f >> 50).saturating_add(2)
}

/// From the guess `i`, at most four steps along the stamp index `stamps` (a ring's, its
/// capacity long) to the bracket around `time` (`stamp(i) ≤ time < stamp(i + 1)`, both in
/// `tail..head`); `None` when it is further away (a burst, a gap: the caller then takes the
/// general read). Its inputs come in registers: a caller holding them there stores nothing to
/// memory on its hot path for a call it does not make.
#[cold]
fn step_to_bracket(
    stamps: &[crate::sync::AtomicI64],
    tail: u64,
    head: u64,
    mut i: u64,
    time: i64,
) -> Option<u64> {
    let mask = (stamps.len() as u64).wrapping_sub(1);
    let stamp = |idx: u64| stamps[(idx & mask) as usize].load(Ordering::Relaxed);
    for _ in 0..=4 {
        if stamp(i) > time {
            if i <= tail {
                return None;
            }
            i -= 1;
        } else if stamp(i + 1) <= time {
            i += 1;
            if i + 1 >= head {
                return None;
            }
        } else {
            return Some(i);
        }
    }
    None
}

/// The two adjacent samples around `time` — `older` the last with `stamp ≤ time`, `newer` the
/// next — when `time` lies strictly between the oldest and the newest stamp of `ring` (clear
/// generation `generation`): the common case of a lookup, in one attempt and a few loads.
/// `None` when that case does not apply or the read raced the writer; the caller then takes
/// [`read`] with [`crate::history::get_data`], which answers every case. Validated as
/// [`Snapshot`] is (same epoch, generation and lap check).
#[inline(always)]
pub(crate) fn read_bracket(
    ring: RingRef<'_>,
    generation: u64,
    time: i64,
) -> Option<(Sample, Sample)> {
    let (q, guess) = guess_bracket(ring, generation, time)?;
    let mask = q.cap - 1;
    let pair = |i: u64| {
        try_read_pair(
            &ring.slots[(i & mask) as usize],
            &ring.slots[((i + 1) & mask) as usize],
        )
    };
    // The slots' own stamps must bracket `time`.
    let brackets = |(older, newer): &(Sample, Sample)| older.stamp <= time && time < newer.stamp;
    let (older, newer) = match pair(guess).filter(brackets) {
        Some(found) => found,
        None => {
            pair(step_to_bracket(ring.stamps, q.tail, q.head, guess, time)?).filter(brackets)?
        }
    };
    validate_bracket(ring.header, &q, generation).then_some((older, newer))
}

/// The parent and transform of a link at `time` as tf2's `getData` answers it (interpolated
/// with the series slerp, see [`crate::history::interpolate`]), when `time` lies strictly
/// inside `ring`'s history (clear generation `generation`) and both samples around it hang from
/// the same parent: the hot case of a lookup, in one attempt. `None` otherwise, or when the
/// read raced the writer: the caller then takes the general read.
///
/// [`read_bracket`] with the interpolation inside the read: the slots' words go straight into
/// the arithmetic, which runs before the read is validated (on values that may be torn:
/// arithmetic cannot fault), and the result is returned only if the read then validates as
/// `read_bracket`'s does.
#[inline(always)]
pub(crate) fn interpolate_at(
    ring: RingRef<'_>,
    generation: u64,
    time: i64,
) -> Option<(u64, Transform)> {
    let (q, guess) = guess_bracket(ring, generation, time)?;
    let mask = q.cap - 1;
    let slot = |idx: u64| &ring.slots[(idx & mask) as usize];
    let (mut a, mut b) = (slot(guess), slot(guess + 1));
    let (mut seq_a, mut seq_b) = (a.seq.load(Ordering::Acquire), b.seq.load(Ordering::Acquire));
    let (mut t_a, mut t_b) = (
        a.stamp.load(Ordering::Relaxed),
        b.stamp.load(Ordering::Relaxed),
    );
    if !(t_a <= time && time < t_b) {
        let i = step_to_bracket(ring.stamps, q.tail, q.head, guess, time)?;
        (a, b) = (slot(i), slot(i + 1));
        (seq_a, seq_b) = (a.seq.load(Ordering::Acquire), b.seq.load(Ordering::Acquire));
        (t_a, t_b) = (
            a.stamp.load(Ordering::Relaxed),
            b.stamp.load(Ordering::Relaxed),
        );
        if !(t_a <= time && time < t_b) {
            return None;
        }
    }
    let parent = a.parent.load(Ordering::Relaxed);
    let parents_ok = b.parent.load(Ordering::Relaxed) == parent;
    let w = |s: &Slot, k: usize| f64::from_bits(s.words[k].load(Ordering::Relaxed));
    let transform = |s: &Slot| Transform {
        translation: [w(s, 0), w(s, 1), w(s, 2)],
        rotation: [w(s, 3), w(s, 4), w(s, 5), w(s, 6)],
    };
    let t = crate::history::interpolate(
        t_a,
        &transform(a),
        t_b,
        &transform(b),
        time,
        crate::math::slerp,
    );
    fence(Ordering::Acquire);
    (parents_ok
        && a.seq.load(Ordering::Relaxed) == seq_a
        && b.seq.load(Ordering::Relaxed) == seq_b
        && (seq_a | seq_b) & 1 == 0
        && unchanged(ring.header, &q, generation))
    .then_some((parent, t))
}

/// [`Snapshot::validate`] for a single-attempt read begun by `q` (nothing older than its
/// `tail` read).
#[inline(always)]
fn validate_bracket(h: &RingHeader, q: &Quick, generation: u64) -> bool {
    fence(Ordering::Acquire);
    unchanged(h, q, generation)
}

/// The ring words re-checked after a single-attempt read (the caller's Acquire fence first).
#[inline(always)]
fn unchanged(h: &RingHeader, q: &Quick, generation: u64) -> bool {
    h.epoch.load(Ordering::Relaxed) == q.epoch
        && h.generation.load(Ordering::Relaxed) == generation
        && h.claim.load(Ordering::Relaxed) <= q.tail.saturating_add(q.cap)
}

/// The newest sample of `ring` (clear generation `generation`) in one attempt; `None` when
/// the ring is empty or the read raced (the caller then takes [`read`]).
#[inline]
pub(crate) fn read_newest(ring: RingRef<'_>, generation: u64) -> Option<Sample> {
    let q = Quick::begin(ring, generation)?;
    let s = try_read_slot(&ring.slots[((q.head - 1) & (q.cap - 1)) as usize])?;
    // Only the newest slot was read: the lap check starts there.
    let q = Quick {
        tail: q.head - 1,
        ..q
    };
    validate_bracket(ring.header, &q, generation).then_some(s)
}

/// A ring in process memory, for the model checks and the unit tests.
#[cfg(test)]
mod owned {
    use super::*;
    use crate::sync::{AtomicI64, AtomicU64};

    pub(super) struct OwnedRing {
        pub(super) header: RingHeader,
        pub(super) stamps: Vec<AtomicI64>,
        pub(super) slots: Vec<Slot>,
    }

    pub(super) fn new_ring(cap: usize) -> OwnedRing {
        let z = || AtomicU64::new(0);
        OwnedRing {
            header: RingHeader {
                head: z(),
                tail: z(),
                epoch: z(),
                generation: z(),
                claim: z(),
                oldest_stamp: AtomicI64::new(0),
                newest_stamp: AtomicI64::new(0),
                samples_per_ns: z(),
            },
            stamps: (0..cap).map(|_| AtomicI64::new(0)).collect(),
            slots: (0..cap)
                .map(|_| Slot {
                    seq: z(),
                    stamp: AtomicI64::new(0),
                    parent: z(),
                    words: [z(), z(), z(), z(), z(), z(), z()],
                })
                .collect(),
        }
    }

    impl OwnedRing {
        pub(super) fn r(&self) -> RingRef<'_> {
            RingRef {
                header: &self.header,
                stamps: &self.stamps,
                slots: &self.slots,
            }
        }
    }

    /// Every payload word is a function of the stamp, so a torn or misplaced slot shows.
    pub(super) fn sample(stamp: i64) -> Sample {
        let v = stamp as f64;
        Sample {
            stamp,
            parent: 1,
            transform: Transform {
                translation: [v, 2.0 * v, 3.0 * v],
                rotation: [0.0, 0.0, 0.0, 1.0],
            },
        }
    }
}

/// The header's hint of the history's span ([`RingHeader::oldest_stamp`]).
#[cfg(all(test, not(loom)))]
mod span_hint {
    use super::owned::{new_ring, sample};
    use super::*;

    /// What the hint must say of `w`'s history now.
    fn expected(w: &RingWriter<'_>) -> (i64, i64, u64) {
        let h = w.history();
        match h.len() {
            0 => (0, 0, 0),
            1 => (h.stamp(0), h.stamp(0), 0),
            n => {
                let (o, nw) = (h.stamp(0), h.stamp(n - 1));
                (o, nw, samples_per_ns(n as u64 - 1, (nw - o) as u64))
            }
        }
    }

    fn hint(w: &RingWriter<'_>) -> (i64, i64, u64) {
        let h = w.ring.header;
        (
            h.oldest_stamp.load(Ordering::Relaxed),
            h.newest_stamp.load(Ordering::Relaxed),
            h.samples_per_ns.load(Ordering::Relaxed),
        )
    }

    #[test]
    fn the_writer_keeps_the_hint_through_every_change_of_the_history() {
        let (small, large) = (new_ring(8), new_ring(32));
        let w = RingWriter { ring: small.r() };
        let check = |w: &RingWriter<'_>, what: &str| assert_eq!(hint(w), expected(w), "{what}");
        check(&w, "empty");
        w.append(&sample(100));
        check(&w, "one sample");
        for k in 2..=6 {
            w.append(&sample(k * 100));
            check(&w, "appended");
        }
        w.insert(2, &sample(250));
        check(&w, "inserted among older stamps");
        w.insert(0, &sample(50));
        check(&w, "inserted as the oldest");
        w.drop_oldest(3);
        w.note_span();
        check(&w, "pruned (a store that only prunes notes it)");
        w.drop_oldest(1);
        w.append(&sample(650));
        check(&w, "pruned, then appended");
        for k in 7..=20 {
            w.append(&sample(k * 100));
            check(&w, "appended to a full ring (its oldest dropped)");
        }
        let grown = RingWriter { ring: large.r() };
        w.copy_into(&grown);
        check(&grown, "copied into a larger ring");
        grown.reset(1);
        check(&grown, "cleared");
        grown.append(&sample(5000));
        check(&grown, "one sample after the clear");
    }

    /// At each sample's own stamp on a uniform grid the guess is that sample (the fraction is
    /// rounded up), for rates that divide a second evenly and ones that do not; 1 ns before
    /// it, the sample below or (slow rates far into the history: the rounding up exceeds 1 ns)
    /// that one, a step. One sample per ns (1.0) does not fit the fraction: there the guess is
    /// one below, a step.
    #[test]
    fn a_guess_at_a_sample_s_own_stamp_is_that_sample() {
        for period in [
            2,
            7,
            1_000_000,
            10_000_000,
            33_333_333,
            1_000_000_000,
            3_600_000_000_000,
        ] {
            for (cap, count) in [(16u64, 2u64), (16, 16), (1024, 1000), (4096, 4096)] {
                let ring = new_ring(cap as usize);
                let w = RingWriter { ring: ring.r() };
                let t0 = 1_700_000_000_000_000_000;
                for k in 0..count as i64 {
                    w.append(&sample(t0 + k * period));
                }
                for k in 1..count - 1 {
                    let time = t0 + k as i64 * period;
                    let (_, guess) = guess_bracket(ring.r(), 0, time).expect("inside");
                    assert_eq!(guess, k, "period {period} ns, {count} samples");
                    let (_, below) = guess_bracket(ring.r(), 0, time - 1).expect("inside");
                    assert!(
                        below == k - 1 || below == k,
                        "1 ns before, period {period} ns"
                    );
                }
            }
        }
    }
}

/// Model checks of the protocol: run with
/// `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p tf_shm --release --lib ring::loom_model`.
#[cfg(all(test, loom))]
mod loom_model {
    use super::owned::{new_ring, sample, OwnedRing};
    use super::*;
    use crate::history::get_data;
    use loom::sync::Arc;

    /// Model-checks `read` on a ring of `cap` slots holding samples `initial`, racing a thread
    /// that runs `write` on it (the single writer).
    fn model(cap: usize, initial: [i64; 2], write: fn(&RingWriter<'_>), read: fn(&OwnedRing)) {
        loom::model(move || {
            let ring = Arc::new(new_ring(cap));
            {
                let w = RingWriter { ring: ring.r() };
                for stamp in initial {
                    w.append(&sample(stamp));
                }
            }
            let writer = {
                let ring = ring.clone();
                loom::thread::spawn(move || write(&RingWriter { ring: ring.r() }))
            };
            read(&ring);
            writer.join().unwrap();
        });
    }

    /// `read` racing an append that laps a 2-slot ring holding stamps 10 and 20 (30 replaces
    /// 10).
    fn racing_a_lap(read: fn(&OwnedRing)) {
        model(2, [10, 20], |w| w.append(&sample(30)), read);
    }

    /// `read` racing a reordering insert of stamp 20 between 10 and 30.
    fn racing_a_reordering_insert(read: fn(&OwnedRing)) {
        model(4, [10, 30], |w| w.insert(1, &sample(20)), read);
    }

    fn check(s: &Sample, lo: i64, hi: i64) {
        let x = s.transform.translation[0];
        assert!(
            x >= lo as f64 && x <= hi as f64,
            "x {x} outside [{lo}, {hi}]"
        );
        assert_eq!(s.transform.translation[1], 2.0 * x);
        assert_eq!(s.transform.translation[2], 3.0 * x);
        assert_eq!(s.parent, 1);
    }

    /// Appends that lap a 2-slot ring, racing a reader that interpolates: any validated
    /// answer is an exact sample or an interpolation of two real ones.
    #[test]
    fn append_and_lap() {
        racing_a_lap(|ring| {
            for t in [15, 20, 25] {
                if let Some(Ok(s)) = read(ring.r(), 0, |h| get_data(h, t, true)) {
                    // Interpolation at t of the linear stamp→x map is exactly t.
                    check(&s, t, t);
                }
            }
        });
    }

    /// A reordering insert (older than the newest) racing a reader.
    #[test]
    fn reordering_insert() {
        racing_a_reordering_insert(|ring| {
            if let Some(Ok(s)) = read(ring.r(), 0, |h| get_data(h, 25, true)) {
                check(&s, 25, 25);
            }
            if let Some(Ok(s)) = read(ring.r(), 0, |h| get_data(h, 0, true)) {
                check(&s, 30, 30);
            }
        });
    }

    /// A validated single-attempt read returns two real, adjacent samples around `t` (of one
    /// history the ring really held) and its interpolation is exact.
    fn check_bracket(ring: &OwnedRing, t: i64, brackets: &[(i64, i64)]) {
        if let Some((older, newer)) = read_bracket(ring.r(), 0, t) {
            check(&older, older.stamp, older.stamp);
            check(&newer, newer.stamp, newer.stamp);
            assert!(
                brackets.contains(&(older.stamp, newer.stamp)),
                "bracket ({}, {}) around {t}",
                older.stamp,
                newer.stamp
            );
            let s = crate::history::from_bracket(&older, &newer, t, crate::math::slerp);
            check(&s, t, t);
        }
    }

    /// A validated `interpolate_at` is the interpolation of two real, adjacent samples: with
    /// every payload word linear in the stamp, exactly the query time.
    fn check_interpolated(ring: &OwnedRing, t: i64) {
        if let Some((parent, tf)) = interpolate_at(ring.r(), 0, t) {
            let s = Sample {
                stamp: t,
                parent: crate::sample::FrameId::try_from(parent).expect("a frame id"),
                transform: tf,
            };
            check(&s, t, t);
        }
    }

    // One read per model below: each read multiplies the interleavings explored.

    /// `read_bracket` racing a lap.
    #[test]
    fn single_attempt_reads_and_lap() {
        racing_a_lap(|ring| check_bracket(ring, 25, &[(20, 30)]));
    }

    /// `read_bracket` racing a reordering insert.
    #[test]
    fn single_attempt_reads_and_reordering_insert() {
        racing_a_reordering_insert(|ring| check_bracket(ring, 15, &[(10, 30), (10, 20)]));
    }

    /// `interpolate_at` (arithmetic before validation) racing a lap.
    #[test]
    fn interpolation_before_validation_and_lap() {
        racing_a_lap(|ring| check_interpolated(ring, 15));
    }

    /// `interpolate_at` racing a reordering insert.
    #[test]
    fn interpolation_before_validation_and_reordering_insert() {
        racing_a_reordering_insert(|ring| check_interpolated(ring, 15));
    }
}
