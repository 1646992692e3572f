//! From the middleware to the writer with no hop between threads and no drop point short of
//! the QoS depth.
//!
//! Each subscription (r2r's `subscribe_raw_on_message`) is served by rmw's new-message callback:
//! on the middleware thread that delivered a message, every message waiting in the DDS
//! reader's history is taken serialized (`rcl_take_serialized_message` until it finds none),
//! read in place (`tf_shm::cdr`) and written under the bridge's one lock (`Shared` in `main.rs`),
//! before that thread goes back to receiving. So no thread is woken per message, no wait set
//! is built and no copy of a message is made; a burst waits in the reader's history (up to the
//! QoS depth) until taken, so nothing is dropped below it. The intake thread spins the node
//! for its services (parameters, `tf2_frames`) and `/clock`, and does the periodic work.
//!
//! What the middleware itself drops (more messages waiting than the QoS depth, or a KEEP_LAST
//! writer replacing a sample this reader had not acknowledged) never reaches r2r. It is
//! counted from the publishers' sequence numbers (`lost_middleware`): each message carries its
//! publisher's id and a number one higher than that publisher's previous message, so a jump
//! from `n` to `n + k` means `k - 1` messages of that publisher were not delivered. The first
//! message seen from a publisher starts its count (what it sent before this subscription
//! matched it is not a loss). A middleware that reports no sequence numbers (rmw's
//! `RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED`) leaves the count at 0 and
//! `sequence_numbers` false. A message that is not a TFMessage in XCDR1 or XCDR2 is counted
//! (`malformed`) and lost with the others.

use r2r::MessageInfo;
use std::collections::HashMap;

/// Publishers whose sequence numbers are remembered per topic; past it the memory is reset
/// (dead publishers' ids would otherwise accumulate over a long run). A reset forgets only
/// where each publisher's count stood: the next message of each starts it again.
const MAX_TRACKED_PUBLISHERS: usize = 4096;
/// rmw's `RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED`.
const SEQUENCE_UNSUPPORTED: u64 = u64::MAX;

/// What was lost on the way from the middleware to the writer, since start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Losses {
    /// Messages the middleware did not deliver (gaps in a publisher's sequence numbers).
    pub middleware: u64,
    /// Messages that were not a TFMessage in XCDR1 or XCDR2 (`tf_shm::cdr::CdrError`).
    pub malformed: u64,
    /// Whether the middleware reported sequence numbers with every message taken so far.
    pub sequence_numbers: bool,
}

impl Default for Losses {
    fn default() -> Self {
        Losses {
            middleware: 0,
            malformed: 0,
            sequence_numbers: true,
        }
    }
}

impl Losses {
    /// Every message lost on the way to the writer.
    pub fn total(&self) -> u64 {
        self.middleware + self.malformed
    }

    /// Notes a taken message's info in `gaps` (its topic's publishers).
    pub fn observe(&mut self, gaps: &mut Gaps, info: &MessageInfo) {
        match gaps.observe(info) {
            Some(skipped) => self.middleware += skipped,
            None => self.sequence_numbers = false,
        }
    }
}

/// Where each publisher of one topic stands in its sequence numbers.
#[derive(Default)]
pub struct Gaps {
    last: HashMap<[u8; 16], u64>,
}

impl Gaps {
    /// Notes a message; returns how many of its publisher's messages were skipped just before
    /// it, or `None` when the middleware did not report a sequence number.
    pub fn observe(&mut self, info: &MessageInfo) -> Option<u64> {
        let seq = info.publication_sequence_number;
        if seq == SEQUENCE_UNSUPPORTED || seq == 0 {
            return None;
        }
        if self.last.len() >= MAX_TRACKED_PUBLISHERS && !self.last.contains_key(&info.publisher_gid)
        {
            self.last.clear();
        }
        let skipped = match self.last.get(&info.publisher_gid) {
            Some(&last) if seq > last => seq - last - 1,
            // A repeat or an older message (not expected from a reliable reader): no loss, and
            // the count stays where it is.
            Some(_) => return Some(0),
            None => 0,
        };
        self.last.insert(info.publisher_gid, seq);
        Some(skipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(gid: u8, seq: u64) -> MessageInfo {
        MessageInfo {
            source_timestamp: 0,
            received_timestamp: 0,
            publication_sequence_number: seq,
            reception_sequence_number: 0,
            publisher_gid: [gid; 16],
            from_intra_process: false,
        }
    }

    #[test]
    fn gaps_count_skipped_numbers_per_publisher() {
        let mut g = Gaps::default();
        // A publisher first seen at 40 (matched late): nothing lost before it.
        assert_eq!(g.observe(&info(1, 40)), Some(0));
        assert_eq!(g.observe(&info(1, 41)), Some(0));
        // Another publisher interleaved does not disturb the first one's count.
        assert_eq!(g.observe(&info(2, 1)), Some(0));
        assert_eq!(g.observe(&info(1, 45)), Some(3));
        assert_eq!(g.observe(&info(2, 2)), Some(0));
        // A repeat or an older number is no loss and does not move the count back.
        assert_eq!(g.observe(&info(1, 44)), Some(0));
        assert_eq!(g.observe(&info(1, 46)), Some(0));
    }

    #[test]
    fn a_middleware_without_sequence_numbers_counts_nothing() {
        let mut g = Gaps::default();
        assert_eq!(g.observe(&info(1, SEQUENCE_UNSUPPORTED)), None);
        assert_eq!(g.observe(&info(1, 0)), None);
        assert_eq!(g.observe(&info(1, 5)), Some(0));
    }

    #[test]
    fn the_publisher_memory_is_bounded() {
        let mut g = Gaps::default();
        for i in 0..(MAX_TRACKED_PUBLISHERS as u64 + 10) {
            let mut m = info(0, 7);
            m.publisher_gid[..8].copy_from_slice(&i.to_le_bytes());
            g.observe(&m);
        }
        assert!(g.last.len() <= MAX_TRACKED_PUBLISHERS);
    }
}
