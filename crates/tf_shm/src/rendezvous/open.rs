//! [`Open`]: joining an arena (a [`Buffer`]) or creating one (an [`Owner`]); and the list of
//! participants, read from the lock file without joining.

use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendFlags, SocketAddrUnix, SocketFlags, SocketType,
};

use super::discovery::{self, Location, Overrides};
use super::lockfile::{process_start_time, LockFile, Record, SLOTS};
use super::server::{ServedArena, Server, ServerConfig, ServerStats};
use super::wire::{Mode, Request, Response, Status, RESPONSE_LEN, WAIT_BEGIN, WAIT_END};
use super::{EventHook, OpenError};
use crate::arena::layout::{layout_hash, FORMAT_VERSION};
use crate::arena::{boot_id, Arena, ArenaConfig, ArenaIdentity, SharedArena};
use crate::buffer::Buffer;
use crate::view::ArenaView;
use crate::writer::ArenaWriter;

/// How often `await_open` and a consumer that lost its owner try again.
pub(crate) const RETRY: Duration = Duration::from_millis(20);

/// Options for opening an arena. Defaults: read-only, never create, domain/name/runtime dir
/// from the environment (see [`discovery`]), a 2 s handshake timeout.
#[derive(Clone)]
pub struct Open {
    overrides: Overrides,
    mode: Mode,
    create: Option<ArenaConfig>,
    require_create: bool,
    allowed_gid: Option<u32>,
    timeout: Duration,
    participant_name: Option<String>,
    hook: Option<EventHook>,
    defer_ready: bool,
}

impl Default for Open {
    fn default() -> Self {
        Open::new()
    }
}

impl Open {
    /// Read-only, never create, everything else from the environment.
    pub fn new() -> Open {
        Open {
            overrides: Overrides::default(),
            mode: Mode::ReadOnly,
            create: None,
            require_create: false,
            allowed_gid: None,
            timeout: Duration::from_secs(2),
            participant_name: None,
            hook: None,
            defer_ready: false,
        }
    }

    /// Arena name (instead of `$TF_SHM_NAME` / `default`).
    pub fn name(mut self, name: &str) -> Open {
        self.overrides.name = Some(name.to_owned());
        self
    }

    /// ROS domain (instead of `$TF_SHM_DOMAIN` / `$ROS_DOMAIN_ID` / 0).
    pub fn domain(mut self, domain: u32) -> Open {
        self.overrides.domain = Some(domain);
        self
    }

    /// Runtime dir (instead of the environment's chain).
    pub fn runtime_dir(mut self, dir: impl Into<PathBuf>) -> Open {
        self.overrides.runtime_dir = Some(dir.into());
        self
    }

    /// Access mode: [`Mode::ReadWrite`] only for the creator.
    pub fn mode(mut self, mode: Mode) -> Open {
        self.mode = mode;
        self
    }

    /// Create the arena with `config` when opened with [`Open::open_owner`].
    pub fn create(mut self, config: ArenaConfig) -> Open {
        self.create = Some(config);
        self
    }

    /// With `true`, [`Open::open_owner`] fails at once with [`OpenError::ArenaAlreadyLive`]
    /// when an owner is alive; with `false` (default) it waits up to the timeout for that
    /// owner to exit.
    pub fn require_create(mut self, yes: bool) -> Open {
        self.require_create = yes;
        self
    }

    /// Also admit peers whose primary group is `gid` (creator), or accept a rendezvous
    /// directory of that group (joiner). Directories become 0750, files 0640/0660.
    pub fn allow_group(mut self, gid: u32) -> Open {
        self.allowed_gid = Some(gid);
        self
    }

    /// Handshake timeout (joiner), per-client hello deadline (owner), and how long a
    /// non-`require_create` creator waits for a previous owner. Default 2 s.
    pub fn timeout(mut self, timeout: Duration) -> Open {
        self.timeout = timeout;
        self
    }

    /// Short name recorded in the participant table (default: the process name).
    pub fn participant_name(mut self, name: &str) -> Open {
        self.participant_name = Some(name.to_owned());
        self
    }

    /// With `true`, [`Open::open_owner`] creates the arena *not ready*: consumers of an earlier
    /// arena of this location keep answering from it until the writer calls
    /// [`ArenaWriter::declare_ready`] (or a bounded time passes). With `false` (default) the
    /// arena is ready at creation.
    pub fn defer_ready(mut self, yes: bool) -> Open {
        self.defer_ready = yes;
        self
    }

    /// Called with a line of text for each refusal or drop by the owner server.
    pub fn on_event(mut self, hook: impl Fn(&str) + Send + Sync + 'static) -> Open {
        self.hook = Some(Arc::new(hook));
        self
    }

