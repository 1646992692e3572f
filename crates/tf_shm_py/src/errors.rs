//! tf2's exception classes as Python sees them. The Python half picks the classes at import —
//! tf2_ros's (= tf2_py's) when importable, else its own of the same names and hierarchy — and
//! hands them here, so lookups raise them directly.

use std::sync::OnceLock;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;
use tf_shm::TransformError;

pyo3::create_exception!(
    _native,
    OpenError,
    PyRuntimeError,
    "The arena could not be opened (no tf_shm_bridge serving the domain, permissions, version)."
);

struct Classes {
    base: Py<PyType>,
    lookup: Py<PyType>,
    connectivity: Py<PyType>,
    extrapolation: Py<PyType>,
    invalid_argument: Py<PyType>,
    timeout: Py<PyType>,
}

static CLASSES: OnceLock<Classes> = OnceLock::new();

/// Sets the classes raised for tf2's errors, once per process (later calls must pass the same
/// classes: a second import of the package is fine, a change of mind is refused).
#[pyfunction]
pub fn set_exception_classes(
    base: Bound<'_, PyType>,
    lookup: Bound<'_, PyType>,
    connectivity: Bound<'_, PyType>,
    extrapolation: Bound<'_, PyType>,
    invalid_argument: Bound<'_, PyType>,
    timeout: Bound<'_, PyType>,
) -> PyResult<()> {
    let given = [
        &base,
        &lookup,
        &connectivity,
        &extrapolation,
        &invalid_argument,
        &timeout,
    ];
    if let Some(c) = CLASSES.get() {
        let have = [
            &c.base,
            &c.lookup,
            &c.connectivity,
            &c.extrapolation,
            &c.invalid_argument,
            &c.timeout,
        ];
        if given.iter().zip(have).all(|(g, h)| g.is(h)) {
            return Ok(());
        }
        return Err(PyValueError::new_err(
            "tf_shm: the exception classes are already set to other classes",
        ));
    }
    let _ = CLASSES.set(Classes {
        base: base.unbind(),
        lookup: lookup.unbind(),
        connectivity: connectivity.unbind(),
        extrapolation: extrapolation.unbind(),
        invalid_argument: invalid_argument.unbind(),
        timeout: timeout.unbind(),
    });
    Ok(())
}

fn raise(py: Python<'_>, pick: impl Fn(&Classes) -> &Py<PyType>, text: String) -> PyErr {
    match CLASSES.get() {
        Some(c) => PyErr::from_type(pick(c).bind(py).clone(), (text,)),
        None => PyRuntimeError::new_err(text),
    }
}

/// The Python exception tf2_py raises for `e`: its class by tf2's C++ class (the extrapolation
/// subclasses of ROS 2 Iron+ are caught as `ExtrapolationException` by tf2_py, so they are
/// that class here), with tf2's text. An unreadable arena is not a tf2 error: it raises the
/// base `TransformException`, which `except TransformException` code handles.
pub fn transform_error(py: Python<'_>, e: TransformError) -> PyErr {
    let text = e.to_string();
    match e {
        TransformError::Lookup(_) => raise(py, |c| &c.lookup, text),
        TransformError::Connectivity(_) => raise(py, |c| &c.connectivity, text),
        TransformError::Extrapolation { .. } => raise(py, |c| &c.extrapolation, text),
        TransformError::InvalidArgument(_) => raise(py, |c| &c.invalid_argument, text),
        TransformError::Arena(_) => raise(py, |c| &c.base, text),
    }
}

/// The base `TransformException` with `e`'s text.
pub fn base_error(py: Python<'_>, e: TransformError) -> PyErr {
    raise(py, |c| &c.base, e.to_string())
}

/// What tf2_py's `get_latest_common_time` raises: its frame checks (`validateFrameId`, through
/// tf2_py's exception wrapper) raise their own classes — `InvalidArgumentException` for empty or
/// '/'-prefixed names, `LookupException` for unknown ones — and any failure of the search itself
/// (different trees, a loop) is the error code's text under the base `TransformException`.
pub fn latest_common_time_error(py: Python<'_>, e: TransformError) -> PyErr {
    let frame_check = match &e {
        TransformError::InvalidArgument(_) => true,
        TransformError::Lookup(text) => text.contains(" passed to get_latest_common_time "),
        _ => false,
    };
    if frame_check {
        transform_error(py, e)
    } else {
        base_error(py, e)
    }
}
