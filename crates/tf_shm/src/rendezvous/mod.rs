//! The rendezvous: how a process finds the arena of its ROS domain and maps it, and how the
//! arena's creator (the bridge) hands it out.
//!
//! The creator holds byte 0 of `<dir>/<domain>/<name>.lock` (an OFD lock: the kernel drops it
//! when the creator dies) and serves `<name>.sock`, a `SOCK_SEQPACKET` socket on which a joiner
//! sends one hello and receives the sealed memfd, read-only. The joiner keeps the connection for
//! as long as it is attached: a hang-up tells it the owner died. A [`Buffer`](crate::Buffer)
//! then keeps answering from the mapping it has, re-attaches by itself when a new owner serves
//! a new arena, answers from both arenas together ([`crate::handover_store`]) until the new one
//! is ready (the swap rule: the new arena holds the old one's frames, or was declared ready
//! 500 ms ago, or 8 s passed), then from the new one alone.
//!
//! ```no_run
//! // Needs a running tf_shm_bridge for this ROS domain.
//! let buffer = tf_shm::open()?;
//! let t = buffer.lookup_transform("map", "base_link", 0)?;
//! println!("{:?}", t.transform.translation);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The creator's side, as the bridge does it:
//!
//! ```
//! use tf_shm::rendezvous::{Mode, Open};
//! use tf_shm::{validate::TransformInput, ArenaConfig};
//! # let dir = std::env::temp_dir().join(format!("tf_shm_doc_{}", std::process::id()));
//! let mut owner = Open::new()
//!     .runtime_dir(&dir)
//!     .mode(Mode::ReadWrite)
//!     .create(ArenaConfig { memory_budget_bytes: 4 << 20, ..ArenaConfig::default() })
//!     .require_create(true)
//!     .open_owner()?;
//! owner.writer().set_transform(&TransformInput {
//!     frame_id: "map", child_frame_id: "odom", stamp: 1_000_000_000,
//!     translation: [1.0, 0.0, 0.0], rotation: [0.0, 0.0, 0.0, 1.0],
//! }, "doc", true)?;
//! let buffer = Open::new().runtime_dir(&dir).open()?;
//! assert_eq!(buffer.lookup_transform("map", "odom", 0)?.transform.translation[0], 1.0);
//! # drop(buffer); drop(owner); std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod discovery;
pub(crate) mod handover;
pub mod lockfile;
pub(crate) mod open;
pub(crate) mod reattach;
pub(crate) mod server;
pub mod wire;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use discovery::Location;
pub use open::{participants, Open, Owner, Participant, Participants};
pub use server::ServerStats;
pub use wire::{Mode, Status};

use crate::arena::{AttachError, CreateError};

/// A callback for what the owner server refuses or drops (peers with other credentials,
/// malformed hellos, timeouts). The library has no logger; the bridge forwards these to its own.
pub type EventHook = Arc<dyn Fn(&str) + Send + Sync>;

/// Why an arena could not be opened, joined or created. Each message says what to do.
#[derive(Debug)]
pub enum OpenError {
    /// A set environment variable is invalid.
    InvalidEnv {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The arena name given to [`Open::name`] is invalid.
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The socket path does not fit in a Unix socket address.
    PathTooLong {
        /// The path.
        path: PathBuf,
    },
    /// A directory of the rendezvous is not safe to use.
    UnsafeDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        reason: &'static str,
    },
    /// A system call on a rendezvous file failed.
    Io {
        /// What was being done.
        op: &'static str,
        /// On which path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The builder's options contradict each other.
    Usage(&'static str),
    /// Nobody owns the arena (a socket file left by a dead owner does not count).
    NotServing {
        /// Where we looked.
        at: Box<Location>,
    },
    /// An owner holds the arena but does not accept connections (starting, or its listen
    /// queue is full).
    NotServingYet {
        /// Where.
        at: Box<Location>,
        /// The owner's pid as it recorded it.
        pid: Option<u32>,
    },
    /// The owner closed our connection without answering: it is stopping, or it dropped our
    /// handshake (no hello before its deadline). Worth retrying.
    Dropped {
        /// Where.
        at: Box<Location>,
        /// The owner's pid as it recorded it.
        pid: Option<u32>,
    },
    /// `require_create(true)` and an owner is alive.
    ArenaAlreadyLive {
        /// Where.
        at: Box<Location>,
        /// The live owner's pid as it recorded it.
        pid: Option<u32>,
    },
    /// The owner refused the hello (see the status).
    Refused {
        /// Where.
        at: Box<Location>,
        /// The owner's status.
        status: Status,
        /// The owner's arena format version.
        owner_version: u32,
        /// The owner's arena layout hash.
        owner_layout: u64,
    },
    /// The owner's answer made no sense.
    Protocol {
        /// Where.
        at: Box<Location>,
        /// What was wrong.
        detail: String,
    },
    /// The handshake did not finish in time.
    Timeout {
        /// Where.
        at: Box<Location>,
        /// The limit.
        after: Duration,
    },
    /// The received arena could not be mapped.
    Attach(AttachError),
    /// The arena could not be created.
    Create(CreateError),
}

impl OpenError {
    pub(crate) fn io(op: &'static str, path: &Path, source: std::io::Error) -> OpenError {
        OpenError::Io {
            op,
            path: path.to_owned(),
            source,
        }
    }

    /// Worth retrying: nobody serves yet (absent, or held but not serving), or the owner
    /// dropped our handshake or was too busy to serve it.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            OpenError::NotServing { .. }
                | OpenError::NotServingYet { .. }
                | OpenError::Dropped { .. }
                | OpenError::Refused {
                    status: Status::Busy,
                    ..
                }
        )
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "domain {} name '{}' under {}",
            self.domain,
            self.name,
            self.runtime_dir.display()
        )
    }
}

