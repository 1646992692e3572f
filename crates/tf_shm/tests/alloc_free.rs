//! The hot paths allocate nothing: a successful `lookup_transform`,
//! `lookup_pair` (after its first, resolving call) and `set_transform` of a frame that already
//! exists make zero heap allocations, counted by a global allocator.
//!
//! The counter is per thread, so the test harness's other threads (and other tests running in
//! parallel) cannot disturb the count; each check runs on the test's own thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, FramePair};

struct Counting;

thread_local! {
    // `const` init: no lazy initialisation, so touching it inside `alloc` cannot recurse.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap allocations made by `f` on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    let before = ALLOCS.with(Cell::get);
    f();
    ALLOCS.with(Cell::get) - before
}

const PERIOD: i64 = 10_000_000;
const T0: i64 = 1_000_000_000_000;
const SAMPLES: i64 = 1001;
const N: usize = 2000;

fn config() -> ArenaConfig {
    ArenaConfig {
        memory_budget_bytes: 8 << 20,
        ..ArenaConfig::default()
    }
}

fn input<'a>(parent: &'a str, child: &'a str, stamp: i64, i: usize) -> TransformInput<'a> {
    let a = 0.1 + 0.001 * (stamp - T0) as f64 * 1e-7 + i as f64 * 0.1;
    TransformInput {
        frame_id: parent,
        child_frame_id: child,
        stamp,
        translation: [0.1 * i as f64, 1.0, a],
        rotation: [0.0, 0.0, (a / 2.0).sin(), (a / 2.0).cos()],
    }
}

/// `c0 → … → c<depth>` with 10 s of 100 Hz history, plus a static `c<depth> → s`.
fn chain(w: &mut ArenaWriter, depth: usize) -> Vec<String> {
    let names: Vec<String> = (0..=depth).map(|i| format!("c{i}")).collect();
    for k in 0..SAMPLES {
        for i in 1..=depth {
            w.set_transform(
                &input(&names[i - 1], &names[i], T0 + k * PERIOD, i),
                "test",
                false,
            )
            .unwrap();
        }
    }
    w.set_transform(&input(&names[depth], "s", T0, 99), "test", true)
        .unwrap();
    names
}

/// Query times: off-grid (interpolating), exact stamps, and 0 (latest common time).
fn times() -> Vec<i64> {
    (0..N as i64)
        .map(|k| match k % 3 {
            0 => T0 + (1 + k % (SAMPLES - 2)) * PERIOD + 3_333_333,
            1 => T0 + (k % SAMPLES) * PERIOD,
            _ => 0,
        })
        .collect()
}

fn check_lookups(view: &ArenaView, names: &[String]) {
    let ts = times();
    let target = names[0].as_str();
    for source in [names.last().unwrap().as_str(), "s"] {
        // Same-name pairs and reversed direction too: every branch of the walk.
        for (t, s) in [(target, source), (source, target)] {
            let mut pair = FramePair::new(t, s);
            view.lookup_pair(&mut pair, ts[0]).unwrap(); // resolves the names (may allocate)
                                                         // Fills this thread's cached pair for the names (may allocate).
            view.lookup_transform(t, s, ts[0]).unwrap();
            let mut ok = 0usize;
            let n = allocations(|| {
                for &time in &ts {
                    ok += usize::from(view.lookup_transform(t, s, time).is_ok());
                    ok += usize::from(view.lookup_pair(&mut pair, time).is_ok());
                }
            });
            assert_eq!(ok, 2 * ts.len(), "every lookup {t} ← {s} must succeed");
            assert_eq!(
                n,
                0,
                "{n} allocations in {} lookups {t} ← {s}",
                2 * ts.len()
            );
        }
    }
}

#[test]
fn the_counter_counts() {
    // Guards against a vacuous pass: a counter that never counts would prove nothing.
    assert_eq!(
        allocations(|| drop(std::hint::black_box(Box::new(7u64)))),
        1
    );
    assert_eq!(
        allocations(|| drop(std::hint::black_box(String::from("frame")))),
        1
    );
}

#[test]
fn lookups_do_not_allocate() {
    for depth in [1, 3, 8, 15] {
        let (mut w, view) = Arena::in_memory(&config()).unwrap();
        let names = chain(&mut w, depth);
        check_lookups(&view, &names);
    }
}

#[test]
fn lookups_through_a_read_only_mapping_do_not_allocate() {
    let mut shared = Arena::create_shared(&config(), "alloc_free").unwrap();
    let names = chain(&mut shared.writer, 8);
    let view = Arena::attach(shared.reader_fd().unwrap()).unwrap();
    check_lookups(&view, &names);
}

#[test]
fn writes_to_existing_frames_do_not_allocate() {
    let (mut w, _view) = Arena::in_memory(&config()).unwrap();
    let names: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
    // First pass creates the frames (interning allocates; that is allowed) and lets every ring
    // grow to hold 10 s at 100 Hz, so the measured writes are the steady state.
    let mut k = 0;
    while k < 1100 {
        for (i, n) in names.iter().enumerate() {
            w.set_transform(&input("root", n, T0 + k * PERIOD, i), "test", false)
                .unwrap();
        }
        k += 1;
    }
    w.set_transform(&input("root", "static", T0, 0), "test", true)
        .unwrap();
    let mut stored = 0;
    let n = allocations(|| {
        for round in 0..(N / names.len()) as i64 {
            for (i, name) in names.iter().enumerate() {
                let stamp = T0 + (k + round) * PERIOD;
                stored += usize::from(
                    w.set_transform(&input("root", name, stamp, i), "test", false)
                        .is_ok(),
                );
            }
            // A static frame rewritten (last write wins).
            stored += usize::from(
                w.set_transform(&input("root", "static", T0, 1), "test", true)
                    .is_ok(),
            );
        }
    });
    assert_eq!(
        stored,
        (N / names.len()) * (names.len() + 1),
        "every write must be accepted"
    );
    assert_eq!(n, 0, "{n} allocations in {stored} set_transform calls");
}