    /// Where this arena's rendezvous is.
    pub fn location(&self) -> Result<Location, OpenError> {
        discovery::resolve(&self.overrides)
    }

    fn spec(&self) -> Result<JoinSpec, OpenError> {
        if self.create.is_some() {
            return Err(OpenError::Usage(
                "create(..) is for the creator: call open_owner(), or drop create(..) to join",
            ));
        }
        Ok(JoinSpec {
            loc: self.location()?,
            mode: self.mode,
            timeout: self.timeout,
            group: self.allowed_gid,
            name: self.participant_name.clone().unwrap_or_else(process_name),
        })
    }

    /// Joins the arena served for this location: maps it read-only. Fails at once if nobody
    /// serves it ([`OpenError::NotServing`]).
    pub fn open(&self) -> Result<Buffer, OpenError> {
        let spec = self.spec()?;
        let att = join(&spec)?;
        Buffer::start(att, spec)
    }

    /// [`Open::open`], retrying every 20 ms while the arena is absent or its owner is not
    /// serving yet, for up to `timeout`. Any other error is returned at once.
    pub fn await_open(&self, timeout: Duration) -> Result<Buffer, OpenError> {
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

    /// Creates the arena and serves it (the bridge's side). Needs [`Mode::ReadWrite`] and
    /// [`Open::create`]. A live owner → [`OpenError::ArenaAlreadyLive`] (at once with
    /// `require_create(true)`, else after waiting up to the timeout); a socket file left by
    /// a dead owner is replaced. A refusal holds no lock byte and binds nothing.
    pub fn open_owner(&self) -> Result<Owner, OpenError> {
        if self.mode != Mode::ReadWrite {
            return Err(OpenError::Usage(
                "a read-only opener cannot create the arena: use .mode(Mode::ReadWrite) for the \
                 creator",
            ));
        }
        let config = self.create.as_ref().ok_or(OpenError::Usage(
            "open_owner() creates the arena and needs .create(config)",
        ))?;
        let loc = self.location()?;
        discovery::prepare_dirs(&loc, self.allowed_gid)?;
        let (lock_mode, sock_mode) = if self.allowed_gid.is_some() {
            (0o640, 0o660)
        } else {
            (0o600, 0o600)
        };
        let lock = LockFile::open_owner(&loc.lock_path, lock_mode)
            .map_err(|e| OpenError::io("open", &loc.lock_path, e))?;
        if let Some(g) = self.allowed_gid {
            std::os::unix::fs::chown(&loc.lock_path, None, Some(g))
                .map_err(|e| OpenError::io("chown", &loc.lock_path, e))?;
        }
        let deadline = Instant::now() + self.timeout;
        while !lock
            .try_own()
            .map_err(|e| OpenError::io("lock", &loc.lock_path, e))?
        {
            if self.require_create || Instant::now() >= deadline {
                let pid = lock.read_owner().map(|r| r.pid);
                return Err(OpenError::ArenaAlreadyLive {
                    at: Box::new(loc),
                    pid,
                });
            }
            std::thread::sleep(RETRY);
        }
        // We own byte 0 from here; dropping `lock` on any error below gives it back.
        let mut arena =
            Arena::create_shared(config, &format!("tf_shm:{}/{}", loc.domain, loc.name))
                .map_err(OpenError::Create)?;
        if !self.defer_ready {
            arena.writer.declare_ready();
        }
        let identity = arena.view.identity();
        let me = std::process::id();
        let record = Record {
            pid: me,
            start_time: process_start_time(me).unwrap_or(0),
            mode: Mode::ReadWrite.to_wire(),
            instance_uuid: identity.instance_uuid,
            name: self.participant_name.clone().unwrap_or_else(process_name),
        };
        lock.write_owner(&record)
            .map_err(|e| OpenError::io("write", &loc.lock_path, e))?;
        let io_err = |op| {
            let p = loc.sock_path.clone();
            move |e| OpenError::io(op, &p, e)
        };
        lock.lock_guard().map_err(io_err("lock the guard of"))?;
        let bound = bind_socket(&loc, sock_mode, self.allowed_gid);
        let _ = lock.unlock_guard();
        let (listener, sock_id) = bound.map_err(io_err("serve on"))?;
        let reader = arena.reader_fd().map_err(io_err("reopen the arena for"))?;
        let lock = Arc::new(lock);
        let cfg = ServerConfig {
            allowed_gid: self.allowed_gid,
            handshake_timeout: self.timeout,
            hook: self.hook.clone(),
        };
        let served = ServedArena {
            fd: reader,
            identity,
            view: arena.view.clone(),
        };
        let server = match Server::spawn(listener, lock.clone(), served, cfg) {
            Ok(s) => s,
            Err(e) => {
                remove_socket_if_ours(&loc, sock_id);
                return Err(OpenError::io("start the server for", &loc.sock_path, e));
            }
        };
        Ok(Owner {
            server,
            arena,
            lock,
            loc,
            sock_id,
        })
    }

    /// The participant table of this location, read without joining.
    pub fn participants(&self) -> Result<Participants, OpenError> {
        participants(&self.location()?)
    }
}

/// Removes a stale socket file, binds and listens; the caller holds ownership and the guard.
fn bind_socket(
    loc: &Location,
    mode: u32,
    group: Option<u32>,
) -> std::io::Result<(OwnedFd, (u64, u64))> {
    match std::fs::remove_file(&loc.sock_path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::bind(&fd, &SocketAddrUnix::new(&loc.sock_path)?)?;
    let meta = std::fs::symlink_metadata(&loc.sock_path)?;
    let id = (meta.dev(), meta.ino());
    let finish = || -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        if let Some(g) = group {
            std::os::unix::fs::chown(&loc.sock_path, None, Some(g))?;
        }
        std::fs::set_permissions(&loc.sock_path, std::fs::Permissions::from_mode(mode))?;
        rustix::net::listen(&fd, 128)?;
        Ok(())
    };
    if let Err(e) = finish() {
        let _ = std::fs::remove_file(&loc.sock_path);
        return Err(e);
    }
    Ok((fd, id))
}

fn remove_socket_if_ours(loc: &Location, id: (u64, u64)) {
    if let Ok(m) = std::fs::symlink_metadata(&loc.sock_path) {
        if (m.dev(), m.ino()) == id {
            let _ = std::fs::remove_file(&loc.sock_path);
        }
    }
}

/// The creator of an arena: holds the single [`ArenaWriter`] and serves the arena to joiners
/// until dropped. Dropping stops serving (attached consumers see the hang-up), then releases
/// ownership, then removes the socket file.
pub struct Owner {
    server: Server,
    arena: SharedArena,
    lock: Arc<LockFile>,
    loc: Location,
    sock_id: (u64, u64),
}

impl Owner {
    /// The arena's single writer.
    pub fn writer(&mut self) -> &mut ArenaWriter {
        &mut self.arena.writer
    }

