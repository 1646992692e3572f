//! [`Join`]: joining the arena an owner serves, as a consumer: one join gives an
//! [`Attachment`]. The builder's `open` methods, which make a [`Buffer`](crate::Buffer) that
//! follows the arena across owner restarts by itself, are beside the buffer (`buffer.rs`).

use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendFlags, SocketAddrUnix, SocketFlags, SocketType,
};

use super::discovery::{self, Location, Overrides};
use super::lockfile::{LockFile, SLOTS};
use super::participants::{participants, Participants};
use super::wire::{Mode, Request, Response, RESPONSE_LEN, WAIT_BEGIN, WAIT_END};
use super::{JoinError, LocationError, Refusal};
use crate::arena::layout::{layout_hash, FORMAT_VERSION};
use crate::arena::{boot_id, Arena};
use crate::view::ArenaView;

/// How often `await_open` and a consumer that lost its owner try again.
pub(crate) const RETRY: Duration = Duration::from_millis(20);

/// Options for joining an arena as a consumer (read-only). Defaults: domain/name/runtime dir
/// from the environment (see [`discovery`]), a 2 s handshake timeout, the process name in the
/// participant table.
#[derive(Clone, Debug)]
pub struct Join {
    overrides: Overrides,
    group: Option<u32>,
    timeout: Duration,
    participant_name: Option<String>,
}

impl Default for Join {
    fn default() -> Self {
        Join::new()
    }
}

impl Join {
    /// Everything from the environment.
    pub fn new() -> Join {
        Join {
            overrides: Overrides::default(),
            group: None,
            timeout: Duration::from_secs(2),
            participant_name: None,
        }
    }

    /// Arena name (instead of `$TF_SHM_NAME` / `default`).
    pub fn name(mut self, name: &str) -> Join {
        self.overrides.name = Some(name.to_owned());
        self
    }

    /// ROS domain (instead of `$TF_SHM_DOMAIN` / `$ROS_DOMAIN_ID` / 0).
    pub fn domain(mut self, domain: u32) -> Join {
        self.overrides.domain = Some(domain);
        self
    }

    /// Runtime dir (instead of the environment's chain).
    pub fn runtime_dir(mut self, dir: impl Into<PathBuf>) -> Join {
        self.overrides.runtime_dir = Some(dir.into());
        self
    }

    /// Also accept rendezvous directories owned by group `gid` (an owner started with
    /// [`Serve::allow_group`](super::Serve::allow_group)), not only our own.
    pub fn allow_group(mut self, gid: u32) -> Join {
        self.group = Some(gid);
        self
    }

    /// How long one handshake may take. Default 2 s.
    pub fn timeout(mut self, timeout: Duration) -> Join {
        self.timeout = timeout;
        self
    }

    /// Short name recorded in the participant table (default: the process name).
    pub fn participant_name(mut self, name: &str) -> Join {
        self.participant_name = Some(name.to_owned());
        self
    }

    /// Where this arena's rendezvous is.
    pub fn location(&self) -> Result<Location, LocationError> {
        discovery::resolve(&self.overrides)
    }

    /// The participant table of this location, read without joining.
    pub fn participants(&self) -> Result<Participants, LocationError> {
        participants(&self.location()?)
    }

    pub(crate) fn spec(&self) -> Result<JoinSpec, JoinError> {
        Ok(JoinSpec {
            loc: self.location()?,
            timeout: self.timeout,
            group: self.group,
            name: self.participant_name.clone().unwrap_or_else(process_name),
        })
    }
}

/// What a joiner needs to join, again and again.
#[derive(Clone, Debug)]
pub(crate) struct JoinSpec {
    pub loc: Location,
    pub timeout: Duration,
    pub group: Option<u32>,
    pub name: String,
}

/// One attachment to one arena instance: the mapping, the connection whose hang-up means the
/// owner died, and the lock file description holding our slot byte.
pub(crate) struct Attachment {
    pub view: ArenaView,
    pub conn: OwnedFd,
    /// Our participant slot; [`NO_SLOT`] in the unjoined placeholder.
    pub slot: u32,
    /// Holds our slot byte; `None` in the unjoined placeholder.
    lock: Option<LockFile>,
    /// Threads of this process waiting for data on this attachment; the owner is told when
    /// the count leaves and returns to zero (under the lock, so the messages keep its order).
    waiting: std::sync::Mutex<u32>,
    /// The process that joined: a forked child has a copy of the attachment, but the
    /// connection, the count and its lock (copied as they were, perhaps held) are its parent's.
    pid: u32,
}

