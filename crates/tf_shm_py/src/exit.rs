//! Waits with the GIL released, and the interpreter's exit.
//!
//! CPython (3.8–3.12; 3.13 hangs the thread instead) ends a thread that takes the GIL back once
//! finalization has begun — a daemon thread still waiting then — with `pthread_exit`, whose
//! forced unwind through Rust frames aborts the process ("FATAL: exception not rethrown",
//! status -6). A node exits while its listener's wake thread or a future's wait thread sleeps
//! in [`NativeBuffer`](crate::buffer::NativeBuffer)'s waits, so every such wait goes through
//! [`detached`], and [`end_waits`], registered with `atexit` when the module loads (atexit
//! functions run before finalization begins), ends them all and lets their threads take the
//! GIL back while that is still safe. From then on the waits answer at once, GIL held.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pyo3::marker::Ungil;
use pyo3::prelude::*;
use tf_shm::Buffer;

static EXITING: AtomicBool = AtomicBool::new(false);
static NEXT: AtomicU64 = AtomicU64::new(0);
/// The waits of threads that have released the GIL, each with the buffer it sleeps on (none
/// for a wait for a first bridge, which checks [`exiting`] every [`OPEN_STEP`]).
static WAITING: Mutex<Option<Waits>> = Mutex::new(None);
type Waits = HashMap<u64, Option<Arc<Buffer>>>;

/// How often a wait for a first bridge checks [`exiting`].
pub const OPEN_STEP: Duration = Duration::from_millis(100);

/// How long the exit hook waits for the waiting threads to return: waits on a buffer end at
/// its wake, a wait for a first bridge within [`OPEN_STEP`].
const EXIT_GRACE: Duration = Duration::from_secs(1);

fn waiting() -> MutexGuard<'static, Option<Waits>> {
    WAITING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether the interpreter is exiting: a wait's steps end when this is true.
pub fn exiting() -> bool {
    EXITING.load(Ordering::SeqCst)
}

/// Runs `wait` (which must end once [`exiting`] is true and `buffer`'s waiters are woken) with
/// the GIL released; once the interpreter exits, with the GIL held (it answers at once then).
pub fn detached<T: Ungil>(
    py: Python<'_>,
    buffer: Option<&Arc<Buffer>>,
    wait: impl Ungil + FnOnce() -> T,
) -> T {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    waiting()
        .get_or_insert_with(HashMap::new)
        .insert(id, buffer.cloned());
    // Checked after registering: an exit hook that set the flag before this read finds the
    // entry and waits for it; one that sets it after sees the entry too.
    let out = if exiting() { wait() } else { py.detach(wait) };
    if let Some(w) = waiting().as_mut() {
        w.remove(&id);
    }
    out
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
