//! [`Buffer`]: a consumer's handle on the arena of its domain, which outlives the bridge.
//!
//! Lookups read the current store through an [`arc_swap::ArcSwap`]: one atomic load, no
//! allocation, no lock, no syscall. The re-attach loop ([`crate::follow`]) follows the
//! owner: when it dies the mapping the buffer has keeps answering (its history stays valid,
//! newer times extrapolate as tf2 would); once a new arena is joined, the buffer answers from
//! the old and the new arena together ([`crate::handover_store`]: the new arena's data as soon
//! as it has any, the old arena's for what it does not have yet), and waits wake on the new
//! arena's writes; when the new arena is ready (the swap rule, `follow::handover`) it is swapped in
//! alone and [`Buffer::arena_swaps`] goes up. A lookup in flight keeps the mappings it started
//! with alive until it returns, so no answer is torn or dangling.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use crate::arena::{notify, ArenaIdentity};
use crate::error::{ArenaError, TransformError};
use crate::follow::{BufferStore, Follower};
use crate::pair::FramePair;
use crate::queries::BufferCore;
use crate::rendezvous::join::{join, Attachment, JoinSpec, RETRY};
use crate::rendezvous::{Join, JoinError, Location};
use crate::sample::{Transform, TransformStamped};
use crate::view::ArenaView;

/// Longest single sleep of a waiting call: bounds how late a wait notices an arena swap that
/// raced with its going to sleep (the swap's wake-up ends every sleep that began before it).
const SWAP_RECHECK: Duration = Duration::from_millis(200);

/// Longest single sleep of a waiting call in a forked child, which the owner does not wake
/// (see `Attachment::begin_wait`): how late it notices data at most.
const FORKED_RECHECK: Duration = Duration::from_millis(10);

/// A consumer's read-only handle on an arena. `Send + Sync`: share it with an `Arc`.
///
/// Made by [`crate::open`] / [`Join::open`](crate::rendezvous::Join::open) (fails with
/// [`JoinError::NotServing`] when no bridge serves: for tools), by
/// [`Join::await_open`](crate::rendezvous::Join::await_open) (waits for a bridge, bounded), or
/// by [`Join::open_or_empty`](crate::rendezvous::Join::open_or_empty) (never waits: an empty
/// tf2 buffer until a bridge serves, as a tf2_ros `Buffer` is until data comes: for nodes).
///
/// A child `fork`ed from a process holding a buffer (Python's `multiprocessing` with the fork
/// start method) has a copy that keeps answering from the arena it had at the fork, without
/// the parent's re-attach thread: it does not follow a bridge restart. Its waits neither use
/// nor change the parent's connection to the owner, so the owner does not wake them: they look
/// again every 10 ms. Dropping the copy leaves the parent's thread alone.
pub struct Buffer {
    shared: Arc<Follower>,
    monitor: Option<JoinHandle<()>>,
    /// The process that started `monitor`: a child forked since has a copy of the buffer but
    /// not the thread, and shares the thread's wake-up eventfd with the parent.
    pid: u32,
}

impl Buffer {
    pub(crate) fn start(att: Attachment, spec: JoinSpec) -> Result<Buffer, JoinError> {
        let shared = Arc::new(Follower::new(att, spec)?);
        let monitor = Follower::spawn(&shared)?;
        Ok(Buffer {
            shared,
            monitor: Some(monitor),
            pid: std::process::id(),
        })
    }

    fn view_guard(&self) -> arc_swap::Guard<Arc<BufferStore>> {
        self.shared.current.load()
    }

    /// The current arena view (a cheap clone). It keeps its mapping alive while held, even
    /// after a swap; call again to follow the current arena. While the buffer holds its old
    /// arena after a restart this is the old arena (the buffer's own queries also see the new
    /// one's data).
    pub fn view(&self) -> ArenaView {
        self.view_guard().view.clone()
    }

    /// The view of the arena that receives data: [`Buffer::view`]'s, except while the buffer
    /// holds its old arena after a restart, when it is the new one (what a
    /// [`Tail`](crate::tail::Tail) follows).
    pub fn receiving_view(&self) -> ArenaView {
        self.view_guard().receiving().view.clone()
    }

    /// How many times a new arena instance was swapped in since this buffer was opened.
    pub fn arena_swaps(&self) -> u64 {
        self.shared.arena_swaps.load(Ordering::SeqCst)
    }

