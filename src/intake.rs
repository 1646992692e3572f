//! From r2r to the writer with no drop point short of the QoS depth.
//!
//! r2r 0.9.7 hands each message it takes (`rcl_take`, one per subscription per `spin_once`) to
//! the subscription's stream through a channel of 10 with `try_send`, and drops what does not
//! fit. The messages it has not taken yet wait in the DDS reader's history, which holds the
//! subscription's QoS depth. So the spin thread empties both streams itself right after every
//! `spin_once`: an r2r channel never holds more than the one message just taken, nothing is
//! dropped there, and a burst waits in the DDS history (up to the QoS depth) until taken.
//! Taken messages go to the writer's task through a queue of `QUEUE_CAPACITY` messages; a
//! message that finds it full is dropped and counted (`lost_queue`), never silently.
//!
//! What the middleware itself drops (more messages waiting than the QoS depth, or a KEEP_LAST
//! writer replacing a sample this reader had not acknowledged) never reaches r2r. It is
//! counted from the publishers' sequence numbers (`lost_middleware`): each message carries its
//! publisher's id and a number one higher than that publisher's previous message, so a jump
//! from `n` to `n + k` means `k - 1` messages of that publisher were not delivered. The first
//! message seen from a publisher starts its count (what it sent before this subscription
//! matched it is not a loss). A middleware that reports no sequence numbers (rmw's
//! `RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED`) leaves the count at 0 and
//! `sequence_numbers` false.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use futures::channel::mpsc;
use futures::{FutureExt, Stream, StreamExt};
use r2r::tf2_msgs::msg::TFMessage;
use r2r::MessageInfo;

/// Longest the spin thread blocks in `rcl_wait` when nothing arrives (bounds its stop time).
const SPIN_TIMEOUT: Duration = Duration::from_millis(50);
/// Messages taken from ROS and not yet written, beyond which new ones are dropped and counted.
/// Far above any QoS depth: reached only when the writer falls hopelessly behind.
pub const QUEUE_CAPACITY: usize = 100_000;
/// Publishers whose sequence numbers are remembered per topic; past it the memory is reset
/// (dead publishers' ids would otherwise accumulate over a long run). A reset forgets only
/// where each publisher's count stood: the next message of each starts it again.
const MAX_TRACKED_PUBLISHERS: usize = 4096;
/// rmw's `RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED`.
const SEQUENCE_UNSUPPORTED: u64 = u64::MAX;
/// How often the spin thread refreshes the graph counts (publishers on each topic).
const GRAPH_PERIOD: Duration = Duration::from_millis(100);

/// One message taken from a subscription.
pub struct Received {
    pub msg: TFMessage,
    pub is_static: bool,
}

/// Counters the spin thread keeps for the writer's task.
#[derive(Default)]
pub struct IntakeShared {
    /// Messages dropped because the queue to the writer was full, since start.
    pub lost_queue: AtomicU64,
    /// Messages the middleware did not deliver (gaps in a publisher's sequence numbers), since
    /// start.
    pub lost_middleware: AtomicU64,
    /// Whether the middleware reported sequence numbers with every message taken so far (true
    /// until one came without).
    pub sequence_numbers: AtomicBool,
    /// Messages in the queue now.
    queued: AtomicUsize,
    /// Publishers of the static topic seen in the ROS graph (usize::MAX: not known yet).
    pub static_publishers: AtomicUsize,
    /// Whether `static_publishers` is still wanted (only until the arena is ready: a graph
    /// query costs more than taking a message).
    pub graph_wanted: AtomicBool,
    stop: AtomicBool,
}

impl IntakeShared {
    /// Every message lost on the way to the writer, since start.
    pub fn lost(&self) -> u64 {
        self.lost_queue.load(Ordering::Relaxed) + self.lost_middleware.load(Ordering::Relaxed)
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

/// The spin thread and the receiving end of its queue.
pub struct Intake {
    pub rx: mpsc::UnboundedReceiver<Received>,
    pub shared: Arc<IntakeShared>,
    thread: Option<JoinHandle<()>>,
}

impl Intake {
    /// Starts spinning `node`, emptying both subscription streams after every spin.
    pub fn spawn<A, B>(
        mut node: r2r::Node,
        mut tf: A,
        mut tf_static: B,
        static_topic: String,
    ) -> std::io::Result<Intake>
    where
        A: Stream<Item = (TFMessage, MessageInfo)> + Unpin + Send + 'static,
        B: Stream<Item = (TFMessage, MessageInfo)> + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded();
        let shared = Arc::new(IntakeShared {
            static_publishers: AtomicUsize::new(usize::MAX),
            graph_wanted: AtomicBool::new(true),
            sequence_numbers: AtomicBool::new(true),
            ..IntakeShared::default()
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("tf_shm-spin".into())
            .spawn(move || {
                let mut graph_at = std::time::Instant::now() - GRAPH_PERIOD;
                let (mut tf_gaps, mut static_gaps) = (Gaps::default(), Gaps::default());
                while !s.stop.load(Ordering::Relaxed) {
                    node.spin_once(SPIN_TIMEOUT);
                    drain(&mut tf, false, &mut tf_gaps, &tx, &s);
                    drain(&mut tf_static, true, &mut static_gaps, &tx, &s);
                    if s.graph_wanted.load(Ordering::Relaxed) && graph_at.elapsed() >= GRAPH_PERIOD
                    {
                        graph_at = std::time::Instant::now();
                        if let Ok(p) = node.get_publishers_info_by_topic(&static_topic, false) {
                            s.static_publishers.store(p.len(), Ordering::Relaxed);
                        }
                    }
                }
            })?;
        Ok(Intake {
            rx,
            shared,
            thread: Some(thread),
        })
    }

    /// Marks a received message as written (frees its place in the queue).
    pub fn done(&self) {
        self.shared.queued.fetch_sub(1, Ordering::Relaxed);
    }

    /// Stops the spin thread and waits for it.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Intake {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Moves every message the stream holds now into the queue (without waiting for more).
fn drain<S: Stream<Item = (TFMessage, MessageInfo)> + Unpin>(
    stream: &mut S,
    is_static: bool,
    gaps: &mut Gaps,
    tx: &mpsc::UnboundedSender<Received>,
    s: &IntakeShared,
) {
    while let Some(Some((msg, info))) = stream.next().now_or_never() {
        match gaps.observe(&info) {
            Some(0) => {}
            Some(skipped) => {
                s.lost_middleware.fetch_add(skipped, Ordering::Relaxed);
            }
            None => s.sequence_numbers.store(false, Ordering::Relaxed),
        }
        if s.queued.load(Ordering::Relaxed) >= QUEUE_CAPACITY {
            s.lost_queue.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        s.queued.fetch_add(1, Ordering::Relaxed);
        if tx.unbounded_send(Received { msg, is_static }).is_err() {
            // The writer's task is gone: the bridge is stopping.
            s.queued.fetch_sub(1, Ordering::Relaxed);
        }
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
