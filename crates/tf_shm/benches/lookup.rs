//! Criterion benchmarks of tf_shm's hot paths.
//!
//! * lookups on chains of depth 1, 3, 8 and 15, every link dynamic with 100 Hz samples over
//!   10 s, at off-grid times (interpolation), exact stamps and time 0; through
//!   `lookup_transform` (names) and `lookup_pair` (resolved ids); in-process and through a
//!   read-only mapping of an arena created and written by a second process;
//! * writer throughput: `set_transform` of in-order samples over many frames.
//!
//! `cargo bench -p tf_shm --bench lookup`. Times are the bench thread's CPU time (see
//! [`ThreadCpu`]). The second process is this same executable,
//! re-run with `TF_SHM_BENCH_CHILD=1`: it creates the shared arenas, prints a read-only
//! `/proc/<pid>/fd/<n>` path to each and keeps them until its stdin closes.
//! The side-by-side comparison with tf2 and tf_tree is `crates/tf_shm_bench`.

use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{BenchmarkId, Criterion, Throughput};
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, FramePair};

const PERIOD_NS: i64 = 10_000_000; // 100 Hz
const SAMPLES: i64 = 1001; // 10 s of history
const T0: i64 = 1_000_000_000_000;
const DEPTHS: [usize; 4] = [1, 3, 8, 15];
/// Query times cycled through per depth: many, so the bench is not one cache-hot bracket.
const QUERIES: usize = 1024;

/// Criterion measurement of the benchmarking thread's CPU time, ns. This machine is a shared
/// 2-core VM: with wall time, a bench that runs while another process is busy is charged that
/// process's time slices, and two benches of the same code differed by 2× between runs.
struct ThreadCpu;

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    (t.tv_sec * 1_000_000_000 + t.tv_nsec) as u64
}

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &NsFormatter
    }
}

/// Values stay in ns (CPU); throughputs in elements per CPU second.
struct NsFormatter;

impl ValueFormatter for NsFormatter {
    fn scale_values(&self, _typical: f64, _values: &mut [f64]) -> &'static str {
        "ns (CPU)"
    }
    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let n = match *t {
            Throughput::Elements(n) => n as f64,
            _ => 1.0,
        };
        for v in values {
            *v = n * 1e9 / *v;
        }
        "elem/CPU-s"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn config() -> ArenaConfig {
    ArenaConfig {
        memory_budget_bytes: 16 << 20,
        ..ArenaConfig::default()
    }
}

fn pose(link: usize, stamp: i64) -> ([f64; 3], [f64; 4]) {
    let t = (stamp - T0) as f64 * 1e-9;
    let i = link as f64;
    let angle = 0.3 + 0.5 * (0.2 * t + i).sin();
    let (s, c) = (angle / 2.0).sin_cos();
    let k = std::f64::consts::FRAC_1_SQRT_2;
    (
        [
            0.5 + 0.1 * (0.7 * t + i).sin(),
            0.2 * (0.3 * t).cos(),
            0.05 * i,
        ],
        [k * s, 0.0, k * s, c],
    )
}

/// Chain `c0 → … → c<depth>`, samples interleaved across links as a live stream.
fn fill_chain(w: &mut ArenaWriter, depth: usize) {
    let names: Vec<String> = (0..=depth).map(|i| format!("c{i}")).collect();
    for k in 0..SAMPLES {
        let stamp = T0 + k * PERIOD_NS;
        for i in 1..=depth {
            let (translation, rotation) = pose(i, stamp);
            w.set_transform(
                &TransformInput {
                    frame_id: &names[i - 1],
                    child_frame_id: &names[i],
                    stamp,
                    translation,
                    rotation,
                },
                "bench",
                false,
            )
            .expect("sample accepted");
        }
    }
}

/// Deterministic query times of each kind.
fn times(kind: &str) -> Vec<i64> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..QUERIES)
        .map(|_| {
            let k = 1 + (next() % (SAMPLES as u64 - 2)) as i64;
            match kind {
                "interp" => T0 + k * PERIOD_NS + 1_000_000 + (next() % 8_000_000) as i64,
                "exact" => T0 + k * PERIOD_NS,
                _ => 0,
            }
        })
        .collect()
}

fn child() {
    use std::os::fd::AsRawFd;
    let mut keep = Vec::new();
    let mut out = std::io::stdout().lock();
    for depth in DEPTHS {
        let mut a = Arena::create_shared(&config(), "tf_shm_bench").expect("create");
        fill_chain(&mut a.writer, depth);
        let fd = a.reader_fd().expect("read-only fd");
        writeln!(out, "/proc/{}/fd/{}", std::process::id(), fd.as_raw_fd()).unwrap();
        keep.push((a, fd));
    }
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    drop(out);
    let mut sink = String::new();
    while std::io::stdin()
        .read_line(&mut sink)
        .map(|n| n > 0)
        .unwrap_or(false)
    {}
}

