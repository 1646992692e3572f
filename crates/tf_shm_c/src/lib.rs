//! The C ABI of tf_shm: `libtf_shm_c.so` / `libtf_shm_c.a` with the header `include/tf_shm.h`
//! (generated from this crate by cbindgen), and the C++17 wrapper `include/tf_shm.hpp` on top.
//!
//! Conventions of every function:
//! - returns a [`tf_shm_status`]: [`TF_SHM_OK`] or an error code; on error, the thread's
//!   [`tf_shm_last_error_message`] holds the text (tf2's exact `what()` for tf2's classes) and
//!   out-parameters are unchanged;
//! - frame names are NUL-terminated UTF-8 (invalid bytes are replaced, so such a name is an
//!   unknown frame); NULL where a pointer is required is [`TF_SHM_NULL_ARGUMENT`];
//! - times are ns since the epoch of the data's clock (`int64_t`, as `tf2::TimePoint`), 0 means
//!   "latest" as in tf2; durations are ns (negative counts as 0, but a cache time, which is
//!   kept as tf2 keeps it: [`tf_shm_buffer_set_cache_time`]);
//! - handles are 64-bit ids, safe to share between threads and to use concurrently; a closed
//!   or unknown handle is [`TF_SHM_INVALID_HANDLE`], never undefined behaviour;
//! - the hot calls take what is checked once instead: a [`tf_shm_buffer_ref`] (a pointer that
//!   keeps the buffer alive; a closed buffer still answers [`TF_SHM_INVALID_HANDLE`] through
//!   it) and a caller's [`tf_shm_frame_pair`] (one thread at a time), names as (pointer,
//!   length): no handle table, no lock, no `strlen` on the lookup;
//! - no panic crosses the boundary ([`TF_SHM_INTERNAL_ERROR`] instead).

#![allow(non_camel_case_types)]

mod handles;
mod status;
mod tail;

use std::borrow::Cow;
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Duration;

use tf_shm::{
    Answering, Buffer, BufferCore, BufferLimits, FramePair, Join, Transform, TransformError,
};

use crate::handles::{Entry, Table};
pub use crate::status::*;
pub use crate::tail::*;

/// The ABI this header describes. Bumped on any incompatible change of a signature, struct or
/// status value; compare with [`tf_shm_abi_version`] at run time (`tf_shm_abi_ok()` does).
pub const TF_SHM_ABI_VERSION: u32 = 1;

/// An open buffer: a consumer's read-only view of one arena, following bridge restarts by
/// itself. `id` 0 is never a valid handle.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct tf_shm_buffer {
    pub id: u64,
}

/// A resolved (target, source) pair of a buffer for hot loops (see [`tf_shm_pair_new`]).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct tf_shm_pair {
    pub id: u64,
}

/// A lookup's answer: `T_target_source` at `stamp_ns`, i.e. the transform that maps points in
/// the source frame into the target frame (geometry_msgs `TransformStamped` with
/// `header.frame_id` = target, `child_frame_id` = source).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct tf_shm_transform_stamped {
    /// As tf2 returns it: the requested time, or the latest common time for time 0; ns.
    pub stamp_ns: i64,
    /// x, y, z in metres.
    pub translation: [f64; 3],
    /// Quaternion x, y, z, w (normalised, sign as ROS 2's tf2 returns it).
    pub rotation: [f64; 4],
}

struct BufferEntry {
    buffer: Buffer,
    closed: AtomicBool,
    /// This buffer's cache time ([`tf_shm_buffer_set_cache_time`]) and clear
    /// ([`tf_shm_buffer_clear`]). The queries of a buffer given neither pay one plain load.
    limits: BufferLimits,
}

/// Once per process: a buffer was given a cache time longer than its arena's history (the
/// text of Python's `tf_shm.Buffer` warning).
#[cold]
fn warn_longer_cache_time(requested_ns: i64, have_ns: i64) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "tf_shm: cache time of {:.3} s asked for, but the bridge keeps {:.3} s of history; \
             lookups older than that raise tf2's ExtrapolationException. Start tf_shm_bridge \
             with the parameter cache_time (seconds) set to at least that.",
            requested_ns as f64 / 1e9,
            have_ns as f64 / 1e9
        );
    }
}

