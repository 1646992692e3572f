//! [`Buffer`]: a consumer's handle on the arena of its domain, which outlives the bridge.
//!
//! Lookups read the current mapping through an [`ArcSwap`]: one atomic load, no allocation, no
//! lock, no syscall. A background thread waits for the owner's connection to hang up; the
//! mapping it has keeps answering (its history stays valid, newer times extrapolate as tf2
//! would), and the thread retries joining every 20 ms until an owner serves again (every second while an owner
//! refuses us, e.g. a bridge of another version). The old mapping keeps answering until the new
//! arena is ready (its writer says so and it holds the frames the old one held, bounded in
//! time: see `rendezvous::handover`). A new arena instance is swapped in whole and [`Buffer::arena_swaps`] goes up; a lookup in flight keeps the
//! mapping it started with alive until it returns, so no answer is torn or dangling.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;

use crate::arena::{notify, ArenaIdentity};
use crate::error::{ArenaError, TransformError};
use crate::queries::BufferCore;
use crate::rendezvous::handover::Handover;
use crate::rendezvous::open::{join, Attachment, JoinSpec, RETRY};
use crate::rendezvous::{JoinError, Location};
use crate::sample::{Transform, TransformStamped};
use crate::view::{ArenaView, FramePair};

/// Longest single sleep of a waiting call: bounds how late a wait notices an arena swap that
/// raced with its going to sleep (the swap's wake-up ends every sleep that began before it).
const SWAP_RECHECK: Duration = Duration::from_millis(200);
/// How often to retry an owner that refused us (rather than one that is absent).
const REFUSED_RETRY: Duration = Duration::from_secs(1);

/// A consumer's read-only handle on an arena; made by [`crate::open`] or
/// [`Join::open`](crate::rendezvous::Join::open). `Send + Sync`: share it with an `Arc`.
pub struct Buffer {
    shared: Arc<Shared>,
    monitor: Option<JoinHandle<()>>,
}

struct Shared {
    current: ArcSwap<Attachment>,
    arena_swaps: AtomicU64,
    spec: JoinSpec,
    stop: AtomicBool,
    wake: OwnedFd,
}

impl Buffer {
    pub(crate) fn start(att: Attachment, spec: JoinSpec) -> Result<Buffer, JoinError> {
        use rustix::event::{eventfd, EventfdFlags};
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
            .map_err(|e| JoinError::io("create an eventfd for", &spec.loc.sock_path, e.into()))?;
        let shared = Arc::new(Shared {
            current: ArcSwap::from_pointee(att),
            arena_swaps: AtomicU64::new(0),
            spec,
            stop: AtomicBool::new(false),
            wake,
        });
        let s = shared.clone();
        let monitor = std::thread::Builder::new()
            .name("tf_shm-reattach".into())
            .spawn(move || s.monitor())
            .map_err(|e| {
                JoinError::io(
                    "start the re-attach thread for",
                    &shared.spec.loc.sock_path,
                    e,
                )
            })?;
        Ok(Buffer {
            shared,
            monitor: Some(monitor),
        })
    }

    fn view_guard(&self) -> arc_swap::Guard<Arc<Attachment>> {
        self.shared.current.load()
    }

    /// The current arena view (a cheap clone). It keeps its mapping alive while held, even
    /// after a swap; call again to follow the current arena.
    pub fn view(&self) -> ArenaView {
        self.view_guard().view.clone()
    }

    /// How many times a new arena instance was swapped in since this buffer was opened.
    pub fn arena_swaps(&self) -> u64 {
        self.shared.arena_swaps.load(Ordering::SeqCst)
    }

    /// Identity of the arena answering now.
    pub fn identity(&self) -> ArenaIdentity {
        self.view_guard().view.identity()
    }

    /// Our participant slot in the current arena.
    pub fn slot(&self) -> u32 {
        self.view_guard().slot
    }

    /// Where this buffer's arena is served.
    pub fn location(&self) -> &Location {
        &self.shared.spec.loc
    }

