//! Waits with the GIL released: what ends them besides their own condition.
//!
//! - **Ctrl-C.** tf2_ros's Python waits (`lookup_transform` with a timeout, `can_transform`)
//!   sleep on a `threading` condition, which a signal interrupts: a KeyboardInterrupt ends them
//!   at once. Ours sleep on the arena's futex, which the signal interrupts too (EINTR); on the
//!   main thread, where Python runs its signal handlers, each wake then takes the GIL for
//!   `PyErr_CheckSignals`, and an exception a handler raised ends the wait with it.
//! - **The interpreter's exit.** CPython (3.8–3.12; 3.13 hangs the thread instead) ends a
//!   thread that takes the GIL back once finalization has begun — a daemon thread whose wait
//!   ends then — with `pthread_exit`, whose forced unwind through Rust frames aborts the
//!   process ("FATAL: exception not rethrown", status -6). So a wait goes back to Python only
//!   while that is safe: [`end_waits`], registered with `atexit` when the module loads (atexit
//!   functions run after the non-daemon threads are joined and before finalization begins),
//!   marks the interpreter as exiting and waits only for the threads already on their way
//!   back (they need nothing but the GIL); a wait that ends after that parks its thread for
//!   good, GIL released, as 3.13 does itself, and a daemon thread is never resumed at exit
//!   anyway. From then on waits begun with the GIL held answer at once.
//! - **`fork`.** The child's main thread is the one that forked (noted again in the child), and
//!   the waits of the parent's threads, which the child does not have, are not the child's to
//!   wait for at its exit. The exit protocol holds no lock a fork could copy held.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::marker::Ungil;
use pyo3::prelude::*;

static EXITING: AtomicBool = AtomicBool::new(false);
/// The kernel's id of Python's main thread (`threading.main_thread().native_id`), read when the
/// module loads and in a forked child; 0 if unknown.
static MAIN_THREAD: AtomicI64 = AtomicI64::new(0);
/// How many threads of this process had their wait end before the exit hook ran and are on
/// their way back to Python (the GIL not yet taken). Zero again in a forked child: those
/// threads are its parent's.
static RETURNING: AtomicU64 = AtomicU64::new(0);

/// How often a wait for a first bridge looks at what should end it (Ctrl-C, the exit): each
/// look tries to join once, a connect to a socket that is not there yet.
pub const OPEN_STEP: Duration = Duration::from_millis(10);

/// How long the exit hook waits for the threads on their way back to Python to have the GIL
/// (they need nothing else: a few switch intervals however many threads hold it meanwhile).
const RETURN_GRACE: Duration = Duration::from_secs(10);

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

/// Runs `wait` with the GIL released; its steps end it when [`Wait::must_end`]. Returns what
/// a signal handler raised during it (Ctrl-C's KeyboardInterrupt), else `wait`'s value. Once
/// the interpreter exits, runs it with the GIL held (it answers at once then), and a wait that
/// ends after the exit hook ran parks its thread instead of taking the GIL back (see the
/// module doc). Runs no Python code: during finalization, code that can let the GIL go could
/// be where CPython ends this thread.
pub fn detached<T: Ungil>(py: Python<'_>, wait: impl Send + FnOnce(&Wait) -> T) -> PyResult<T> {
    let main = MAIN_THREAD.load(Ordering::Relaxed);
    let w = Wait {
        main_thread: main != 0
            && i64::from(rustix::thread::gettid().as_raw_nonzero().get()) == main,
        raised: Mutex::new(None),
    };
    let out = if exiting() {
        wait(&w)
    } else {
        let out = py.detach(|| {
            let out = wait(&w);
            if !back_to_python() {
                loop {
                    std::thread::park();
                }
            }
            out
        });
        RETURNING.fetch_sub(1, Ordering::SeqCst);
        out
    };
    match w.raised.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Whether a thread whose wait has ended may take the GIL back: yes unless the exit hook has
/// run. It counts itself in [`RETURNING`] before it looks, and the hook marks the exit before
/// it reads the count (all sequentially consistent): so either the thread sees the mark and
/// parks, or the hook sees it counted and waits until it is back in Python.
fn back_to_python() -> bool {
    RETURNING.fetch_add(1, Ordering::SeqCst);
    if exiting() {
        RETURNING.fetch_sub(1, Ordering::SeqCst);
        return false;
    }
    true
}

/// At the module's load: notes Python's main thread (again in a forked child) and registers
/// [`end_waits`] with `atexit` (it must run while the waits' threads can take the GIL back).
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
    let after_fork = wrap_pyfunction!(after_fork_in_child, m)?;
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("after_in_child", after_fork)?;
    py.import("os")?
        .call_method("register_at_fork", (), Some(&kwargs))?;
    Ok(())
}

/// In a forked child (`os.register_at_fork`): the thread that forked is the child's main
/// thread, and no other thread of the child is on its way back from a wait.
#[pyfunction]
fn after_fork_in_child() {
    RETURNING.store(0, Ordering::SeqCst);
    MAIN_THREAD.store(
        i64::from(rustix::thread::gettid().as_raw_nonzero().get()),
        Ordering::Relaxed,
    );
}

/// Whether the exit hook has run: a Python loop around the waits (a future's wait thread)
/// ends then, as every wait answers at once from that moment.
#[pyfunction]
pub fn interpreter_exiting() -> bool {
    exiting()
}

/// The exit hook: marks the interpreter as exiting, then (GIL released) waits until every
/// thread of this process whose wait had ended is back in Python (or [`RETURN_GRACE`] has
/// passed). Waits still asleep are left to sleep: one that ends later parks its thread.
#[pyfunction]
pub fn end_waits(py: Python<'_>) {
    EXITING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let deadline = Instant::now() + RETURN_GRACE;
        while RETURNING.load(Ordering::SeqCst) != 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}