/// `f` on what answers for the entry `e`: its buffer, or, when it was given a cache time
/// shorter than the arena's ([`tf_shm_buffer_set_cache_time`]) or cleared
/// ([`tf_shm_buffer_clear`]), the buffer's store as a tf2 buffer of that cache time after that
/// clear (`tf_shm::BufferLimits::query`). A cache time longer than the arena's is reported
/// here, at the first query that meets it.
#[inline]
fn answer<R>(e: &BufferEntry, f: impl FnOnce(&Answering<'_>) -> R) -> R {
    if e.limits.is_set() {
        if let Some(ns) = e.limits.cache_time() {
            let arena = e.buffer.get_cache_length();
            if ns > arena && e.buffer.joined() {
                warn_longer_cache_time(ns, arena);
            }
        }
    }
    e.limits.query(&e.buffer, f)
}

struct PairEntry {
    buffer: Arc<Entry<BufferEntry>>,
    target: Box<str>,
    source: Box<str>,
    pair: Mutex<FramePair>,
}

static BUFFERS: Table<BufferEntry> = Table::new();
static PAIRS: Table<PairEntry> = Table::new();

/// Reads a frame-name argument.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that outlives the call.
unsafe fn name<'a>(function: &str, arg: &str, p: *const c_char) -> Result<Cow<'a, str>, Fail> {
    if p.is_null() {
        return Err(null_argument(function, arg));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    // Frame names are ASCII in practice: checking that is a few instructions, where the UTF-8
    // validator costs ~50 and the lossy decoder ~120 per short name.
    if bytes.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        return Ok(Cow::Borrowed(unsafe {
            std::str::from_utf8_unchecked(bytes)
        }));
    }
    Ok(String::from_utf8_lossy(bytes))
}

/// Checks an out-parameter.
fn out<'a, T>(function: &str, arg: &str, p: *mut T) -> Result<&'a mut T, Fail> {
    // SAFETY: the caller passes NULL or a valid, writable, aligned `T` for the call's duration.
    unsafe { p.as_mut() }.ok_or_else(|| null_argument(function, arg))
}

fn buffer_entry(
    function: &str,
    h: tf_shm_buffer,
) -> Result<arc_swap::Guard<Option<Arc<Entry<BufferEntry>>>>, Fail> {
    BUFFERS.get(h.id).ok_or_else(|| invalid(function, "buffer"))
}

/// A NULL argument's error, out of line: the hot calls only test their pointers.
#[cold]
#[inline(never)]
pub(crate) fn null_argument(function: &str, arg: &str) -> Fail {
    Fail::new(
        TF_SHM_NULL_ARGUMENT,
        format!("{function}: argument {arg} is NULL"),
    )
}

#[cold]
#[inline(never)]
fn invalid(function: &str, what: &str) -> Fail {
    Fail::new(
        TF_SHM_INVALID_HANDLE,
        format!("{function}: the {what} handle is not open (zero, closed, or not from tf_shm)"),
    )
}

/// Runs `f` on the open buffer entry of `h` (queries answer through [`answer`]).
fn with_entry(
    function: &str,
    h: tf_shm_buffer,
    f: impl FnOnce(&BufferEntry) -> Result<(), Fail>,
) -> tf_shm_status {
    guard(function, || {
        let g = buffer_entry(function, h)?;
        let e = g.as_ref().ok_or_else(|| invalid(function, "buffer"))?;
        f(&e.value)
    })
}

/// tf2_ros's wait for a check, `Buffer::wait_until` (sleeps on the arena's futex); this
/// buffer's clear and cache time, if any, are in `ready` (through [`answer`]).
fn wait_until(
    e: &BufferEntry,
    timeout: Duration,
    mut ready: impl FnMut(&BufferEntry) -> Result<(), TransformError>,
) -> Result<(), TransformError> {
    e.buffer.wait_until(timeout, |_| ready(e))
}

/// Runs `f` on the open buffer of `h`.
fn with_buffer(
    function: &str,
    h: tf_shm_buffer,
    f: impl FnOnce(&Buffer) -> Result<(), Fail>,
) -> tf_shm_status {
    guard(function, || {
        let g = buffer_entry(function, h)?;
        let e = g.as_ref().ok_or_else(|| invalid(function, "buffer"))?;
        f(&e.value.buffer)
    })
}

fn duration(ns: i64) -> Duration {
    Duration::from_nanos(ns.max(0) as u64)
}

fn write_transform(out: &mut tf_shm_transform_stamped, stamp: i64, t: &Transform) {
    *out = tf_shm_transform_stamped {
        stamp_ns: stamp,
        translation: t.translation,
        rotation: t.rotation,
    };
}

/// Copies `text` and a NUL into the caller's `buf` of `cap` bytes; `*len` gets `text`'s length
/// (without the NUL) either way, so a call with `cap` 0 asks for the size.
fn copy_text(
    function: &str,
    text: &[u8],
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> Result<(), Fail> {
    *out(function, "len", len)? = text.len();
    if cap <= text.len() {
        return Err(Fail::new(
            TF_SHM_BUFFER_TOO_SMALL,
            format!(
                "{function}: the text needs {} bytes with its NUL, the buffer has {cap}",
                text.len() + 1
            ),
        ));
    }
    if buf.is_null() {
        return Err(null_argument(function, "buf"));
    }
    // SAFETY: `buf` is non-NULL and the caller guarantees `cap` writable bytes; we write
    // `text.len() + 1 <= cap` of them.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
        *buf.add(text.len()) = 0;
    }
    Ok(())
}

/// The ABI of the loaded library: compare with [`TF_SHM_ABI_VERSION`] of the header compiled in.
#[no_mangle]
pub extern "C" fn tf_shm_abi_version() -> u32 {
    TF_SHM_ABI_VERSION
}

/// Opens the arena served for a ROS domain, read-only (`tf_shm::Join`).
///
/// - `name`: arena name, or NULL for `$TF_SHM_NAME` / `"default"`;
/// - `domain`: ROS domain id, or a negative value for `$TF_SHM_DOMAIN` / `$ROS_DOMAIN_ID` / 0;
/// - `timeout_ns`: 0 fails at once when no bridge serves the arena; more waits up to that long
///   for one (retrying the rendezvous every 20 ms: before a bridge serves there is no arena
///   whose futex could be slept on; the waits on data below sleep on it);
/// - `out`: receives the handle; close it with [`tf_shm_buffer_close`].
///
/// Errors: [`TF_SHM_OPEN_ERROR`] (no bridge serving, permissions, another tf_shm version),
/// [`TF_SHM_NULL_ARGUMENT`], [`TF_SHM_TOO_MANY_HANDLES`].
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_open(
    name: *const c_char,
    domain: i32,
    timeout_ns: i64,
    out: *mut tf_shm_buffer,
) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_open";
    guard(F, || {
        let out = crate::out(F, "out", out)?;
        // SAFETY: by the caller's contract.
        let open = unsafe { join(F, name, domain) }?;
        let buffer = if timeout_ns > 0 {
            open.await_open(duration(timeout_ns))?
        } else {
            open.open()?
        };
        *out = insert_buffer(F, buffer)?;
        Ok(())
    })
}

/// The `Join` of an open call's `name` and `domain` arguments.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn join(function: &str, name: *const c_char, domain: i32) -> Result<Join, Fail> {
    let mut open = Join::new();
    if !name.is_null() {
        // SAFETY: non-NULL, NUL-terminated by contract.
        open = open.name(&unsafe { self::name(function, "name", name) }?);
    }
    if let Ok(d) = u32::try_from(domain) {
        open = open.domain(d);
    }
    Ok(open)
}

fn insert_buffer(function: &str, buffer: Buffer) -> Result<tf_shm_buffer, Fail> {
    let id = BUFFERS
        .insert(BufferEntry {
            buffer,
            closed: AtomicBool::new(false),
            limits: BufferLimits::default(),
        })
        .ok_or_else(|| {
            Fail::new(
                TF_SHM_TOO_MANY_HANDLES,
                format!("{function}: too many handles"),
            )
        })?;
    Ok(tf_shm_buffer { id })
}

