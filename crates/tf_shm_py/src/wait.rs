//! Stand-ins for the engine's waiting queries, with the signatures `tf_shm::Buffer` is to
//! gain: they poll `can_transform` every 10 ms, as tf2_ros does. When `Buffer` has its own
//! (waking on data), delete this file's trait impl and its `use` lines: inherent methods of the
//! same names are then called, with no other change.

use std::time::{Duration, Instant};

use tf_shm::{Buffer, TransformError, TransformStamped};

/// tf2_ros's polling period.
const POLL: Duration = Duration::from_millis(10);

pub trait Waits {
    /// Waits up to `timeout` for `can_transform(target, source, time)`; its last error on
    /// timeout.
    fn can_transform_timeout(
        &self,
        target: &str,
        source: &str,
        time: i64,
        timeout: Duration,
    ) -> Result<(), TransformError>;

    /// Waits up to `timeout` for the two-time `can_transform_full`; its last error on timeout.
    fn can_transform_full_timeout(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
        timeout: Duration,
    ) -> Result<(), TransformError>;

    /// Waits as [`Waits::can_transform_full_timeout`], then does the plain two-time lookup
    /// (so a failure is that lookup's error, as tf2_ros gives it).
    fn lookup_transform_full_timeout<'a>(
        &self,
        target: &'a str,
        target_time: i64,
        source: &'a str,
        source_time: i64,
        fixed: &str,
        timeout: Duration,
    ) -> Result<TransformStamped<'a>, TransformError>;
}

fn poll(
    timeout: Duration,
    mut ready: impl FnMut() -> Result<(), TransformError>,
) -> Result<(), TransformError> {
    let start = Instant::now();
    loop {
        let r = ready();
        let left = timeout.saturating_sub(start.elapsed());
        if r.is_ok() || left.is_zero() {
            return r;
        }
        std::thread::sleep(POLL.min(left));
    }
}

impl Waits for Buffer {
    fn can_transform_timeout(
        &self,
        target: &str,
        source: &str,
        time: i64,
        timeout: Duration,
    ) -> Result<(), TransformError> {
        poll(timeout, || self.can_transform(target, source, time))
    }

    fn can_transform_full_timeout(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
        timeout: Duration,
    ) -> Result<(), TransformError> {
        poll(timeout, || {
            self.can_transform_full(target, target_time, source, source_time, fixed)
        })
    }

    fn lookup_transform_full_timeout<'a>(
        &self,
        target: &'a str,
        target_time: i64,
        source: &'a str,
        source_time: i64,
        fixed: &str,
        timeout: Duration,
    ) -> Result<TransformStamped<'a>, TransformError> {
        let _ = self.can_transform_full_timeout(
            target,
            target_time,
            source,
            source_time,
            fixed,
            timeout,
        );
        self.lookup_transform_full(target, target_time, source, source_time, fixed)
    }
}
