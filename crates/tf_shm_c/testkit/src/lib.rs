//! Test-only companion of tf_shm_c (never installed): an arena owner to fill from C, and the
//! Rust engine's own answers to compare the C ABI against. Loaded next to libtf_shm_c by the
//! C and C++ tests; it has its own copy of tf_shm and speaks to tf_shm_c only through the
//! arena and its rendezvous, as a bridge would.

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use tf_shm::rendezvous::{Owner, Serve};
use tf_shm::validate::TransformInput;
use tf_shm::{ArenaConfig, TransformError};

/// An owner of an arena (opaque to C).
pub struct TestOwner(Owner);

/// # Safety
/// `p` is a NUL-terminated string.
unsafe fn s<'a>(p: *const c_char) -> &'a str {
    // SAFETY: by the caller's contract; test strings are UTF-8.
    unsafe { CStr::from_ptr(p) }.to_str().expect("utf-8")
}

/// Creates and serves the arena `name` of domain 0 in `runtime_dir` (cache time
/// `cache_time_ns`, 0 for the default); NULL on failure (printed).
///
/// # Safety
/// Strings are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_serve(
    runtime_dir: *const c_char,
    name: *const c_char,
    cache_time_ns: i64,
) -> *mut TestOwner {
    catch_unwind(|| {
        let mut config = ArenaConfig {
            memory_budget_bytes: 4 << 20,
            max_frames: 256,
            ..ArenaConfig::default()
        };
        if cache_time_ns > 0 {
            config.cache_time_ns = cache_time_ns;
        }
        // SAFETY: by the caller's contract.
        let (dir, name) = unsafe { (s(runtime_dir), s(name)) };
        match Serve::new(config)
            .runtime_dir(dir)
            .name(name)
            .domain(0)
            .participant_name("testkit")
            .serve()
        {
            Ok(o) => Box::into_raw(Box::new(TestOwner(o))),
            Err(e) => {
                eprintln!("tf_shm_testkit_serve: {e}");
                std::ptr::null_mut()
            }
        }
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Writes one transform (`T_parent_child`, quaternion x, y, z, w) with the authority
/// "testkit"; 0 on success, -1 on a refusal (printed).
///
/// # Safety
/// `owner` from [`tf_shm_testkit_serve`]; strings NUL-terminated; `t` 3 and `q` 4 doubles.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_set(
    owner: *mut TestOwner,
    parent: *const c_char,
    child: *const c_char,
    stamp_ns: i64,
    t: *const f64,
    q: *const f64,
    is_static: i32,
) -> i32 {
    // SAFETY: by the caller's contract.
    unsafe {
        tf_shm_testkit_set_by(
            owner,
            c"testkit".as_ptr(),
            parent,
            child,
            stamp_ns,
            t,
            q,
            is_static,
        )
    }
}

/// [`tf_shm_testkit_set`] with the authority (publisher) `authority`.
///
/// # Safety
/// As [`tf_shm_testkit_set`].
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_set_by(
    owner: *mut TestOwner,
    authority: *const c_char,
    parent: *const c_char,
    child: *const c_char,
    stamp_ns: i64,
    t: *const f64,
    q: *const f64,
    is_static: i32,
) -> i32 {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: by the caller's contract.
        let (o, authority, parent, child, t, q) = unsafe {
            (
                &mut (*owner).0,
                s(authority),
                s(parent),
                s(child),
                std::slice::from_raw_parts(t, 3),
                std::slice::from_raw_parts(q, 4),
            )
        };
        let input = TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp: stamp_ns,
            translation: [t[0], t[1], t[2]],
            rotation: [q[0], q[1], q[2], q[3]],
        };
        match o.writer().set_transform(&input, authority, is_static != 0) {
            Ok(_) => 0,
            Err(e) => {
                eprintln!("tf_shm_testkit_set: {e}");
                -1
            }
        }
    }))
    .unwrap_or(-1)
}

/// One transform of [`tf_shm_testkit_set_batch`] (C: `tf_shm_testkit_transform`).
#[repr(C)]
pub struct TestTransform {
    pub parent: *const c_char,
    pub child: *const c_char,
    pub stamp_ns: i64,
    pub t: [f64; 3],
    pub q: [f64; 4],
    pub is_static: i32,
}

