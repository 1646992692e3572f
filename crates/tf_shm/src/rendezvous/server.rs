//! The owner server: one thread that answers hellos on the rendezvous socket and keeps every
//! granted connection open for the whole attachment.
//!
//! Everything is non-blocking and multiplexed with `poll`: a client that sends nothing is
//! dropped at its handshake deadline, a garbage or wrongly sized datagram gets `Malformed`, and
//! none of them delays another client. Peers are checked with `SO_PEERCRED` before their hello
//! is read. A slot is free when no open connection of ours holds it and the kernel reports its
//! lock byte free (a consumer of an earlier owner may still hold one).

use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketFlags};

use super::lockfile::{process_start_time, LockFile, Record, SLOTS};
use super::wire::{
    Mode, Request, Response, Status, WireError, NO_SLOT, REQUEST_LEN, WAIT_BEGIN, WAIT_END,
};
use super::EventHook;
use crate::arena::layout::{layout_hash, FORMAT_VERSION};
use crate::arena::{notify, ArenaIdentity};
use crate::view::ArenaView;

// Every slot has a bit in the header's `waiting` words.
const _: () = assert!(SLOTS as usize <= crate::arena::layout::WAITING_WORDS * 64);

/// Handshaking connections kept at most (bounds fds and work): a new connection past this
/// closes the oldest pending one (answered `Busy`), so idle or slow handshakes cannot lock
/// new joiners out — a joiner sends its hello right after connecting and is served at once.
const MAX_PENDING: usize = 64;

/// What the server hands out.
pub(crate) struct ServedArena {
    /// Read-only descriptor of the memfd, passed to every joiner.
    pub fd: OwnedFd,
    pub identity: ArenaIdentity,
    /// The owner's own (writable) view, whose header holds the consumers' `waiting` bits.
    pub view: ArenaView,
}

/// Options of the server.
#[derive(Clone)]
pub(crate) struct ServerConfig {
    pub allowed_gid: Option<u32>,
    pub handshake_timeout: Duration,
    pub hook: Option<EventHook>,
}

/// Counters of what the owner server did since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Connections accepted.
    pub accepted: u64,
    /// Hellos answered with the arena.
    pub granted: u64,
    /// Connections attached now.
    pub attached: u64,
    /// Peers refused for their credentials.
    pub refused_credentials: u64,
    /// Hellos refused for another reason (version, layout, boot, mode, no slot).
    pub refused: u64,
    /// Datagrams that were not a hello.
    pub malformed: u64,
    /// Peers that sent nothing before their deadline.
    pub timed_out: u64,
    /// Peers that hung up before sending a hello.
    pub closed_early: u64,
    /// Attached peers that hung up.
    pub detached: u64,
    /// Pending handshakes closed to make room for newer connections.
    pub evicted: u64,
}

