//! The names API's memory: a per-thread cache of [`FramePair`]s keyed by their frame names, so
//! `lookup_transform("map", "base_link", t)` walks on resolved ids as a pair the caller keeps
//! itself does, after one hash of the two names.
//!
//! A cached pair is only a cache: it holds the ids its names resolved to in one arena instance
//! and where tf2's walk last found the two passes to meet (see
//! [`crate::ArenaView::lookup_pair`]); the walk reads every link at the query time whatever
//! the cache says. So evicting, sharing between views, or a stale entry never changes an
//! answer, only its cost.
//!
//! Two-way set associative, 128 sets, entries in the table with their hash (one load and a
//! compare before the names are): a thread that uses the names API pays one table of
//! `256 × size_of::<(u64, FramePair)>()` (about 20 KiB) on its first call, and the first lookup
//! of a name pair on a thread allocates its names; later ones allocate nothing.

use std::cell::RefCell;

use crate::view::FramePair;

const SETS: usize = 128;
const WAYS: usize = 2;

thread_local! {
    static CACHE: RefCell<Vec<Option<(u64, FramePair)>>> = const { RefCell::new(Vec::new()) };
}

/// A hash of the two names for choosing a set: each name's length and its first and last (up
/// to) 8 bytes, multiply-rotate mixed (FxHash's step). Names that differ elsewhere share a set
/// and are told apart by the full comparison; this only has to be cheap and spread frame
/// names, which mostly differ in their ends (`c1`/`c2`, `left_wheel`/`right_wheel`).
#[inline]
fn hash(target: &str, source: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    #[inline(always)]
    fn ends(b: &[u8]) -> (u64, u64) {
        match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
            (Some(first), Some(last)) => (u64::from_le_bytes(*first), u64::from_le_bytes(*last)),
            _ => {
                let w = b.iter().fold(0u64, |w, &c| (w << 8) | u64::from(c));
                (w, w)
            }
        }
    }
    let mut h = 0u64;
    for b in [target.as_bytes(), source.as_bytes()] {
        let (first, last) = ends(b);
        for w in [b.len() as u64, first, last] {
            h = (h.rotate_left(5) ^ w).wrapping_mul(K);
        }
    }
    h
}

/// Runs `f` on this thread's cached pair for (`target`, `source`), made on a miss (evicting
/// the set's least recently used entry). `None` when the cache is in use further up this
/// thread's stack (`f` calling back into the names API) or gone (thread teardown): the caller
/// then answers without it.
#[inline]
pub(crate) fn with_pair<R>(
    target: &str,
    source: &str,
    f: impl FnOnce(&mut FramePair) -> R,
) -> Option<R> {
    CACHE
        .try_with(|cache| {
            let mut cache = cache.try_borrow_mut().ok()?;
            if cache.is_empty() {
                cache.resize_with(SETS * WAYS, || None);
            }
            let h = hash(target, source);
            let set = (h >> 32) as usize % SETS * WAYS;
            let ways = cache.get_mut(set..set + WAYS)?;
            let hit = ways.iter().position(|e| {
                e.as_ref()
                    .is_some_and(|(eh, p)| *eh == h && p.target() == target && p.source() == source)
            });
            match hit {
                Some(0) => {}
                Some(i) => ways.swap(0, i),
                None => {
                    ways.rotate_right(1);
                    ways[0] = Some((h, FramePair::new(target, source)));
                }
            }
            ways[0].as_mut().map(|(_, p)| f(p))
        })
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_told_apart_and_entries_are_reused() {
        assert_ne!(hash("ab", "c"), hash("a", "bc"));
        assert_ne!(hash("map", "base_link"), hash("base_link", "map"));
        let first = with_pair("map", "base_link", |p| p as *const FramePair).unwrap();
        let other = with_pair("base_link", "map", |p| p as *const FramePair).unwrap();
        assert_ne!(first, other);
        assert_eq!(
            with_pair("map", "base_link", |p| p as *const FramePair).unwrap(),
            first
        );
        // Re-entrant use declines instead of panicking.
        assert_eq!(
            with_pair("a", "b", |_| with_pair("a", "b", |_| ())),
            Some(None)
        );
    }
}