/// Opens a buffer whether or not a bridge serves yet, as a tf2_ros `Buffer` is made
/// (`tf_shm::Join::open_or_empty`): joined at once when a bridge serves the arena; otherwise an
/// empty buffer (lookups fail with `TF_SHM_LOOKUP_EXCEPTION` and tf2's text, `can_transform`
/// is false, waits wait) that joins the arena within ~20 ms of a bridge serving it, waking
/// the waits that began before. [`tf_shm_buffer_joined`] tells which. For nodes; tools that
/// need a bridge now use [`tf_shm_buffer_open`].
///
/// `name`, `domain` and `out` as for [`tf_shm_buffer_open`].
///
/// Errors: [`TF_SHM_OPEN_ERROR`] only for what waiting cannot fix (a bad name, a bridge that
/// refuses us, e.g. another tf_shm version), [`TF_SHM_NULL_ARGUMENT`],
/// [`TF_SHM_TOO_MANY_HANDLES`].
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_open_or_empty(
    name: *const c_char,
    domain: i32,
    out: *mut tf_shm_buffer,
) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_open_or_empty";
    guard(F, || {
        let out = crate::out(F, "out", out)?;
        // SAFETY: by the caller's contract.
        let open = unsafe { join(F, name, domain) }?;
        *out = insert_buffer(F, open.open_or_empty()?)?;
        Ok(())
    })
}

/// Whether the buffer has joined a bridge's arena: always for [`tf_shm_buffer_open`]; for
/// [`tf_shm_buffer_open_or_empty`], false until a bridge served (stays true once joined, also
/// while a restarted bridge is awaited).
///
/// Errors: [`TF_SHM_INVALID_HANDLE`], [`TF_SHM_NULL_ARGUMENT`].
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_joined(
    buffer: tf_shm_buffer,
    out: *mut bool,
) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_joined";
    with_buffer(F, buffer, |b| {
        *crate::out(F, "out", out)? = b.joined();
        Ok(())
    })
}

/// Closes a buffer. Calls in flight on other threads finish first; the mapping is released
/// when the last call and the last [`tf_shm_pair`] of this buffer are gone. Pairs of a closed
/// buffer answer [`TF_SHM_INVALID_HANDLE`].
///
/// Errors: [`TF_SHM_INVALID_HANDLE`] (e.g. closed twice).
#[no_mangle]
pub extern "C" fn tf_shm_buffer_close(buffer: tf_shm_buffer) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_close";
    guard(F, || {
        let e = BUFFERS
            .remove(buffer.id)
            .ok_or_else(|| invalid(F, "buffer"))?;
        e.value.closed.store(true, Ordering::Release);
        Ok(())
    })
}

/// tf2's `BufferCore::clear()` for this buffer alone: from now on its queries (lookups,
/// `can_transform`, waits, pairs, latest common time, the frame texts) answer from no dynamic
/// sample stored before the call, as a cleared tf2 buffer answers until new data comes
/// (static transforms stay, as tf2's `StaticCache` does; frames stay known, as in tf2); the
/// shared arena and every other buffer on it are untouched. Precisely (`tf_shm::ClearMark`):
/// per dynamic frame, samples stamped at or before its newest stamp at the clear are hidden,
/// so a sample that arrives later with an older stamp stays hidden too (tf2 would hold it).
/// A clear of the arena itself (the bridge's, when the data's clock jumps back) supersedes
/// it. Calls in flight on other threads answer from before or after it.
///
/// Errors: [`TF_SHM_INVALID_HANDLE`], [`TF_SHM_ARENA_ERROR`] (damaged arena; nothing changed).
#[no_mangle]
pub extern "C" fn tf_shm_buffer_clear(buffer: tf_shm_buffer) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_clear";
    with_entry(F, buffer, |e| {
        e.limits.clear(&e.buffer)?;
        Ok(())
    })
}

/// How many times the buffer attached a new arena instance (a restarted bridge) since it was
/// opened: 0 until the first restart.
///
/// Errors: [`TF_SHM_INVALID_HANDLE`], [`TF_SHM_NULL_ARGUMENT`].
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_arena_swaps(
    buffer: tf_shm_buffer,
    out: *mut u64,
) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_arena_swaps";
    with_buffer(F, buffer, |b| {
        *crate::out(F, "out", out)? = b.arena_swaps();
        Ok(())
    })
}

/// DEPRECATED: use [`tf_shm_buffer_arena_swaps`], which this calls. The old name counts arena
/// swaps, not a generation (in tf_shm a generation is the clear generation, bumped by every
/// clear, as when the data's clock jumps back); it stays so code built against it keeps
/// working.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_generation(
    buffer: tf_shm_buffer,
    out: *mut u64,
) -> tf_shm_status {
    // SAFETY: the same contract as ours.
    unsafe { tf_shm_buffer_arena_swaps(buffer, out) }
}

/// tf2's `BufferCore(cache_time)` (tf2_ros's `Buffer(clock, cache_time)`) for this buffer
/// alone: from now on its queries (lookups by name and by pair, `can_transform`, the waits,
/// latest common time, the frame texts) answer as a tf2 buffer of that cache time holding the
/// arena's samples: per dynamic frame, the newest sample and every older one stamped no more
/// than `cache_time_ns` before the second newest (tf2's `TimeCache` prunes against the newest
/// stamp it held before each insert), so a lookup before those fails with tf2's extrapolation
/// error and text (`tf_shm::BufferLimits`, as Python's `Buffer(cache_time=...)`). With
/// [`tf_shm_buffer_clear`] both apply, as in tf2. Zero and negative are kept as tf2 keeps them
/// (`BufferCore` stores the cache time unchecked, [`tf_shm_buffer_cache_time`] returns it): with
/// 0 a frame holds its newest sample and those at its second newest stamp, with a negative one
/// only its newest, as tf2's `TimeCache` prunes. A cache time longer than the arena's (the
/// bridge's `cache_time` parameter, [`tf_shm_buffer_arena_cache_time`]) is accepted and changes
/// no answer: the arena has pruned what it has pruned, so lookups older than its history fail
/// with tf2's extrapolation error, as a tf2 buffer whose data was pruned; the first query that
/// meets this writes one warning per process to stderr naming the bridge's parameter, as
/// Python's `Buffer` warns. Set it before sharing the buffer: calls in flight on other threads
/// answer with the old cache time or the new one.
///
/// Errors: [`TF_SHM_INVALID_HANDLE`].
#[no_mangle]
pub extern "C" fn tf_shm_buffer_set_cache_time(
    buffer: tf_shm_buffer,
    cache_time_ns: i64,
) -> tf_shm_status {
    with_entry("tf_shm_buffer_set_cache_time", buffer, |e| {
        e.limits.set_cache_time(Some(cache_time_ns));
        Ok(())
    })
}

