//! Errors of lookups — tf2's exception classes of ROS 2 Jazzy, with tf2's exact texts — and of
//! reading a damaged or contended arena.
//!
//! Every text a user can see is built in this module, so it can be compared with tf2's
//! character for character (spec §4.3, §6.3).

use std::fmt;

/// Which way an extrapolation failed; ROS 2 Iron+ throws a subclass of
/// `tf2::ExtrapolationException` for each (ros2/geometry2#586).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExtrapolationKind {
    /// `ForwardExtrapolationException`: requested time newer than the data.
    Forward,
    /// `BackwardExtrapolationException`: requested time older than the data.
    Backward,
    /// `NoDataForExtrapolationException`: zero or one sample.
    NoData,
}

/// A failed lookup. Variants are tf2's exception classes (ROS 2 Jazzy); `Display` is the
/// exception's `what()` text, exactly as tf2 writes it. [`TransformError::Arena`] is ours: the
/// shared arena itself could not be read (damaged, or a writer stuck mid-update).
#[derive(Clone, Debug, PartialEq)]
pub enum TransformError {
    /// `tf2::LookupException`: unknown frame, or a loop in the tree.
    Lookup(String),
    /// `tf2::ConnectivityException`: the frames are in different trees.
    Connectivity(String),
    /// `tf2::ExtrapolationException` (and its Jazzy subclasses by `kind`).
    Extrapolation {
        /// Which subclass tf2 Jazzy throws.
        kind: ExtrapolationKind,
        /// The full text, including tf2's ", when looking up transform from frame …" suffix.
        message: String,
    },
    /// `tf2::InvalidArgumentException`: empty frame id, leading '/', bad time.
    InvalidArgument(String),
    /// `tf2::TimeoutException`: a waiting lookup ran out of time.
    Timeout(String),
    /// Not a tf2 class: the arena could not be read consistently.
    Arena(ArenaError),
}

impl TransformError {
    /// tf2's class name of this error, e.g. `"LookupException"`,
    /// `"ForwardExtrapolationException"`; `"ArenaError"` for [`TransformError::Arena`].
    pub fn class_name(&self) -> &'static str {
        match self {
            TransformError::Lookup(_) => "LookupException",
            TransformError::Connectivity(_) => "ConnectivityException",
            TransformError::Extrapolation { kind, .. } => match kind {
                ExtrapolationKind::Forward => "ForwardExtrapolationException",
                ExtrapolationKind::Backward => "BackwardExtrapolationException",
                ExtrapolationKind::NoData => "NoDataForExtrapolationException",
            },
            TransformError::InvalidArgument(_) => "InvalidArgumentException",
            TransformError::Timeout(_) => "TimeoutException",
            TransformError::Arena(_) => "ArenaError",
        }
    }
}

impl fmt::Display for TransformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransformError::Lookup(m)
            | TransformError::Connectivity(m)
            | TransformError::InvalidArgument(m)
            | TransformError::Timeout(m)
            | TransformError::Extrapolation { message: m, .. } => f.write_str(m),
            TransformError::Arena(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TransformError {}

impl From<ArenaError> for TransformError {
    fn from(e: ArenaError) -> Self {
        TransformError::Arena(e)
    }
}

/// The arena's contents could not be used. Readers validate every index and offset they take
/// from shared memory; this is what they report instead of crashing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArenaError {
    /// A value read from the arena is out of range (`what` names the field).
    Corrupt {
        /// The field, e.g. `"frame.ring"`.
        what: &'static str,
    },
    /// A frame's data kept changing under the reader for every bounded retry (a writer stuck
    /// mid-update, e.g. killed inside a reordering insert).
    Contended {
        /// Id of the frame that could not be read.
        frame: u32,
    },
}

impl fmt::Display for ArenaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArenaError::Corrupt { what } => write!(
                f,
                "tf_shm arena is damaged: field {what} is out of range; restart tf_shm_bridge"
            ),
            ArenaError::Contended { frame } => write!(
                f,
                "tf_shm arena: frame id {frame} kept changing during every read attempt \
                 (writer stuck mid-update?); check that tf_shm_bridge is healthy"
            ),
        }
    }
}

impl std::error::Error for ArenaError {}
