//! The tail of a buffer's arena for C (`tf_shm::tail::Tail`): everything the arena holds, then
//! each sample as it is written, the arena's clears, across bridge restarts — what
//! `tf_shm::TransformListener` (include/transform_listener.hpp) feeds a tf2 buffer with.

use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tf_shm::tail::{self, Tail};
use tf_shm::{ArenaIdentity, ArenaView, FrameId};

use crate::handles::{Entry, Table};
use crate::status::{guard, tf_shm_status, Fail, TF_SHM_TOO_MANY_HANDLES};
use crate::{
    buffer_entry, invalid, null_argument, out, tf_shm_buffer, tf_shm_transform_stamped, BufferEntry,
};

/// A tail of a buffer's arena (see [`tf_shm_tail_new`]). `id` 0 is never a valid handle.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct tf_shm_tail {
    pub id: u64,
}

/// What a [`tf_shm_tail_item`] reports.
pub type tf_shm_tail_kind = i32;
/// The arena was cleared (tf2's `clear()`, the bridge's answer to a clock jump back): clear
/// the buffer fed; the items after it were stored after the clear.
pub const TF_SHM_TAIL_CLEAR: tf_shm_tail_kind = 0;
/// A transform stored in the arena: give it to tf2's `setTransform(msg, authority, is_static)`.
pub const TF_SHM_TAIL_SAMPLE: tf_shm_tail_kind = 1;

/// One item of [`tf_shm_tail_poll`]. The strings are valid during the callback only.
#[repr(C)]
pub struct tf_shm_tail_item {
    pub kind: tf_shm_tail_kind,
    /// `header.frame_id` (the parent frame); "" for a clear.
    pub parent: *const c_char,
    /// `child_frame_id`; "" for a clear.
    pub child: *const c_char,
    /// The publisher of the frame's newest sample (the arena keeps one per frame), as tf2's
    /// `setTransform` takes it; "" for a clear.
    pub authority: *const c_char,
    /// `T_parent_child` at its stamp; zeros for a clear.
    pub transform: tf_shm_transform_stamped,
    /// A `/tf_static` transform.
    pub is_static: bool,
}

/// Receives a tail's items in order. Must not unwind, nor poll the same tail.
pub type tf_shm_tail_fn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, item: *const tf_shm_tail_item)>;

/// What one [`tf_shm_tail_poll`] reported.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct tf_shm_tail_stats {
    /// Samples passed to the callback (static and dynamic).
    pub samples: u64,
    /// Clears passed to the callback.
    pub clears: u64,
    /// Samples the arena stored that the tail can no longer report: dropped from a frame's
    /// history (cut short by the memory budget or `max_rate_hz`, pruned by the cache time, or
    /// cleared) before a poll read them.
    pub missed: u64,
    /// Arena instances first read by this poll (1 at the first poll and after a bridge
    /// restart, else 0).
    pub new_arenas: u64,
}

struct TailState {
    tail: Tail,
    /// Frame names of `names_of`'s arena, NUL-terminated, read once each.
    names: Vec<Option<CString>>,
    /// Each frame's authority in `names_of`'s arena with its key (`tail::authority_key`),
    /// read again only when the key changes.
    authorities: Vec<Option<(u64, CString)>>,
    names_of: Option<ArenaIdentity>,
}

impl TailState {
    /// Forgets what was read of another arena instance than `view`'s.
    fn of(&mut self, view: &ArenaView) {
        if self.names_of != Some(view.identity()) {
            self.names_of = Some(view.identity());
            self.names.clear();
            self.authorities.clear();
        }
    }

    fn name(&mut self, view: &ArenaView, id: FrameId) -> Result<*const c_char, Fail> {
        self.of(view);
        let i = id as usize;
        if self.names.len() <= i {
            self.names.resize(i + 1, None);
        }
        if self.names[i].is_none() {
            let name = self.tail.name(view, id)?;
            self.names[i] = Some(c_string(name));
        }
        Ok(self.names[i]
            .as_deref()
            .map_or(EMPTY.as_ptr().cast(), |c| c.as_ptr()))
    }

    /// Frame `id`'s authority (its newest sample's), NUL-terminated.
    fn authority(&mut self, view: &ArenaView, id: FrameId) -> Result<*const c_char, Fail> {
        self.of(view);
        let key = tail::authority_key(view, id)?;
        let i = id as usize;
        if self.authorities.len() <= i {
            self.authorities.resize(i + 1, None);
        }
        match &self.authorities[i] {
            Some((k, _)) if *k == key => {}
            _ => self.authorities[i] = Some((key, c_string(&tail::authority(view, id)?))),
        }
        Ok(self.authorities[i]
            .as_ref()
            .map_or(EMPTY.as_ptr().cast(), |(_, c)| c.as_ptr()))
    }
}

/// Frame names and authorities have no NUL (the bridge takes them from ROS strings); one that
/// had would be cut there.
fn c_string(s: &str) -> CString {
    CString::new(s.split('\0').next().unwrap_or_default()).unwrap_or_default()
}

struct TailEntry {
    buffer: Arc<Entry<BufferEntry>>,
    state: Mutex<TailState>,
}

static TAILS: Table<TailEntry> = Table::new();

/// "" for C.
const EMPTY: &[u8] = b"\0";

