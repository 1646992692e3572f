//! Stand-ins for the engine's waits that wake on data (`Buffer::can_transform_timeout`,
//! `can_transform_full_timeout`, `lookup_transform_full_timeout`): tf2_ros's polling of
//! `canTransform` every 10 ms, with the engine's signatures. When `tf_shm::Buffer` has these
//! methods, they take precedence over this trait's; delete this module and its `use`.

use std::time::{Duration, Instant};

use tf_shm::{Buffer, TransformError, TransformStamped};

const POLL: Duration = Duration::from_millis(10);

fn poll(
    timeout: Duration,
    mut ok: impl FnMut() -> Result<(), TransformError>,
) -> Result<(), TransformError> {
    let start = Instant::now();
    loop {
        let r = ok();
        if r.is_ok() || start.elapsed() >= timeout {
            return r;
        }
        std::thread::sleep(POLL.min(timeout.saturating_sub(start.elapsed())));
    }
}

pub(crate) trait Waits {
    fn can_transform_timeout(
        &self,
        target: &str,
        source: &str,
        time: i64,
        timeout: Duration,
    ) -> Result<(), TransformError>;
    fn can_transform_full_timeout(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
        timeout: Duration,
    ) -> Result<(), TransformError>;
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
        // As tf2_ros: wait for canTransform, then the plain lookup's answer or error.
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