fn bench_lookups(c: &mut Criterion<ThreadCpu>, mapping: &str, views: &[ArenaView]) {
    for kind in ["interp", "exact", "time0"] {
        let ts = times(kind);
        let mut g = c.benchmark_group(format!("lookup/{mapping}/{kind}"));
        g.throughput(Throughput::Elements(1));
        for (view, depth) in views.iter().zip(DEPTHS) {
            let source = format!("c{depth}");
            // Sanity: every query answers (a failing lookup would time the error path).
            for &t in &ts {
                view.lookup_transform("c0", &source, t)
                    .expect("query answers");
            }
            g.bench_with_input(BenchmarkId::new("names", depth), &depth, |b, _| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % ts.len();
                    black_box(
                        view.lookup_transform("c0", &source, black_box(ts[i]))
                            .is_ok(),
                    )
                })
            });
            let mut pair = FramePair::new("c0", &source);
            g.bench_with_input(BenchmarkId::new("pair", depth), &depth, |b, _| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % ts.len();
                    black_box(view.lookup_pair(&mut pair, black_box(ts[i])).is_ok())
                })
            });
        }
        g.finish();
    }
}

fn bench_writer(c: &mut Criterion<ThreadCpu>) {
    let mut g = c.benchmark_group("writer");
    g.throughput(Throughput::Elements(1));
    for frames in [10usize, 100, 400] {
        // A star of `frames` children under one root, written round-robin at 100 Hz each:
        // every call is an in-order sample of an existing frame once the first round is in.
        let (mut w, _view) = Arena::in_memory(&ArenaConfig {
            memory_budget_bytes: 128 << 20,
            ..ArenaConfig::default()
        })
        .expect("arena");
        let names: Vec<String> = (0..frames).map(|i| format!("f{i}")).collect();
        // The values are computed before the measurement, so only `set_transform` is timed:
        // frame i's k-th sample takes pose k mod POSES (its stamp still grows, so none is a
        // duplicate).
        const POSES: usize = 64;
        let poses: Vec<_> = (0..frames * POSES)
            .map(|j| pose(j % frames, T0 + (j / frames) as i64 * PERIOD_NS))
            .collect();
        let mut k = 0usize;
        g.bench_with_input(
            BenchmarkId::new("set_transform", frames),
            &frames,
            |b, _| {
                b.iter(|| {
                    let i = k % frames;
                    let stamp = T0 + (k / frames) as i64 * PERIOD_NS;
                    let (translation, rotation) = poses[k % (frames * POSES)];
                    k += 1;
                    black_box(w.set_transform(
                        &TransformInput {
                            frame_id: "root",
                            child_frame_id: &names[i],
                            stamp,
                            translation,
                            rotation,
                        },
                        "bench",
                        false,
                    ))
                    .expect("accepted")
                })
            },
        );
    }
    g.finish();
}

fn main() {
    if std::env::var_os("TF_SHM_BENCH_CHILD").is_some() {
        child();
        return;
    }
    // Short windows: 24 lookup benches + 3 writer benches must fit the 20-minute budget of
    // scripts/bench.sh alongside the comparison harness. Flags given on the command line
    // (e.g. `-- --measurement-time 5`) still override these.
    let mut c = Criterion::default()
        .with_measurement(ThreadCpu)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
        .configure_from_args();

    let local: Vec<ArenaView> = DEPTHS
        .iter()
        .map(|&d| {
            let (mut w, v) = Arena::in_memory(&config()).expect("arena");
            fill_chain(&mut w, d);
            v
        })
        .collect();
    bench_lookups(&mut c, "in-process", &local);

    let mut proc = Command::new(std::env::current_exe().expect("own path"))
        .env("TF_SHM_BENCH_CHILD", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn writer process");
    let mut remote = Vec::new();
    for line in BufReader::new(proc.stdout.take().unwrap()).lines() {
        let line = line.expect("child output");
        if line == "ready" {
            break;
        }
        // A new read-only open file description; attach maps it PROT_READ.
        let f = std::fs::File::open(&line).unwrap_or_else(|e| panic!("open {line}: {e}"));
        remote.push(Arena::attach(&f).expect("attach"));
    }
    assert_eq!(remote.len(), DEPTHS.len(), "writer process failed");
    bench_lookups(&mut c, "other-process", &remote);
    drop(proc.stdin.take());
    let _ = proc.wait();

    bench_writer(&mut c);
    c.final_summary();
}