/// [`Attachment::slot`] of the unjoined placeholder.
pub(crate) const NO_SLOT: u32 = u32::MAX;

impl Attachment {
    /// What a buffer made before any owner served answers from: an empty arena of its own and
    /// a connection that has already hung up, so the re-attach thread starts joining at once
    /// (see `follow::reattach`).
    pub(crate) fn unjoined(spec: &JoinSpec) -> Result<Attachment, JoinError> {
        use rustix::net::socketpair;
        let io = |what, e: std::io::Error| JoinError::io(what, &spec.loc.sock_path, e);
        let config = crate::arena::ArenaConfig {
            max_frames: 2,
            max_rate_hz: 1,
            initial_ring_capacity: 2,
            memory_budget_bytes: 64 << 10,
            ..Default::default()
        };
        let (_writer, view) = Arena::in_memory(&config).map_err(|e| {
            io(
                "make the empty placeholder arena for",
                std::io::Error::other(e.to_string()),
            )
        })?;
        let (conn, peer) = socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            None,
        )
        .map_err(|e| io("create a socket pair for", e.into()))?;
        drop(peer);
        Ok(Attachment {
            view,
            conn,
            slot: NO_SLOT,
            lock: None,
            waiting: std::sync::Mutex::new(0),
            pid: std::process::id(),
        })
    }

    /// Whether this attachment is to an owner's arena (not the unjoined placeholder).
    pub(crate) fn is_joined(&self) -> bool {
        self.lock.is_some()
    }

    /// A thread starts waiting for data: the first one asks the owner to wake us on writes.
    /// Returns whether the owner will: not in a forked child, which leaves the parent's count
    /// and connection alone (a message would set or clear the parent's waiting bit, and the
    /// count's lock may have been copied held); its waits look again in short steps instead.
    pub(crate) fn begin_wait(&self) -> bool {
        if std::process::id() != self.pid {
            return false;
        }
        let mut n = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        if *n == 1 {
            self.tell_owner(WAIT_BEGIN);
        }
        true
    }

    /// A thread stops waiting: the last one tells the owner writes need not wake us. Nothing
    /// in a forked child (see [`Attachment::begin_wait`]).
    pub(crate) fn end_wait(&self) {
        if std::process::id() != self.pid {
            return;
        }
        let mut n = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.tell_owner(WAIT_END);
        }
    }

    fn tell_owner(&self, msg: u8) {
        // A dead owner writes nothing more; its hang-up swaps the arena and ends the wait.
        let _ = rustix::net::send(
            &self.conn,
            &[msg],
            SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
        );
    }
}

