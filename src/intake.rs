//! From r2r to the writer with no drop point short of the QoS depth.
//!
//! r2r 0.9.7 hands each message it takes (`rcl_take`, one per subscription per `spin_once`) to
//! the subscription's stream through a channel of 10 with `try_send`, and drops what does not
//! fit. The messages it has not taken yet wait in the DDS reader's history, which holds the
//! subscription's QoS depth. So the spin thread empties both streams itself right after every
//! `spin_once`: an r2r channel never holds more than the one message just taken, nothing is
//! dropped there, and a burst waits in the DDS history (up to the QoS depth) until taken.
//! Taken messages go to the writer's task through a queue of `QUEUE_CAPACITY` messages; a
//! message that finds it full is dropped and counted (`lost`), never silently.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use futures::channel::mpsc;
use futures::{FutureExt, Stream, StreamExt};
use r2r::tf2_msgs::msg::TFMessage;

/// Longest the spin thread blocks in `rcl_wait` when nothing arrives (bounds its stop time).
const SPIN_TIMEOUT: Duration = Duration::from_millis(50);
/// Messages taken from ROS and not yet written, beyond which new ones are dropped and counted.
/// Far above any QoS depth: reached only when the writer falls hopelessly behind.
pub const QUEUE_CAPACITY: usize = 100_000;
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
    /// Messages dropped because the queue was full, since start.
    pub lost: AtomicU64,
    /// Messages in the queue now.
    queued: AtomicUsize,
    /// Publishers of the static topic seen in the ROS graph (usize::MAX: not known yet).
    pub static_publishers: AtomicUsize,
    /// Whether `static_publishers` is still wanted (only until the arena is ready: a graph
    /// query costs more than taking a message).
    pub graph_wanted: AtomicBool,
    stop: AtomicBool,
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
        A: Stream<Item = TFMessage> + Unpin + Send + 'static,
        B: Stream<Item = TFMessage> + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded();
        let shared = Arc::new(IntakeShared {
            static_publishers: AtomicUsize::new(usize::MAX),
            graph_wanted: AtomicBool::new(true),
            ..IntakeShared::default()
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("tf_shm-spin".into())
            .spawn(move || {
                let mut graph_at = std::time::Instant::now() - GRAPH_PERIOD;
                while !s.stop.load(Ordering::Relaxed) {
                    node.spin_once(SPIN_TIMEOUT);
                    drain(&mut tf, false, &tx, &s);
                    drain(&mut tf_static, true, &tx, &s);
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
fn drain<S: Stream<Item = TFMessage> + Unpin>(
    stream: &mut S,
    is_static: bool,
    tx: &mpsc::UnboundedSender<Received>,
    s: &IntakeShared,
) {
    while let Some(Some(msg)) = stream.next().now_or_never() {
        if s.queued.load(Ordering::Relaxed) >= QUEUE_CAPACITY {
            s.lost.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        s.queued.fetch_add(1, Ordering::Relaxed);
        if tx.unbounded_send(Received { msg, is_static }).is_err() {
            // The writer's task is gone: the bridge is stopping.
            s.queued.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
