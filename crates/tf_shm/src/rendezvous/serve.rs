//! [`Serve`]: creating an arena and serving it to joiners, as the bridge does; the result is
//! an [`Owner`], the arena's single writer.

use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};

use super::discovery::{self, Location, Overrides};
use super::join::{process_name, RETRY};
use super::lockfile::{process_start_time, LockFile, Record};
use super::participants::{participants, Participants};
use super::server::{ServedArena, Server, ServerConfig, ServerStats};
use super::wire::Mode;
use super::{EventHook, LocationError, ServeError};
use crate::arena::{Arena, ArenaConfig, ArenaIdentity};
use crate::view::ArenaView;
use crate::writer::{ArenaWriter, SharedArena};

/// Options for creating and serving an arena. Defaults: domain/name/runtime dir from the
/// environment (see [`discovery`]), wait up to the timeout for a previous owner, ready at
/// creation, a 2 s timeout, the process name in the participant table.
#[derive(Clone)]
pub struct Serve {
    overrides: Overrides,
    config: ArenaConfig,
    require_create: bool,
    group: Option<u32>,
    timeout: Duration,
    participant_name: Option<String>,
    hook: Option<EventHook>,
    defer_ready: bool,
}

impl Serve {
    /// Serve a new arena sized and configured by `config`.
    pub fn new(config: ArenaConfig) -> Serve {
        Serve {
            overrides: Overrides::default(),
            config,
            require_create: false,
            group: None,
            timeout: Duration::from_secs(2),
            participant_name: None,
            hook: None,
            defer_ready: false,
        }
    }

    /// Arena name (instead of `$TF_SHM_NAME` / `default`).
    pub fn name(mut self, name: &str) -> Serve {
        self.overrides.name = Some(name.to_owned());
        self
    }

    /// ROS domain (instead of `$TF_SHM_DOMAIN` / `$ROS_DOMAIN_ID` / 0).
    pub fn domain(mut self, domain: u32) -> Serve {
        self.overrides.domain = Some(domain);
        self
    }

    /// Runtime dir (instead of the environment's chain).
    pub fn runtime_dir(mut self, dir: impl Into<PathBuf>) -> Serve {
        self.overrides.runtime_dir = Some(dir.into());
        self
    }

    /// With `true`, [`Serve::serve`] fails at once with [`ServeError::ArenaAlreadyLive`] when
    /// an owner is alive; with `false` (default) it waits up to the timeout for that owner to
    /// exit.
    pub fn require_create(mut self, yes: bool) -> Serve {
        self.require_create = yes;
        self
    }

    /// Also admit peers whose primary group is `gid`. Directories become 0750, the lock file
    /// 0640 and the socket 0660, owned by that group.
    pub fn allow_group(mut self, gid: u32) -> Serve {
        self.group = Some(gid);
        self
    }

    /// Each joiner's deadline for its hello, and how long a non-`require_create` owner waits
    /// for a previous owner to exit. Default 2 s.
    pub fn timeout(mut self, timeout: Duration) -> Serve {
        self.timeout = timeout;
        self
    }

    /// Short name recorded in the participant table (default: the process name).
    pub fn participant_name(mut self, name: &str) -> Serve {
        self.participant_name = Some(name.to_owned());
        self
    }

    /// With `true`, the arena is created *not ready*: consumers of an earlier arena of this
    /// location keep answering from it until the writer calls
    /// [`ArenaWriter::declare_ready`] (or a bounded time passes). With `false` (default) the
    /// arena is ready at creation.
    pub fn defer_ready(mut self, yes: bool) -> Serve {
        self.defer_ready = yes;
        self
    }

    /// Called with a line of text for each refusal or drop by the owner server.
    pub fn on_event(mut self, hook: impl Fn(&str) + Send + Sync + 'static) -> Serve {
        self.hook = Some(Arc::new(hook));
        self
    }

    /// Where this arena's rendezvous is.
    pub fn location(&self) -> Result<Location, LocationError> {
        discovery::resolve(&self.overrides)
    }

    /// Creates the arena and serves it. A live owner → [`ServeError::ArenaAlreadyLive`] (at
    /// once with `require_create(true)`, else after waiting up to the timeout); a socket file
    /// left by a dead owner is replaced. A refusal holds no lock byte and binds nothing.
    ///
    /// Errors: [`ServeError`].
    pub fn serve(&self) -> Result<Owner, ServeError> {
        let loc = self.location()?;
        discovery::prepare_dirs(&loc, self.group)?;
        let (lock_mode, sock_mode) = if self.group.is_some() {
            (0o640, 0o660)
        } else {
            (0o600, 0o600)
        };
        let lock = LockFile::open_owner(&loc.lock_path, lock_mode)
            .map_err(|e| ServeError::io("open", &loc.lock_path, e))?;
        if let Some(g) = self.group {
            std::os::unix::fs::chown(&loc.lock_path, None, Some(g))
                .map_err(|e| ServeError::io("chown", &loc.lock_path, e))?;
        }
        let deadline = Instant::now() + self.timeout;
        while !lock
            .try_own()
            .map_err(|e| ServeError::io("lock", &loc.lock_path, e))?
        {
            if self.require_create || Instant::now() >= deadline {
                let pid = lock.read_owner().map(|r| r.pid);
                return Err(ServeError::ArenaAlreadyLive {
                    at: Box::new(loc),
                    pid,
                });
            }
            std::thread::sleep(RETRY);
        }
        // We own byte 0 from here; dropping `lock` on any error below gives it back.
        let mut arena =
            Arena::create_shared(&self.config, &format!("tf_shm:{}/{}", loc.domain, loc.name))
                .map_err(ServeError::Create)?;
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
            .map_err(|e| ServeError::io("write", &loc.lock_path, e))?;
        let io_err = |op| {
            let p = loc.sock_path.clone();
            move |e| ServeError::io(op, &p, e)
        };
        lock.lock_guard().map_err(io_err("lock the guard of"))?;
        let bound = bind_socket(&loc, sock_mode, self.group);
        let _ = lock.unlock_guard();
        let (listener, sock_id) = bound.map_err(io_err("serve on"))?;
        let reader = arena.reader_fd().map_err(io_err("reopen the arena for"))?;
        let lock = Arc::new(lock);
        let cfg = ServerConfig {
            allowed_gid: self.group,
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
                return Err(ServeError::io("start the server for", &loc.sock_path, e));
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
    pub fn participants(&self) -> Result<Participants, LocationError> {
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
