//! The names API's memory: a per-thread cache of [`FramePair`]s keyed by their frame names, so
//! `lookup_transform("map", "base_link", t)` takes the same compiled path as a pair the caller
//! keeps itself, after one hash of the two names.
//!
//! A cached pair is only a cache: it holds the ids its names resolved to in one arena instance
//! and the path tf2's walk took between them; every lookup through it checks each link's
//! parent at the query time and falls back to the walk on any difference (see
//! [`ArenaView::lookup_pair`]). So evicting, sharing between views, or a stale entry never
//! changes an answer, only its cost.
//!
//! Two-way set associative, 128 sets, entries boxed: a thread that uses the names API pays
//! one 2 KiB table on its first call and one entry per name pair it looks up; the first lookup
//! of a name pair on a thread allocates its entry, later ones allocate nothing.

use std::cell::RefCell;

use crate::view::FramePair;

const SETS: usize = 128;
const WAYS: usize = 2;

thread_local! {
    static CACHE: RefCell<Vec<Option<Box<FramePair>>>> = const { RefCell::new(Vec::new()) };
}

/// A 64-bit hash of the two names (FxHash's multiply-rotate over 8-byte words), with the
/// target's length mixed in so that ("ab", "c") and ("a", "bc") differ.
#[inline]
fn hash(target: &str, source: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = (target.len() as u64).wrapping_mul(K);
    for bytes in [target.as_bytes(), source.as_bytes()] {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(5) ^ w).wrapping_mul(K);
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
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
            let set = (hash(target, source) >> 32) as usize % SETS * WAYS;
            let ways = &mut cache[set..set + WAYS];
            let hit = ways.iter().position(|e| {
                e.as_ref()
                    .is_some_and(|p| p.target() == target && p.source() == source)
            });
            match hit {
                Some(0) => {}
                Some(i) => ways.swap(0, i),
                None => {
                    ways.rotate_right(1);
                    ways[0] = Some(Box::new(FramePair::new(target, source)));
                }
            }
            ways[0].as_deref_mut().map(f)
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
