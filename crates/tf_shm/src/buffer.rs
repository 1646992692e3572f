//! [`Buffer`]: a consumer's handle on the arena of its domain, which outlives the bridge.
//!
//! Lookups read the current store through an [`ArcSwap`]: one atomic load, no allocation, no
//! lock, no syscall. A background thread waits for the owner's connection to hang up; the
//! mapping it has keeps answering (its history stays valid, newer times extrapolate as tf2
//! would), and the thread retries joining every 20 ms until an owner serves again (every
//! second while an owner refuses us, e.g. a bridge of another version). Once a new arena is
//! joined, the buffer answers from the old and the new arena together
//! ([`crate::handover_store`]: the new arena's data as soon as it has any, the old arena's for
//! what it does not have yet), and waits wake on the new arena's writes; when the new arena is
//! ready (see `rendezvous::handover`) it is swapped in alone and [`Buffer::arena_swaps`] goes
//! up. A lookup in flight keeps the mappings it started with alive until it returns, so no
//! answer is torn or dangling.

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
use crate::handover_store::HandoverStore;
use crate::queries::BufferCore;
use crate::rendezvous::handover::Handover;
use crate::rendezvous::open::{join, Attachment, JoinSpec, RETRY};
use crate::rendezvous::{Location, OpenError};
use crate::sample::{FrameId, Transform, TransformStamped};
use crate::store::{FrameStore, HistorySpan, LinkAt};
use crate::view::{ArenaView, FramePair};

/// Longest single sleep of a waiting call: bounds how late a wait notices an arena swap that
/// raced with its going to sleep (the swap's wake-up ends every sleep that began before it).
const SWAP_RECHECK: Duration = Duration::from_millis(200);
/// How often to retry an owner that refused us (rather than one that is absent).
const REFUSED_RETRY: Duration = Duration::from_secs(1);

/// A consumer's read-only handle on an arena; made by [`crate::open`] or
/// [`Open::open`](crate::rendezvous::Open::open). `Send + Sync`: share it with an `Arc`.
pub struct Buffer {
    shared: Arc<Shared>,
    monitor: Option<JoinHandle<()>>,
}

struct Shared {
    current: ArcSwap<BufferStore>,
    arena_swaps: AtomicU64,
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
            current: ArcSwap::from_pointee(BufferStore::alone(Arc::new(att))),
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

    fn view_guard(&self) -> arc_swap::Guard<Arc<BufferStore>> {
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
        self.view_guard().att.slot
    }

    /// Where this buffer's arena is served.
    pub fn location(&self) -> &Location {
        &self.shared.spec.loc
    }

