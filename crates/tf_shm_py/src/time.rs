//! Times and durations from Python, in ns, the way tf2_py and rclpy read them.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyInt};

const NS_PER_S: i64 = 1_000_000_000;

/// ns of `obj`, one of:
/// - `int`: ns;
/// - `float`: seconds, converted as rclpy's `Time(seconds=s)` / `Duration(seconds=s)` do
///   (`int(s * 1e9)`, truncated toward zero);
/// - an object with `sec` and `nanosec` (`builtin_interfaces.msg.Time` / `Duration`), read as
///   tf2_py reads it: `sec * 1e9 + nanosec`;
/// - an object with `nanoseconds` (`rclpy.time.Time`, `rclpy.duration.Duration`);
/// - an object with `secs` and `nsecs` (ROS 1's `genpy.Time` / `Duration`).
///
/// Errors: `TypeError` for anything else, `ValueError` for a non-finite float,
/// `OverflowError` outside i64 ns.
pub fn ns(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    if let Ok(i) = obj.cast::<PyInt>() {
        return i.extract::<i64>();
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return float_seconds(f.value());
    }
    // Interned names: no string is made per call.
    let py = obj.py();
    let (sec, nanosec) = (intern!(py, "sec"), intern!(py, "nanosec"));
    if obj.hasattr(sec)? && obj.hasattr(nanosec)? {
        return sec_nsec(
            obj.getattr(sec)?.extract()?,
            obj.getattr(nanosec)?.extract()?,
        );
    }
    let nanoseconds = intern!(py, "nanoseconds");
    if obj.hasattr(nanoseconds)? {
        return obj.getattr(nanoseconds)?.extract();
    }
    let (secs, nsecs) = (intern!(py, "secs"), intern!(py, "nsecs"));
    if obj.hasattr(secs)? && obj.hasattr(nsecs)? {
        return sec_nsec(
            obj.getattr(secs)?.extract()?,
            obj.getattr(nsecs)?.extract()?,
        );
    }
    Err(PyTypeError::new_err(format!(
        "time or duration must be rclpy Time/Duration, builtin_interfaces Time/Duration, int \
         nanoseconds or float seconds, not {}",
        obj.get_type().name()?
    )))
}

fn sec_nsec(sec: i64, nanosec: i64) -> PyResult<i64> {
    sec.checked_mul(NS_PER_S)
        .and_then(|s| s.checked_add(nanosec))
        .ok_or_else(|| PyOverflowError::new_err("time does not fit in i64 nanoseconds"))
}

/// rclpy's `int(seconds * S_TO_NS)`: one f64 product, truncated.
fn float_seconds(s: f64) -> PyResult<i64> {
    let v = s * 1e9;
    if !v.is_finite() {
        return Err(PyValueError::new_err(format!(
            "time in seconds must be finite, not {s}"
        )));
    }
    let t = v.trunc();
    // ±2^63 are exact in f64; i64 holds [-2^63, 2^63).
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if !(-LIMIT..LIMIT).contains(&t) {
        return Err(PyOverflowError::new_err(
            "time does not fit in i64 nanoseconds",
        ));
    }
    Ok(t as i64)
}

/// `to_ns(obj) -> int`: the conversion every method applies to its times and durations.
#[pyfunction]
pub fn to_ns(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    ns(obj)
}
