//! The names API's memory: a per-thread cache of [`FramePair`]s keyed by their frame names, so
//! `lookup_transform("map", "base_link", t)` walks on resolved ids as a pair the caller keeps
//! itself does, after a few word compares of the two names.
//!
//! A cached pair is only a cache: it holds the ids its names resolved to in one arena instance
//! and its kept time-0 answer with the change counts it was read at (see
//! [`crate::ArenaView::lookup_pair`]); any other query walks every link at its time, and a
//! kept answer is given only while none of its links changed. So evicting, sharing between views, or a stale entry never changes an
//! answer, only its cost.
//!
//! Each entry holds a [`Key`] of its names next to the pair: both lengths and two words of
//! each name, which is the whole name for names of up to 16 bytes, so a lookup by short names
//! reads no string behind a pointer (longer names are compared in full after the key). Four-way
//! set associative, 64 sets, most recently used first (so that a loop over a few dozen name
//! pairs, more than two of which share a set, still finds each one): a thread that uses the names API pays one table of
//! `256 × size_of::<Entry>()` (about 26 KiB) on its first call, and the first lookup of a name
//! pair on a thread allocates its names; later ones allocate nothing.

use std::cell::Cell;

use super::FramePair;

const SETS: usize = 64;
const WAYS: usize = 4;
/// The longest name a [`Key`] holds whole.
const WHOLE: usize = 16;

/// What identifies a name pair in the cache: `lens` packs both lengths; `words` holds each
/// name's first and last 8 bytes (shorter names: see [`name_words`]). Equal keys mean equal
/// names when both are at most [`WHOLE`] bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    lens: u64,
    words: [u64; 4],
}

impl Key {
    /// Matches no pair of names by itself (as lengths, two names of 2³² − 1 bytes, which
    /// are compared in full).
    const EMPTY: Key = Key {
        lens: u64::MAX,
        words: [0; 4],
    };

    #[inline(always)]
    fn new(target: &[u8], source: &[u8]) -> Key {
        let [t0, t1] = name_words(target);
        let [s0, s1] = name_words(source);
        Key {
            lens: target.len() as u64 | (source.len() as u64) << 32,
            words: [t0, t1, s0, s1],
        }
    }

    /// Whether equal keys mean equal names.
    #[inline(always)]
    fn whole(target: &[u8], source: &[u8]) -> bool {
        target.len().max(source.len()) <= WHOLE
    }

    /// The set for this key: both names' words multiply-mixed (FxHash's constant), top bits.
    #[inline(always)]
    fn set(&self) -> usize {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let [t0, t1, s0, s1] = self.words;
        let t = (t0 ^ t1.rotate_left(23) ^ self.lens).wrapping_mul(K);
        let h = (t ^ s0 ^ s1.rotate_left(41)).wrapping_mul(K);
        (h >> (64 - SETS.trailing_zeros())) as usize
    }
}

/// Two words that, with its length, determine a name of up to 16 bytes: its first and last 8
/// bytes (overlapping below 16); below 8 bytes its first and last 4 in one word, below 4 its
/// first and last 2, below 2 its byte.
#[inline(always)]
fn name_words(b: &[u8]) -> [u64; 2] {
    if let (Some(first), Some(last)) = (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        [u64::from_le_bytes(*first), u64::from_le_bytes(*last)]
    } else if let (Some(first), Some(last)) = (b.first_chunk::<4>(), b.last_chunk::<4>()) {
        let w = u64::from(u32::from_le_bytes(*first)) | u64::from(u32::from_le_bytes(*last)) << 32;
        [w, 0]
    } else if let (Some(first), Some(last)) = (b.first_chunk::<2>(), b.last_chunk::<2>()) {
        let w = u64::from(u16::from_le_bytes(*first)) | u64::from(u16::from_le_bytes(*last)) << 16;
        [w, 0]
    } else {
        [b.first().copied().map_or(0, u64::from), 0]
    }
}

struct Entry {
    key: Key,
    pair: FramePair,
}

impl Entry {
    fn empty() -> Entry {
        Entry {
            key: Key::EMPTY,
            pair: FramePair::new("", ""),
        }
    }

    /// Whether this entry is (`target`, `source`)'s, whose key is `key`.
    #[inline(always)]
    fn is(&self, key: &Key, target: &str, source: &str) -> bool {
        self.key == *key
            && (Key::whole(target.as_bytes(), source.as_bytes())
                || (self.pair.target() == target && self.pair.source() == source))
    }
}

type Table = Box<[[Entry; WAYS]; SETS]>;

/// This thread's table (`None` while a lookup holds it, or before its first use: `made`).
struct Slot {
    table: Cell<Option<Table>>,
    made: Cell<bool>,
}

thread_local! {
    static CACHE: Slot = const {
        Slot {
            table: Cell::new(None),
            made: Cell::new(false),
        }
    };
}

/// This thread's table, taken out of its thread-local for one lookup and put back when
/// dropped: the lookup then runs on it directly (no closure between the names and the walk,
/// which the compiler would keep out of line).
pub(crate) struct Cached {
    table: Option<Table>,
}

