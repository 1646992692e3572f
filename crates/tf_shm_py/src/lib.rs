//! `tf_shm._native`: the Rust half of the Python package `tf_shm`.
//!
//! Everything that touches the arena or does arithmetic lives here; the Python half
//! (`python/tf_shm/`) gives it tf2_ros's shape: argument names, message types, exception
//! classes. Lookups hold the GIL (they take well under a microsecond); waits release it.

use pyo3::prelude::*;

mod buffer;
mod errors;
mod geometry;
mod testing;
mod time;
mod waits;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<buffer::NativeBuffer>()?;
    m.add("OpenError", py.get_type::<errors::OpenError>())?;
    m.add_function(wrap_pyfunction!(errors::set_exception_classes, m)?)?;
    m.add_function(wrap_pyfunction!(time::to_ns, m)?)?;
    m.add_function(wrap_pyfunction!(geometry::transform_point, m)?)?;
    m.add_function(wrap_pyfunction!(geometry::transform_vector, m)?)?;
    m.add_function(wrap_pyfunction!(geometry::transform_pose, m)?)?;
    m.add_function(wrap_pyfunction!(geometry::compose_transforms, m)?)?;
    m.add_class::<testing::Arena>()?;
    waits::init(m)?;
    Ok(())
}
