//! One frame's dynamic history, read and written as tf2 ROS 2 Jazzy's `TimeCache` does
//! (docs/tf2-semantics.md §2.1, §3).
//!
//! tf2 keeps a `std::list` newest first; a [`History`] is oldest first (index 0), with samples
//! of equal stamp in arrival order. Translated, tf2's rules become:
//!
//! * read at `t` ([`get_data`]): the bracket's `older` sample is the **last** index with
//!   `stamp ≤ t` and `newer` is the next index. So among equal stamps the most recently received
//!   sample answers at that stamp and interpolates towards newer samples, while interpolation
//!   from an older stamp up to it uses the first received. Exactly at the oldest stamp tf2 takes
//!   the list's back, i.e. index 0: the **first** received there.
//! * write ([`insert_decision`]): prune first (with the newest stamp before the insert), then
//!   refuse samples older than `newest − cache_time`, drop exact duplicates, and put a different
//!   sample with an existing stamp after the earlier ones.
//!
//! Both functions take any [`History`], including a racing shared-memory snapshot whose stamps
//! are garbage: they only index `0..len()`, never panic and always terminate, and allocate
//! nothing. (A garbage answer is the caller's to detect and retry.)

use crate::math::{lerp, slerp_tf2, Quat};
use crate::sample::{Sample, Transform, NO_FRAME};
use crate::store::{CacheError, History};

/// tf2's `TimeCache::getData` (`interpolate == true`) or `getParent` (`false`) at `time` ns on
/// an oldest-first history.
///
/// * empty → [`CacheError::NoData`];
/// * `time == 0` → the newest sample (last index);
/// * one sample → it if `time` equals its stamp, else [`CacheError::OneSample`];
/// * `time` equal to the newest stamp → last index; equal to the oldest stamp → index 0;
/// * `time` after the newest → [`CacheError::Future`]; before the oldest → [`CacheError::Past`];
/// * otherwise the bracket (`older` = last index with `stamp ≤ time`, `newer` = next): with
///   different parents, or `interpolate == false`, `older` unchanged; else translation lerp and
///   rotation [`slerp_tf2`] with `r = (time − t_older) as f64 / (t_newer − t_older) as f64`, and the
///   result keeps `older`'s stamp and parent (as tf2's `interpolate`).
pub fn get_data<H: History + ?Sized>(
    h: &H,
    time: i64,
    interpolate: bool,
) -> Result<Sample, CacheError> {
    let n = h.len();
    if n == 0 {
        return Err(CacheError::NoData { time });
    }
    if time == 0 {
        return Ok(h.sample(n - 1));
    }
    if n == 1 {
        let only = h.stamp(0);
        return if only == time {
            Ok(h.sample(0))
        } else {
            Err(CacheError::OneSample { time, only })
        };
    }
    let latest = h.stamp(n - 1);
    let earliest = h.stamp(0);
    if time == latest {
        return Ok(h.sample(n - 1));
    }
    if time == earliest {
        return Ok(h.sample(0));
    }
    if time > latest {
        return Err(CacheError::Future { time, latest });
    }
    if time < earliest {
        return Err(CacheError::Past { time, earliest });
    }

    // First index whose stamp is > time; the bracket sits just below it. Clamped so that a
    // garbage snapshot still yields in-bounds indices.
    let above = upper_bound(h, time, earliest, latest);
    let older_i = above.saturating_sub(1).min(n - 2);
    let older = h.sample(older_i);
    if !interpolate {
        return Ok(older);
    }
    Ok(from_bracket(
        &older,
        &h.sample(older_i + 1),
        time,
        slerp_tf2,
    ))
}

/// The rotation interpolation of a link read: tf2's slerp ([`slerp_tf2`]) or the series
/// equal to it up to rounding ([`crate::math::slerp`]).
pub(crate) type Slerp = fn(&Quat, &Quat, f64) -> Quat;

/// tf2's `getData` answer from the bracket around `time`: `older` unchanged when the parents
/// differ, else [`interpolate_samples`] with `slerp`.
// Always inlined, like `interpolate`: each caller passes a constant `slerp`, which then
// becomes a direct (inlinable) call instead of one through a pointer.
#[inline(always)]
pub(crate) fn from_bracket(older: &Sample, newer: &Sample, time: i64, slerp: Slerp) -> Sample {
    if older.parent != newer.parent {
        return *older;
    }
    interpolate_with(older, newer, time, slerp)
}

