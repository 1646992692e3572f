//! Names in the arena: bytes packed into `AtomicU64` words, and the open-addressed index.
//!
//! A name is written before the frame that uses it is published (frame count, Release), and
//! never changed, so readers compare words without locks. Words are atomics so that even a
//! hostile writer cannot make a reader's comparison a data race.

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// FNV-1a over the name's bytes.
pub(crate) fn hash(name: &[u8]) -> u64 {
    name.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Words needed for `len` bytes.
pub(crate) fn words_for(len: usize) -> usize {
    len.div_ceil(8)
}

fn word_of(chunk: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..chunk.len()].copy_from_slice(chunk);
    u64::from_le_bytes(b)
}

/// Writes `name` into `words` (exactly `words_for(name.len())` long). Writer only.
pub(crate) fn write(words: &[AtomicU64], name: &[u8]) {
    for (w, chunk) in words.iter().zip(name.chunks(8)) {
        w.store(word_of(chunk), Ordering::Relaxed);
    }
}

/// Whether `words` hold exactly `name`.
pub(crate) fn equals(words: &[AtomicU64], name: &[u8]) -> bool {
    words.len() == words_for(name.len())
        && words
            .iter()
            .zip(name.chunks(8))
            .all(|(w, chunk)| w.load(Ordering::Relaxed) == word_of(chunk))
}

/// Reads `len` bytes of a name; `None` when not UTF-8 (a damaged arena).
pub(crate) fn read(words: &[AtomicU64], len: usize) -> Option<String> {
    let mut bytes = Vec::with_capacity(words.len() * 8);
    for w in words {
        bytes.extend_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
    }
    bytes.truncate(len);
    String::from_utf8(bytes).ok()
}

/// Probe sequence of the name index (linear probing), at most `index.len()` steps.
pub(crate) fn probe(index: &[AtomicU32], hash: u64) -> impl Iterator<Item = &AtomicU32> {
    let mask = index.len() - 1;
    let start = hash as usize & mask;
    (0..index.len()).map(move |i| &index[(start + i) & mask])
}
