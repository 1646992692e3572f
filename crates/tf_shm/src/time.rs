//! Time as tf2 ROS 2 has it: `i64` nanoseconds; `0` means "latest".

/// tf2's `durationToSec` (and `timeToSec`, which calls it): `ns` as seconds, computed the way
/// tf2 computes them. tf2 splits the count into whole seconds and nanoseconds (C++ `%` and `/`,
/// each narrowed to `int32_t`) and returns `double(sec) + 1e-9 * double(nsec)`; at epoch-sized
/// stamps this differs from `ns / 1e9` in the last bits, enough to change a printed digit.
pub fn to_sec(ns: i64) -> f64 {
    // `%` truncates toward zero in Rust as in C++, so `ns - nsec` cannot overflow.
    let nsec = ns % 1_000_000_000;
    // tf2 narrows both parts with `static_cast<int32_t>` (modulo 2^32, as `as` does).
    let sec = ((ns - nsec) / 1_000_000_000) as i32;
    f64::from(sec) + 1e-9 * f64::from(nsec as i32)
}

/// Formats `ns` as tf2 ROS 2's `displayTimePoint`: [`to_sec`], printed `%.6f` (Rust's `{:.6}`
/// rounds the exact binary value half-to-even, as glibc's `printf` does).
pub fn display_time(ns: i64) -> String {
    format!("{:.6}", to_sec(ns))
}

/// Seconds (as written in configs and on command lines) to ns, rounded to the nearest ns.
/// `None` when not finite or out of `i64` range.
pub fn secs_to_ns(secs: f64) -> Option<i64> {
    let ns = (secs * 1e9).round();
    (ns.is_finite() && ns >= i64::MIN as f64 && ns < i64::MAX as f64).then_some(ns as i64)
}

/// Wall-clock now, ns since the Unix epoch (0 if the clock is before it).
pub fn unix_now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Wall-clock now from the kernel's coarse clock (`CLOCK_REALTIME_COARSE`: the time of the
/// last timer tick, a few ms of resolution, read without the TSC), ns since the Unix epoch (0
/// if before it or unavailable). For times that tools show in seconds, at a fifth of the
/// precise clock's cost.
// libc, not rustix: std has no coarse clock, and rustix's own vDSO lookup crashes under
// valgrind, where the writer's instruction counts are measured.
#[allow(unsafe_code)]
pub(crate) fn unix_now_coarse_ns() -> i64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a live, writable `timespec`; clock_gettime writes only it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut t) };
    if rc != 0 || t.tv_sec < 0 {
        return 0;
    }
    t.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_matches_tf2_six_decimals() {
        assert_eq!(display_time(11_500_000_000), "11.500000");
        assert_eq!(display_time(0), "0.000000");
        assert_eq!(display_time(-1_500_000_000), "-1.500000");
        assert_eq!(display_time(1_234_567), "0.001235");
    }

    /// tf2's `durationToSec`, written out again from tf2/src/time.cpp: the expected texts below
    /// do not share code with [`to_sec`].
    fn tf2_duration_to_sec(count: i64) -> f64 {
        let nsec: i32 = (count % 1_000_000_000i64) as i32;
        let sec: i32 = ((count - i64::from(nsec)) / 1_000_000_000i64) as i32;
        let nsec_double = 1e-9 * f64::from(nsec);
        let sec_double = f64::from(sec);
        sec_double + nsec_double
    }

    #[test]
    fn display_at_epoch_stamps_is_tf2s() {
        // A stamp where `ns / 1e9` prints ...341048 and tf2 prints ...341049.
        assert_eq!(display_time(1_706_574_072_341_048_699), "1706574072.341049");
        assert_eq!(display_time(1_706_574_072_226_037_172), "1706574072.226037");
        // Random stamps around 1.7e9 s: every one prints as tf2 prints it, and the draw is
        // large enough to contain stamps where `ns / 1e9` would print another digit.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut differs_from_division = 0;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ns = 1_700_000_000_000_000_000 + (x % 100_000_000_000_000_000) as i64;
            let expected = format!("{:.6}", tf2_duration_to_sec(ns));
            assert_eq!(display_time(ns), expected, "stamp {ns} ns");
            differs_from_division += usize::from(format!("{:.6}", ns as f64 / 1e9) != expected);
        }
        assert!(differs_from_division > 100, "{differs_from_division}");
        // Negative durations and tf2's 32-bit narrowing of the seconds (wraps past 2^31 s).
        for ns in [
            -1_500_000_001,
            -999_999_999,
            i64::from(i32::MAX) * 1_000_000_000 + 5_000,
        ] {
            assert_eq!(
                display_time(ns),
                format!("{:.6}", tf2_duration_to_sec(ns)),
                "{ns}"
            );
        }
        assert_eq!(
            display_time(3_000_000_000 * 1_000_000_000),
            "-1294967296.000000"
        );
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(secs_to_ns(1.5), Some(1_500_000_000));
        assert_eq!(secs_to_ns(f64::NAN), None);
        assert_eq!(secs_to_ns(1e30), None);
    }
}