/// tf2's `getCacheLength()`: the buffer's cache time, ns: the one given to
/// [`tf_shm_buffer_set_cache_time`], else the arena's ([`tf_shm_buffer_arena_cache_time`]).
///
/// Errors: [`TF_SHM_INVALID_HANDLE`], [`TF_SHM_NULL_ARGUMENT`].
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_cache_time(
    buffer: tf_shm_buffer,
    out: *mut i64,
) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_cache_time";
    with_entry(F, buffer, |e| {
        let out = crate::out(F, "out", out)?;
        *out = e.limits.get_cache_length(&e.buffer);
        Ok(())
    })
}

/// How long the arena keeps each frame's history, ns (the bridge's `cache_time`; tf2's default
/// is 10 s): the longest cache time a buffer on it can answer for. Read at each call: an empty
/// buffer takes the bridge's when it joins.
///
/// Errors: [`TF_SHM_INVALID_HANDLE`], [`TF_SHM_NULL_ARGUMENT`].
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_arena_cache_time(
    buffer: tf_shm_buffer,
    out: *mut i64,
) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_arena_cache_time";
    with_buffer(F, buffer, |b| {
        *crate::out(F, "out", out)? = b.get_cache_length();
        Ok(())
    })
}

/// One step of [`tf_shm_buffer_wait`]: returns a negative value to end the wait, else the
/// longest time in ns to sleep before the next call (`INT64_MAX`: until the arena changes).
/// Must not unwind (no C++ exception may leave it).
pub type tf_shm_wait_step = Option<unsafe extern "C" fn(ctx: *mut c_void) -> i64>;

/// Calls `step(ctx)` until it returns a negative value, sleeping in between on the arena's
/// futex (no polling): `step` runs at once, then after every wake — the bridge wrote a
/// transform or cleared the buffer, a restarted bridge's arena was joined,
/// [`tf_shm_buffer_wake`] — or once the time it returned has passed. Wakes can be spurious;
/// `step` decides. One thread can serve many requests this way (`tf_shm::Tf2Buffer`'s
/// `waitForTransform` does). While it runs, closing the buffer waits for it to return.
///
/// Errors: [`TF_SHM_INVALID_HANDLE`], [`TF_SHM_NULL_ARGUMENT`] (`step` NULL).
///
/// # Safety
/// `step` is NULL or a function that may be called with `ctx` on this thread until the call
/// returns, and does not unwind.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_wait(
    buffer: tf_shm_buffer,
    step: tf_shm_wait_step,
    ctx: *mut c_void,
) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_wait";
    with_buffer(F, buffer, |b| {
        let step = step.ok_or_else(|| null_argument(F, "step"))?;
        b.wait_while(|| {
            // SAFETY: by the caller's contract.
            let ns = unsafe { step(ctx) };
            u64::try_from(ns).ok().map(Duration::from_nanos)
        });
        Ok(())
    })
}

/// Ends the current sleep of every [`tf_shm_buffer_wait`] and timed call on this buffer's
/// arena, so that their steps run again (FUTEX_WAKE on the arena's word: other processes'
/// waiters on the same arena wake spuriously and sleep again). A sleep that begins just after
/// this call is not ended: repeat it until the waiter has answered.
///
/// Errors: [`TF_SHM_INVALID_HANDLE`].
#[no_mangle]
pub extern "C" fn tf_shm_buffer_wake(buffer: tf_shm_buffer) -> tf_shm_status {
    with_buffer("tf_shm_buffer_wake", buffer, |b| {
        b.wake_waiters();
        Ok(())
    })
}

/// tf2's `lookupTransform(target_frame, source_frame, time)`: `T_target_source` at `time_ns`
/// (0 = latest common time).
///
/// Errors: tf2's classes with tf2's texts (`TF_SHM_LOOKUP_EXCEPTION`,
/// `TF_SHM_CONNECTIVITY_EXCEPTION`, the three extrapolation codes,
/// `TF_SHM_INVALID_ARGUMENT_EXCEPTION`), `TF_SHM_ARENA_ERROR`, and the misuse codes.
///
/// # Safety
/// Names are NULL or NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_lookup_transform(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    source_frame: *const c_char,
    time_ns: i64,
    out: *mut tf_shm_transform_stamped,
) -> tf_shm_status {
    const F: &str = "tf_shm_lookup_transform";
    with_entry(F, buffer, |b| {
        // SAFETY: by the caller's contract.
        let (t, s) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
            )
        };
        lookup_into(b, &t, &s, time_ns, crate::out(F, "out", out)?)
    })
}

/// The one body of the single-time lookups by name (`out` checked by the caller).
#[inline]
fn lookup_into(
    e: &BufferEntry,
    target: &str,
    source: &str,
    time_ns: i64,
    out: &mut tf_shm_transform_stamped,
) -> Result<(), Fail> {
    if e.limits.is_set() {
        return lookup_limited(e, target, source, time_ns, out);
    }
    let r = e.buffer.lookup_transform(target, source, time_ns)?;
    write_transform(out, r.stamp, &r.transform);
    Ok(())
}

