//! What can go wrong at the rendezvous, one enum per role: [`JoinError`] for a consumer joining
//! an arena and [`ServeError`] for the owner creating and serving one. What both share, finding
//! and checking the rendezvous directory, fails with [`LocationError`], the error of
//! [`discovery`](super::discovery). Each message says what to do.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::discovery::{Location, LocationError};
use super::wire::Status;
use crate::arena::{AttachError, CreateError};

/// Why an owner refused a consumer's hello.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// The owner uses another arena format version (or hello wire version).
    VersionMismatch,
    /// Same format version, different record layout (a different build of tf_shm).
    LayoutMismatch,
    /// The arena was made in another boot (or boot namespace) than the consumer runs in.
    BootMismatch,
    /// Every entry of the participant table is taken.
    ParticipantTableFull,
    /// The consumer asked for write access, which only the owner has.
    ModeNotPermitted,
    /// The owner could not parse the hello.
    Malformed,
    /// The consumer's user is not the owner's, nor in the group the owner allows.
    PermissionDenied,
    /// The owner had too many unfinished handshakes and closed this one, the oldest.
    Busy,
}

impl Refusal {
    /// The refusal a wire status stands for; `None` for [`Status::Ok`].
    pub(crate) fn from_status(s: Status) -> Option<Refusal> {
        Some(match s {
            Status::Ok => return None,
            Status::VersionMismatch => Refusal::VersionMismatch,
            Status::LayoutMismatch => Refusal::LayoutMismatch,
            Status::BootMismatch => Refusal::BootMismatch,
            Status::NoFreeSlot => Refusal::ParticipantTableFull,
            Status::ModeNotPermitted => Refusal::ModeNotPermitted,
            Status::Malformed => Refusal::Malformed,
            Status::PermissionDenied => Refusal::PermissionDenied,
            Status::Busy => Refusal::Busy,
        })
    }
}

/// Why a consumer could not join an arena ([`Join::open`](super::Join::open),
/// [`tf_shm::open`](crate::open)).
#[derive(Debug)]
pub enum JoinError {
    /// The rendezvous cannot be used (environment, name, directory).
    Location(LocationError),
    /// A system call on the rendezvous socket failed.
    Io {
        /// What was being done.
        op: &'static str,
        /// On which path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Nobody owns the arena (a socket file left by a dead owner does not count). Retryable.
    NotServing {
        /// Where we looked.
        at: Box<Location>,
    },
    /// An owner holds the arena but does not accept connections (starting, or its listen
    /// queue is full). Retryable.
    NotServingYet {
        /// Where.
        at: Box<Location>,
        /// The owner's pid as it recorded it.
        pid: Option<u32>,
    },
    /// The owner closed our connection without answering: it is stopping, or it dropped our
    /// handshake (no hello before its deadline). Retryable.
    Dropped {
        /// Where.
        at: Box<Location>,
        /// The owner's pid as it recorded it.
        pid: Option<u32>,
    },
    /// The owner refused the hello; [`Refusal::Busy`] is retryable, the others are not.
    Refused {
        /// Where.
        at: Box<Location>,
        /// Why.
        refusal: Refusal,
        /// The owner's arena format version.
        owner_version: u32,
        /// The owner's arena layout hash.
        owner_layout: u64,
    },
    /// The owner's answer made no sense (not a tf_shm owner of this version).
    Protocol {
        /// Where.
        at: Box<Location>,
        /// What was wrong.
        detail: String,
    },
    /// The handshake did not finish within the join timeout.
    Timeout {
        /// Where.
        at: Box<Location>,
        /// The limit.
        after: Duration,
    },
    /// The arena the owner sent could not be used: not sealed or not mappable, not a tf_shm
    /// arena, another format version or layout, or a header inconsistent with its size.
    Attach(AttachError),
}

impl JoinError {
    pub(crate) fn io(op: &'static str, path: &Path, source: std::io::Error) -> JoinError {
        JoinError::Io {
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
            JoinError::NotServing { .. }
                | JoinError::NotServingYet { .. }
                | JoinError::Dropped { .. }
                | JoinError::Refused {
                    refusal: Refusal::Busy,
                    ..
                }
        )
    }
}

impl From<LocationError> for JoinError {
    fn from(e: LocationError) -> JoinError {
        JoinError::Location(e)
    }
}

fn pid_text(pid: &Option<u32>) -> String {
    pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::Location(e) => e.fmt(f),
            JoinError::Io { op, path, source } => {
                write!(f, "cannot {op} {}: {source}", path.display())
            }
            JoinError::NotServing { at } => {
                write!(f, "no bridge is serving {at}: start tf_shm_bridge")
            }
            JoinError::NotServingYet { at, pid } => write!(
                f,
                "the owner{} of {at} does not accept connections (it is starting, or its \
                 queue of connections is full): retry, or use Join::await_open",
                pid_text(pid)
            ),
            JoinError::Dropped { at, pid } => write!(
                f,
                "the owner{} of {at} closed our connection without answering: it is stopping, \
                 or it dropped our handshake as too slow; retry, or use Join::await_open",
                pid_text(pid)
            ),
            JoinError::Refused {
                at,
                refusal,
                owner_version,
                owner_layout,
            } => {
                write!(f, "the bridge serving {at} refused us: ")?;
                match refusal {
                    Refusal::VersionMismatch => write!(
                        f,
                        "it uses arena format version {owner_version}, we use {}: rebuild this \
                         program or the bridge against the same tf_shm",
                        crate::arena::layout::FORMAT_VERSION
                    ),
                    Refusal::LayoutMismatch => write!(
                        f,
                        "its arena layout hash {owner_layout:#018x} is not ours {:#018x}: \
                         rebuild this program or the bridge against the same tf_shm",
                        crate::arena::layout::layout_hash()
                    ),
                    Refusal::BootMismatch => write!(
                        f,
                        "its arena was made in another boot (or boot namespace): restart \
                         tf_shm_bridge"
                    ),
                    Refusal::ParticipantTableFull => write!(
                        f,
                        "all {} participant entries are taken: see `tf_shm participants`",
                        super::lockfile::SLOTS
                    ),
                    Refusal::ModeNotPermitted => write!(
                        f,
                        "joiners may only map the arena read-only (only the bridge writes)"
                    ),
                    Refusal::Malformed => write!(
                        f,
                        "it could not parse our hello: rebuild this program or the bridge \
                         against the same tf_shm"
                    ),
                    Refusal::PermissionDenied => write!(
                        f,
                        "our user or group is not allowed: run as the bridge's user, or start \
                         the bridge with an allowed group that we are in"
                    ),
                    Refusal::Busy => write!(
                        f,
                        "it had too many unfinished handshakes and closed ours, the oldest: \
                         retry (if this repeats, a local process is flooding its socket)"
                    ),
                }
            }
            JoinError::Protocol { at, detail } => write!(
                f,
                "the bridge serving {at} answered nonsense ({detail}): check that it is a \
                 tf_shm_bridge of the same version"
            ),
            JoinError::Timeout { at, after } => write!(
                f,
                "the bridge serving {at} did not answer within {after:?}: check that \
                 tf_shm_bridge is not stopped or overloaded"
            ),
            JoinError::Attach(e) => write!(f, "cannot use the arena the bridge sent: {e}"),
        }
    }
}