#[derive(Default)]
struct Counters {
    accepted: AtomicU64,
    granted: AtomicU64,
    attached: AtomicU64,
    refused_credentials: AtomicU64,
    refused: AtomicU64,
    malformed: AtomicU64,
    timed_out: AtomicU64,
    closed_early: AtomicU64,
    detached: AtomicU64,
    evicted: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// A running owner server.
pub(crate) struct Server {
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    wake: Arc<OwnedFd>,
    counters: Arc<Counters>,
}

impl Server {
    /// Starts serving `listener` (already bound and listening).
    pub fn spawn(
        listener: OwnedFd,
        lock: Arc<LockFile>,
        arena: ServedArena,
        cfg: ServerConfig,
    ) -> std::io::Result<Server> {
        use rustix::event::{eventfd, EventfdFlags};
        rustix::fs::fcntl_setfl(&listener, rustix::fs::OFlags::NONBLOCK)?;
        let wake = Arc::new(eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?);
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let mut state = State {
            listener,
            wake: wake.clone(),
            stop: stop.clone(),
            lock,
            arena,
            cfg,
            counters: counters.clone(),
            clients: Vec::new(),
            in_use: vec![false; SLOTS as usize],
        };
        let thread = std::thread::Builder::new()
            .name("tf_shm-owner".into())
            .spawn(move || state.run())?;
        Ok(Server {
            thread: Some(thread),
            stop,
            wake,
            counters,
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> ServerStats {
        let c = &self.counters;
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ServerStats {
            accepted: l(&c.accepted),
            granted: l(&c.granted),
            attached: l(&c.attached),
            refused_credentials: l(&c.refused_credentials),
            refused: l(&c.refused),
            malformed: l(&c.malformed),
            timed_out: l(&c.timed_out),
            closed_early: l(&c.closed_early),
            detached: l(&c.detached),
            evicted: l(&c.evicted),
        }
    }

    /// Stops serving: the thread exits, closing the listener and every connection (attached
    /// consumers see the hang-up). Idempotent.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = rustix::io::write(&*self.wake, &1u64.to_ne_bytes());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

enum Phase {
    Hello { deadline: Instant },
    Attached { slot: u32 },
}

struct Client {
    fd: OwnedFd,
    pid: u32,
    /// Credentials refused: its hello is read unparsed and answered `PermissionDenied`
    /// (closing with its hello unread would reset the connection, losing our answer).
    refused: bool,
    phase: Phase,
}

struct State {
    listener: OwnedFd,
    wake: Arc<OwnedFd>,
    stop: Arc<AtomicBool>,
    lock: Arc<LockFile>,
    arena: ServedArena,
    cfg: ServerConfig,
    counters: Arc<Counters>,
    clients: Vec<Client>,
    in_use: Vec<bool>,
}

impl State {
    fn event(&self, msg: impl FnOnce() -> String) {
        if let Some(h) = &self.cfg.hook {
            h(&msg());
        }
    }

    fn run(&mut self) {
        let mut ready: Vec<bool> = Vec::new();
        while !self.stop.load(Ordering::SeqCst) {
            let now = Instant::now();
            let next_deadline = self
                .clients
                .iter()
                .filter_map(|c| match c.phase {
                    Phase::Hello { deadline } => Some(deadline),
                    Phase::Attached { .. } => None,
                })
                .min();
            let timeout = next_deadline
                .map_or(Duration::from_secs(1), |d| d.saturating_duration_since(now))
                .min(Duration::from_secs(1));
            let listener_ready;
            {
                let mut fds = Vec::with_capacity(2 + self.clients.len());
                fds.push(PollFd::new(&*self.wake, PollFlags::IN));
                fds.push(PollFd::new(&self.listener, PollFlags::IN));
                for c in &self.clients {
                    fds.push(PollFd::new(&c.fd, PollFlags::IN | PollFlags::RDHUP));
                }
                let ts =
                    rustix::event::Timespec::try_from(timeout).unwrap_or(rustix::event::Timespec {
                        tv_sec: 1,
                        tv_nsec: 0,
                    });
                match rustix::event::poll(&mut fds, Some(&ts)) {
                    Ok(_) | Err(Errno::INTR) => {}
                    Err(e) => {
                        self.event(|| format!("poll failed: {e}; owner server stops"));
                        return;
                    }
                }
                listener_ready = !fds[1].revents().is_empty();
                ready.clear();
                ready.extend(fds[2..].iter().map(|p| !p.revents().is_empty()));
            }
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            // Clients first, so hang-ups free their slots before new joiners are granted.
            let mut clients = std::mem::take(&mut self.clients);
            let mut i = 0;
            clients.retain_mut(|c| {
                let r = ready.get(i).copied().unwrap_or(false);
                i += 1;
                !r || self.serve(c)
            });
            let now = Instant::now();
            clients.retain(|c| match c.phase {
                Phase::Hello { deadline } if deadline <= now => {
                    bump(&self.counters.timed_out);
                    self.event(|| format!("peer pid {} sent no hello in time; dropped", c.pid));
                    false
                }
                _ => true,
            });
            self.clients = clients;
            if listener_ready {
                self.accept_all();
            }
        }
        // Dropping the clients and the listener closes every connection.
        self.clients.clear();
    }

    fn accept_all(&mut self) {
        loop {
            let fd = match rustix::net::accept_with(
                &self.listener,
                SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            ) {
                Ok(fd) => fd,
                Err(Errno::AGAIN) => return,
                Err(Errno::INTR | Errno::CONNABORTED) => continue,
                Err(e) => {
                    // Out of fds, typically: back off instead of spinning on a ready listener.
                    self.event(|| format!("accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(10));
                    return;
                }
            };
            bump(&self.counters.accepted);
            let pending = self
                .clients
                .iter()
                .filter(|c| matches!(c.phase, Phase::Hello { .. }))
                .count();
            if pending >= MAX_PENDING {
                self.evict_oldest_pending();
            }
            let cred = match rustix::net::sockopt::socket_peercred(&fd) {
                Ok(c) => c,
                Err(e) => {
                    self.event(|| format!("cannot read peer credentials: {e}; dropped"));
                    continue;
                }
            };
            let pid = cred.pid.as_raw_nonzero().get() as u32;
            let (uid, gid) = (cred.uid.as_raw(), cred.gid.as_raw());
            let me = rustix::process::geteuid().as_raw();
            let refused = uid != me && self.cfg.allowed_gid != Some(gid);
            if refused {
                bump(&self.counters.refused_credentials);
                self.event(|| {
                    format!(
                        "refused peer pid {pid} uid {uid} gid {gid}: only uid {me}{} may join",
                        self.cfg
                            .allowed_gid
                            .map(|g| format!(" or gid {g}"))
                            .unwrap_or_default()
                    )
                });
            }
            let mut client = Client {
                fd,
                pid,
                refused,
                phase: Phase::Hello {
                    deadline: Instant::now() + self.cfg.handshake_timeout,
                },
            };
            // A joiner's hello is usually queued already: answer it now, before more
            // connections (a flood) can push it out.
            if self.serve(&mut client) {
                self.clients.push(client);
            }
        }
    }

    /// Closes the pending handshake that has waited longest, answering `Busy`.
    fn evict_oldest_pending(&mut self) {
        let oldest = self
            .clients
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match c.phase {
                Phase::Hello { deadline } => Some((deadline, i)),
                Phase::Attached { .. } => None,
            })
            .min()
            .map(|(_, i)| i);
        if let Some(i) = oldest {
            let c = self.clients.swap_remove(i);
            bump(&self.counters.evicted);
            let _ = self.send(&c.fd, Status::Busy, NO_SLOT);
            self.event(|| {
                format!(
                    "{MAX_PENDING} handshakes in progress; closed the oldest (peer pid {}) to \
                     serve a new connection",
                    c.pid
                )
            });
        }
    }

    /// Handles a ready client; `false` drops it.
    fn serve(&mut self, c: &mut Client) -> bool {
        let mut buf = [0u8; REQUEST_LEN + 1];
        let got = rustix::net::recv(&c.fd, &mut buf[..], RecvFlags::DONTWAIT | RecvFlags::TRUNC);
        match c.phase {
            Phase::Attached { slot } => match got {
                Err(Errno::AGAIN | Errno::INTR) => true,
                Ok((_, 1)) if buf[0] == WAIT_BEGIN || buf[0] == WAIT_END => {
                    notify::set_waiting(self.arena.view.header(), slot, buf[0] == WAIT_BEGIN);
                    true
                }
                Ok((_, n)) if n > 0 => {
                    self.event(|| format!("attached peer pid {} sent data; ignored", c.pid));
                    true
                }
                _ => {
                    // Hang-up (or a dead socket): the consumer is gone, and waits no more.
                    notify::set_waiting(self.arena.view.header(), slot, false);
                    self.in_use[slot as usize] = false;
                    self.counters.attached.fetch_sub(1, Ordering::Relaxed);
                    bump(&self.counters.detached);
                    false
                }
            },
            Phase::Hello { .. } => match got {
                Err(Errno::AGAIN | Errno::INTR) => true,
                Ok((_, 0)) | Err(_) => {
                    bump(&self.counters.closed_early);
                    false
                }
                Ok(_) if c.refused => {
                    let _ = self.send(&c.fd, Status::PermissionDenied, NO_SLOT);
                    false
                }
                Ok((_, n)) => {
                    // With MSG_TRUNC `n` is the datagram's real length, so an oversized one is
                    // seen as such instead of as its first bytes.
                    let parsed = if n == REQUEST_LEN {
                        Request::parse(&buf[..n])
                    } else {
                        Err(WireError::Length {
                            got: n,
                            expected: REQUEST_LEN,
                        })
                    };
                    self.answer(c, parsed)
                }
            },
        }
    }

    fn answer(&mut self, c: &mut Client, parsed: Result<Request, WireError>) -> bool {
        let req = match parsed {
            Ok(r) => r,
            Err(e) => {
                let status = match e {
                    WireError::WireVersion(_) => Status::VersionMismatch,
                    _ => Status::Malformed,
                };
                bump(&self.counters.malformed);
                self.event(|| format!("peer pid {}: bad hello ({e})", c.pid));
                let _ = self.send(&c.fd, status, NO_SLOT);
                return false;
            }
        };
        let boot = self.arena.identity.boot_id;
        let status = if req.format_version != FORMAT_VERSION {
            Status::VersionMismatch
        } else if req.layout_hash != layout_hash() {
            Status::LayoutMismatch
        } else if req.boot_id != boot && req.boot_id != [0; 16] && boot != [0; 16] {
            Status::BootMismatch
        } else if req.mode != Mode::ReadOnly {
            Status::ModeNotPermitted
        } else {
            Status::Ok
        };
        let slot = if status == Status::Ok {
            self.free_slot()
        } else {
            None
        };
        let status = if status == Status::Ok && slot.is_none() {
            Status::NoFreeSlot
        } else {
            status
        };
        if status != Status::Ok {
            bump(&self.counters.refused);
            self.event(|| format!("refused peer pid {} ({:?})", c.pid, status));
            let _ = self.send(&c.fd, status, NO_SLOT);
            return false;
        }
        let slot = slot.expect("checked");
        // The record first: a tool that sees the slot's byte locked finds who holds it.
        let record = Record {
            pid: c.pid,
            start_time: process_start_time(c.pid).unwrap_or(0),
            mode: req.mode.to_wire(),
            instance_uuid: self.arena.identity.instance_uuid,
            name: req.name().to_owned(),
        };
        if let Err(e) = self.lock.write_slot(slot, &record) {
            self.event(|| format!("cannot write the record of slot {slot}: {e}"));
        }
        // Counted before the answer leaves: a joiner that has its answer sees it counted.
        bump(&self.counters.granted);
        bump(&self.counters.attached);
        if self.send(&c.fd, Status::Ok, slot).is_err() {
            self.counters.granted.fetch_sub(1, Ordering::Relaxed);
            self.counters.attached.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        self.in_use[slot as usize] = true;
        c.phase = Phase::Attached { slot };
        true
    }

    fn free_slot(&self) -> Option<u32> {
        (0..SLOTS).find(|&s| !self.in_use[s as usize] && !self.lock.participant_alive(s))
    }

    fn send(&self, fd: &OwnedFd, status: Status, slot: u32) -> rustix::io::Result<()> {
        let id = &self.arena.identity;
        let resp = Response {
            status,
            slot,
            format_version: FORMAT_VERSION,
            layout_hash: layout_hash(),
            arena_size: id.size,
            instance_uuid: id.instance_uuid,
            owner_pid: std::process::id(),
        }
        .encode();
        let fds = [self.arena.fd.as_fd()];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if status == Status::Ok && !control.push(SendAncillaryMessage::ScmRights(&fds)) {
            return Err(Errno::NOBUFS);
        }
        let sent = rustix::net::sendmsg(
            fd,
            &[IoSlice::new(&resp)],
            &mut control,
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
        )?;
        if sent != resp.len() {
            return Err(Errno::MSGSIZE);
        }
        Ok(())
    }
}