/// [`lookup_into`] of a buffer that was cleared or given a cache time, kept out of the hot
/// calls.
#[cold]
#[inline(never)]
fn lookup_limited(
    e: &BufferEntry,
    target: &str,
    source: &str,
    time_ns: i64,
    out: &mut tf_shm_transform_stamped,
) -> Result<(), Fail> {
    let r = answer(e, |b| b.lookup_transform(target, source, time_ns))?;
    write_transform(out, r.stamp, &r.transform);
    Ok(())
}

/// tf2_ros's `Buffer::lookupTransform(target, source, time, timeout)`: waits up to
/// `timeout_ns` for `canTransform`, sleeping on the arena's futex (woken by the bridge's
/// writes, no polling), then answers as [`tf_shm_lookup_transform`] (so a failure
/// is the plain lookup's error, as tf2_ros throws it).
///
/// # Safety
/// As [`tf_shm_lookup_transform`].
#[no_mangle]
pub unsafe extern "C" fn tf_shm_lookup_transform_timeout(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    source_frame: *const c_char,
    time_ns: i64,
    timeout_ns: i64,
    out: *mut tf_shm_transform_stamped,
) -> tf_shm_status {
    const F: &str = "tf_shm_lookup_transform_timeout";
    with_entry(F, buffer, |e| {
        // SAFETY: by the caller's contract.
        let (t, s) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
            )
        };
        let out = crate::out(F, "out", out)?;
        let _ = wait_until(e, duration(timeout_ns), |e| {
            answer(e, |b| b.can_transform(&t, &s, time_ns))
        });
        lookup_into(e, &t, &s, time_ns, out)
    })
}

/// tf2's two-time `lookupTransform(target_frame, target_time, source_frame, source_time,
/// fixed_frame)`: the source at `source_time_ns` through `fixed_frame` into the target at
/// `target_time_ns`. The answer's stamp is `target_time_ns` (or the resolved latest time).
///
/// Errors: as [`tf_shm_lookup_transform`].
///
/// # Safety
/// As [`tf_shm_lookup_transform`].
#[no_mangle]
pub unsafe extern "C" fn tf_shm_lookup_transform_full(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    target_time_ns: i64,
    source_frame: *const c_char,
    source_time_ns: i64,
    fixed_frame: *const c_char,
    out: *mut tf_shm_transform_stamped,
) -> tf_shm_status {
    const F: &str = "tf_shm_lookup_transform_full";
    with_entry(F, buffer, |e| {
        // SAFETY: by the caller's contract.
        let (t, s, x) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
                name(F, "fixed_frame", fixed_frame)?,
            )
        };
        let out = crate::out(F, "out", out)?;
        let r = answer(e, |b| {
            b.lookup_transform_full(&t, target_time_ns, &s, source_time_ns, &x)
        })?;
        write_transform(out, r.stamp, &r.transform);
        Ok(())
    })
}

/// [`tf_shm_lookup_transform_full`] after waiting up to `timeout_ns` for the two-time
/// `canTransform` (tf2_ros's waiting form), sleeping on the arena's futex (no polling).
///
/// # Safety
/// As [`tf_shm_lookup_transform`].
#[no_mangle]
pub unsafe extern "C" fn tf_shm_lookup_transform_full_timeout(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    target_time_ns: i64,
    source_frame: *const c_char,
    source_time_ns: i64,
    fixed_frame: *const c_char,
    timeout_ns: i64,
    out: *mut tf_shm_transform_stamped,
) -> tf_shm_status {
    const F: &str = "tf_shm_lookup_transform_full_timeout";
    with_entry(F, buffer, |e| {
        // SAFETY: by the caller's contract.
        let (t, s, x) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
                name(F, "fixed_frame", fixed_frame)?,
            )
        };
        let out = crate::out(F, "out", out)?;
        let _ = wait_until(e, duration(timeout_ns), |e| {
            answer(e, |b| {
                b.can_transform_full(&t, target_time_ns, &s, source_time_ns, &x)
            })
        });
        let r = answer(e, |b| {
            b.lookup_transform_full(&t, target_time_ns, &s, source_time_ns, &x)
        })?;
        write_transform(out, r.stamp, &r.transform);
        Ok(())
    })
}

/// tf2's `canTransform(target, source, time, &error_msg)`: [`TF_SHM_OK`], or the class of the
/// failure with tf2's canTransform error string as the last error message.
///
/// # Safety
/// Names are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_can_transform(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    source_frame: *const c_char,
    time_ns: i64,
) -> tf_shm_status {
    const F: &str = "tf_shm_can_transform";
    with_entry(F, buffer, |e| {
        // SAFETY: by the caller's contract.
        let (t, s) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
            )
        };
        Ok(answer(e, |b| b.can_transform(&t, &s, time_ns))?)
    })
}

/// tf2_ros's `canTransform(target, source, time, timeout, &errstr)`: waits until it can or
/// `timeout_ns` passed, sleeping on the arena's futex (woken by the bridge's writes, no
/// polling); the failure is the last check's.
///
/// # Safety
/// Names are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_can_transform_timeout(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    source_frame: *const c_char,
    time_ns: i64,
    timeout_ns: i64,
) -> tf_shm_status {
    const F: &str = "tf_shm_can_transform_timeout";
    with_entry(F, buffer, |e| {
        // SAFETY: by the caller's contract.
        let (t, s) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
            )
        };
        Ok(wait_until(e, duration(timeout_ns), |e| {
            answer(e, |b| b.can_transform(&t, &s, time_ns))
        })?)
    })
}

/// tf2's two-time `canTransform`.
///
/// # Safety
/// Names are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_can_transform_full(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    target_time_ns: i64,
    source_frame: *const c_char,
    source_time_ns: i64,
    fixed_frame: *const c_char,
) -> tf_shm_status {
    const F: &str = "tf_shm_can_transform_full";
    with_entry(F, buffer, |e| {
        // SAFETY: by the caller's contract.
        let (t, s, x) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
                name(F, "fixed_frame", fixed_frame)?,
            )
        };
        Ok(answer(e, |b| {
            b.can_transform_full(&t, target_time_ns, &s, source_time_ns, &x)
        })?)
    })
}

