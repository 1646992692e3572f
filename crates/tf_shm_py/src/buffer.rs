//! `NativeBuffer`: `tf_shm::Buffer` for Python. Times arrive as Python objects and are read by
//! [`crate::time::ns`]; answers leave as plain tuples, which the Python half turns into
//! messages.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;
use tf_shm::{
    Answering, Buffer, BufferCore, BufferLimits, FramePair, Join, Transform, TransformError,
};

use crate::errors::{base_error, latest_common_time_error, transform_error, OpenError};
use crate::time;
use crate::waits::{self, detached};

/// A lookup's answer: stamp (ns), translation x, y, z (m), rotation x, y, z, w.
pub type Flat = (i64, f64, f64, f64, f64, f64, f64, f64);

/// Frame pairs kept for the hot-loop lookup; past this many the cache starts over, so a
/// caller cycling through unbounded names cannot grow it without limit.
const MAX_PAIRS: usize = 4096;

/// A vector as tf2_py returns one: a tuple x, y, z.
type V3 = (f64, f64, f64);

fn v3([x, y, z]: [f64; 3]) -> V3 {
    (x, y, z)
}

fn flat(stamp: i64, t: &Transform) -> Flat {
    let [x, y, z] = t.translation;
    let [qx, qy, qz, qw] = t.rotation;
    (stamp, x, y, z, qx, qy, qz, qw)
}