/// tf2's `TimeCache::interpolate` between two samples of one parent with different stamps
/// `t_one < t_two`, as transforms: translation lerp and rotation `slerp` by tf2's ratio of
/// integer-ns differences converted to `f64`. Total on any bits (a racing reader may pass
/// torn values and discard the result).
#[inline(always)]
pub(crate) fn interpolate(
    t_one: i64,
    one: &Transform,
    t_two: i64,
    two: &Transform,
    time: i64,
    slerp: Slerp,
) -> Transform {
    // Wrapping: tf2 subtracts int64 counts; only a garbage snapshot could overflow here.
    let ratio = time.wrapping_sub(t_one) as f64 / t_two.wrapping_sub(t_one) as f64;
    Transform {
        translation: lerp(&one.translation, &two.translation, ratio),
        rotation: slerp(&one.rotation, &two.rotation, ratio),
    }
}

/// tf2's `TimeCache::interpolate(one, two, time)`: equal stamps return `two`; else translation
/// lerp and rotation slerp (tf2's formula, [`slerp_tf2`]) by the integer-ns ratio converted to
/// `f64`, with `one`'s stamp and parent.
pub fn interpolate_samples(one: &Sample, two: &Sample, time: i64) -> Sample {
    interpolate_with(one, two, time, slerp_tf2)
}

#[inline(always)]
fn interpolate_with(one: &Sample, two: &Sample, time: i64, slerp: Slerp) -> Sample {
    if two.stamp == one.stamp {
        return *two;
    }
    Sample {
        transform: interpolate(
            one.stamp,
            &one.transform,
            two.stamp,
            &two.transform,
            time,
            slerp,
        ),
        ..*one
    }
}

/// Number of leading samples with `stamp ≤ time` (the first index above `time`), given the
/// oldest and newest stamps. Histories are usually evenly spaced, so the search starts where a
/// uniform rate puts `time` and gallops outwards from there (one or two probes instead of a
/// binary search's ~10 dependent, mispredicted loads), then finishes with a binary search.
/// On unsorted data the answer is some index in `0..=len`; it only reads indices `< len` and
/// always terminates.
fn upper_bound<H: History + ?Sized>(h: &H, time: i64, earliest: i64, latest: i64) -> usize {
    let n = h.len();
    if n == 0 {
        return 0;
    }
    let above = |i: usize| h.stamp(i) > time;
    // A guess only (any index is correct, a close one is fast), so f64 suffices; wrapping and
    // the saturating cast keep garbage stamps in range.
    let frac = time.wrapping_sub(earliest) as f64 / latest.wrapping_sub(earliest) as f64;
    let guess = ((frac * (n - 1) as f64) as usize).min(n - 1);
    // Invariant: every index < lo is ≤ time, every index ≥ hi is above it (for sorted data).
    let (mut lo, mut hi);
    let mut step = 1usize;
    if above(guess) {
        hi = guess;
        lo = loop {
            if step > hi {
                break 0;
            }
            let probe = hi - step;
            if !above(probe) {
                break probe + 1;
            }
            hi = probe;
            step *= 2;
        };
    } else {
        lo = guess + 1;
        hi = loop {
            let probe = guess.saturating_add(step);
            if probe >= n {
                break n;
            }
            if above(probe) {
                break probe;
            }
            lo = probe + 1;
            step *= 2;
        };
    }
    if lo > hi {
        // Only garbage stamps get here.
        std::mem::swap(&mut lo, &mut hi);
    }
    lo + partition_point(h, lo, hi, |s| s <= time)
}

