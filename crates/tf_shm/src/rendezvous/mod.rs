//! The rendezvous: how a process finds the arena of its ROS domain and maps it, and how the
//! arena's creator (the bridge) hands it out.
//!
//! The creator holds byte 0 of `<dir>/<domain>/<name>.lock` (an OFD lock: the kernel drops it
//! when the creator dies) and serves `<name>.sock`, a `SOCK_SEQPACKET` socket on which a joiner
//! sends one hello and receives the sealed memfd, read-only. The joiner keeps the connection for
//! as long as it is attached: a hang-up tells it the owner died. This module only joins and
//! serves; following the owner is the [`Buffer`](crate::Buffer)'s (the crate's `follow`
//! module): it keeps answering from the mapping it has, re-attaches by itself when a new owner
//! serves a new arena, answers from both arenas together ([`crate::handover_store`]) until the
//! new one is ready (the swap rule: the new arena holds the old one's frames, or was declared
//! ready 500 ms ago, or 8 s passed), then from the new one alone.
//!
//! ```no_run
//! // Needs a running tf_shm_bridge for this ROS domain.
//! let buffer = tf_shm::open()?;
//! let t = buffer.lookup_transform("map", "base_link", 0)?;
//! println!("{:?}", t.transform.translation);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The owner's side, as the bridge does it ([`Serve`] → [`Owner`]); a consumer joins with
//! [`Join`] (or [`tf_shm::open`](crate::open), which is `Join::new().open()`):
//!
//! ```
//! use tf_shm::rendezvous::{Join, Serve};
//! use tf_shm::{validate::TransformInput, ArenaConfig};
//! # let dir = std::env::temp_dir().join(format!("tf_shm_doc_{}", std::process::id()));
//! let mut owner = Serve::new(ArenaConfig { memory_budget_bytes: 4 << 20, ..ArenaConfig::default() })
//!     .runtime_dir(&dir)
//!     .require_create(true)
//!     .serve()?;
//! owner.writer().set_transform(&TransformInput {
//!     frame_id: "map", child_frame_id: "odom", stamp: 1_000_000_000,
//!     translation: [1.0, 0.0, 0.0], rotation: [0.0, 0.0, 0.0, 1.0],
//! }, "doc", true)?;
//! let buffer = Join::new().runtime_dir(&dir).open()?;
//! assert_eq!(buffer.lookup_transform("map", "odom", 0)?.transform.translation[0], 1.0);
//! # drop(buffer); drop(owner); std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Each role has its own error type: [`JoinError`] and [`ServeError`], sharing
//! [`LocationError`] for the rendezvous directory. The hello's wire format and the lock file's
//! records are this module's business, not API.

pub mod discovery;
mod errors;
// The lock file's records and the hello's wire format are not API: public (and hidden) only
// for this workspace's tests that play a fake or misbehaving peer.
pub(crate) mod join;
#[doc(hidden)]
pub mod lockfile;
mod participants;
mod serve;
pub(crate) mod server;
#[doc(hidden)]
pub mod wire;

use std::fmt;
use std::sync::Arc;

pub use discovery::{Location, LocationError};
pub use errors::{JoinError, Refusal, ServeError};
pub use join::Join;
pub use participants::{participants, Participant, Participants};
pub use serve::{Owner, Serve};
pub use server::ServerStats;
pub use wire::Mode;

/// Entries of an arena's participant table: how many consumers can be joined at once.
pub const MAX_PARTICIPANTS: u32 = lockfile::SLOTS;

/// A callback for what the owner server refuses or drops (peers with other credentials,
/// malformed hellos, timeouts). The library has no logger; the bridge forwards these to its own.
pub type EventHook = Arc<dyn Fn(&str) + Send + Sync>;

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