/// One attempt to join.
pub(crate) fn join(spec: &JoinSpec) -> Result<Attachment, JoinError> {
    let loc = &spec.loc;
    let not_serving = || JoinError::NotServing {
        at: Box::new(loc.clone()),
    };
    if !discovery::check_dir(&loc.runtime_dir, spec.group)?
        || !discovery::check_dir(&loc.domain_dir, spec.group)?
    {
        return Err(not_serving());
    }
    let lock = match LockFile::open_read(&loc.lock_path) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_serving()),
        Err(e) => return Err(JoinError::io("open", &loc.lock_path, e)),
    };
    // Byte 0 free: nobody owns the arena, whatever socket file is lying around.
    if !lock.owner_alive() {
        return Err(not_serving());
    }
    let not_yet = || JoinError::NotServingYet {
        at: Box::new(loc.clone()),
        pid: lock.read_owner().map(|r| r.pid),
    };
    let conn = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )
    .map_err(|e| JoinError::io("create a socket for", &loc.sock_path, e.into()))?;
    let addr = SocketAddrUnix::new(&loc.sock_path)
        .map_err(|e| JoinError::io("address", &loc.sock_path, e.into()))?;
    match rustix::net::connect(&conn, &addr) {
        Ok(()) => {}
        // No socket yet, not listening yet, or its backlog is full: the owner is starting.
        Err(Errno::NOENT | Errno::CONNREFUSED | Errno::AGAIN) => return Err(not_yet()),
        Err(e) => return Err(JoinError::io("connect to", &loc.sock_path, e.into())),
    }
    let hello = Request::new(
        FORMAT_VERSION,
        layout_hash(),
        Mode::ReadOnly,
        std::process::id(),
        boot_id(),
        &spec.name,
    )
    .encode();
    let mut none = SendAncillaryBuffer::default();
    match rustix::net::sendmsg(
        &conn,
        &[IoSlice::new(&hello)],
        &mut none,
        SendFlags::NOSIGNAL,
    ) {
        Ok(n) if n == hello.len() => {}
        // The owner may have answered (a refusal) and hung up before reading our hello: its
        // answer is still queued, so read it below.
        Ok(_) | Err(Errno::PIPE | Errno::CONNRESET) => {}
        Err(e) => return Err(JoinError::io("send the hello on", &loc.sock_path, e.into())),
    }
    let (resp, fd) = receive(&conn, loc, spec.timeout).map_err(|e| match e {
        Received::Closed => JoinError::Dropped {
            at: Box::new(loc.clone()),
            pid: lock.read_owner().map(|r| r.pid),
        },
        Received::Err(e) => e,
    })?;
    let protocol = |detail: String| JoinError::Protocol {
        at: Box::new(loc.clone()),
        detail,
    };
    if let Some(refusal) = Refusal::from_status(resp.status) {
        return Err(JoinError::Refused {
            at: Box::new(loc.clone()),
            refusal,
            owner_version: resp.format_version,
            owner_layout: resp.layout_hash,
        });
    }
    let fd = fd.ok_or_else(|| protocol("granted without a file descriptor".into()))?;
    if resp.slot >= SLOTS {
        return Err(protocol(format!("slot {} out of range", resp.slot)));
    }
    lock.hold_participant(resp.slot)
        .map_err(|e| JoinError::io("lock our slot in", &loc.lock_path, e))?;
    let view = Arena::attach(&fd).map_err(JoinError::Attach)?;
    if view.identity().instance_uuid != resp.instance_uuid {
        return Err(protocol("the arena sent is not the one announced".into()));
    }
    Ok(Attachment {
        view,
        conn,
        slot: resp.slot,
        lock: Some(lock),
        waiting: std::sync::Mutex::new(0),
        pid: std::process::id(),
    })
}

enum Received {
    Closed,
    Err(JoinError),
}

/// Waits up to `timeout` for the response and the descriptor that comes with it.
fn receive(
    conn: &OwnedFd,
    loc: &Location,
    timeout: Duration,
) -> Result<(Response, Option<OwnedFd>), Received> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Received::Err(JoinError::Timeout {
                at: Box::new(loc.clone()),
                after: timeout,
            }));
        }
        let ts = rustix::event::Timespec::try_from(left).unwrap_or(rustix::event::Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        });
        let mut fds = [PollFd::new(conn, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&ts)) {
            Ok(0) | Err(Errno::INTR) => continue,
            Ok(_) => {}
            Err(e) => {
                return Err(Received::Err(JoinError::io(
                    "wait on",
                    &loc.sock_path,
                    e.into(),
                )))
            }
        }
        let mut buf = [0u8; RESPONSE_LEN + 1];
        // Room for two descriptors, so a second one is received (and closed) rather than
        // silently truncated.
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let msg = match rustix::net::recvmsg(
            conn,
            &mut [std::io::IoSliceMut::new(&mut buf)],
            &mut control,
            RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC | RecvFlags::TRUNC,
        ) {
            Ok(m) => m,
            Err(Errno::AGAIN | Errno::INTR) => continue,
            Err(Errno::CONNRESET) => return Err(Received::Closed),
            Err(e) => {
                return Err(Received::Err(JoinError::io(
                    "receive on",
                    &loc.sock_path,
                    e.into(),
                )))
            }
        };
        if msg.bytes == 0 {
            return Err(Received::Closed);
        }
        let mut fds: Vec<OwnedFd> = Vec::new();
        for m in control.drain() {
            if let RecvAncillaryMessage::ScmRights(iter) = m {
                fds.extend(iter);
            }
        }
        let protocol = |detail: String| {
            Received::Err(JoinError::Protocol {
                at: Box::new(loc.clone()),
                detail,
            })
        };
        let resp = Response::parse(&buf[..msg.bytes.min(buf.len())])
            .map_err(|e| protocol(e.to_string()))?;
        if fds.len() > 1 {
            return Err(protocol(format!(
                "{} descriptors sent, expected one",
                fds.len()
            )));
        }
        return Ok((resp, fds.pop()));
    }
}

pub(crate) fn process_name() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}
