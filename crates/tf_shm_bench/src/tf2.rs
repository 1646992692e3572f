//! Safe wrapper over the C++ shim (src/tf2_shim.cpp) around ROS 1 tf2's `BufferCore`.

use std::ffi::{c_char, c_int, c_void, CString};

extern "C" {
    fn tf2shim_new(cache_s: f64) -> *mut c_void;
    fn tf2shim_free(s: *mut c_void);
    fn tf2shim_set(
        s: *mut c_void,
        parent: *const c_char,
        child: *const c_char,
        stamp_ns: i64,
        t: *const f64,
        q: *const f64,
        is_static: c_int,
    ) -> c_int;
    fn tf2shim_pair(s: *mut c_void, target: *const c_char, source: *const c_char) -> c_int;
    fn tf2shim_lookup(
        s: *mut c_void,
        pair: c_int,
        time_ns: i64,
        out: *mut f64,
        stamp_ns: *mut i64,
    ) -> c_int;
    fn tf2shim_run(
        s: *mut c_void,
        pairs: *const c_int,
        times: *const i64,
        len: usize,
        n: usize,
    ) -> f64;
}

/// One `tf2::BufferCore`, owned.
pub struct Tf2Buffer {
    ptr: *mut c_void,
}

// SAFETY: BufferCore guards all of its state with its own mutex (`frame_mutex_`), so it may
// be used from several threads at once; that shared-lock cost is what the thread bench shows.
unsafe impl Send for Tf2Buffer {}
// SAFETY: as above; every shim entry point only calls BufferCore's locked public methods (the
// pair table is written only before sharing, through `&mut self`).
unsafe impl Sync for Tf2Buffer {}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("frame names have no NUL")
}

impl Tf2Buffer {
    pub fn new(cache_s: f64) -> Tf2Buffer {
        // SAFETY: plain constructor; the pointer is freed exactly once in Drop.
        let ptr = unsafe { tf2shim_new(cache_s) };
        assert!(!ptr.is_null());
        Tf2Buffer { ptr }
    }

    /// tf2's `setTransform`; false if tf2 refused the sample.
    pub fn set(
        &mut self,
        parent: &str,
        child: &str,
        stamp: i64,
        t: &[f64; 3],
        q: &[f64; 4],
        is_static: bool,
    ) -> bool {
        let (p, c) = (cstr(parent), cstr(child));
        // SAFETY: valid NUL-terminated strings and 3/4-element arrays, live across the call.
        unsafe {
            tf2shim_set(
                self.ptr,
                p.as_ptr(),
                c.as_ptr(),
                stamp,
                t.as_ptr(),
                q.as_ptr(),
                c_int::from(is_static),
            ) == 1
        }
    }

    /// Registers a (target, source) pair, returning the index used by `lookup`/`run`.
    pub fn pair(&mut self, target: &str, source: &str) -> i32 {
        let (t, s) = (cstr(target), cstr(source));
        // SAFETY: valid strings; the shim copies them into std::strings.
        unsafe { tf2shim_pair(self.ptr, t.as_ptr(), s.as_ptr()) }
    }

    /// `lookupTransform` of a registered pair: `(stamp, [x y z qx qy qz qw])` or tf2's
    /// exception as a code (1 lookup, 2 connectivity, 3 extrapolation, 4 other).
    pub fn lookup(&self, pair: i32, time: i64) -> Result<(i64, [f64; 7]), i32> {
        let mut out = [0.0; 7];
        let mut stamp = 0;
        // SAFETY: `pair` came from `pair()` on this buffer; out has 7 slots.
        let rc = unsafe { tf2shim_lookup(self.ptr, pair, time, out.as_mut_ptr(), &mut stamp) };
        if rc == 0 {
            Ok((stamp, out))
        } else {
            Err(rc)
        }
    }

    /// `n` lookups cycling over `(pairs[i], times[i])`, looped in C++; returns Σ translation.x.
    pub fn run(&self, pairs: &[i32], times: &[i64], n: usize) -> f64 {
        assert_eq!(pairs.len(), times.len());
        assert!(!pairs.is_empty());
        // SAFETY: both slices have `len` elements and every pair index came from `pair()`.
        unsafe { tf2shim_run(self.ptr, pairs.as_ptr(), times.as_ptr(), pairs.len(), n) }
    }
}

impl Drop for Tf2Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated by tf2shim_new, freed once.
        unsafe { tf2shim_free(self.ptr) }
    }
}
