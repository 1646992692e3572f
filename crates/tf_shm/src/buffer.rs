//! [`Buffer`]: a consumer's handle on the arena of its domain, which outlives the bridge.
//!
//! Lookups read the current mapping through an [`ArcSwap`]: one atomic load, no allocation, no
//! lock, no syscall. A background thread waits for the owner's connection to hang up; the
//! mapping it has keeps answering (its history stays valid, newer times extrapolate as tf2
//! would), and the thread retries joining every 20 ms until an owner serves again (every second while an owner
//! refuses us, e.g. a bridge of another version). The old mapping keeps answering until the new
//! arena is ready (its writer says so and it holds the frames the old one held, bounded in
//! time: see `rendezvous::handover`). A new arena instance is swapped in whole and [`Buffer::generation`] goes up; a lookup in flight keeps the
//! mapping it started with alive until it returns, so no answer is torn or dangling.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;

use crate::arena::ArenaIdentity;
use crate::error::{ArenaError, TransformError};
use crate::rendezvous::handover::Handover;
use crate::rendezvous::open::{join, Attachment, JoinSpec, RETRY};
use crate::rendezvous::{Location, OpenError};
use crate::sample::{Transform, TransformStamped};
use crate::view::{ArenaView, FramePair};

/// tf2_ros's polling period for waiting lookups.
const WAIT_POLL: Duration = Duration::from_millis(10);
/// How often to retry an owner that refused us (rather than one that is absent).
const REFUSED_RETRY: Duration = Duration::from_secs(1);

/// A consumer's read-only handle on an arena; made by [`crate::open`] or
/// [`Open::open`](crate::rendezvous::Open::open). `Send + Sync`: share it with an `Arc`.
pub struct Buffer {
    shared: Arc<Shared>,
    monitor: Option<JoinHandle<()>>,
}

struct Shared {
    current: ArcSwap<Attachment>,
    generation: AtomicU64,
    spec: JoinSpec,
    stop: AtomicBool,
    wake: OwnedFd,
}

impl Buffer {
    pub(crate) fn start(att: Attachment, spec: JoinSpec) -> Result<Buffer, OpenError> {
        use rustix::event::{eventfd, EventfdFlags};
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
            .map_err(|e| OpenError::io("create an eventfd for", &spec.loc.sock_path, e.into()))?;
        let shared = Arc::new(Shared {
            current: ArcSwap::from_pointee(att),
            generation: AtomicU64::new(0),
            spec,
            stop: AtomicBool::new(false),
            wake,
        });
        let s = shared.clone();
        let monitor = std::thread::Builder::new()
            .name("tf_shm-reattach".into())
            .spawn(move || s.monitor())
            .map_err(|e| {
                OpenError::io(
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
    pub fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::SeqCst)
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
        self.view_guard()
            .view
            .lookup_transform(target, source, time)
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
        self.view_guard().view.lookup_transform_full(
            target,
            target_time,
            source,
            source_time,
            fixed,
        )
    }

    /// tf2's `canTransform(target, source, time)`.
    pub fn can_transform(
        &self,
        target: &str,
        source: &str,
        time: i64,
    ) -> Result<(), TransformError> {
        self.view_guard().view.can_transform(target, source, time)
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
        self.view_guard()
            .view
            .can_transform_full(target, target_time, source, source_time, fixed)
    }

    /// tf2's `getLatestCommonTime(target, source)`, ns.
    pub fn get_latest_common_time(
        &self,
        target: &str,
        source: &str,
    ) -> Result<i64, TransformError> {
        self.view_guard()
            .view
            .get_latest_common_time(target, source)
    }

    /// tf2's `allFramesAsString()`.
    pub fn all_frames_as_string(&self) -> Result<String, ArenaError> {
        self.view_guard().view.all_frames_as_string()
    }

    /// tf2's `allFramesAsYAML(now)`; `now` in ns.
    pub fn all_frames_as_yaml(&self, now: i64) -> Result<String, ArenaError> {
        self.view_guard().view.all_frames_as_yaml(now)
    }

    /// tf2_ros's `Buffer::lookupTransform(target, source, time, timeout)`: polls
    /// `canTransform` every 10 ms until it succeeds or `timeout` passes, then does the plain
    /// lookup, so a failure is the plain lookup's error, as tf2_ros throws it. Time 0 is
    /// re-resolved at each poll. Waits on the steady clock (this buffer has no sim time).
    pub fn lookup_transform_timeout<'a>(
        &self,
        target: &'a str,
        source: &'a str,
        time: i64,
        timeout: Duration,
    ) -> Result<TransformStamped<'a>, TransformError> {
        let start = Instant::now();
        while start.elapsed() < timeout && self.can_transform(target, source, time).is_err() {
            std::thread::sleep(WAIT_POLL);
        }
        self.lookup_transform(target, source, time)
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
                let old = cur.view.clone();
                // Only the swap may drop the old attachment (and its slot byte) from here on.
                drop(cur);
                if self.reattach(&old) {
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
                    // Swap first, count second: whoever sees the new generation also sees the
                    // new arena (and no longer our old slot).
                    self.current.store(Arc::new(att));
                    if new_instance {
                        self.generation.fetch_add(1, Ordering::SeqCst);
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