/// tf2_ros's waiting two-time `canTransform`: as [`tf_shm_can_transform_timeout`], sleeping
/// on the arena's futex (no polling).
///
/// # Safety
/// Names are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_can_transform_full_timeout(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    target_time_ns: i64,
    source_frame: *const c_char,
    source_time_ns: i64,
    fixed_frame: *const c_char,
    timeout_ns: i64,
) -> tf_shm_status {
    const F: &str = "tf_shm_can_transform_full_timeout";
    with_entry(F, buffer, |e| {
        // SAFETY: by the caller's contract.
        let (t, s, x) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
                name(F, "fixed_frame", fixed_frame)?,
            )
        };
        Ok(wait_until(e, duration(timeout_ns), |e| {
            answer(e, |b| {
                b.can_transform_full(&t, target_time_ns, &s, source_time_ns, &x)
            })
        })?)
    })
}

/// tf2's `getLatestCommonTime(target, source)`: ns, into `*out`.
///
/// # Safety
/// Names are NULL or NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_get_latest_common_time(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    source_frame: *const c_char,
    out: *mut i64,
) -> tf_shm_status {
    const F: &str = "tf_shm_get_latest_common_time";
    with_entry(F, buffer, |e| {
        // SAFETY: by the caller's contract.
        let (t, s) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
            )
        };
        let out = crate::out(F, "out", out)?;
        *out = answer(e, |b| b.get_latest_common_time(&t, &s))?;
        Ok(())
    })
}

/// tf2's `allFramesAsString()` into the caller's `buf` (`cap` bytes, NUL-terminated);
/// `*len` receives the text's length without the NUL. [`TF_SHM_BUFFER_TOO_SMALL`] when
/// `cap <= *len` (nothing written; call again with `*len + 1`).
///
/// # Safety
/// `buf` is NULL or has `cap` writable bytes; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_all_frames_as_string(
    buffer: tf_shm_buffer,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> tf_shm_status {
    const F: &str = "tf_shm_all_frames_as_string";
    with_entry(F, buffer, |e| {
        let text = answer(e, |b| b.all_frames_as_string())?;
        copy_text(F, text.as_bytes(), buf, cap, len)
    })
}

/// tf2's `allFramesAsYAML(current_time)` with `now_ns` as the current time; buffer use as
/// [`tf_shm_all_frames_as_string`].
///
/// # Safety
/// As [`tf_shm_all_frames_as_string`].
#[no_mangle]
pub unsafe extern "C" fn tf_shm_all_frames_as_yaml(
    buffer: tf_shm_buffer,
    now_ns: i64,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> tf_shm_status {
    const F: &str = "tf_shm_all_frames_as_yaml";
    with_entry(F, buffer, |e| {
        let text = answer(e, |b| b.all_frames_as_yaml(now_ns))?;
        copy_text(F, text.as_bytes(), buf, cap, len)
    })
}

/// tf2's `_frameExists(frame)`: `*out` = 1 if the frame is known (as a child or a parent;
/// tf2's `"NO_PARENT"` too, as in tf2), else 0. While the buffer holds its old arena after a
/// bridge restart, frames of either arena are known.
///
/// # Safety
/// `frame` is NULL or NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_frame_exists(
    buffer: tf_shm_buffer,
    frame: *const c_char,
    out: *mut i32,
) -> tf_shm_status {
    const F: &str = "tf_shm_frame_exists";
    with_buffer(F, buffer, |b| {
        // SAFETY: by the caller's contract.
        let f = unsafe { name(F, "frame", frame)? };
        let out = crate::out(F, "out", out)?;
        *out = i32::from(b.frame_exists(&f)?);
        Ok(())
    })
}

/// tf2's `_getFrameStrings`: every frame name (in the order frames were first seen; during a
/// restart hold, the old arena's frames first), each followed by a NUL, packed into `buf`
/// (`cap` bytes); `*len` receives the bytes needed, `*count` the number of names. Buffer use
/// as [`tf_shm_all_frames_as_string`] (a final extra NUL is written too).
///
/// # Safety
/// `buf` is NULL or has `cap` writable bytes; `len`, `count` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_get_frame_strings(
    buffer: tf_shm_buffer,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
    count: *mut usize,
) -> tf_shm_status {
    const F: &str = "tf_shm_get_frame_strings";
    with_buffer(F, buffer, |b| {
        let count = crate::out(F, "count", count)?;
        let names = b.get_all_frame_names()?;
        let mut packed = Vec::new();
        for n in &names {
            packed.extend_from_slice(n.as_bytes());
            packed.push(0);
        }
        *count = names.len();
        copy_text(F, &packed, buf, cap, len)
    })
}

/// Makes a pair handle for `T_target_source` lookups in hot loops: names are resolved, and
/// where tf2's walk met its two passes remembered, on first use, and again only after the
/// arena changed (a bridge restart). The pair keeps its buffer's mapping alive; free it with [`tf_shm_pair_free`].
/// Nothing is checked here: unknown frames fail at lookup time, with tf2's errors.
///
/// # Safety
/// Names are NULL or NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_pair_new(
    buffer: tf_shm_buffer,
    target_frame: *const c_char,
    source_frame: *const c_char,
    out: *mut tf_shm_pair,
) -> tf_shm_status {
    const F: &str = "tf_shm_pair_new";
    guard(F, || {
        // SAFETY: by the caller's contract.
        let (t, s) = unsafe {
            (
                name(F, "target_frame", target_frame)?,
                name(F, "source_frame", source_frame)?,
            )
        };
        let out = crate::out(F, "out", out)?;
        let g = buffer_entry(F, buffer)?;
        let e = g.as_ref().ok_or_else(|| invalid(F, "buffer"))?;
        let id = PAIRS
            .insert(PairEntry {
                buffer: e.clone(),
                target: t.as_ref().into(),
                source: s.as_ref().into(),
                pair: Mutex::new(FramePair::new(&t, &s)),
            })
            .ok_or_else(|| Fail::new(TF_SHM_TOO_MANY_HANDLES, format!("{F}: too many handles")))?;
        *out = tf_shm_pair { id };
        Ok(())
    })
}

