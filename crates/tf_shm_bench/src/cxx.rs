//! The C++ rows: `tf_shm::Buffer::lookupTransform` and `tf_shm::FramePair::lookup` of
//! `tf_shm.hpp` (src/cxx_arm.cpp, over tf_shm_c's C ABI), and the Rust `tf_shm::Buffer` calls
//! they wrap, on arenas served through the rendezvous as a bridge serves them.

use std::ffi::{c_char, c_int, c_void, CString};
use std::hint::black_box;

use tf_shm::{Buffer, FramePair};

use crate::arms::{Answer, Arm, Cell};
use crate::scenario::Query;

extern "C" {
    fn cxxshm_open(name: *const c_char) -> *mut c_void;
    fn cxxshm_free(a: *mut c_void);
    fn cxxshm_pair(a: *mut c_void, target: *const c_char, source: *const c_char) -> c_int;
    fn cxxshm_lookup(
        a: *mut c_void,
        pair: c_int,
        time_ns: i64,
        by_name: c_int,
        out: *mut f64,
        stamp_ns: *mut i64,
    ) -> c_int;
    fn cxxshm_run(
        a: *mut c_void,
        pairs: *const c_int,
        times: *const i64,
        len: usize,
        n: usize,
        by_name: c_int,
    ) -> f64;
}

/// One C++ `tf_shm::Buffer` (with its pairs) per scenario that has an arena.
pub struct Cxx {
    name: &'static str,
    arms: Vec<*mut c_void>,
    by_name: bool,
}

impl Cxx {
    /// `arenas[sc]`: the arena name serving scenario `sc` (None: not benchmarked).
    pub fn new(
        name: &'static str,
        arenas: &[Option<String>],
        pairs: &[Vec<(String, String)>],
        by_name: bool,
    ) -> Cxx {
        let arms = arenas
            .iter()
            .zip(pairs)
            .map(|(a, ps)| {
                let Some(a) = a else {
                    return std::ptr::null_mut();
                };
                let n = CString::new(a.as_str()).unwrap();
                // SAFETY: a NUL-terminated name; the result is freed once in Drop.
                let arm = unsafe { cxxshm_open(n.as_ptr()) };
                assert!(!arm.is_null(), "C++ tf_shm::Buffer could not open {a}");
                for (i, (t, s)) in ps.iter().enumerate() {
                    let (t, s) = (
                        CString::new(t.as_str()).unwrap(),
                        CString::new(s.as_str()).unwrap(),
                    );
                    // SAFETY: a live arm and NUL-terminated names.
                    let index = unsafe { cxxshm_pair(arm, t.as_ptr(), s.as_ptr()) };
                    assert_eq!(index, i as c_int);
                }
                arm
            })
            .collect();
        Cxx {
            name,
            arms,
            by_name,
        }
    }
}

impl Drop for Cxx {
    fn drop(&mut self) {
        for a in self.arms.drain(..).filter(|a| !a.is_null()) {
            // SAFETY: made by cxxshm_open, freed once.
            unsafe { cxxshm_free(a) };
        }
    }
}

impl Arm for Cxx {
    fn name(&self) -> &'static str {
        self.name
    }

    fn supports(&self, cell: &Cell) -> bool {
        !self.arms[cell.sc].is_null()
    }

    fn answer(&mut self, cell: &Cell, q: &Query) -> Result<Answer, String> {
        let (mut o, mut stamp) = ([0.0; 7], 0i64);
        // SAFETY: a live arm, a registered pair index, 7 doubles and one i64 to write.
        let r = unsafe {
            cxxshm_lookup(
                self.arms[cell.sc],
                q.pair as c_int,
                q.time,
                c_int::from(self.by_name),
                o.as_mut_ptr(),
                &mut stamp,
            )
        };
        if r != 0 {
            return Err("C++ tf_shm threw".into());
        }
        Ok(Answer {
            stamp: Some(stamp),
            translation: [o[0], o[1], o[2]],
            rotation: [o[3], o[4], o[5], o[6]],
        })
    }

    fn run(&mut self, cell: &Cell, n: usize) -> f64 {
        // SAFETY: a live arm; the index and time arrays have `len` elements.
        unsafe {
            cxxshm_run(
                self.arms[cell.sc],
                cell.pair_idx.as_ptr(),
                cell.times.as_ptr(),
                cell.times.len(),
                n,
                c_int::from(self.by_name),
            )
        }
    }
}

/// The Rust `tf_shm::Buffer` calls the C++ arm wraps: `lookup_transform` or `lookup_pair`.
pub struct RustBuffer {
    name: &'static str,
    buffers: Vec<Option<Buffer>>,
    pairs: Vec<Vec<FramePair>>,
    by_name: bool,
}

impl RustBuffer {
    pub fn new(
        name: &'static str,
        buffers: Vec<Option<Buffer>>,
        pairs: &[Vec<(String, String)>],
        by_name: bool,
    ) -> RustBuffer {
        let pairs = pairs
            .iter()
            .map(|ps| ps.iter().map(|(t, s)| FramePair::new(t, s)).collect())
            .collect();
        RustBuffer {
            name,
            buffers,
            pairs,
            by_name,
        }
    }
}

impl Arm for RustBuffer {
    fn name(&self) -> &'static str {
        self.name
    }

    fn supports(&self, cell: &Cell) -> bool {
        self.buffers[cell.sc].is_some()
    }

    fn answer(&mut self, cell: &Cell, q: &Query) -> Result<Answer, String> {
        let b = self.buffers[cell.sc].as_ref().unwrap();
        let (stamp, t) = if self.by_name {
            let (target, source) = &cell.scenario.pairs[q.pair];
            let r = b
                .lookup_transform(target, source, q.time)
                .map_err(|e| e.to_string())?;
            (r.stamp, r.transform)
        } else {
            b.lookup_pair(&mut self.pairs[cell.sc][q.pair], q.time)
                .map_err(|e| e.to_string())?
        };
        Ok(Answer {
            stamp: Some(stamp),
            translation: t.translation,
            rotation: t.rotation,
        })
    }

    fn run(&mut self, cell: &Cell, n: usize) -> f64 {
        let b = self.buffers[cell.sc].as_ref().unwrap();
        let qs = &cell.queries;
        let mut sum = 0.0;
        let mut i = 0;
        for _ in 0..n {
            let q = &qs[i];
            let r = if self.by_name {
                let (target, source) = &cell.scenario.pairs[q.pair];
                b.lookup_transform(target, source, black_box(q.time))
                    .map(|r| r.transform)
            } else {
                b.lookup_pair(&mut self.pairs[cell.sc][q.pair], black_box(q.time))
                    .map(|r| r.1)
            };
            sum += match r {
                Ok(t) => t.translation[0],
                Err(_) => f64::NAN,
            };
            i = if i + 1 == qs.len() { 0 } else { i + 1 };
        }
        sum
    }
}
