//! Waits with the GIL released: what ends them besides their own condition.
//!
//! - **Ctrl-C.** tf2_ros's Python waits (`lookup_transform` with a timeout, `can_transform`)
//!   sleep on a `threading` condition, which a signal interrupts: a KeyboardInterrupt ends them
//!   at once. Ours sleep on the arena's futex, which the signal interrupts too (EINTR); on the
//!   main thread, where Python runs its signal handlers, each wake then takes the GIL for
//!   `PyErr_CheckSignals`, and an exception a handler raised ends the wait with it.
//! - **The interpreter's exit.** CPython (3.8–3.12; 3.13 hangs the thread instead) ends a
//!   thread that takes the GIL back once finalization has begun — a daemon thread still
//!   waiting then — with `pthread_exit`, whose forced unwind through Rust frames aborts the
//!   process ("FATAL: exception not rethrown", status -6). A node exits while its listener's
//!   wake thread or a future's wait thread sleeps here, so [`end_waits`], registered with
//!   `atexit` when the module loads (atexit functions run before finalization begins), ends
//!   every wait and lets its thread take the GIL back while that is still safe. From then on
//!   waits answer at once, GIL held.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pyo3::marker::Ungil;
use pyo3::prelude::*;
use tf_shm::Buffer;

static EXITING: AtomicBool = AtomicBool::new(false);
/// The kernel's id of Python's main thread (`threading.main_thread().native_id`), read when the
/// module loads; 0 if unknown.
static MAIN_THREAD: AtomicI64 = AtomicI64::new(0);
static NEXT: AtomicU64 = AtomicU64::new(0);
/// The waits of threads that have released the GIL, each with the buffer it sleeps on (none
/// for a wait for a first bridge, which looks again every [`OPEN_STEP`]).
static WAITING: Mutex<Option<Waits>> = Mutex::new(None);
type Waits = HashMap<u64, Option<Arc<Buffer>>>;

/// How often a wait for a first bridge looks at what should end it.
pub const OPEN_STEP: Duration = Duration::from_millis(100);

/// How long the exit hook waits for the waiting threads to return: waits on a buffer end at
/// its wake, a wait for a first bridge within [`OPEN_STEP`].
const EXIT_GRACE: Duration = Duration::from_secs(1);

fn waiting() -> MutexGuard<'static, Option<Waits>> {
    WAITING.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn exiting() -> bool {
    EXITING.load(Ordering::SeqCst)
}

/// What a wait's steps ask after each wake: whether it must end now.
pub struct Wait {
    main_thread: bool,
    raised: Mutex<Option<PyErr>>,
}

impl Wait {
    /// True once the interpreter exits, or on the main thread when a signal handler raised
    /// (kept for [`detached`] to return).
    pub fn must_end(&self) -> bool {
        if exiting() {
            return true;
        }
        if !self.main_thread {
            return false;
        }
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                *self.raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                true
            }
        })
    }
}

/// Runs `wait` with the GIL released; its steps end it when [`Wait::must_end`] (and its buffer's
/// waiters are woken at exit). Returns what a signal handler raised during it (Ctrl-C's
/// KeyboardInterrupt), else `wait`'s value. Once the interpreter exits, runs it with the GIL
/// held (it answers at once then). Runs no Python code: during finalization, code that can
/// let the GIL go could be where CPython ends this thread.
pub fn detached<T: Ungil>(
    py: Python<'_>,
    buffer: Option<&Arc<Buffer>>,
    wait: impl Send + FnOnce(&Wait) -> T,
) -> PyResult<T> {
    let main = MAIN_THREAD.load(Ordering::Relaxed);
    let w = Wait {
        main_thread: main != 0
            && i64::from(rustix::thread::gettid().as_raw_nonzero().get()) == main,
        raised: Mutex::new(None),
    };
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    waiting()
        .get_or_insert_with(HashMap::new)
        .insert(id, buffer.cloned());
    // Checked after registering: an exit hook that set the flag before this read finds the
    // entry and waits for it; one that sets it after sees the entry too.
    let out = if exiting() {
        wait(&w)
    } else {
        py.detach(|| wait(&w))
    };
    if let Some(all) = waiting().as_mut() {
        all.remove(&id);
    }
    match w.raised.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// At the module's load: notes Python's main thread and registers [`end_waits`] with `atexit`
/// (before finalization: the waits must be over while their threads can take the GIL back).
pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let native_id = py
        .import("threading")?
        .call_method0("main_thread")?
        .getattr("native_id")?;
    if let Ok(id) = native_id.extract::<i64>() {
        MAIN_THREAD.store(id, Ordering::Relaxed);
    }
    m.add_function(wrap_pyfunction!(interpreter_exiting, m)?)?;
    let end_waits = wrap_pyfunction!(end_waits, m)?;
    py.import("atexit")?
        .call_method1("register", (end_waits,))?;
    Ok(())
}

/// Whether the exit hook has run: a Python loop around the waits (a future's wait thread)
/// ends then, as every wait answers at once from that moment.
#[pyfunction]
pub fn interpreter_exiting() -> bool {
    exiting()
}

/// The exit hook: marks the interpreter as exiting, then (GIL released) wakes every buffer a
/// thread waits on until each such thread has returned, or [`EXIT_GRACE`] has passed.
#[pyfunction]
pub fn end_waits(py: Python<'_>) {
    EXITING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let deadline = Instant::now() + EXIT_GRACE;
        loop {
            let buffers: Vec<Arc<Buffer>> = match waiting().as_ref() {
                Some(w) if !w.is_empty() => w.values().flatten().cloned().collect(),
                _ => return,
            };
            if Instant::now() >= deadline {
                return;
            }
            // Repeated: a sleep that began just after a wake is not ended by it.
            for b in &buffers {
                b.wake_waiters();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}
