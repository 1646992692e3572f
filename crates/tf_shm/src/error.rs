//! Errors of lookups — tf2's exception classes of ROS 2 Jazzy, with tf2's exact texts — and of
//! reading a damaged or contended arena.
//!
//! Every text a user can see is built in this module, so it can be compared with tf2's
//! character for character (docs/tf2-semantics.md §4.3, §6.3).

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
                "tf_shm arena: frame id {frame} kept changing during every read attempt for 200 ms \
                 (writer stuck mid-update?); check that tf_shm_bridge is healthy"
            ),
        }
    }
}

impl std::error::Error for ArenaError {}

/// Why a frame name passed to a query was refused (tf2's `validateFrameId`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameArgProblem {
    /// `""`.
    Empty,
    /// Starts with `/` (queries do not strip it; only inserts do).
    LeadingSlash,
    /// Not a known frame.
    Unknown,
}

/// The `what()` text of a failed cache read, as tf2 Jazzy's `TimeCache` writes it (docs/tf2-semantics.md §4.3);
/// empty for an empty cache. Times are printed `%.6f` seconds.
pub fn cache_error_text(e: &CacheError) -> String {
    use crate::time::display_time;
    match *e {
        CacheError::NoData { .. } => String::new(),
        CacheError::OneSample { time, only } => format!(
            "Lookup would require extrapolation at time {}, but only time {} is in the buffer",
            display_time(time),
            display_time(only)
        ),
        CacheError::Future { time, latest } => format!(
            "Lookup would require extrapolation into the future.  Requested time {} but the \
             latest data is at time {}",
            display_time(time),
            display_time(latest)
        ),
        CacheError::Past { time, earliest } => format!(
            "Lookup would require extrapolation into the past.  Requested time {} but the \
             earliest data is at time {}",
            display_time(time),
            display_time(earliest)
        ),
    }
}

/// The Jazzy exception subclass of a failed cache read (zero or one sample → `NoData`).
pub fn extrapolation_kind(e: &CacheError) -> ExtrapolationKind {
    match e {
        CacheError::NoData { .. } | CacheError::OneSample { .. } => ExtrapolationKind::NoData,
        CacheError::Future { .. } => ExtrapolationKind::Forward,
        CacheError::Past { .. } => ExtrapolationKind::Backward,
    }
}

impl TransformError {
    /// tf2's walk failure: the cache text plus
    /// `", when looking up transform from frame [<source>] to frame [<target>]"` (source first).
    pub fn extrapolation(e: &CacheError, source: &str, target: &str) -> Self {
        TransformError::Extrapolation {
            kind: extrapolation_kind(e),
            message: format!(
                "{}, when looking up transform from frame [{source}] to frame [{target}]",
                cache_error_text(e)
            ),
        }
    }

    /// tf2's `createConnectivityErrorString` (no space after "tree.").
    pub fn connectivity(target: &str, source: &str) -> Self {
        TransformError::Connectivity(format!(
            "Could not find a connection between '{target}' and '{source}' because they are not \
             part of the same tree.Tf has two or more unconnected trees."
        ))
    }

    /// tf2's loop guard (more than 1000 links): the text, then `all_frames_as_string`'s dump.
    pub fn tree_loop(frames_dump: &str) -> Self {
        TransformError::Lookup(format!(
            "The tf tree is invalid because it contains a loop.\n{frames_dump}\n"
        ))
    }

    /// tf2's throwing `validateFrameId` for `lookupTransform`; `arg` is e.g. `"target_frame"`.
    /// Empty and leading-slash names are `InvalidArgumentException`s, unknown names
    /// `LookupException`s (with tf2's trailing space).
    pub fn lookup_argument(arg: &str, frame: &str, problem: FrameArgProblem) -> Self {
        Self::frame_argument(&format!("lookupTransform argument {arg}"), frame, problem)
    }

    /// tf2's throwing `validateFrameId(function_name_arg, frame)` for any caller, e.g.
    /// `"lookupTransform argument target_frame"` or tf2_py's `"get_latest_common_time"`.
    pub fn frame_argument(function_arg: &str, frame: &str, problem: FrameArgProblem) -> Self {
        match problem {
            FrameArgProblem::Empty => TransformError::InvalidArgument(format!(
                "Invalid argument \"{frame}\" passed to {function_arg} - in tf2 frame_ids cannot \
                 be empty"
            )),
            FrameArgProblem::LeadingSlash => TransformError::InvalidArgument(format!(
                "Invalid argument \"{frame}\" passed to {function_arg} - in tf2 frame_ids cannot \
                 start with a '/'"
            )),
            FrameArgProblem::Unknown => TransformError::Lookup(format!(
                "\"{frame}\" passed to {function_arg} does not exist. "
            )),
        }
    }

    /// tf2 ROS 2's `canTransform` error string for a bad argument (`fillOrWarnMessageForInvalidFrame`).
    /// tf2 returns it as a string with `false`; we classify empty/slash names as
    /// `InvalidArgument` and unknown ones as `Lookup`.
    pub fn can_transform_argument(arg: &str, frame: &str, problem: FrameArgProblem) -> Self {
        let text = |why: &str| {
            format!("Invalid frame ID \"{frame}\" passed to canTransform argument {arg} - {why}")
        };
        match problem {
            FrameArgProblem::Empty => {
                TransformError::InvalidArgument(text("in tf2 frame_ids cannot be empty"))
            }
            FrameArgProblem::LeadingSlash => {
                TransformError::InvalidArgument(text("in tf2 frame_ids cannot start with a '/'"))
            }
            FrameArgProblem::Unknown => TransformError::Lookup(text("frame does not exist")),
        }
    }
}

/// Why a frame's cache could not answer at a time (tf2's `getData` failure cases, docs/tf2-semantics.md §3).
/// Times are ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheError {
    /// The cache holds no sample (cleared, or switched kind). tf2 Jazzy: empty message text.
    NoData {
        /// The requested time, ns (0: the newest sample).
        time: i64,
    },
    /// One sample only, and `time` is not its stamp.
    OneSample {
        /// The requested time, ns.
        time: i64,
        /// The stamp of the one sample, ns.
        only: i64,
    },
    /// `time` is newer than the newest sample.
    Future {
        /// The requested time, ns.
        time: i64,
        /// The newest sample's stamp, ns.
        latest: i64,
    },
    /// `time` is older than the oldest sample.
    Past {
        /// The requested time, ns.
        time: i64,
        /// The oldest sample's stamp, ns.
        earliest: i64,
    },
}