/// Starts a tail of `buffer`'s arena: its first [`tf_shm_tail_poll`] reports every static and
/// dynamic sample the arena holds, each later one what was stored since. The tail keeps the
/// buffer's mapping alive; it follows the buffer across bridge restarts. Free it with
/// [`tf_shm_tail_free`].
///
/// Errors: `TF_SHM_INVALID_HANDLE`, [`TF_SHM_NULL_ARGUMENT`],
/// [`TF_SHM_TOO_MANY_HANDLES`].
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_tail_new(
    buffer: tf_shm_buffer,
    out: *mut tf_shm_tail,
) -> tf_shm_status {
    const F: &str = "tf_shm_tail_new";
    guard(F, || {
        let out = crate::out(F, "out", out)?;
        let g = buffer_entry(F, buffer)?;
        let e = g.as_ref().ok_or_else(|| invalid(F, "buffer"))?.clone();
        let id = TAILS
            .insert(TailEntry {
                buffer: e,
                state: Mutex::new(TailState {
                    tail: Tail::new(),
                    names: Vec::new(),
                    authorities: Vec::new(),
                    names_of: None,
                }),
            })
            .ok_or_else(|| Fail::new(TF_SHM_TOO_MANY_HANDLES, format!("{F}: too many handles")))?;
        *out = tf_shm_tail { id };
        Ok(())
    })
}

/// Reports what the arena got since the last poll of this tail, in order, to `f(ctx, item)`:
/// a [`TF_SHM_TAIL_CLEAR`] when the arena was cleared, then the static transforms set or
/// changed, then the dynamic samples stored, oldest stamp first. After a bridge restart the
/// old arena's last samples come first, then everything the new arena holds (what the new
/// bridge stored again, e.g. the statics, is reported again: tf2's `setTransform` of a sample
/// its buffer has is a no-op). It does not wait: call it from the step of
/// `tf_shm_buffer_wait`, which sleeps on the arena's futex until
/// something is written. `stats` (may be NULL) receives what this poll reported.
///
/// Errors: `TF_SHM_INVALID_HANDLE` (also when the buffer was
/// closed), [`TF_SHM_NULL_ARGUMENT`] (`f` NULL), `TF_SHM_ARENA_ERROR` (nothing was reported;
/// the next poll reports it).
///
/// # Safety
/// `f` is NULL or a function that may be called with `ctx` on this thread until the call
/// returns, does not unwind and does not poll this tail; `stats` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_tail_poll(
    tail: tf_shm_tail,
    f: tf_shm_tail_fn,
    ctx: *mut c_void,
    stats: *mut tf_shm_tail_stats,
) -> tf_shm_status {
    const F: &str = "tf_shm_tail_poll";
    guard(F, || {
        let f = f.ok_or_else(|| null_argument(F, "f"))?;
        let g = TAILS.get(tail.id).ok_or_else(|| invalid(F, "tail"))?;
        let e = g.as_ref().ok_or_else(|| invalid(F, "tail"))?;
        if e.value.buffer.value.closed.load(Ordering::Acquire) {
            return Err(invalid(F, "buffer"));
        }
        let mut st = e.value.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut counts = tf_shm_tail_stats::default();
        let polls = st.tail.follow(&e.value.buffer.value.buffer)?;
        for (view, arrived) in polls {
            counts.missed += arrived.missed;
            counts.new_arenas += u64::from(arrived.new_arena);
            if arrived.cleared {
                let item = tf_shm_tail_item {
                    kind: TF_SHM_TAIL_CLEAR,
                    parent: EMPTY.as_ptr().cast(),
                    child: EMPTY.as_ptr().cast(),
                    authority: EMPTY.as_ptr().cast(),
                    transform: tf_shm_transform_stamped {
                        stamp_ns: 0,
                        translation: [0.0; 3],
                        rotation: [0.0; 4],
                    },
                    is_static: false,
                };
                // SAFETY: by the caller's contract; `item` outlives the call.
                unsafe { f(ctx, &item) };
                counts.clears += 1;
            }
            let items = arrived
                .statics
                .iter()
                .map(|s| (s, true))
                .chain(arrived.dynamic.iter().map(|s| (s, false)));
            for (&(child, s), is_static) in items {
                let parent = st.name(&view, s.parent)?;
                let child_name = st.name(&view, child)?;
                let authority = st.authority(&view, child)?;
                let item = tf_shm_tail_item {
                    kind: TF_SHM_TAIL_SAMPLE,
                    parent,
                    child: child_name,
                    authority,
                    transform: tf_shm_transform_stamped {
                        stamp_ns: s.stamp,
                        translation: s.transform.translation,
                        rotation: s.transform.rotation,
                    },
                    is_static,
                };
                // SAFETY: by the caller's contract; `item` and the strings it points to (the
                // name cache is not touched during the call) outlive the call.
                unsafe { f(ctx, &item) };
                counts.samples += 1;
            }
        }
        if !stats.is_null() {
            *out(F, "stats", stats)? = counts;
        }
        Ok(())
    })
}

/// Frees a tail (a poll in flight on another thread finishes first).
///
/// Errors: `TF_SHM_INVALID_HANDLE` (e.g. freed twice).
#[no_mangle]
pub extern "C" fn tf_shm_tail_free(tail: tf_shm_tail) -> tf_shm_status {
    const F: &str = "tf_shm_tail_free";
    guard(F, || {
        TAILS.remove(tail.id).ok_or_else(|| invalid(F, "tail"))?;
        Ok(())
    })
}