/// ns → a wait's `Duration`; zero or negative means "do not wait", as tf2_ros's `Duration()`.
fn wait_for(timeout: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Duration>> {
    match timeout {
        None => Ok(None),
        Some(t) if t.is_none() => Ok(None),
        Some(t) => {
            let ns = time::ns(t)?;
            Ok((ns > 0).then(|| Duration::from_nanos(ns as u64)))
        }
    }
}

fn verdict(r: Result<(), TransformError>) -> (bool, String) {
    match r {
        Ok(()) => (true, String::new()),
        Err(e) => (false, e.to_string()),
    }
}

/// A cached frame pair, found again by its Python names: their (cached) str hashes pick the
/// bucket, identity or equality of the str objects picks the entry, so a hit costs no UTF-8
/// conversion and no string hashing.
struct PairEntry {
    target: Py<PyString>,
    source: Py<PyString>,
    pair: FramePair,
}

fn same(a: &Py<PyString>, b: &Bound<'_, PyString>) -> PyResult<bool> {
    if a.is(b) {
        return Ok(true);
    }
    a.bind(b.py()).as_any().eq(b)
}

/// Cached pairs, their indices by (target hash, source hash), and the index of the last one
/// found: a loop repeating one lookup passes the same str objects, found by identity without
/// hashing.
struct PairCache {
    entries: Vec<PairEntry>,
    by_hash: HashMap<(isize, isize), Vec<usize>>,
    last: Option<usize>,
}

/// The index of the pair of these names, added if new.
fn find_or_add(
    cache: &mut PairCache,
    target_frame: &Bound<'_, PyString>,
    source_frame: &Bound<'_, PyString>,
) -> PyResult<usize> {
    let key = (target_frame.hash()?, source_frame.hash()?);
    if let Some(bucket) = cache.by_hash.get(&key) {
        for &i in bucket {
            let e = &cache.entries[i];
            if same(&e.target, target_frame)? && same(&e.source, source_frame)? {
                return Ok(i);
            }
        }
    }
    if cache.entries.len() >= MAX_PAIRS {
        cache.by_hash.clear();
        cache.entries.clear();
        cache.last = None;
    }
    let pair = FramePair::new(&target_frame.to_cow()?, &source_frame.to_cow()?);
    cache.entries.push(PairEntry {
        target: target_frame.clone().unbind(),
        source: source_frame.clone().unbind(),
        pair,
    });
    let i = cache.entries.len() - 1;
    cache.by_hash.entry(key).or_default().push(i);
    Ok(i)
}

/// A read-only handle on the arena of one domain (see `tf_shm.Buffer`).
#[pyclass(frozen, module = "tf_shm._native")]
pub struct NativeBuffer {
    inner: Buffer,
    pairs: Mutex<PairCache>,
    /// tf2's cache time asked for and `clear()`: what the queries answer under
    /// (`tf_shm::BufferLimits::query`).
    limits: BufferLimits,
}

impl NativeBuffer {
    /// Waits up to `timeout` (GIL released by the caller) until `ready` holds, re-checking
    /// after every change to the arena (`tf_shm::Buffer::wait_until`), as tf2_ros's timed calls
    /// wait for `canTransform`.
    /// tf2_ros's timed calls: with a positive `timeout`, waits (GIL released, see
    /// [`NativeBuffer::wait_until`]) until `check` holds on what this buffer answers, or the
    /// timeout; the caller's query then answers (or raises) as tf2_ros's does.
    fn wait_for_check(
        &self,
        py: Python<'_>,
        timeout: Option<&Bound<'_, PyAny>>,
        check: impl Sync + Fn(&Answering<'_>) -> Result<(), TransformError>,
    ) -> PyResult<()> {
        match wait_for(timeout)? {
            Some(w) => self.wait_until(py, w, || self.limits.query(&self.inner, &check).is_ok()),
            None => Ok(()),
        }
    }

    /// Waits (GIL released) until `ready` or `timeout`; ends at once when the interpreter
    /// exits (the caller's final query answering then), and with the exception when a signal
    /// handler raises on the main thread (Ctrl-C), as tf2_ros's waits do.
    fn wait_until(
        &self,
        py: Python<'_>,
        timeout: Duration,
        mut ready: impl Send + FnMut() -> bool,
    ) -> PyResult<()> {
        detached(py, move |w| {
            let _ = self.inner.wait_until(timeout, |_| {
                if ready() || w.must_end() {
                    Ok(())
                } else {
                    Err(())
                }
            });
        })
    }
}

#[pymethods]
impl NativeBuffer {
    /// A buffer on the arena of `domain` (default `$ROS_DOMAIN_ID`, else 0) named `name`
    /// (default the bridge's default). With `open_timeout` None: at once, whether or not a
    /// bridge serves (`Join::open_or_empty`: empty until one does, joined within ~20 ms of it
    /// serving). With `open_timeout` (ns or a duration): waits up to that long for a bridge
    /// (`Join::await_open`, GIL released) and raises `OpenError` if none serves. Raises
    /// `OpenError` with the engine's text when the arena cannot be joined at all.
    #[new]
    ///
    /// `cache_time` (ns or a duration): tf2's cache time, kept as tf2 keeps it (zero and
    /// negative too); shorter than the arena's, lookups answer as a tf2 buffer of that cache
    /// time does (older data pruned; negative: each frame holds only its newest sample).
    #[pyo3(signature = (domain=None, name=None, open_timeout=None, cache_time=None))]
    fn new(
        py: Python<'_>,
        domain: Option<u32>,
        name: Option<String>,
        open_timeout: Option<&Bound<'_, PyAny>>,
        cache_time: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<NativeBuffer> {
        let cache_time = match cache_time {
            Some(t) if !t.is_none() => Some(time::ns(t)?),
            _ => None,
        };
        let mut open = Join::new();
        if let Some(d) = domain {
            open = open.domain(d);
        }
        if let Some(n) = &name {
            open = open.name(n);
        }
        let wait = match open_timeout {
            Some(t) if !t.is_none() => Some(wait_for(Some(t))?.unwrap_or(Duration::ZERO)),
            _ => None,
        };
        let opened = detached(py, |w| match wait {
            Some(t) if t.is_zero() => open.open(),
            Some(t) => {
                // In steps, so that Ctrl-C or the interpreter's exit ends the wait.
                let deadline = Instant::now() + t;
                loop {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match open.await_open(left.min(waits::OPEN_STEP)) {
                        Err(e) if e.is_retryable() && !left.is_zero() && !w.must_end() => {}
                        r => break r,
                    }
                }
            }
            None => open.open_or_empty(),
        })?;
        let inner = opened.map_err(|e| OpenError::new_err(e.to_string()))?;
        Ok(NativeBuffer {
            inner,
            pairs: Mutex::new(PairCache {
                entries: Vec::new(),
                by_hash: HashMap::new(),
                last: None,
            }),
            limits: BufferLimits::new(cache_time),
        })
    }

    /// Whether the buffer has joined a bridge's arena (false while it waits for the first
    /// bridge and answers as an empty tf2 buffer).
    #[getter]
    fn joined(&self) -> bool {
        self.inner.joined()
    }

    /// tf2's cache time of the arena, ns.
    #[getter]
    fn cache_time_ns(&self) -> i64 {
        self.inner.view().cache_time_ns()
    }

    /// A token of the data the buffer receives: (arena swaps, samples stored + clears of the
    /// arena that receives). It moves with every transform the bridge stores, every clear and
    /// every bridge restart followed; for [`NativeBuffer::wait_for_data`].
    fn data_token(&self) -> (u64, u64) {
        let s = self.inner.receiving_view().stats();
        (
            self.inner.arena_swaps(),
            s.accepted_total.wrapping_add(s.clears_total),
        )
    }

    /// Sleeps on the arena's futex (GIL released, no polling) until [`NativeBuffer::data_token`]
    /// differs from `since` or `timeout` s have passed; returns the token then, or None once
    /// the interpreter exits (the waiting thread should end). On the main thread, raises what
    /// a signal handler raises meanwhile (Ctrl-C).
    fn wait_for_data(
        &self,
        py: Python<'_>,
        since: (u64, u64),
        timeout: f64,
    ) -> PyResult<Option<(u64, u64)>> {
        let deadline = Instant::now() + Duration::from_secs_f64(timeout.clamp(0.0, 3600.0));
        detached(py, |w| {
            self.inner.wait_while(|| {
                let left = deadline.saturating_duration_since(Instant::now());
                let waits = self.data_token() == since && !left.is_zero() && !w.must_end();
                waits.then_some(left)
            })
        })?;
        Ok((!waits::exiting()).then(|| self.data_token()))
    }

    /// How many times the buffer followed the bridge to a new arena (0 until a restart).
    #[getter]
    fn arena_swaps(&self) -> u64 {
        self.inner.arena_swaps()
    }

    /// Deprecated alias of `arena_swaps` (it counts arena swaps, not a generation); warns
    /// with `DeprecationWarning`.
    #[getter]
    fn generation(&self, py: Python<'_>) -> PyResult<u64> {
        let category = py.get_type::<pyo3::exceptions::PyDeprecationWarning>();
        PyErr::warn(
            py,
            category.as_any(),
            c"NativeBuffer.generation is deprecated: use arena_swaps",
            1,
        )?;
        Ok(self.inner.arena_swaps())
    }

    /// `T_target_source` at `time` as a flat tuple; waits up to `timeout` first (GIL released),
    /// then raises the plain lookup's error, as tf2_ros's `lookup_transform` does.
    #[pyo3(signature = (target_frame, source_frame, time, timeout=None))]
    fn lookup_transform(
        &self,
        py: Python<'_>,
        target_frame: PyBackedStr,
        source_frame: PyBackedStr,
        time: &Bound<'_, PyAny>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Flat> {
        let t = time::ns(time)?;
        self.wait_for_check(py, timeout, |b| {
            b.can_transform(&target_frame, &source_frame, t)
        })?;
        let r = self.limits.query(&self.inner, |b| {
            b.lookup_transform(&target_frame, &source_frame, t)
                .map(|r| flat(r.stamp, &r.transform))
        });
        r.map_err(|e| transform_error(py, e))
    }

    /// The hot-loop lookup: as `lookup_transform` without a timeout, through a cached
    /// `FramePair` per (target, source), so repeated calls skip the name resolution.
    fn lookup_pair(
        &self,
        py: Python<'_>,
        target_frame: &Bound<'_, PyString>,
        source_frame: &Bound<'_, PyString>,
        time: &Bound<'_, PyAny>,
    ) -> PyResult<Flat> {
        let t = time::ns(time)?;
        if self.limits.applies(&self.inner) {
            let (target, source) = (target_frame.to_cow()?, source_frame.to_cow()?);
            return self
                .limits
                .query(&self.inner, |b| {
                    b.lookup_transform(&target, &source, t)
                        .map(|r| flat(r.stamp, &r.transform))
                })
                .map_err(|e| transform_error(py, e));
        }
        let mut guard = self.pairs.lock().unwrap_or_else(|p| p.into_inner());
        let cache = &mut *guard;
        let last = cache.last.filter(|&i| {
            cache
                .entries
                .get(i)
                .is_some_and(|e| e.target.is(target_frame) && e.source.is(source_frame))
        });
        let index = match last {
            Some(i) => i,
            None => {
                let i = find_or_add(cache, target_frame, source_frame)?;
                cache.last = Some(i);
                i
            }
        };
        let entry = &mut cache.entries[index];
        match self.inner.lookup_pair(&mut entry.pair, t) {
            Ok((stamp, tr)) => Ok(flat(stamp, &tr)),
            Err(e) => Err(transform_error(py, e)),
        }
    }

    /// tf2's two-time lookup as a flat tuple; waits up to `timeout` first (GIL released).
    #[pyo3(signature = (target_frame, target_time, source_frame, source_time, fixed_frame, timeout=None))]
    #[allow(clippy::too_many_arguments)]
    fn lookup_transform_full(
        &self,
        py: Python<'_>,
        target_frame: PyBackedStr,
        target_time: &Bound<'_, PyAny>,
        source_frame: PyBackedStr,
        source_time: &Bound<'_, PyAny>,
        fixed_frame: PyBackedStr,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Flat> {
        let (tt, st) = (time::ns(target_time)?, time::ns(source_time)?);
        self.wait_for_check(py, timeout, |b| {
            b.can_transform_full(&target_frame, tt, &source_frame, st, &fixed_frame)
        })?;
        let r = self.limits.query(&self.inner, |b| {
            b.lookup_transform_full(&target_frame, tt, &source_frame, st, &fixed_frame)
                .map(|r| flat(r.stamp, &r.transform))
        });
        r.map_err(|e| transform_error(py, e))
    }

    /// tf2_py's `can_transform_core`: `(True, "")` or `(False, tf2's error text)`, after
    /// waiting up to `timeout` (GIL released).
    #[pyo3(signature = (target_frame, source_frame, time, timeout=None))]
    fn can_transform(
        &self,
        py: Python<'_>,
        target_frame: PyBackedStr,
        source_frame: PyBackedStr,
        time: &Bound<'_, PyAny>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(bool, String)> {
        let t = time::ns(time)?;
        self.wait_for_check(py, timeout, |b| {
            b.can_transform(&target_frame, &source_frame, t)
        })?;
        Ok(verdict(self.limits.query(&self.inner, |b| {
            b.can_transform(&target_frame, &source_frame, t)
        })))
    }

    /// tf2_py's `can_transform_full_core`, after waiting up to `timeout` (GIL released).
    #[pyo3(signature = (target_frame, target_time, source_frame, source_time, fixed_frame, timeout=None))]
    #[allow(clippy::too_many_arguments)]
    fn can_transform_full(
        &self,
        py: Python<'_>,
        target_frame: PyBackedStr,
        target_time: &Bound<'_, PyAny>,
        source_frame: PyBackedStr,
        source_time: &Bound<'_, PyAny>,
        fixed_frame: PyBackedStr,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(bool, String)> {
        let (tt, st) = (time::ns(target_time)?, time::ns(source_time)?);
        self.wait_for_check(py, timeout, |b| {
            b.can_transform_full(&target_frame, tt, &source_frame, st, &fixed_frame)
        })?;
        Ok(verdict(self.limits.query(&self.inner, |b| {
            b.can_transform_full(&target_frame, tt, &source_frame, st, &fixed_frame)
        })))
    }

    /// tf2's `getLatestCommonTime`, ns; raises what tf2_py raises (see
    /// [`latest_common_time_error`]).
    fn get_latest_common_time(
        &self,
        py: Python<'_>,
        target_frame: PyBackedStr,
        source_frame: PyBackedStr,
    ) -> PyResult<i64> {
        self.limits
            .query(&self.inner, |b| {
                b.get_latest_common_time(&target_frame, &source_frame)
            })
            .map_err(|e| latest_common_time_error(py, e))
    }

    /// tf2's `allFramesAsString()`.
    fn all_frames_as_string(&self, py: Python<'_>) -> PyResult<String> {
        self.limits
            .query(&self.inner, |b| b.all_frames_as_string())
            .map_err(|e| base_error(py, e.into()))
    }

    /// tf2's `allFramesAsYAML(now)`; `now` in ns (tf2_py passes 0).
    #[pyo3(signature = (now=0))]
    fn all_frames_as_yaml(&self, py: Python<'_>, now: i64) -> PyResult<String> {
        self.limits
            .query(&self.inner, |b| b.all_frames_as_yaml(now))
            .map_err(|e| base_error(py, e.into()))
    }

    /// tf2's `_chainAsVector` (tf2_py's `_chain`): the frame names of the two-time lookup's
    /// walks; raises tf2's lookup exceptions.
    fn chain(
        &self,
        py: Python<'_>,
        target_frame: PyBackedStr,
        target_time: &Bound<'_, PyAny>,
        source_frame: PyBackedStr,
        source_time: &Bound<'_, PyAny>,
        fixed_frame: PyBackedStr,
    ) -> PyResult<Vec<String>> {
        let (tt, st) = (time::ns(target_time)?, time::ns(source_time)?);
        self.limits
            .query(&self.inner, |b| {
                b.chain_as_vector(&target_frame, tt, &source_frame, st, &fixed_frame)
            })
            .map_err(|e| transform_error(py, e))
    }

    /// tf2's `_allFramesAsDot(now)`; `now` in ns (0: without ages and recording time).
    #[pyo3(signature = (now=0))]
    fn all_frames_as_dot(&self, py: Python<'_>, now: i64) -> PyResult<String> {
        self.limits
            .query(&self.inner, |b| b.all_frames_as_dot(now))
            .map_err(|e| base_error(py, e.into()))
    }

    /// tf2's `lookupVelocity` (tf2_py's `lookupVelocityFullCore` argument order):
    /// `((vx, vy, vz), (wx, wy, wz))` in m/s and rad/s; raises tf2's lookup exceptions.
    #[allow(clippy::too_many_arguments)]
    fn lookup_velocity(
        &self,
        py: Python<'_>,
        tracking_frame: PyBackedStr,
        observation_frame: PyBackedStr,
        reference_frame: PyBackedStr,
        reference_point: (f64, f64, f64),
        reference_point_frame: PyBackedStr,
        time: &Bound<'_, PyAny>,
        averaging_interval: &Bound<'_, PyAny>,
    ) -> PyResult<(V3, V3)> {
        let (t, interval) = (time::ns(time)?, time::ns(averaging_interval)?);
        let (px, py_, pz) = reference_point;
        self.limits
            .query(&self.inner, |b| {
                b.lookup_velocity_full(
                    &tracking_frame,
                    &observation_frame,
                    &reference_frame,
                    [px, py_, pz],
                    &reference_point_frame,
                    t,
                    interval,
                )
            })
            .map(|v| (v3(v.linear), v3(v.angular)))
            .map_err(|e| transform_error(py, e))
    }

    /// tf2's `BufferCore::clear()` for this buffer only: from now on its queries hold no
    /// dynamic sample stored before the call (static transforms stay, as tf2's); the shared
    /// arena and every other buffer on it are untouched (`tf_shm::BufferLimits::clear`). Raises
    /// `TransformException` for a damaged arena.
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        self.limits
            .clear(&self.inner)
            .map_err(|e| base_error(py, e.into()))
    }

    /// tf2's `_frameExists(name)`.
    fn frame_exists(&self, py: Python<'_>, name: PyBackedStr) -> PyResult<bool> {
        self.inner
            .frame_exists(&name)
            .map_err(|e| base_error(py, e.into()))
    }

    /// tf2's `_getFrameStrings()`: every known frame, in id order.
    fn frame_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.inner
            .get_all_frame_names()
            .map_err(|e| base_error(py, e.into()))
    }
}