    /// A view for the owner's own lookups.
    pub fn view(&self) -> &ArenaView {
        &self.arena.view
    }

    /// The arena's identity.
    pub fn identity(&self) -> ArenaIdentity {
        self.arena.view.identity()
    }

    /// Where it is served.
    pub fn location(&self) -> &Location {
        &self.loc
    }

    /// The server's counters.
    pub fn stats(&self) -> ServerStats {
        self.server.stats()
    }

    /// The participant table.
    pub fn participants(&self) -> Result<Participants, OpenError> {
        participants(&self.loc)
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.server.stop();
        // The guard keeps a new owner (which needs byte 0 and then the guard) from binding
        // between our release and our unlink, so we never remove its socket.
        let guarded = self.lock.lock_guard().is_ok();
        let _ = self.lock.release_ownership();
        remove_socket_if_ours(&self.loc, self.sock_id);
        if guarded {
            let _ = self.lock.unlock_guard();
        }
    }
}

/// What a joiner needs to join, again and again.
#[derive(Clone, Debug)]
pub(crate) struct JoinSpec {
    pub loc: Location,
    pub mode: Mode,
    pub timeout: Duration,
    pub group: Option<u32>,
    pub name: String,
}

/// One attachment to one arena instance: the mapping, the connection whose hang-up means the
/// owner died, and the lock file description holding our slot byte.
pub(crate) struct Attachment {
    pub view: ArenaView,
    pub conn: OwnedFd,
    pub slot: u32,
    _lock: LockFile,
    /// Threads of this process waiting for data on this attachment; the owner is told when
    /// the count leaves and returns to zero (under the lock, so the messages keep its order).
    waiting: std::sync::Mutex<u32>,
}

impl Attachment {
    /// A thread starts waiting for data: the first one asks the owner to wake us on writes.
    pub(crate) fn begin_wait(&self) {
        let mut n = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        if *n == 1 {
            self.tell_owner(WAIT_BEGIN);
        }
    }

