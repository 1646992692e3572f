//! Status codes, the thread's last error text, and the guard every entry point runs in: errors
//! become a status plus text, panics become [`TF_SHM_INTERNAL_ERROR`], never an unwind into C.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use tf_shm::{ExtrapolationKind, TransformError};

/// What a call returns: [`TF_SHM_OK`] or one of the error codes below. An `int32_t` rather than
/// a C enum so that any value C passes back (e.g. to [`tf_shm_status_name`]) is defined.
#[allow(non_camel_case_types)]
pub type tf_shm_status = i32;

/// Success.
pub const TF_SHM_OK: tf_shm_status = 0;
/// tf2's `LookupException`: unknown frame, or a loop in the tree.
pub const TF_SHM_LOOKUP_EXCEPTION: tf_shm_status = 1;
/// tf2's `ConnectivityException`: the frames are in different trees.
pub const TF_SHM_CONNECTIVITY_EXCEPTION: tf_shm_status = 2;
/// tf2's `ForwardExtrapolationException` (an `ExtrapolationException`): time newer than the data.
pub const TF_SHM_FORWARD_EXTRAPOLATION_EXCEPTION: tf_shm_status = 3;
/// tf2's `BackwardExtrapolationException` (an `ExtrapolationException`): time older than the data.
pub const TF_SHM_BACKWARD_EXTRAPOLATION_EXCEPTION: tf_shm_status = 4;
/// tf2's `NoDataForExtrapolationException` (an `ExtrapolationException`): zero or one sample.
pub const TF_SHM_NO_DATA_FOR_EXTRAPOLATION_EXCEPTION: tf_shm_status = 5;
/// tf2's `InvalidArgumentException`: empty frame id, leading '/', bad time.
pub const TF_SHM_INVALID_ARGUMENT_EXCEPTION: tf_shm_status = 6;
/// tf2's `TimeoutException`: reserved; no call returns it (tf2_ros raises it only from
/// `waitForTransform`'s future; its timed lookups fail with the lookup's own error).
pub const TF_SHM_TIMEOUT_EXCEPTION: tf_shm_status = 7;
/// Not tf2's: the shared arena could not be read (damaged, or a writer stuck mid-update).
pub const TF_SHM_ARENA_ERROR: tf_shm_status = 8;
/// Opening failed: no bridge serves the domain, permissions, another version, ...
pub const TF_SHM_OPEN_ERROR: tf_shm_status = 9;
/// Misuse: a required pointer argument is NULL.
pub const TF_SHM_NULL_ARGUMENT: tf_shm_status = 10;
/// Misuse: the handle is zero, closed, or was never returned by this library.
pub const TF_SHM_INVALID_HANDLE: tf_shm_status = 11;
/// The caller's text buffer is too small; the needed length was written to `*len`.
pub const TF_SHM_BUFFER_TOO_SMALL: tf_shm_status = 12;
/// Too many open handles (65 536 buffers or pairs at once).
pub const TF_SHM_TOO_MANY_HANDLES: tf_shm_status = 13;
/// A bug in tf_shm (a caught panic); the text says where. The handle stays usable.
pub const TF_SHM_INTERNAL_ERROR: tf_shm_status = 14;

/// A failed call: the status and the text [`tf_shm_last_error_message`] returns.
pub(crate) struct Fail {
    pub status: tf_shm_status,
    pub text: String,
}

impl Fail {
    pub fn new(status: tf_shm_status, text: impl Into<String>) -> Fail {
        Fail {
            status,
            text: text.into(),
        }
    }
}

/// The status of a tf2 error class.
pub(crate) fn transform_status(e: &TransformError) -> tf_shm_status {
    match e {
        TransformError::Lookup(_) => TF_SHM_LOOKUP_EXCEPTION,
        TransformError::Connectivity(_) => TF_SHM_CONNECTIVITY_EXCEPTION,
        TransformError::Extrapolation { kind, .. } => match kind {
            ExtrapolationKind::Forward => TF_SHM_FORWARD_EXTRAPOLATION_EXCEPTION,
            ExtrapolationKind::Backward => TF_SHM_BACKWARD_EXTRAPOLATION_EXCEPTION,
            ExtrapolationKind::NoData => TF_SHM_NO_DATA_FOR_EXTRAPOLATION_EXCEPTION,
        },
        TransformError::InvalidArgument(_) => TF_SHM_INVALID_ARGUMENT_EXCEPTION,
        TransformError::Arena(_) => TF_SHM_ARENA_ERROR,
    }
}

impl From<TransformError> for Fail {
    fn from(e: TransformError) -> Fail {
        Fail::new(transform_status(&e), e.to_string())
    }
}

