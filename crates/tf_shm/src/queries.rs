//! tf2's `BufferCore` query set, written once: [`BufferCore`]'s provided methods, over any
//! [`FrameStore`] (the test store, an [`crate::ArenaView`]) and over a [`crate::Buffer`] (its
//! current arena). Each method is tf2's (see [`crate::walk`] for what each reproduces, its
//! errors and texts); the inherent methods of the same names on `ArenaView` and `Buffer` call
//! these, so code that does not import the trait keeps working.

use crate::error::{ArenaError, TransformError};
use crate::sample::TransformStamped;
use crate::store::FrameStore;
use crate::velocity::{self, Velocity};
use crate::{chain, frames_dot, walk};

/// `$body` with `$s` bound to one moment of the store answering now (`$body` may run more than
/// once).
macro_rules! in_moment {
    ($self:ident, |$s:ident| $body:expr) => {
        $self.with_store(|store| store.in_one_moment(|$s| $body))
    };
}

/// tf2's `BufferCore` queries. Implement [`BufferCore::with_store`]; every query is provided.
pub trait BufferCore {
    /// The frame store the queries read.
    type Store: FrameStore;

    /// Runs `f` once on the store answering now (for a [`crate::Buffer`], its current
    /// arena). Each query runs in one moment of it ([`FrameStore::in_one_moment`]).
    fn with_store<R>(&self, f: impl FnOnce(&Self::Store) -> R) -> R;