    /// Identity of the arena answering now.
    pub fn identity(&self) -> ArenaIdentity {
        self.view_guard().view.identity()
    }

    /// Whether this buffer has joined an owner's arena: always for [`crate::open`],
    /// [`Join::open`](crate::Join::open) and [`Join::await_open`](crate::Join::await_open);
    /// for [`Join::open_or_empty`](crate::Join::open_or_empty), false until a bridge served
    /// (until then it answers as an empty tf2 buffer). Stays true once joined, also while a
    /// restarted bridge is awaited.
    pub fn joined(&self) -> bool {
        self.view_guard().att.is_joined()
    }

    /// Our participant slot in the current arena; `u32::MAX` before the buffer [joined](Buffer::joined).
    pub fn slot(&self) -> u32 {
        self.view_guard().att.slot
    }

    /// Where this buffer's arena is served.
    pub fn location(&self) -> &Location {
        &self.shared.spec.loc
    }

    /// Whether the owner this buffer follows is still connected (the kernel's word: our
    /// connection has not hung up); while the buffer holds its old arena after a restart, the
    /// new owner. Lookups keep working either way.
    pub fn owner_alive(&self) -> bool {
        let cur = self.view_guard();
        let mut fds = [PollFd::new(
            &cur.receiving().conn,
            PollFlags::IN | PollFlags::RDHUP,
        )];
        let zero = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // The owner never writes after its answer, so any event means the end of the line.
        matches!(rustix::event::poll(&mut fds, Some(&zero)), Ok(0))
    }