/// Number of leading samples of `lo..hi` for which `pred(stamp)` holds, assuming it holds for
/// a prefix (binary search), counted from `lo`. Only reads indices in `lo..hi`.
fn partition_point<H: History + ?Sized>(
    h: &H,
    lo: usize,
    hi: usize,
    pred: impl Fn(i64) -> bool,
) -> usize {
    let base = lo;
    let (mut lo, mut hi) = (lo, hi.min(h.len()));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(h.stamp(mid)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo - base
}

/// What tf2 ROS 2 Jazzy's `TimeCache::insertData` does with a new sample (see
/// [`insert_decision`]). Every variant carries `prune`: tf2 prunes **before** deciding, so the
/// oldest `prune` samples must be dropped even when the new sample is refused or a duplicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertDecision {
    /// `stamp < newest − cache_time`: refuse (`insertData` returns false; the caller logs
    /// `TF_OLD_DATA`, see [`crate::validate::old_data_message`]).
    RejectOld {
        /// Oldest samples to drop.
        prune: usize,
    },
    /// A sample equal in every field (stamp, parent, translation, rotation; `f64 ==`) is
    /// already stored: nothing is inserted, no warning (`insertData` returns true).
    DropDuplicate {
        /// Oldest samples to drop.
        prune: usize,
    },
    /// Drop the `prune` oldest samples, then insert the new one so that it lands at `index`
    /// (0 = oldest) of the pruned history, shifting later samples up. `index` is after every
    /// sample with `stamp ≤ new.stamp`.
    Insert {
        /// Oldest samples to drop first.
        prune: usize,
        /// Position in the pruned history, `0..=len − prune`.
        index: usize,
    },
}

impl InsertDecision {
    /// The number of oldest samples to drop, whatever the outcome.
    pub fn prune(&self) -> usize {
        match *self {
            InsertDecision::RejectOld { prune }
            | InsertDecision::DropDuplicate { prune }
            | InsertDecision::Insert { prune, .. } => prune,
        }
    }
}

/// tf2 ROS 2 Jazzy's `TimeCache::insertData` as a decision over an oldest-first history, with
/// `cache_time` in ns (tf2's `max_storage_time_`, default 10 s):
///
/// 1. `latest` = newest stamp before the insert (0 if empty).
/// 2. Prune: count oldest samples with `stamp + cache_time < latest` (strict).
/// 3. If anything is left and `new.stamp < latest − cache_time` (strict) → [`InsertDecision::RejectOld`].
/// 4. Among stored samples with `stamp == new.stamp`, one equal to `new` in every field →
///    [`InsertDecision::DropDuplicate`]. (tf2's `TransformStorage::operator==` also requires a
///    non-zero parent, so samples with parent [`NO_FRAME`] never count as duplicates.)
/// 5. Else [`InsertDecision::Insert`] after all samples with `stamp ≤ new.stamp`.
///
/// Arithmetic is done in `i128`, so stamps near the ends of `i64` compare as the mathematics
/// says. Reads only indices `< len()`; terminates on any data.
#[inline]
pub fn insert_decision<H: History + ?Sized>(
    h: &H,
    new: &Sample,
    cache_time: i64,
) -> InsertDecision {
    let n = h.len();
    if n == 0 {
        return InsertDecision::Insert { prune: 0, index: 0 };
    }
    let latest = i128::from(h.stamp(n - 1));
    let cache = i128::from(cache_time);
    // Pruning stops at the first survivor (tf2 pops from the old end while the condition
    // holds). Only a negative cache time can prune the newest sample too.
    let mut prune = 0;
    while prune < n && i128::from(h.stamp(prune)) + cache < latest {
        prune += 1;
    }
    if prune < n && i128::from(new.stamp) < latest - cache {
        return InsertDecision::RejectOld { prune };
    }
    // tf2 scans newest → oldest for the first stamp ≤ new (the insertion point), then checks
    // every sample with exactly that stamp for equality.
    let mut pos = n;
    while pos > prune && h.stamp(pos - 1) > new.stamp {
        pos -= 1;
    }
    let mut i = pos;
    while i > prune && h.stamp(i - 1) == new.stamp {
        if same_sample(&h.sample(i - 1), new) {
            return InsertDecision::DropDuplicate { prune };
        }
        i -= 1;
    }
    InsertDecision::Insert {
        prune,
        index: pos - prune,
    }
}

/// tf2's `TransformStorage::operator==` (child id is implied by the cache).
fn same_sample(a: &Sample, b: &Sample) -> bool {
    a.parent != NO_FRAME
        && b.parent != NO_FRAME
        && a.transform.rotation == b.transform.rotation
        && a.transform.translation == b.transform.translation
        && a.stamp == b.stamp
        && a.parent == b.parent
}