impl From<tf_shm::ArenaError> for Fail {
    fn from(e: tf_shm::ArenaError) -> Fail {
        Fail::new(TF_SHM_ARENA_ERROR, e.to_string())
    }
}

impl From<tf_shm::JoinError> for Fail {
    fn from(e: tf_shm::JoinError) -> Fail {
        Fail::new(TF_SHM_OPEN_ERROR, e.to_string())
    }
}

const EMPTY: &[u8] = b"\0";

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(text: String) {
    // Texts come from frame names, which cannot hold NUL; a NUL would end the C string early.
    let c = CString::new(text).unwrap_or_else(|e| {
        CString::new(e.into_vec().split(|&b| b == 0).next().unwrap_or(&[])).unwrap_or_default()
    });
    let _ = LAST_ERROR.try_with(|l| *l.borrow_mut() = c);
}

/// Runs one entry point: `Ok` is [`TF_SHM_OK`]; an error sets this thread's last error text and
/// returns its status; a panic is caught and reported as [`TF_SHM_INTERNAL_ERROR`].
#[inline(always)]
pub(crate) fn guard(function: &str, f: impl FnOnce() -> Result<(), Fail>) -> tf_shm_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => TF_SHM_OK,
        Ok(Err(fail)) => failed(fail),
        Err(payload) => panicked(function, payload),
    }
}

/// The error path of [`guard`], out of line.
#[cold]
#[inline(never)]
fn failed(fail: Fail) -> tf_shm_status {
    set_last_error(fail.text);
    fail.status
}

/// The panic path of [`guard`], out of line.
#[cold]
#[inline(never)]
fn panicked(function: &str, payload: Box<dyn std::any::Any + Send>) -> tf_shm_status {
    let why = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    set_last_error(format!(
        "{function}: internal error in tf_shm (panic: {why}); please report it"
    ));
    TF_SHM_INTERNAL_ERROR
}

/// The text of the last failed call on this thread: for tf2's classes, exactly tf2's `what()`
/// (for `can_transform`, tf2's `canTransform` error string). Empty if no call failed yet.
///
/// Lifetime: owned by the library, valid until the next failing tf_shm call on the same thread
/// (successful calls leave it unchanged). Copy it to keep it. Never NULL.
#[no_mangle]
pub extern "C" fn tf_shm_last_error_message() -> *const c_char {
    catch_unwind(|| {
        LAST_ERROR
            .try_with(|l| l.borrow().as_ptr())
            .unwrap_or(EMPTY.as_ptr().cast())
    })
    .unwrap_or(EMPTY.as_ptr().cast())
}

/// tf2's class name of a status (`"LookupException"`, `"ForwardExtrapolationException"`, ...),
/// or the code's name for the others (`"TF_SHM_NULL_ARGUMENT"`, ...); `"TF_SHM_UNKNOWN_STATUS"`
/// for a value that is no status. A static string: never freed, never NULL.
#[no_mangle]
pub extern "C" fn tf_shm_status_name(status: tf_shm_status) -> *const c_char {
    let s: &'static [u8] = match status {
        TF_SHM_OK => b"TF_SHM_OK\0",
        TF_SHM_LOOKUP_EXCEPTION => b"LookupException\0",
        TF_SHM_CONNECTIVITY_EXCEPTION => b"ConnectivityException\0",
        TF_SHM_FORWARD_EXTRAPOLATION_EXCEPTION => b"ForwardExtrapolationException\0",
        TF_SHM_BACKWARD_EXTRAPOLATION_EXCEPTION => b"BackwardExtrapolationException\0",
        TF_SHM_NO_DATA_FOR_EXTRAPOLATION_EXCEPTION => b"NoDataForExtrapolationException\0",
        TF_SHM_INVALID_ARGUMENT_EXCEPTION => b"InvalidArgumentException\0",
        TF_SHM_TIMEOUT_EXCEPTION => b"TimeoutException\0",
        TF_SHM_ARENA_ERROR => b"ArenaError\0",
        TF_SHM_OPEN_ERROR => b"TF_SHM_OPEN_ERROR\0",
        TF_SHM_NULL_ARGUMENT => b"TF_SHM_NULL_ARGUMENT\0",
        TF_SHM_INVALID_HANDLE => b"TF_SHM_INVALID_HANDLE\0",
        TF_SHM_BUFFER_TOO_SMALL => b"TF_SHM_BUFFER_TOO_SMALL\0",
        TF_SHM_TOO_MANY_HANDLES => b"TF_SHM_TOO_MANY_HANDLES\0",
        TF_SHM_INTERNAL_ERROR => b"TF_SHM_INTERNAL_ERROR\0",
        _ => b"TF_SHM_UNKNOWN_STATUS\0",
    };
    s.as_ptr().cast()
}