/// Writes `n` transforms as one message does (one `ArenaWriter::batch`: readers see all of
/// them or none), authority "testkit"; 0 when all were stored, -1 when one was refused
/// (printed; the others are stored).
///
/// # Safety
/// `owner` from [`tf_shm_testkit_serve`]; `items` `n` transforms with NUL-terminated names.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_set_batch(
    owner: *mut TestOwner,
    items: *const TestTransform,
    n: usize,
) -> i32 {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: by the caller's contract.
        let (o, items) = unsafe { (&mut (*owner).0, std::slice::from_raw_parts(items, n)) };
        o.writer().batch(|w| {
            let mut rc = 0;
            for it in items {
                // SAFETY: by the caller's contract.
                let (parent, child) = unsafe { (s(it.parent), s(it.child)) };
                let input = TransformInput {
                    frame_id: parent,
                    child_frame_id: child,
                    stamp: it.stamp_ns,
                    translation: it.t,
                    rotation: it.q,
                };
                if let Err(e) = w.set_transform(&input, "testkit", it.is_static != 0) {
                    eprintln!("tf_shm_testkit_set_batch: {e}");
                    rc = -1;
                }
            }
            rc
        })
    }))
    .unwrap_or(-1)
}

/// tf2's `clear()` of the arena (what the bridge does when the data's clock jumps back).
///
/// # Safety
/// `owner` from [`tf_shm_testkit_serve`].
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_clear(owner: *mut TestOwner) {
    // SAFETY: by the caller's contract.
    let o = unsafe { &mut (*owner).0 };
    o.writer().clear();
}

/// Stops serving and frees the owner (consumers keep their mapping and wait for a new owner).
///
/// # Safety
/// `owner` from [`tf_shm_testkit_serve`], not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_close(owner: *mut TestOwner) {
    if !owner.is_null() {
        // SAFETY: by the caller's contract.
        drop(unsafe { Box::from_raw(owner) });
    }
}