    /// Whether the owner of the current arena is still connected (the kernel's word: our
    /// connection has not hung up). Lookups keep working either way.
    pub fn owner_alive(&self) -> bool {
        let cur = self.view_guard();
        let mut fds = [PollFd::new(&cur.conn, PollFlags::IN | PollFlags::RDHUP)];
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
        self.view_guard().view.lookup_pair(pair, time)
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
        self.wait_for(timeout, |v| v.can_transform(target, source, time))
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
        self.wait_for(timeout, |v| {
            v.can_transform_full(target, target_time, source, source_time, fixed)
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

    /// Checks `ready` on the current arena until it succeeds or `timeout` passes, sleeping on
    /// the arena's notification word in between; returns the last check's result.
    fn wait_for(
        &self,
        timeout: Duration,
        mut ready: impl FnMut(&ArenaView) -> Result<(), TransformError>,
    ) -> Result<(), TransformError> {
        let first = ready(&self.view_guard().view);
        if first.is_ok() || timeout.is_zero() {
            return first;
        }
        // Past the representable future, wait "forever".
        let deadline = Instant::now().checked_add(timeout);
        let mut waiting_on: Option<Arc<Attachment>> = None;
        let result = loop {
            let cur = self.shared.current.load_full();
            if !waiting_on.as_ref().is_some_and(|w| Arc::ptr_eq(w, &cur)) {
                if let Some(old) = waiting_on.take() {
                    old.end_wait();
                }
                cur.begin_wait();
                waiting_on = Some(cur.clone());
            }
            let header = cur.view.header();
            // Read before checking: a write after the check moves the word, so the sleep
            // below returns at once instead of missing it.
            let seen = notify::seen(header);
            let r = ready(&cur.view);
            let now = Instant::now();
            let left = match deadline {
                _ if r.is_ok() => break r,
                Some(d) if d <= now => break r,
                Some(d) => d - now,
                None => SWAP_RECHECK,
            };
            notify::sleep(header, seen, left.min(SWAP_RECHECK));
        };
        if let Some(w) = waiting_on {
            w.end_wait();
        }
        result
    }
}

/// tf2's queries on the current arena (a lookup in flight keeps its mapping alive); this also
/// gives a buffer `frame_exists`, `get_all_frame_names`, `get_parent` and `get_cache_length`.
impl BufferCore for Buffer {
    type Store = ArenaView;

    fn with_store<R>(&self, f: impl FnOnce(&ArenaView) -> R) -> R {
        f(&self.view_guard().view)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = rustix::io::write(&self.shared.wake, &1u64.to_ne_bytes());
        if let Some(t) = self.monitor.take() {
            let _ = t.join();
        }
    }
}

impl Shared {
    /// Waits up to `timeout` (forever with `None`) for a stop request or for `conn` to hang
    /// up. Returns (stop requested, hung up).
    fn wait(&self, conn: Option<&OwnedFd>, timeout: Option<Duration>) -> (bool, bool) {
        let ts = timeout.and_then(|t| rustix::event::Timespec::try_from(t).ok());
        let mut fds = vec![PollFd::new(&self.wake, PollFlags::IN)];
        if let Some(c) = conn {
            fds.push(PollFd::new(c, PollFlags::IN | PollFlags::RDHUP));
        }
        match rustix::event::poll(&mut fds, ts.as_ref()) {
            Ok(_) | Err(Errno::INTR) => {}
            // poll cannot fail on valid fds; back off rather than spin.
            Err(_) => std::thread::sleep(RETRY),
        }
        let readable = fds.get(1).is_some_and(|p| !p.revents().is_empty());
        drop(fds);
        let mut hung_up = false;
        if let (Some(c), true) = (conn, readable) {
            let mut b = [0u8; 64];
            // The owner never sends after its answer: data is drained and ignored, EOF or an
            // error is the hang-up.
            hung_up = match rustix::net::recv(c, &mut b[..], rustix::net::RecvFlags::DONTWAIT) {
                Ok((_, n)) => n == 0,
                Err(Errno::AGAIN | Errno::INTR) => false,
                Err(_) => true,
            };
        }
        (self.stop.load(Ordering::SeqCst), hung_up)
    }

    fn monitor(&self) {
        loop {
            let cur = self.current.load_full();
            let (stop, hung_up) = self.wait(Some(&cur.conn), None);
            if stop {
                return;
            }
            if hung_up {
                let old_view = cur.view.clone();
                // Only the swap may drop the old attachment (and its slot byte) from here on.
                drop(cur);
                let stop = self.reattach(&old_view);
                // Waits sleeping on the old arena move to the new one (or see the stop).
                notify::wake_all(old_view.header());
                if stop {
                    return;
                }
            }
        }
    }

    /// The owner is gone: the current attachment keeps answering while we retry joining, and
    /// after joining until the new arena is ready (see [`crate::rendezvous::handover`]).
    /// Returns whether a stop was requested.
    fn reattach(&self, old: &ArenaView) -> bool {
        let old_instance = old.identity().instance_uuid;
        let mut pause = RETRY;
        loop {
            if self.wait(None, Some(pause)).0 {
                return true;
            }
            match join(&self.spec) {
                Ok(att) => {
                    let new_instance = att.view.identity().instance_uuid != old_instance;
                    if new_instance {
                        match self.hold_until_ready(old, &att) {
                            Hold::Swap => {}
                            Hold::Stop => return true,
                            Hold::OwnerGone => continue,
                        }
                    }
                    // Swap first, count second: whoever sees the new count also sees the
                    // new arena (and no longer our old slot).
                    self.current.store(Arc::new(att));
                    if new_instance {
                        self.arena_swaps.fetch_add(1, Ordering::SeqCst);
                    }
                    return false;
                }
                Err(e) if e.is_retryable() => pause = RETRY,
                // E.g. a bridge of another version: keep trying, but without flooding its log
                // with our refusals.
                Err(_) => pause = REFUSED_RETRY,
            }
        }
    }

    /// Keeps answering from `old` until `new` may take over, checking every `RETRY`.
    fn hold_until_ready(&self, old: &ArenaView, new: &Attachment) -> Hold {
        let mut handover = Handover::new(old, Instant::now());
        loop {
            if handover.swap_now(&new.view, Instant::now()) {
                return Hold::Swap;
            }
            match self.wait(Some(&new.conn), Some(RETRY)) {
                (true, _) => return Hold::Stop,
                (_, true) => return Hold::OwnerGone,
                _ => {}
            }
        }
    }
}

/// How holding the old arena ended.
enum Hold {
    Swap,
    Stop,
    /// The new owner died before its arena was ready: join again.
    OwnerGone,
}
