//! `tf_shm._native.Arena`: TEST-ONLY. A process that owns an arena and writes transforms into
//! it, as tf_shm_bridge does, so the Python tests have data without ROS. Not part of the
//! public API (the package exposes it as `tf_shm._testing.Arena`).

use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use tf_shm::validate::TransformInput;
use tf_shm::{ArenaConfig, Owner, Serve};

use crate::errors::OpenError;

/// One transform of [`Arena::set_transforms`]: (parent, child, stamp ns, translation, rotation).
type BatchItem = (String, String, i64, [f64; 3], [f64; 4]);

/// The owner of a fresh arena in `runtime_dir` (its rendezvous directory), domain `domain`.
#[pyclass(frozen, module = "tf_shm._native")]
pub struct Arena {
    owner: Mutex<Option<Owner>>,
}

impl Arena {
    fn with<R>(&self, f: impl FnOnce(&mut Owner) -> PyResult<R>) -> PyResult<R> {
        let mut g = self.owner.lock().unwrap_or_else(|p| p.into_inner());
        match g.as_mut() {
            Some(o) => f(o),
            None => Err(PyRuntimeError::new_err("the test arena is closed")),
        }
    }
}

#[pymethods]
impl Arena {
    #[new]
    #[pyo3(signature = (runtime_dir, domain=0, name=None, cache_time_ns=10_000_000_000, memory_budget_bytes=4 << 20))]
    fn new(
        runtime_dir: String,
        domain: u32,
        name: Option<String>,
        cache_time_ns: i64,
        memory_budget_bytes: usize,
    ) -> PyResult<Arena> {
        let config = ArenaConfig {
            cache_time_ns,
            memory_budget_bytes,
            ..Default::default()
        };
        let mut serve = Serve::new(config)
            .runtime_dir(runtime_dir)
            .domain(domain)
            .require_create(true);
        if let Some(n) = &name {
            serve = serve.name(n);
        }
        let owner = serve
            .serve()
            .map_err(|e| OpenError::new_err(e.to_string()))?;
        Ok(Arena {
            owner: Mutex::new(Some(owner)),
        })
    }

    /// tf2's `setTransform`: `parent` ← `child` at `stamp_ns`; raises `ValueError` with the
    /// engine's text when refused.
    #[pyo3(signature = (parent, child, stamp_ns, translation, rotation, authority="test", is_static=false))]
    #[allow(clippy::too_many_arguments)]
    fn set_transform(
        &self,
        parent: &str,
        child: &str,
        stamp_ns: i64,
        translation: [f64; 3],
        rotation: [f64; 4],
        authority: &str,
        is_static: bool,
    ) -> PyResult<()> {
        let input = TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp: stamp_ns,
            translation,
            rotation,
        };
        self.with(|o| {
            o.writer()
                .set_transform(&input, authority, is_static)
                .map(|_| ())
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })
    }

    /// Several transforms as one message (one `ArenaWriter::batch`: readers see all of them or
    /// none), each `(parent, child, stamp_ns, translation, rotation)`, dynamic, authority
    /// "test"; raises `ValueError` with the engine's text of the first refused (the others are
    /// stored).
    fn set_transforms(&self, items: Vec<BatchItem>) -> PyResult<()> {
        self.with(|o| {
            o.writer().batch(|w| {
                let mut first_error = None;
                for (parent, child, stamp, translation, rotation) in &items {
                    let input = TransformInput {
                        frame_id: parent,
                        child_frame_id: child,
                        stamp: *stamp,
                        translation: *translation,
                        rotation: *rotation,
                    };
                    if let Err(e) = w.set_transform(&input, "test", false) {
                        first_error.get_or_insert(e.to_string());
                    }
                }
                first_error.map_or(Ok(()), |e| Err(PyValueError::new_err(e)))
            })
        })
    }

    /// tf2's `clear()` on the arena.
    fn clear(&self) -> PyResult<()> {
        self.with(|o| {
            o.writer().clear();
            Ok(())
        })
    }

    /// Drops the owner (as a bridge exiting).
    fn close(&self) {
        self.owner.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}