/// [`tf_shm_lookup_transform`] of the pair's frames at `time_ns`, with the same answers and
/// errors, without string work. Safe from several threads at once (a thread that finds the
/// pair busy does the plain lookup instead of waiting).
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_pair_lookup(
    pair: tf_shm_pair,
    time_ns: i64,
    out: *mut tf_shm_transform_stamped,
) -> tf_shm_status {
    const F: &str = "tf_shm_pair_lookup";
    guard(F, || {
        let out = crate::out(F, "out", out)?;
        let g = PAIRS.get(pair.id).ok_or_else(|| invalid(F, "pair"))?;
        let e = &g.as_ref().ok_or_else(|| invalid(F, "pair"))?.value;
        let be = &e.buffer.value;
        if be.closed.load(Ordering::Acquire) {
            return Err(invalid(F, "pair's buffer"));
        }
        let r = match e.pair.try_lock() {
            Ok(mut p) => pair_lookup_into(be, &mut p, time_ns, out),
            Err(TryLockError::Poisoned(p)) => {
                pair_lookup_into(be, &mut p.into_inner(), time_ns, out)
            }
            Err(TryLockError::WouldBlock) => {
                // Another thread holds the pair: the plain lookup answers the same.
                lookup_into(be, &e.target, &e.source, time_ns, out)
            }
        };
        r
    })
}

/// The one body of the pair lookups (`out` checked by the caller). After a clear of the
/// buffer or with a cache time, the pair's names answer through them ([`answer`]).
#[inline]
fn pair_lookup_into(
    e: &BufferEntry,
    pair: &mut FramePair,
    time_ns: i64,
    out: &mut tf_shm_transform_stamped,
) -> Result<(), Fail> {
    if e.limits.is_set() {
        return lookup_limited(e, pair.target(), pair.source(), time_ns, out);
    }
    let (stamp, t) = e.buffer.lookup_pair(pair, time_ns)?;
    write_transform(out, stamp, &t);
    Ok(())
}

/// Frees a pair. Errors: [`TF_SHM_INVALID_HANDLE`] (e.g. freed twice).
#[no_mangle]
pub extern "C" fn tf_shm_pair_free(pair: tf_shm_pair) -> tf_shm_status {
    const F: &str = "tf_shm_pair_free";
    guard(F, || {
        PAIRS
            .remove(pair.id)
            .map(drop)
            .ok_or_else(|| invalid(F, "pair"))
    })
}

/// A caller's reference to an open buffer (opaque), for the hot calls that take it
/// ([`tf_shm_ref_lookup_transform`], [`tf_shm_frame_pair_new`]): the handle is checked once,
/// by [`tf_shm_buffer_ref_new`], and the reference keeps the buffer's mapping alive until
/// [`tf_shm_buffer_ref_free`], so a call through it costs no table lookup and no atomic
/// read-modify-write. Closing the buffer ([`tf_shm_buffer_close`]) makes calls through its
/// references answer [`TF_SHM_INVALID_HANDLE`]. A reference may be used from several threads
/// at once; using it after freeing it is undefined behaviour (it is a pointer).
pub struct tf_shm_buffer_ref {
    _opaque: [u8; 0],
}

/// A caller's (target, source) pair (opaque): [`tf_shm_pair`]'s lookups without its handle
/// check and lock. One caller's: a `tf_shm_frame_pair` must not be used by two threads at the
/// same time (make one per thread; they are cheap); the buffer may. Keeps its buffer's mapping
/// alive until [`tf_shm_frame_pair_free`].
pub struct tf_shm_frame_pair {
    buffer: Arc<Entry<BufferEntry>>,
    pair: FramePair,
}

/// The buffer of a reference from [`tf_shm_buffer_ref_new`].
///
/// # Safety
/// `r` is NULL or a live reference.
unsafe fn referenced<'a>(
    function: &str,
    r: *const tf_shm_buffer_ref,
) -> Result<&'a BufferEntry, Fail> {
    if r.is_null() {
        return Err(invalid(function, "buffer reference"));
    }
    // SAFETY: a live reference is `Arc::into_raw` of its entry (tf_shm_buffer_ref_new), kept
    // alive until tf_shm_buffer_ref_free.
    let e = unsafe { &(*r.cast::<Entry<BufferEntry>>()).value };
    // A plain load: the entry stays valid either way; this only makes close visible.
    if e.closed.load(Ordering::Acquire) {
        return Err(invalid(function, "buffer"));
    }
    Ok(e)
}

/// Reads a frame-name argument of known length (not NUL-terminated; a NUL in it is part of the
/// name, so no frame has it): its bytes, for [`ascii`] or [`text`].
///
/// # Safety
/// `p` is NULL or points to `len` readable bytes that outlive the call.
#[inline(always)]
unsafe fn name_n<'a>(
    function: &str,
    arg: &str,
    p: *const c_char,
    len: usize,
) -> Result<&'a [u8], Fail> {
    if p.is_null() {
        return Err(null_argument(function, arg));
    }
    // SAFETY: non-NULL with `len` readable bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
}

/// A name's bytes as text when they are ASCII (frame names are, in practice): a few
/// instructions, where the UTF-8 validator costs ~50 and the lossy decoder ~120 per short name.
#[inline(always)]
fn ascii(bytes: &[u8]) -> Option<&str> {
    // SAFETY: ASCII bytes are valid UTF-8.
    bytes
        .is_ascii()
        .then(|| unsafe { std::str::from_utf8_unchecked(bytes) })
}

/// A name's bytes as text: invalid UTF-8 replaced, so such a name is an unknown frame (as for
/// NUL-terminated names).
fn text(bytes: &[u8]) -> Cow<'_, str> {
    ascii(bytes).map_or_else(|| String::from_utf8_lossy(bytes), Cow::Borrowed)
}

/// A reference to the open buffer `buffer` for the hot calls (see [`tf_shm_buffer_ref`]);
/// free it with [`tf_shm_buffer_ref_free`].
///
/// Errors: [`TF_SHM_INVALID_HANDLE`], [`TF_SHM_NULL_ARGUMENT`].
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_ref_new(
    buffer: tf_shm_buffer,
    out: *mut *const tf_shm_buffer_ref,
) -> tf_shm_status {
    const F: &str = "tf_shm_buffer_ref_new";
    guard(F, || {
        let out = crate::out(F, "out", out)?;
        let g = buffer_entry(F, buffer)?;
        let e = g.as_ref().ok_or_else(|| invalid(F, "buffer"))?;
        *out = Arc::into_raw(e.clone()).cast::<tf_shm_buffer_ref>();
        Ok(())
    })
}