impl Cached {
    /// This thread's table, made on first use. `None` when a lookup further up this thread's
    /// stack holds it (a lookup by name re-entered) or it is gone (thread teardown): the
    /// caller then answers without it.
    #[inline(always)]
    pub(crate) fn take() -> Option<Cached> {
        CACHE
            .try_with(|slot| match slot.table.take() {
                Some(table) => Some(Cached { table: Some(table) }),
                None if !slot.made.get() => {
                    slot.made.set(true);
                    Some(Cached {
                        table: Some(new_table()),
                    })
                }
                None => None,
            })
            .ok()
            .flatten()
    }

    /// The cached pair for (`target`, `source`), made on a miss (evicting the set's least
    /// recently used entry).
    #[inline(always)]
    pub(crate) fn pair(&mut self, target: &str, source: &str) -> &mut FramePair {
        let key = Key::new(target.as_bytes(), source.as_bytes());
        let table = self.table.get_or_insert_with(new_table);
        let ways = &mut table[key.set()];
        if !ways[0].is(&key, target, source) {
            miss(ways, key, target, source);
        }
        &mut ways[0].pair
    }
}

impl Drop for Cached {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(table) = self.table.take() {
            // At thread teardown the table is dropped here instead.
            let _ = CACHE.try_with(|slot| slot.table.set(Some(table)));
        }
    }
}

#[cold]
#[inline(never)]
fn new_table() -> Table {
    Box::new(std::array::from_fn(|_| {
        std::array::from_fn(|_| Entry::empty())
    }))
}

/// Puts (`target`, `source`)'s entry first in its set: theirs if the set holds it, else a new
/// one in place of the least recently used (the last).
#[cold]
#[inline(never)]
fn miss(ways: &mut [Entry; WAYS], key: Key, target: &str, source: &str) {
    match (1..WAYS).find(|&i| ways[i].is(&key, target, source)) {
        Some(i) => ways[..=i].rotate_right(1),
        None => {
            ways.rotate_right(1);
            ways[0] = Entry {
                key,
                pair: FramePair::new(target, source),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_key(t: &str, s: &str) -> Key {
        Key::new(t.as_bytes(), s.as_bytes())
    }

    #[test]
    fn keys_of_whole_names_differ_when_the_names_do() {
        // Every length class, a byte changed at every position, and names swapped.
        let base = "abcdefghijklmnop";
        for len in 0..=WHOLE {
            let name = &base[..len];
            for i in 0..len {
                let mut other = name.as_bytes().to_vec();
                other[i] = b'z';
                let other = String::from_utf8(other).unwrap();
                assert!(
                    names_key(name, "x") != names_key(&other, "x"),
                    "{name} {other}"
                );
                assert!(
                    names_key("x", name) != names_key("x", &other),
                    "{name} {other}"
                );
            }
            for shorter in 0..len {
                assert!(names_key(name, "x") != names_key(&base[..shorter], "x"));
            }
        }
        assert!(names_key("ab", "c") != names_key("a", "bc"));
        assert!(names_key("map", "base_link") != names_key("base_link", "map"));
        assert!(names_key("", "") != Key::EMPTY);
    }

    #[test]
    fn names_are_told_apart_and_entries_are_reused() {
        // Where the entry's target name lives: it stays put while the entry is reused.
        let pair = |t, s| {
            Cached::take()
                .expect("not held")
                .pair(t, s)
                .target()
                .as_ptr()
        };
        let first = pair("map", "base_link");
        let other = pair("base_link", "map");
        assert_ne!(first, other);
        assert_eq!(pair("map", "base_link"), first);
        // Names longer than a key holds, equal in their first and last 8 bytes.
        let long_a = "robot1/camera_a_optical_frame";
        let long_b = "robot1/camera_b_optical_frame";
        assert_eq!(names_key(long_a, "map"), names_key(long_b, "map"));
        let target = |t| {
            Cached::take()
                .expect("not held")
                .pair(t, "map")
                .target()
                .to_string()
        };
        assert_eq!(
            (target(long_a), target(long_b)),
            (long_a.into(), long_b.into())
        );
        assert_eq!(target(long_a), long_a);
        // Held, the table is not handed out again; dropped, it is back.
        let held = Cached::take().expect("not held");
        assert!(Cached::take().is_none());
        drop(held);
        assert_eq!(pair("map", "base_link"), first);
    }

    #[test]
    fn as_many_pairs_as_a_set_has_ways_stay_cached_in_a_loop() {
        // WAYS name pairs of one set, looked up round robin: none is evicted by the others.
        let mut same_set: Vec<(String, String)> = Vec::new();
        let wanted = names_key("t0", "t1").set();
        for i in 0..100_000 {
            let (t, s) = (format!("t{i}"), format!("s{i}"));
            if names_key(&t, &s).set() == wanted {
                same_set.push((t, s));
                if same_set.len() == WAYS {
                    break;
                }
            }
        }
        assert_eq!(same_set.len(), WAYS);
        let where_ = |t: &str, s: &str| {
            Cached::take()
                .expect("not held")
                .pair(t, s)
                .target()
                .as_ptr()
        };
        let first: Vec<_> = same_set.iter().map(|(t, s)| where_(t, s)).collect();
        for _ in 0..3 {
            let again: Vec<_> = same_set.iter().map(|(t, s)| where_(t, s)).collect();
            assert_eq!(again, first);
        }
    }
}
