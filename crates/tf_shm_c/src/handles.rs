//! Handle tables: C holds a 64-bit id, never a pointer, so a closed, stale or made-up handle is
//! answered with [`TF_SHM_INVALID_HANDLE`](crate::status::TF_SHM_INVALID_HANDLE) instead of a
//! use-after-free. An id is a place index plus that place's reuse count (bumped at every reuse).
//! A lookup loads the place's entry with one `ArcSwap` load (no lock); closing swaps the entry
//! out, and a call in flight on another thread keeps its entry alive until it returns.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use arc_swap::{ArcSwapOption, Guard};

const CHUNK: usize = 64;
const CHUNKS: usize = 1024;

/// One live handle's value, tagged with its id.
pub(crate) struct Entry<T> {
    id: u64,
    pub value: T,
}

struct Place<T> {
    entry: ArcSwapOption<Entry<T>>,
    reuses: AtomicU32,
}

/// Up to `CHUNK * CHUNKS` live handles; chunks are allocated on first use and never freed.
pub(crate) struct Table<T> {
    chunks: [OnceLock<Box<[Place<T>]>>; CHUNKS],
    /// Free place indices, and the next never-used index.
    free: Mutex<(Vec<u32>, u32)>,
}

impl<T> Table<T> {
    pub const fn new() -> Table<T> {
        Table {
            chunks: [const { OnceLock::new() }; CHUNKS],
            free: Mutex::new((Vec::new(), 0)),
        }
    }

    fn place(&self, index: u32) -> Option<&Place<T>> {
        let i = index as usize;
        self.chunks
            .get(i / CHUNK)?
            .get()
            .and_then(|c| c.get(i % CHUNK))
    }

    /// Stores `value`; returns its id (never 0), or `None` when the table is full.
    pub fn insert(&self, value: T) -> Option<u64> {
        let index = {
            let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
            match free.0.pop() {
                Some(i) => i,
                None if (free.1 as usize) < CHUNK * CHUNKS => {
                    free.1 += 1;
                    free.1 - 1
                }
                None => return None,
            }
        };
        let chunk = self.chunks[index as usize / CHUNK].get_or_init(|| {
            (0..CHUNK)
                .map(|_| Place {
                    entry: ArcSwapOption::empty(),
                    reuses: AtomicU32::new(0),
                })
                .collect()
        });
        let place = &chunk[index as usize % CHUNK];
        let reuses = place.reuses.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        let id = (u64::from(reuses) << 32) | (u64::from(index) + 1);
        place.entry.store(Some(Arc::new(Entry { id, value })));
        Some(id)
    }

    /// The live entry of `id`, if any. Holding the guard keeps the entry alive.
    pub fn get(&self, id: u64) -> Option<Guard<Option<Arc<Entry<T>>>>> {
        let index = (id & 0xffff_ffff).checked_sub(1)?;
        let place = self.place(u32::try_from(index).ok()?)?;
        let g = place.entry.load();
        matches!(&*g, Some(e) if e.id == id).then_some(g)
    }

    /// Removes `id`; returns its entry (dropped by the caller once no call uses it), or `None`
    /// if `id` is not live (already closed: closing twice is reported, not undefined).
    pub fn remove(&self, id: u64) -> Option<Arc<Entry<T>>> {
        let index = u32::try_from((id & 0xffff_ffff).checked_sub(1)?).ok()?;
        let place = self.place(index)?;
        let current = place.entry.load_full();
        if !matches!(&current, Some(e) if e.id == id) {
            return None;
        }
        let prev = place.entry.compare_and_swap(&current, None);
        // Only one of two racing closes sees its expected entry swapped out.
        if !matches!((&*prev, &current), (Some(p), Some(c)) if Arc::ptr_eq(p, c)) {
            return None;
        }
        self.free
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .push(index);
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_not_reused_and_closed_ids_are_refused() {
        let t: Table<u32> = Table::new();
        let a = t.insert(7).unwrap();
        assert_eq!(
            t.get(a).as_deref().map(|e| e.as_ref().unwrap().value),
            Some(7)
        );
        assert!(t.remove(a).is_some());
        assert!(t.get(a).is_none());
        assert!(t.remove(a).is_none(), "second close");
        let b = t.insert(8).unwrap();
        assert_ne!(a, b, "same place, new reuse count");
        assert_eq!(a & 0xffff_ffff, b & 0xffff_ffff);
        assert!(t.get(a).is_none());
        assert!(t.get(0).is_none());
        assert!(t.get(u64::MAX).is_none());
        assert!(t.get(b + 1).is_none());
    }
}
