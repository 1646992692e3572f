//! tf_shm: ROS 2 transforms (tf2) in a shared-memory arena, with tf2-exact lookups.
//!
//! A process that wants transforms opens the arena of its ROS domain, which `tf_shm_bridge`
//! fills from `/tf` and `/tf_static`, and asks tf2's questions without syscalls or DDS:
//!
//! ```
//! # let dir = std::env::temp_dir().join(format!("tf_shm_lib_doc_{}", std::process::id()));
//! # std::env::set_var("TF_SHM_RUNTIME_DIR", &dir);
//! # let small = tf_shm::ArenaConfig { memory_budget_bytes: 4 << 20, ..Default::default() };
//! # let mut bridge = tf_shm::Serve::new(small).serve()?;
//! # bridge.writer().set_transform(&tf_shm::validate::TransformInput {
//! #     frame_id: "map", child_frame_id: "base_link", stamp: 1_000_000_000,
//! #     translation: [1.0, 2.0, 0.0], rotation: [0.0, 0.0, 0.0, 1.0] }, "doc", true)?;
//! let buffer = tf_shm::open()?; // finds the bridge of $ROS_DOMAIN_ID, maps its arena read-only
//! let t = buffer.lookup_transform("map", "base_link", 0)?;
//! assert_eq!(t.transform.translation, [1.0, 2.0, 0.0]);
//! # drop(buffer); drop(bridge); std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The buffer survives bridge restarts by itself; see [`rendezvous`] for how it finds the
//! arena and how it follows a restarted bridge.

// unsafe lives in two modules only (the mapping, and the fcntl locks), each allowing it
// explicitly; everywhere else it is an error.
#![deny(unsafe_code)]
// Every public item says what it is; CI turns the warning into an error (clippy -D warnings).
#![warn(missing_docs)]

pub mod arena;
mod buffer;
pub mod buffer_limits;
pub mod cache_limit;
pub mod cdr;
pub mod chain;
pub mod error;
pub mod fast_path;
mod follow;
pub mod frames_dot;
pub mod history;
pub mod inspect;
#[cfg(test)]
mod kept_answer_order;
pub mod math;
mod moment;
#[cfg(all(test, not(loom)))]
mod moment_interleavings;
pub(crate) mod pair;
pub mod queries;
pub mod rendezvous;
pub(crate) mod ring;
mod sample;
pub mod store;
pub(crate) mod sync;
pub mod tail;
pub mod time;
pub mod validate;
pub mod velocity;
pub mod view;
pub mod walk;
mod writer;

pub use arena::{Arena, ArenaConfig, ArenaIdentity, AttachError, ConfigError};
pub use buffer::Buffer;
pub use buffer_limits::{Answering, BufferLimits};
pub use cache_limit::{CacheLimited, ClearMark};
pub use error::{ArenaError, ExtrapolationKind, TransformError};
pub use follow::{handover_store, BufferMoment, BufferStore};
pub use pair::FramePair;
pub use queries::BufferCore;
pub use rendezvous::{Join, JoinError, LocationError, Owner, Serve, ServeError};
pub use sample::{FrameId, Sample, Transform, TransformStamped, NO_FRAME};
#[doc(hidden)]
#[cfg(not(loom))]
pub use velocity::Velocity;
pub use view::{ArenaView, FrameHistory, HistorySince};
pub use writer::{ArenaWriter, CapacityError, SetTransformError, SharedArena, WriteStatus};

/// Joins the arena of this process's ROS domain and maps it read-only: `Join::new().open()`.
///
/// Errors: [`JoinError`], e.g. [`JoinError::NotServing`] when no bridge serves the domain.
pub fn open() -> Result<Buffer, JoinError> {
    Join::new().open()
}