    /// tf2's `lookupTransform(target, source, time)`; see [`ArenaView::lookup_transform`].
    pub fn lookup_transform<'a>(
        &self,
        target: &'a str,
        source: &'a str,
        time: i64,
    ) -> Result<TransformStamped<'a>, TransformError> {
        BufferCore::lookup_transform(self, target, source, time)
    }

    /// The hot-loop form of [`Buffer::lookup_transform`]: no string work while the arena stays
    /// the same; after a re-attach the pair re-resolves its names by itself. See
    /// [`ArenaView::lookup_pair`].
    pub fn lookup_pair(
        &self,
        pair: &mut FramePair,
        time: i64,
    ) -> Result<(i64, Transform), TransformError> {
        let cur = self.view_guard();
        match &cur.held {
            None => cur.view.lookup_pair(pair, time),
            Some(h) => h.lookup_pair(pair, time),
        }
    }

    /// tf2's two-time `lookupTransform`; see [`ArenaView::lookup_transform_full`].
    pub fn lookup_transform_full<'a>(
        &self,
        target: &'a str,
        target_time: i64,
        source: &'a str,
        source_time: i64,
        fixed: &str,
    ) -> Result<TransformStamped<'a>, TransformError> {
        BufferCore::lookup_transform_full(self, target, target_time, source, source_time, fixed)
    }

    /// tf2's `canTransform(target, source, time)`.
    pub fn can_transform(
        &self,
        target: &str,
        source: &str,
        time: i64,
    ) -> Result<(), TransformError> {
        BufferCore::can_transform(self, target, source, time)
    }

    /// tf2's two-time `canTransform`.
    pub fn can_transform_full(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
    ) -> Result<(), TransformError> {
        BufferCore::can_transform_full(self, target, target_time, source, source_time, fixed)
    }

    /// tf2's `getLatestCommonTime(target, source)`, ns.
    pub fn get_latest_common_time(
        &self,
        target: &str,
        source: &str,
    ) -> Result<i64, TransformError> {
        BufferCore::get_latest_common_time(self, target, source)
    }

    /// tf2's `allFramesAsString()`.
    pub fn all_frames_as_string(&self) -> Result<String, ArenaError> {
        BufferCore::all_frames_as_string(self)
    }

    /// tf2's `allFramesAsYAML(now)`; `now` in ns.
    pub fn all_frames_as_yaml(&self, now: i64) -> Result<String, ArenaError> {
        BufferCore::all_frames_as_yaml(self, now)
    }

    /// tf2_ros's `Buffer::canTransform(target, source, time, timeout)`: waits until
    /// [`Buffer::can_transform`] succeeds or `timeout` passes, then answers as
    /// [`Buffer::can_transform`] does (`Ok(())`, or the error it returns at the end).
    ///
    /// The wait sleeps on the arena's notification word and wakes when the bridge writes a
    /// transform (or clears the buffer, or a new arena is swapped in after a bridge restart):
    /// no polling, no CPU while nothing arrives. `timeout` is measured on the steady clock
    /// (this buffer has no sim time); `Duration::ZERO` checks once. Time 0 means the latest
    /// common time, re-evaluated at each wake. tf2_ros never raises `TimeoutException` here,
    /// and neither does this: a wait that runs out returns the check's own error.
    pub fn can_transform_timeout(
        &self,
        target: &str,
        source: &str,
        time: i64,
        timeout: Duration,
    ) -> Result<(), TransformError> {
        self.wait_until(timeout, |s| {
            BufferCore::can_transform(s, target, source, time)
        })
    }

    /// tf2_ros's two-time `Buffer::canTransform(target, target_time, source, source_time,
    /// fixed, timeout)`; waits as [`Buffer::can_transform_timeout`] does.
    pub fn can_transform_full_timeout(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
        timeout: Duration,
    ) -> Result<(), TransformError> {
        self.wait_until(timeout, |s| {
            BufferCore::can_transform_full(s, target, target_time, source, source_time, fixed)
        })
    }

    /// tf2_ros's `Buffer::lookupTransform(target, source, time, timeout)`: waits as
    /// [`Buffer::can_transform_timeout`] does, then does the plain lookup, so a failure is the
    /// plain lookup's error, as tf2_ros throws it.
    pub fn lookup_transform_timeout<'a>(
        &self,
        target: &'a str,
        source: &'a str,
        time: i64,
        timeout: Duration,
    ) -> Result<TransformStamped<'a>, TransformError> {
        let _ = self.can_transform_timeout(target, source, time, timeout);
        self.lookup_transform(target, source, time)
    }

    /// tf2_ros's two-time `Buffer::lookupTransform(target, target_time, source, source_time,
    /// fixed, timeout)`: waits as [`Buffer::can_transform_full_timeout`] does, then does the
    /// plain [`Buffer::lookup_transform_full`].
    pub fn lookup_transform_full_timeout<'a>(
        &self,
        target: &'a str,
        target_time: i64,
        source: &'a str,
        source_time: i64,
        fixed: &str,
        timeout: Duration,
    ) -> Result<TransformStamped<'a>, TransformError> {
        let _ = self.can_transform_full_timeout(
            target,
            target_time,
            source,
            source_time,
            fixed,
            timeout,
        );
        self.lookup_transform_full(target, target_time, source, source_time, fixed)
    }

    /// tf2_ros's timed wait for a check (`canTransform` with a timeout): runs `ready` on the
    /// current store at once and, unless it succeeded or `timeout` is zero, again after every
    /// wake of the notification word of the arena that receives data (see
    /// [`Buffer::wait_while`]) until it succeeds or `timeout` (steady clock; past the
    /// representable future, forever) has passed. Returns the last check's result. The one
    /// deadline loop of every timed call, in Rust, the C ABI and Python.
    pub fn wait_until<T, E>(
        &self,
        timeout: Duration,
        mut ready: impl FnMut(&BufferStore) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut result = ready(&self.view_guard());
        if result.is_ok() || timeout.is_zero() {
            return result;
        }
        let deadline = Instant::now().checked_add(timeout);
        self.wait_steps(|cur| {
            result = ready(cur);
            let now = Instant::now();
            match deadline {
                _ if result.is_ok() => None,
                Some(d) if d <= now => None,
                Some(d) => Some(d - now),
                None => Some(Duration::MAX),
            }
        });
        result
    }

    /// Calls `step` until it returns `None`, sleeping in between on the notification word of
    /// the arena that receives data (during a handover after a bridge restart, the new one):
    /// `step` runs at once, then after every wake — the bridge wrote a transform or cleared the
    /// buffer, a new arena was swapped in, [`Buffer::wake_waiters`] was called — or once the
    /// `Some(duration)` it returned has passed. No polling: nothing runs while nothing
    /// happens. Wakes may be spurious; `step` decides. This is what every timed call waits
    /// with; the C ABI's `tf_shm_buffer_wait` (one thread serving many requests) too.
    pub fn wait_while(&self, mut step: impl FnMut() -> Option<Duration>) {
        self.wait_steps(|_| step());
    }

    /// Ends the current sleep of every [`Buffer::wait_while`] (and timed call) on this
    /// buffer's arena, so that their steps run again: FUTEX_WAKE on the arena's word, which
    /// other processes' waiters on the same arena see as a spurious wake-up. A step that is
    /// running at that moment is not interrupted, and a sleep that begins just after is not
    /// ended: callers that must be seen repeat the wake until their waiter answers.
    pub fn wake_waiters(&self) {
        notify::wake_all(self.view_guard().receiving().view.header());
    }

    fn wait_steps(&self, mut step: impl FnMut(&BufferStore) -> Option<Duration>) {
        let mut waiting_on: Option<Arc<Attachment>> = None;
        let mut longest = SWAP_RECHECK;
        loop {
            let cur = self.shared.current.load_full();
            let att = cur.receiving();
            if !waiting_on.as_ref().is_some_and(|w| Arc::ptr_eq(w, att)) {
                if let Some(old) = waiting_on.take() {
                    old.end_wait();
                }
                longest = if att.begin_wait() {
                    SWAP_RECHECK
                } else {
                    FORKED_RECHECK
                };
                waiting_on = Some(att.clone());
            }
            let header = att.view.header();
            // Read before the step: a write after its check moves the word, so the sleep below
            // returns at once instead of missing it.
            let seen = notify::seen(header);
            let Some(left) = step(&cur) else { break };
            notify::sleep(header, seen, left.min(longest));
        }
        if let Some(w) = waiting_on {
            w.end_wait();
        }
    }
}

