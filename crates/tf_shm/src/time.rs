//! Time as tf2 ROS 2 has it: `i64` nanoseconds; `0` means "latest".

/// Formats `ns` as tf2 ROS 2's `displayTimePoint`: seconds as a double, printed `%.6f`.
pub fn display_time(ns: i64) -> String {
    format!("{:.6}", ns as f64 / 1e9)
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

    #[test]
    fn seconds_round_trip() {
        assert_eq!(secs_to_ns(1.5), Some(1_500_000_000));
        assert_eq!(secs_to_ns(f64::NAN), None);
        assert_eq!(secs_to_ns(1e30), None);
    }
}