/// The engine's answer to one query, for the tests to compare the C ABI with: `kind` is
/// `"lookup"` (target, source, time), `"full"` (target, time, source, time2, fixed),
/// `"can"`, `"can_full"` or `"latest"`. Writes the stamp and `T_target_source`
/// (x, y, z, qx, qy, qz, qw) on success and returns 1; on error writes tf2's class name and
/// text (NUL-terminated, truncated to `cap`) and returns 0.
///
/// # Safety
/// `owner` from [`tf_shm_testkit_serve`]; strings NUL-terminated (`fixed` may be NULL unless
/// needed); `out7` 7 doubles; `class_buf`, `text_buf` `cap` bytes each.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_reference(
    owner: *mut TestOwner,
    kind: *const c_char,
    target: *const c_char,
    time_ns: i64,
    source: *const c_char,
    time2_ns: i64,
    fixed: *const c_char,
    stamp: *mut i64,
    out7: *mut f64,
    class_buf: *mut c_char,
    text_buf: *mut c_char,
    cap: usize,
) -> i32 {
    // SAFETY: by the caller's contract.
    let (view, kind, target, source) =
        unsafe { ((*owner).0.view(), s(kind), s(target), s(source)) };
    let fixed = if fixed.is_null() {
        ""
    } else {
        // SAFETY: not NULL, and NUL-terminated by the caller's contract.
        unsafe { s(fixed) }
    };
    let r: Result<(i64, [f64; 7]), TransformError> = match kind {
        "lookup" | "full" => {
            let r = if kind == "lookup" {
                view.lookup_transform(target, source, time_ns)
            } else {
                view.lookup_transform_full(target, time_ns, source, time2_ns, fixed)
            };
            r.map(|t| {
                let (p, q) = (t.transform.translation, t.transform.rotation);
                (t.stamp, [p[0], p[1], p[2], q[0], q[1], q[2], q[3]])
            })
        }
        "can" => view
            .can_transform(target, source, time_ns)
            .map(|_| (0, [0.0; 7])),
        "can_full" => view
            .can_transform_full(target, time_ns, source, time2_ns, fixed)
            .map(|_| (0, [0.0; 7])),
        "latest" => view
            .get_latest_common_time(target, source)
            .map(|t| (t, [0.0; 7])),
        other => panic!("tf_shm_testkit_reference: unknown kind {other}"),
    };
    let put = |buf: *mut c_char, text: &str| {
        let n = text.len().min(cap.saturating_sub(1));
        // SAFETY: `buf` has `cap` bytes by contract; we write `n + 1 <= cap`.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    };
    match r {
        Ok((t, v)) => {
            // SAFETY: by the caller's contract.
            unsafe {
                *stamp = t;
                std::ptr::copy_nonoverlapping(v.as_ptr(), out7, 7);
            }
            1
        }
        Err(e) => {
            put(class_buf, e.class_name());
            put(text_buf, &e.to_string());
            0
        }
    }
}

/// The Rust calls the C++ wrapper wraps, for bench/wrapper_bench.cpp: a `tf_shm::Buffer` on an
/// arena with its (target, source) names and `FramePair`s (opaque to C).
pub struct RustArm {
    buffer: tf_shm::Buffer,
    names: Vec<(String, String)>,
    pairs: Vec<tf_shm::FramePair>,
}

/// Opens a Rust `tf_shm::Buffer` on the arena `name` of domain 0 in `runtime_dir` (as
/// tf_shm_buffer_open does), with a pair for each of the `n` (targets[i], sources[i]); NULL on
/// failure (printed).
///
/// # Safety
/// Strings are NUL-terminated; `targets` and `sources` hold `n` of them.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_rust_open(
    runtime_dir: *const c_char,
    name: *const c_char,
    targets: *const *const c_char,
    sources: *const *const c_char,
    n: usize,
) -> *mut RustArm {
    catch_unwind(|| {
        // SAFETY: by the caller's contract.
        let (dir, name) = unsafe { (s(runtime_dir), s(name)) };
        // SAFETY: by the caller's contract, `n` NUL-terminated strings each.
        let names: Vec<(String, String)> = (0..n)
            .map(|i| unsafe { (s(*targets.add(i)).to_owned(), s(*sources.add(i)).to_owned()) })
            .collect();
        match tf_shm::Join::new()
            .runtime_dir(dir)
            .name(name)
            .domain(0)
            .open()
        {
            Ok(buffer) => Box::into_raw(Box::new(RustArm {
                buffer,
                pairs: names
                    .iter()
                    .map(|(t, s)| tf_shm::FramePair::new(t, s))
                    .collect(),
                names,
            })),
            Err(e) => {
                eprintln!("tf_shm_testkit_rust_open: {e}");
                std::ptr::null_mut()
            }
        }
    })
    .unwrap_or(std::ptr::null_mut())
}

/// `count` lookups cycling over (pair `pairs[i]`, time `times[i]`), `i < len`: by name
/// (`Buffer::lookup_transform`) or through the pair (`Buffer::lookup_pair`). Returns the sum of
/// translation x (NaN for a failed lookup) so that the work is kept.
///
/// # Safety
/// `arm` from [`tf_shm_testkit_rust_open`]; `pairs` and `times` hold `len > 0` values, each
/// pair index below the arm's pair count.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_rust_run(
    arm: *mut RustArm,
    pairs: *const i32,
    times: *const i64,
    len: usize,
    count: usize,
    by_name: i32,
) -> f64 {
    // SAFETY: by the caller's contract.
    let (arm, pairs, times) = unsafe {
        (
            &mut *arm,
            std::slice::from_raw_parts(pairs, len),
            std::slice::from_raw_parts(times, len),
        )
    };
    let mut sum = 0.0;
    let mut i = 0;
    for _ in 0..count {
        let p = pairs[i] as usize;
        let time = std::hint::black_box(times[i]);
        let r = if by_name != 0 {
            let (t, s) = &arm.names[p];
            arm.buffer
                .lookup_transform(t, s, time)
                .map(|r| r.transform.translation[0])
        } else {
            arm.buffer
                .lookup_pair(&mut arm.pairs[p], time)
                .map(|r| r.1.translation[0])
        };
        sum += r.unwrap_or(f64::NAN);
        i = if i + 1 == len { 0 } else { i + 1 };
    }
    sum
}

/// Frees an arm.
///
/// # Safety
/// `arm` from [`tf_shm_testkit_rust_open`] (or NULL), not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn tf_shm_testkit_rust_free(arm: *mut RustArm) {
    if !arm.is_null() {
        // SAFETY: by the caller's contract.
        drop(unsafe { Box::from_raw(arm) });
    }
}