fn pid_text(pid: &Option<u32>) -> String {
    pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::InvalidEnv { var, value, reason } => {
                write!(
                    f,
                    "environment variable {var}={value:?} is invalid: {reason}; fix or unset it"
                )
            }
            OpenError::InvalidName { name, reason } => {
                write!(f, "arena name {name:?} is invalid: it {reason}")
            }
            OpenError::PathTooLong { path } => write!(
                f,
                "socket path {} is longer than a Unix socket allows: set TF_SHM_RUNTIME_DIR to a \
                 shorter directory",
                path.display()
            ),
            OpenError::UnsafeDir { path, reason } => write!(
                f,
                "refusing {}: it {reason}; remove it or set TF_SHM_RUNTIME_DIR to a directory \
                 of your own",
                path.display()
            ),
            OpenError::Io { op, path, source } => {
                write!(f, "cannot {op} {}: {source}", path.display())
            }
            OpenError::Usage(m) => write!(f, "invalid use of tf_shm::Open: {m}"),
            OpenError::NotServing { at } => {
                write!(f, "no bridge is serving {at}: start tf_shm_bridge")
            }
            OpenError::NotServingYet { at, pid } => write!(
                f,
                "the owner{} of {at} does not accept connections (it is starting, or its \
                 queue of connections is full): retry, or use Open::await_open",
                pid_text(pid)
            ),
            OpenError::Dropped { at, pid } => write!(
                f,
                "the owner{} of {at} closed our connection without answering: it is stopping, \
                 or it dropped our handshake as too slow; retry, or use Open::await_open",
                pid_text(pid)
            ),
            OpenError::ArenaAlreadyLive { at, pid } => write!(
                f,
                "an arena is already live for {at}, owned by pid {}: stop that tf_shm_bridge \
                 first, or use another TF_SHM_NAME or domain",
                pid.map_or("?".to_owned(), |p| p.to_string())
            ),
            OpenError::Refused {
                at,
                status,
                owner_version,
                owner_layout,
            } => {
                write!(f, "the bridge serving {at} refused us: ")?;
                match status {
                    Status::VersionMismatch => write!(
                        f,
                        "it uses arena format version {owner_version}, we use {}: rebuild this \
                         program or the bridge against the same tf_shm",
                        crate::arena::layout::FORMAT_VERSION
                    ),
                    Status::LayoutMismatch => write!(
                        f,
                        "its arena layout hash {owner_layout:#018x} is not ours {:#018x}: \
                         rebuild this program or the bridge against the same tf_shm",
                        crate::arena::layout::layout_hash()
                    ),
                    Status::BootMismatch => write!(
                        f,
                        "its arena was made in another boot (or boot namespace): restart \
                         tf_shm_bridge"
                    ),
                    Status::NoFreeSlot => write!(
                        f,
                        "all {} participant slots are taken: see `tf_shm participants`",
                        lockfile::SLOTS
                    ),
                    Status::ModeNotPermitted => write!(
                        f,
                        "joiners may only map the arena read-only (only the bridge writes): use \
                         Mode::ReadOnly"
                    ),
                    Status::Malformed => write!(
                        f,
                        "it could not parse our hello: rebuild this program or the bridge \
                         against the same tf_shm"
                    ),
                    Status::PermissionDenied => write!(
                        f,
                        "our user or group is not allowed: run as the bridge's user, or start \
                         the bridge with an allowed group that we are in"
                    ),
                    Status::Busy => write!(
                        f,
                        "it had too many unfinished handshakes and closed ours, the oldest: \
                         retry (if this repeats, a local process is flooding its socket)"
                    ),
                    Status::Ok => write!(f, "(no error)"),
                }
            }
            OpenError::Protocol { at, detail } => write!(
                f,
                "the bridge serving {at} answered nonsense ({detail}): check that it is a \
                 tf_shm_bridge of the same version"
            ),
            OpenError::Timeout { at, after } => write!(
                f,
                "the bridge serving {at} did not answer within {after:?}: check that \
                 tf_shm_bridge is not stopped or overloaded"
            ),
            OpenError::Attach(e) => write!(f, "cannot use the arena the bridge sent: {e}"),
            OpenError::Create(e) => write!(f, "cannot create the arena: {e}"),
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpenError::Io { source, .. } => Some(source),
            OpenError::Attach(e) => Some(e),
            OpenError::Create(e) => Some(e),
            _ => None,
        }
    }
}