/// tf2's queries on the current store (a lookup in flight keeps its mappings alive); this also
/// gives a buffer `frame_exists`, `get_all_frame_names`, `get_parent` and `get_cache_length`.
impl BufferCore for Buffer {
    type Store = BufferStore;

    fn with_store<R>(&self, f: impl FnOnce(&BufferStore) -> R) -> R {
        f(&self.view_guard())
    }
}

/// The builder's ends that make a [`Buffer`]; the builder and the join itself are the
/// rendezvous's (`rendezvous/join.rs`).
impl Join {
    /// Joins the arena served for this location and maps it read-only. Fails at once if
    /// nobody serves it ([`JoinError::NotServing`]).
    ///
    /// Errors: [`JoinError`].
    pub fn open(&self) -> Result<Buffer, JoinError> {
        let spec = self.spec()?;
        let att = join(&spec)?;
        Buffer::start(att, spec)
    }

    /// A buffer whether or not a bridge serves yet, as a tf2_ros `Buffer` is: joined at once
    /// when an owner serves; otherwise empty (every lookup fails with tf2's
    /// `LookupException`, `can_transform` is false, waits wait) until an owner serves, which
    /// the buffer's re-attach thread notices within ~20 ms, as it follows a restarted bridge;
    /// waits that began before wake then. [`Buffer::joined`] tells which.
    ///
    /// For nodes (the Python and C++ buffers use it); tools that need a bridge now use
    /// [`Join::open`] or [`Join::await_open`] and report [`JoinError::NotServing`].
    ///
    /// Errors: [`JoinError`] other than the [retryable](JoinError::is_retryable) ones (those
    /// give the empty buffer): a bad location, an owner that refuses us (another format
    /// version), a handshake that fails.
    pub fn open_or_empty(&self) -> Result<Buffer, JoinError> {
        let spec = self.spec()?;
        match join(&spec) {
            Ok(att) => Buffer::start(att, spec),
            Err(e) if e.is_retryable() => Buffer::start(Attachment::unjoined(&spec)?, spec),
            Err(e) => Err(e),
        }
    }

    /// [`Join::open`], retrying every 20 ms for up to `timeout` while the error is
    /// [retryable](JoinError::is_retryable) (nobody serves yet, or the owner is busy). Any
    /// other error is returned at once.
    pub fn await_open(&self, timeout: Duration) -> Result<Buffer, JoinError> {
        let spec = self.spec()?;
        let deadline = Instant::now() + timeout;
        loop {
            match join(&spec) {
                Ok(att) => return Buffer::start(att, spec),
                Err(e) if e.is_retryable() && Instant::now() + RETRY < deadline => {
                    std::thread::sleep(RETRY)
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if std::process::id() != self.pid {
            // A forked child: the monitor thread is the parent's (joining it here fails), and a
            // stop request would wake it through the eventfd the two processes share.
            std::mem::forget(self.monitor.take());
            return;
        }
        self.shared.stop();
        if let Some(t) = self.monitor.take() {
            let _ = t.join();
        }
    }
}