/// Frees a reference (NULL: nothing); the buffer's mapping is released once it is closed and
/// no reference, pair or call uses it.
///
/// # Safety
/// `r` is NULL or a live reference from [`tf_shm_buffer_ref_new`], not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_buffer_ref_free(r: *const tf_shm_buffer_ref) {
    if !r.is_null() {
        // SAFETY: by the caller's contract, the `Arc::into_raw` of tf_shm_buffer_ref_new, given
        // back once. Dropping a Buffer does not panic.
        drop(unsafe { Arc::from_raw(r.cast::<Entry<BufferEntry>>()) });
    }
}

/// [`tf_shm_lookup_transform`] through a reference, with the names as (pointer, length) (a C++
/// `std::string`'s `data()` and `size()`: no `strlen`): the same answers and errors; a NULL
/// reference or a closed buffer is [`TF_SHM_INVALID_HANDLE`].
///
/// # Safety
/// `buffer` is NULL or a live reference; each name is NULL or has its length of readable
/// bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_ref_lookup_transform(
    buffer: *const tf_shm_buffer_ref,
    target_frame: *const c_char,
    target_len: usize,
    source_frame: *const c_char,
    source_len: usize,
    time_ns: i64,
    out: *mut tf_shm_transform_stamped,
) -> tf_shm_status {
    const F: &str = "tf_shm_ref_lookup_transform";
    guard(F, || {
        // SAFETY: by the caller's contract.
        let b = unsafe { referenced(F, buffer) }?;
        // SAFETY: by the caller's contract.
        let (t, s) = unsafe {
            (
                name_n(F, "target_frame", target_frame, target_len)?,
                name_n(F, "source_frame", source_frame, source_len)?,
            )
        };
        let out = crate::out(F, "out", out)?;
        match (ascii(t), ascii(s)) {
            (Some(t), Some(s)) => lookup_into(b, t, s, time_ns, out),
            _ => not_ascii(b, t, s, time_ns, out),
        }
    })
}

/// [`tf_shm_ref_lookup_transform`] of a name that is not ASCII, kept out of the hot call.
#[cold]
#[inline(never)]
fn not_ascii(
    b: &BufferEntry,
    target: &[u8],
    source: &[u8],
    time_ns: i64,
    out: &mut tf_shm_transform_stamped,
) -> Result<(), Fail> {
    lookup_into(b, &text(target), &text(source), time_ns, out)
}

/// Makes a caller's pair (see [`tf_shm_frame_pair`]) for `T_target_source` lookups of the
/// referenced buffer; names as in [`tf_shm_ref_lookup_transform`]. Nothing is checked here:
/// unknown frames fail at lookup time, with tf2's errors. Free it with
/// [`tf_shm_frame_pair_free`].
///
/// Errors: [`TF_SHM_INVALID_HANDLE`] (NULL reference, closed buffer), [`TF_SHM_NULL_ARGUMENT`].
///
/// # Safety
/// As [`tf_shm_ref_lookup_transform`]; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_frame_pair_new(
    buffer: *const tf_shm_buffer_ref,
    target_frame: *const c_char,
    target_len: usize,
    source_frame: *const c_char,
    source_len: usize,
    out: *mut *mut tf_shm_frame_pair,
) -> tf_shm_status {
    const F: &str = "tf_shm_frame_pair_new";
    guard(F, || {
        // SAFETY: by the caller's contract.
        unsafe { referenced(F, buffer) }?;
        // SAFETY: by the caller's contract.
        let (t, s) = unsafe {
            (
                name_n(F, "target_frame", target_frame, target_len)?,
                name_n(F, "source_frame", source_frame, source_len)?,
            )
        };
        let out = crate::out(F, "out", out)?;
        // SAFETY: `buffer` is a live reference (checked non-NULL above), i.e. `Arc::into_raw`
        // of its entry: count one more owner and take it.
        let entry = unsafe {
            let p = buffer.cast::<Entry<BufferEntry>>();
            Arc::increment_strong_count(p);
            Arc::from_raw(p)
        };
        *out = Box::into_raw(Box::new(tf_shm_frame_pair {
            buffer: entry,
            pair: FramePair::new(&text(t), &text(s)),
        }));
        Ok(())
    })
}

/// [`tf_shm_lookup_transform`] of the pair's frames at `time_ns`, with the same answers and
/// errors, without string work, handle table or lock: the pair is the caller's alone (one
/// thread at a time). A NULL pair or a closed buffer is [`TF_SHM_INVALID_HANDLE`].
///
/// # Safety
/// `pair` is NULL or a live pair that no other thread uses during the call; `out` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_frame_pair_lookup(
    pair: *mut tf_shm_frame_pair,
    time_ns: i64,
    out: *mut tf_shm_transform_stamped,
) -> tf_shm_status {
    const F: &str = "tf_shm_frame_pair_lookup";
    guard(F, || {
        let out = crate::out(F, "out", out)?;
        // SAFETY: NULL or live and not shared during the call, by the caller's contract.
        let p = unsafe { pair.as_mut() }.ok_or_else(|| invalid(F, "pair"))?;
        let b = &p.buffer.value;
        if b.closed.load(Ordering::Acquire) {
            return Err(invalid(F, "pair's buffer"));
        }
        pair_lookup_into(b, &mut p.pair, time_ns, out)
    })
}

/// Frees a caller's pair (NULL: nothing).
///
/// # Safety
/// `pair` is NULL or a live pair from [`tf_shm_frame_pair_new`], not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_frame_pair_free(pair: *mut tf_shm_frame_pair) {
    if !pair.is_null() {
        // SAFETY: by the caller's contract, the Box of tf_shm_frame_pair_new, given back once.
        drop(unsafe { Box::from_raw(pair) });
    }
}