    /// A thread stops waiting: the last one tells the owner writes need not wake us.
    pub(crate) fn end_wait(&self) {
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
pub(crate) fn join(spec: &JoinSpec) -> Result<Attachment, OpenError> {
    let loc = &spec.loc;
    let not_serving = || OpenError::NotServing {
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
        Err(e) => return Err(OpenError::io("open", &loc.lock_path, e)),
    };
    // Byte 0 free: nobody owns the arena, whatever socket file is lying around.
    if !lock.owner_alive() {
        return Err(not_serving());
    }
    let not_yet = || OpenError::NotServingYet {
        at: Box::new(loc.clone()),
        pid: lock.read_owner().map(|r| r.pid),
    };
    let conn = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )
    .map_err(|e| OpenError::io("create a socket for", &loc.sock_path, e.into()))?;
    let addr = SocketAddrUnix::new(&loc.sock_path)
        .map_err(|e| OpenError::io("address", &loc.sock_path, e.into()))?;
    match rustix::net::connect(&conn, &addr) {
        Ok(()) => {}
        // No socket yet, not listening yet, or its backlog is full: the owner is starting.
        Err(Errno::NOENT | Errno::CONNREFUSED | Errno::AGAIN) => return Err(not_yet()),
        Err(e) => return Err(OpenError::io("connect to", &loc.sock_path, e.into())),
    }
    let hello = Request::new(
        FORMAT_VERSION,
        layout_hash(),
        spec.mode,
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
        Err(e) => return Err(OpenError::io("send the hello on", &loc.sock_path, e.into())),
    }
    let (resp, fd) = receive(&conn, loc, spec.timeout).map_err(|e| match e {
        Received::Closed => OpenError::Dropped {
            at: Box::new(loc.clone()),
            pid: lock.read_owner().map(|r| r.pid),
        },
        Received::Err(e) => e,
    })?;
    let protocol = |detail: String| OpenError::Protocol {
        at: Box::new(loc.clone()),
        detail,
    };
    if resp.status != Status::Ok {
        return Err(OpenError::Refused {
            at: Box::new(loc.clone()),
            status: resp.status,
            owner_version: resp.format_version,
            owner_layout: resp.layout_hash,
        });
    }
    let fd = fd.ok_or_else(|| protocol("granted without a file descriptor".into()))?;
    if resp.slot >= SLOTS {
        return Err(protocol(format!("slot {} out of range", resp.slot)));
    }
    lock.hold_slot(resp.slot)
        .map_err(|e| OpenError::io("lock our slot in", &loc.lock_path, e))?;
    let view = Arena::attach(&fd).map_err(OpenError::Attach)?;
    if view.identity().instance_uuid != resp.instance_uuid {
        return Err(protocol("the arena sent is not the one announced".into()));
    }
    Ok(Attachment {
        view,
        conn,
        slot: resp.slot,
        _lock: lock,
        waiting: std::sync::Mutex::new(0),
    })
}

enum Received {
    Closed,
    Err(OpenError),
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
            return Err(Received::Err(OpenError::Timeout {
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
                return Err(Received::Err(OpenError::io(
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
                return Err(Received::Err(OpenError::io(
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
            Received::Err(OpenError::Protocol {
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

fn process_name() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// One participant slot as the lock file records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Participant {
    /// Slot number (the owner's record has none).
    pub slot: Option<u32>,
    /// Pid (in the owner's pid namespace).
    pub pid: u32,
    /// Process start time, clock ticks after boot (0 if unknown).
    pub start_time: u64,
    /// Access mode.
    pub mode: Option<Mode>,
    /// Short name.
    pub name: String,
    /// Instance uuid of the arena it belongs to.
    pub instance_uuid: [u8; 16],
    /// The kernel still sees its lock byte held.
    pub alive: bool,
}

/// The participant table of an arena.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Participants {
    /// The owner's record (the last owner's, if none is alive).
    pub owner: Option<Participant>,
    /// Every slot that was ever granted, alive or not.
    pub slots: Vec<Participant>,
}

impl Participants {
    /// Slots alive now.
    pub fn alive(&self) -> impl Iterator<Item = &Participant> {
        self.slots.iter().filter(|p| p.alive)
    }
}

/// Reads the participant table of `loc` without joining (empty if there is no lock file).
pub fn participants(loc: &Location) -> Result<Participants, OpenError> {
    let lock = match LockFile::open_read(&loc.lock_path) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Participants::default()),
        Err(e) => return Err(OpenError::io("open", &loc.lock_path, e)),
    };
    let entry = |slot: Option<u32>, r: Record, alive: bool| Participant {
        slot,
        pid: r.pid,
        start_time: r.start_time,
        mode: Mode::from_wire(r.mode),
        name: r.name,
        instance_uuid: r.instance_uuid,
        alive,
    };
    let owner = lock
        .read_owner()
        .map(|r| entry(None, r, lock.owner_alive()));
    let slots = (0..SLOTS)
        .filter_map(|s| {
            lock.read_slot(s)
                .map(|r| entry(Some(s), r, lock.slot_alive(s)))
        })
        .collect();
    Ok(Participants { owner, slots })
}