impl std::error::Error for JoinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JoinError::Location(e) => Some(e),
            JoinError::Io { source, .. } => Some(source),
            JoinError::Attach(e) => Some(e),
            _ => None,
        }
    }
}

/// Why an owner could not create and serve an arena ([`Serve::serve`](super::Serve::serve)).
#[derive(Debug)]
pub enum ServeError {
    /// The rendezvous cannot be used (environment, name, directory).
    Location(LocationError),
    /// A system call on the lock file, the socket or the arena's memfd failed.
    Io {
        /// What was being done.
        op: &'static str,
        /// On which path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// An owner is alive: at once with `require_create(true)`, else after waiting the
    /// timeout for it to exit.
    ArenaAlreadyLive {
        /// Where.
        at: Box<Location>,
        /// The live owner's pid as it recorded it.
        pid: Option<u32>,
    },
    /// The arena could not be created: an invalid configuration, or the memfd could not be
    /// created, sized, mapped or sealed.
    Create(CreateError),
}

impl ServeError {
    pub(crate) fn io(op: &'static str, path: &Path, source: std::io::Error) -> ServeError {
        ServeError::Io {
            op,
            path: path.to_owned(),
            source,
        }
    }
}

impl From<LocationError> for ServeError {
    fn from(e: LocationError) -> ServeError {
        ServeError::Location(e)
    }
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Location(e) => e.fmt(f),
            ServeError::Io { op, path, source } => {
                write!(f, "cannot {op} {}: {source}", path.display())
            }
            ServeError::ArenaAlreadyLive { at, pid } => write!(
                f,
                "an arena is already live for {at}, owned by pid {}: stop that tf_shm_bridge \
                 first, or use another arena name or domain (the bridge's arena_name and domain \
                 parameters, the CLI's --name and --domain, TF_SHM_NAME and TF_SHM_DOMAIN)",
                pid.map_or("?".to_owned(), |p| p.to_string())
            ),
            ServeError::Create(e) => write!(f, "cannot create the arena: {e}"),
        }
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServeError::Location(e) => Some(e),
            ServeError::Io { source, .. } => Some(source),
            ServeError::Create(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusing_status_is_its_own_refusal_and_only_busy_is_retried() {
        let statuses = (0..16).filter_map(Status::from_wire).collect::<Vec<_>>();
        assert_eq!(statuses.len(), 9, "every wire status");
        let at = Box::new(Location::new("/run/x".into(), 0, "default").unwrap());
        let mut texts = std::collections::HashSet::new();
        let mut refusals = std::collections::HashSet::new();
        for s in statuses {
            let Some(refusal) = Refusal::from_status(s) else {
                assert_eq!(s, Status::Ok);
                continue;
            };
            assert!(
                refusals.insert(refusal),
                "{s:?} maps to a refusal already taken"
            );
            let e = JoinError::Refused {
                at: at.clone(),
                refusal,
                owner_version: 1,
                owner_layout: 2,
            };
            assert_eq!(e.is_retryable(), refusal == Refusal::Busy, "{refusal:?}");
            assert!(texts.insert(e.to_string()), "{refusal:?} has its own text");
        }
        assert_eq!(refusals.len(), 8);
    }
}
