//! The re-attach loop behind a [`Buffer`](crate::Buffer): a thread waits for the owner's
//! connection to hang up; the mapping it has keeps answering while the thread retries joining
//! every `RETRY` (every second while an owner refuses us, e.g. a bridge of another version);
//! once a new arena instance is joined, the buffer answers from both arenas together
//! ([`HandoverStore`]) until [`Handover`] says the new one may answer alone, and then swaps it
//! in and counts the swap.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;

use super::buffer_store::BufferStore;
use super::handover::Handover;
use super::handover_store::HandoverStore;
use crate::arena::notify;
use crate::rendezvous::join::{join, Attachment, JoinSpec, RETRY};
use crate::rendezvous::JoinError;

/// How often to retry an owner that refused us (rather than one that is absent).
const REFUSED_RETRY: Duration = Duration::from_secs(1);

/// What a buffer and its re-attach thread share: the store answering now, and how to follow
/// the owner.
pub(crate) struct Follower {
    pub current: ArcSwap<BufferStore>,
    pub arena_swaps: AtomicU64,
    pub spec: JoinSpec,
    stop: AtomicBool,
    wake: OwnedFd,
}

impl Follower {
    pub fn new(att: Attachment, spec: JoinSpec) -> Result<Follower, JoinError> {
        use rustix::event::{eventfd, EventfdFlags};
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
            .map_err(|e| JoinError::io("create an eventfd for", &spec.loc.sock_path, e.into()))?;
        Ok(Follower {
            current: ArcSwap::from_pointee(BufferStore::alone(Arc::new(att))),
            arena_swaps: AtomicU64::new(0),
            spec,
            stop: AtomicBool::new(false),
            wake,
        })
    }

    /// Starts the re-attach thread; it runs until [`Follower::stop`].
    pub fn spawn(this: &Arc<Follower>) -> Result<JoinHandle<()>, JoinError> {
        let f = this.clone();
        std::thread::Builder::new()
            .name("tf_shm-reattach".into())
            .spawn(move || f.monitor())
            .map_err(|e| {
                JoinError::io(
                    "start the re-attach thread for",
                    &this.spec.loc.sock_path,
                    e,
                )
            })
    }

    /// Asks the re-attach thread to end (it returns within a poll).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
    }

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
            let (stop, hung_up) = self.wait(Some(&cur.attachment().conn), None);
            if stop {
                return;
            }
            if hung_up {
                let old = cur.attachment().clone();
                let old_view = old.view.clone();
                // Only the swap may drop the old attachment (and its slot byte) from here on.
                drop(cur);
                let stop = self.reattach(old);
                // Waits sleeping on the old arena move to the new one (or see the stop).
                notify::wake_all(old_view.header());
                if stop {
                    return;
                }
            }
        }
    }

    /// The owner is gone: the current attachment keeps answering while we retry joining, and
    /// after joining it answers together with the new arena until that one is ready (see
    /// [`super::handover`] and [`HandoverStore`]). Returns whether a stop was
    /// requested.
    fn reattach(&self, old: Arc<Attachment>) -> bool {
        let old_instance = old.view.identity().instance_uuid;
        let mut pause = RETRY;
        loop {
            if self.wait(None, Some(pause)).0 {
                return true;
            }
            match join(&self.spec) {
                Ok(att) => {
                    let att = Arc::new(att);
                    // The first join of a buffer made before any owner served: nothing to hold
                    // and no restart to count.
                    let first = !old.is_joined();
                    let new_instance = !first && att.view.identity().instance_uuid != old_instance;
                    if new_instance {
                        match self.hold_until_ready(&old, &att) {
                            Hold::Swap => {}
                            Hold::Stop => return true,
                            Hold::OwnerGone => continue,
                        }
                    }
                    // Swap and release the old attachment (its slot byte) first, count
                    // second: whoever sees the new count also sees the new arena and no
                    // longer our old slot.
                    self.current.store(Arc::new(BufferStore::alone(att)));
                    drop(old);
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
            self.current.store(Arc::new(BufferStore::holding(
                old.clone(),
                store,
                new.clone(),
            )));
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
