//! tf_shm: ROS 2 transforms (tf2) in a shared-memory arena, with tf2-exact lookups.
//!
//! (Crate docs with a runnable example land with the arena.)

pub mod error;
pub mod history;
pub mod math;
pub mod sample;
pub mod store;
pub mod time;
pub mod validate;
pub mod walk;

pub use error::{ArenaError, ExtrapolationKind, TransformError};
pub use sample::{FrameId, Sample, Transform, TransformStamped, NO_FRAME};