    /// tf2's `lookupTransform(target, source, time)`: `T_target_source` at `time` ns (0 =
    /// latest common time). See [`walk::lookup_transform`].
    ///
    /// # Errors
    /// tf2's exceptions with tf2 Jazzy's texts ([`TransformError`]).
    fn lookup_transform<'a>(
        &self,
        target: &'a str,
        source: &'a str,
        time: i64,
    ) -> Result<TransformStamped<'a>, TransformError> {
        in_moment!(self, |s| crate::pair::lookup_names(s, target, source, time))
    }

    /// tf2's two-time `lookupTransform(target, target_time, source, source_time, fixed)`. See
    /// [`walk::lookup_transform_full`].
    ///
    /// # Errors
    /// As [`BufferCore::lookup_transform`].
    fn lookup_transform_full<'a>(
        &self,
        target: &'a str,
        target_time: i64,
        source: &'a str,
        source_time: i64,
        fixed: &str,
    ) -> Result<TransformStamped<'a>, TransformError> {
        in_moment!(self, |s| {
            walk::lookup_transform_full(s, target, target_time, source, source_time, fixed)
        })
    }

    /// tf2's `canTransform(target, source, time)`; the error carries canTransform's text. See
    /// [`walk::can_transform`].
    ///
    /// # Errors
    /// The error tf2 would report, in the class the lookup would throw.
    fn can_transform(&self, target: &str, source: &str, time: i64) -> Result<(), TransformError> {
        in_moment!(self, |s| walk::can_transform(s, target, source, time))
    }

    /// tf2's two-time `canTransform`. See [`walk::can_transform_full`].
    ///
    /// # Errors
    /// As [`BufferCore::can_transform`].
    fn can_transform_full(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
    ) -> Result<(), TransformError> {
        in_moment!(self, |s| {
            walk::can_transform_full(s, target, target_time, source, source_time, fixed)
        })
    }

    /// tf2's `getLatestCommonTime(target, source)`, ns. See [`walk::get_latest_common_time`].
    ///
    /// # Errors
    /// See [`walk::get_latest_common_time`].
    fn get_latest_common_time(&self, target: &str, source: &str) -> Result<i64, TransformError> {
        in_moment!(self, |s| walk::get_latest_common_time(s, target, source))
    }

    /// tf2's `allFramesAsString()`.
    ///
    /// # Errors
    /// Only an unreadable store.
    fn all_frames_as_string(&self) -> Result<String, ArenaError> {
        in_moment!(self, |s| walk::all_frames_as_string(s))
    }

    /// tf2's `allFramesAsYAML(now)`; `now` in ns (0 omits `transform_delay`).
    ///
    /// # Errors
    /// Only an unreadable store.
    fn all_frames_as_yaml(&self, now: i64) -> Result<String, ArenaError> {
        in_moment!(self, |s| walk::all_frames_as_yaml(s, now))
    }

    /// tf2's `_frameExists(name)` (`"NO_PARENT"` exists, as in tf2).
    ///
    /// # Errors
    /// Only an unreadable store.
    fn frame_exists(&self, name: &str) -> Result<bool, ArenaError> {
        in_moment!(self, |s| walk::frame_exists(s, name))
    }

    /// tf2's `getAllFrameNames()`: every known frame, in id order.
    ///
    /// # Errors
    /// Only an unreadable store.
    fn get_all_frame_names(&self) -> Result<Vec<String>, ArenaError> {
        in_moment!(self, |s| walk::get_all_frame_names(s))
    }

    /// tf2's `_getParent(frame, time)`: `frame`'s parent at `time` ns (0 = newest); `None` for
    /// unknown frames, frames without cache, or times the cache does not cover.
    ///
    /// # Errors
    /// Only an unreadable store.
    fn get_parent(&self, frame: &str, time: i64) -> Result<Option<String>, ArenaError> {
        in_moment!(self, |s| walk::get_parent(s, frame, time))
    }

    /// tf2's `_chainAsVector(target, target_time, source, source_time, fixed)` (tf2_py's
    /// `_chain`): the frames of the two-time lookup's walks. See [`chain::chain_as_vector`].
    ///
    /// # Errors
    /// tf2's lookup exceptions and texts.
    fn chain_as_vector(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
    ) -> Result<Vec<String>, TransformError> {
        in_moment!(self, |s| {
            chain::chain_as_vector(s, target, target_time, source, source_time, fixed)
        })
    }

    /// tf2's `_allFramesAsDot(now)`; `now` in ns (0 omits ages and the recording time). See
    /// [`frames_dot::all_frames_as_dot`].
    ///
    /// # Errors
    /// Only an unreadable store.
    fn all_frames_as_dot(&self, now: i64) -> Result<String, ArenaError> {
        in_moment!(self, |s| frames_dot::all_frames_as_dot(s, now))
    }

    /// tf2's `lookupVelocity(tracking, observation, time, averaging_interval)` (ns). See
    /// [`velocity::lookup_velocity`].
    ///
    /// # Errors
    /// tf2's lookup exceptions and texts.
    fn lookup_velocity(
        &self,
        tracking: &str,
        observation: &str,
        time: i64,
        averaging_interval: i64,
    ) -> Result<Velocity, TransformError> {
        in_moment!(self, |s| {
            velocity::lookup_velocity(s, tracking, observation, time, averaging_interval)
        })
    }

    /// tf2's `lookupVelocity` with a reference frame and point (metres, in
    /// `reference_point_frame`). See [`velocity::lookup_velocity_full`].
    ///
    /// # Errors
    /// tf2's lookup exceptions and texts.
    #[allow(clippy::too_many_arguments)]
    fn lookup_velocity_full(
        &self,
        tracking: &str,
        observation: &str,
        reference: &str,
        reference_point: [f64; 3],
        reference_point_frame: &str,
        time: i64,
        averaging_interval: i64,
    ) -> Result<Velocity, TransformError> {
        in_moment!(self, |s| {
            velocity::lookup_velocity_full(
                s,
                tracking,
                observation,
                reference,
                reference_point,
                reference_point_frame,
                time,
                averaging_interval,
            )
        })
    }

    /// tf2's `getCacheLength()`: how long a dynamic frame's history reaches back, ns.
    fn get_cache_length(&self) -> i64 {
        in_moment!(self, |s| s.cache_time_ns())
    }
}

impl<S: FrameStore> BufferCore for S {
    type Store = S;

    fn with_store<R>(&self, f: impl FnOnce(&S) -> R) -> R {
        f(self)
    }
}