    /// Whether the owner of the current arena is still connected (the kernel's word: our
    /// connection has not hung up). Lookups keep working either way.
    pub fn owner_alive(&self) -> bool {
        let cur = self.view_guard();
        let mut fds = [PollFd::new(&cur.att.conn, PollFlags::IN | PollFlags::RDHUP)];
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
        self.wait_for(timeout, |s| {
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
        self.wait_for(timeout, |s| {
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

    /// Checks `ready` on the current store until it succeeds or `timeout` passes, sleeping on
    /// the notification word of the arena that receives data (during a handover, the new one)
    /// in between; returns the last check's result.
    fn wait_for(
        &self,
        timeout: Duration,
        mut ready: impl FnMut(&BufferStore) -> Result<(), TransformError>,
    ) -> Result<(), TransformError> {
        let first = ready(&self.view_guard());
        if first.is_ok() || timeout.is_zero() {
            return first;
        }
        // Past the representable future, wait "forever".
        let deadline = Instant::now().checked_add(timeout);
        let mut waiting_on: Option<Arc<Attachment>> = None;
        let result = loop {
            let cur = self.shared.current.load_full();
            let att = cur.receiving();
            if !waiting_on.as_ref().is_some_and(|w| Arc::ptr_eq(w, att)) {
                if let Some(old) = waiting_on.take() {
                    old.end_wait();
                }
                att.begin_wait();
                waiting_on = Some(att.clone());
            }
            let header = att.view.header();
            // Read before checking: a write after the check moves the word, so the sleep
            // below returns at once instead of missing it.
            let seen = notify::seen(header);
            let r = ready(&cur);
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

/// tf2's queries on the current store (a lookup in flight keeps its mappings alive); this also
/// gives a buffer `frame_exists`, `get_all_frame_names`, `get_parent` and `get_cache_length`.
impl BufferCore for Buffer {
    type Store = BufferStore;

    fn with_store<R>(&self, f: impl FnOnce(&BufferStore) -> R) -> R {
        f(&self.view_guard())
    }
}

/// What a [`Buffer`] answers from: its arena; or, while it holds its old arena after a bridge
/// restart, the old and the new arena together ([`HandoverStore`]: fresh data from the new
/// arena as soon as it has it, everything else from the old one).
pub struct BufferStore {
    /// The attachment's view, inline: the normal path reads it with no further indirection.
    view: ArenaView,
    att: Arc<Attachment>,
    held: Option<Held>,
}

/// The new arena joined while the old one is held.
struct Held {
    store: HandoverStore,
    att: Arc<Attachment>,
}

impl Held {
    /// A pair's lookup during a hold: by its names, through the handover store (kept out of
    /// line: the normal path must not pay for it).
    #[cold]
    #[inline(never)]
    fn lookup_pair(&self, pair: &FramePair, time: i64) -> Result<(i64, Transform), TransformError> {
        self.store
            .lookup_names(pair.target(), pair.source(), time)
            .map(|t| (t.stamp, t.transform))
    }
}

impl BufferStore {
    fn alone(att: Arc<Attachment>) -> BufferStore {
        BufferStore {
            view: att.view.clone(),
            att,
            held: None,
        }
    }

    /// The attachment new data arrives in.
    fn receiving(&self) -> &Arc<Attachment> {
        self.held.as_ref().map_or(&self.att, |h| &h.att)
    }
}

/// Every method is the arena's, or the handover store's during a hold.
impl FrameStore for BufferStore {
    #[inline]
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        match &self.held {
            None => self.view.frame_id(name),
            Some(h) => h.store.frame_id(name),
        }
    }
    #[inline]
    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        match &self.held {
            None => self.view.frame_name(id),
            Some(h) => h.store.frame_name(id),
        }
    }
    #[inline]
    fn frame_count(&self) -> FrameId {
        match &self.held {
            None => self.view.frame_count(),
            Some(h) => h.store.frame_count(),
        }
    }
    #[inline]
    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        match &self.held {
            None => self.view.link_at(id, time, interpolate),
            Some(h) => h.store.link_at(id, time, interpolate),
        }
    }
    #[inline]
    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        match &self.held {
            None => self.view.latest_time_and_parent(id),
            Some(h) => h.store.latest_time_and_parent(id),
        }
    }
    #[inline]
    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        match &self.held {
            None => self.view.is_static(id),
            Some(h) => h.store.is_static(id),
        }
    }
    #[inline]
    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        match &self.held {
            None => self.view.history_span(id),
            Some(h) => h.store.history_span(id),
        }
    }
    #[inline]
    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        match &self.held {
            None => self.view.authority(id),
            Some(h) => h.store.authority(id),
        }
    }
    #[inline]
    fn cache_time_ns(&self) -> i64 {
        match &self.held {
            None => self.view.cache_time_ns(),
            Some(h) => h.store.cache_time_ns(),
        }
    }
    #[inline]
    fn lookup_names<'a>(
        &self,
        target: &'a str,
        source: &'a str,
        time: i64,
    ) -> Result<TransformStamped<'a>, TransformError> {
        match &self.held {
            None => self.view.lookup_names(target, source, time),
            Some(h) => h.store.lookup_names(target, source, time),
        }
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
            let (stop, hung_up) = self.wait(Some(&cur.att.conn), None);
            if stop {
                return;
            }
            if hung_up {
                let old = cur.att.clone();
                // Only the swap may drop the old attachment (and its slot byte) from here on.
                drop(cur);
                let stop = self.reattach(&old);
                // Waits sleeping on the old arena move to the new one (or see the stop).
                notify::wake_all(old.view.header());
                if stop {
                    return;
                }
            }
        }
    }

    /// The owner is gone: the current attachment keeps answering while we retry joining, and
    /// after joining it answers together with the new arena until that one is ready (see
    /// [`crate::rendezvous::handover`] and [`HandoverStore`]). Returns whether a stop was
    /// requested.
    fn reattach(&self, old: &Arc<Attachment>) -> bool {
        let old_instance = old.view.identity().instance_uuid;
        let mut pause = RETRY;
        loop {
            if self.wait(None, Some(pause)).0 {
                return true;
            }
            match join(&self.spec) {
                Ok(att) => {
                    let att = Arc::new(att);
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
                    self.current.store(Arc::new(BufferStore::alone(att)));
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

    /// Answers from `old` and `new` together until `new` may take over alone, checking every
    /// `RETRY`. Ends answering from `old` alone unless it returns [`Hold::Swap`].
    fn hold_until_ready(&self, old: &Arc<Attachment>, new: &Arc<Attachment>) -> Hold {
        let mut handover = Handover::new(&old.view, Instant::now());
        // An old arena whose frame table cannot be read answers alone, as it did before.
        if let Ok(store) = HandoverStore::new(old.view.clone(), new.view.clone()) {
            self.current.store(Arc::new(BufferStore {
                view: old.view.clone(),
                att: old.clone(),
                held: Some(Held {
                    store,
                    att: new.clone(),
                }),
            }));
            // Waits sleeping on the old arena move to the new one, where data now arrives.
            notify::wake_all(old.view.header());
        }
        let end = loop {
            if handover.swap_now(&new.view, Instant::now()) {
                break Hold::Swap;
            }
            match self.wait(Some(&new.conn), Some(RETRY)) {
                (true, _) => break Hold::Stop,
                (_, true) => break Hold::OwnerGone,
                _ => {}
            }
        };
        if !matches!(end, Hold::Swap) {
            self.current
                .store(Arc::new(BufferStore::alone(old.clone())));
            notify::wake_all(new.view.header());
        }
        end
    }
}

/// How holding the old arena ended.
enum Hold {
    Swap,
    Stop,
    /// The new owner died before its arena was ready: join again.
    OwnerGone,
}
