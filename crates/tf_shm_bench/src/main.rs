//! tf_shm against tf2 BufferCore (C++) and tf_tree 0.0.9 on identical scenarios, in one run,
//! with a *minimal* arm (`minimal.rs`: the work of an interpolated chain lookup and nothing
//! else) as this machine's floor.
//!
//! ```text
//! tf_shm_bench [--rounds N] [--ms M] [--queries Q] [--thread-secs S]    (--help for each)
//! tf_shm_bench --profile ARM SCENARIO KIND LOOKUPS        (one arm on one cell, for callgrind)
//! ```
//!
//! Prints Markdown (the body of docs/benchmarks.md) on stdout, progress on stderr.
//! `scripts/bench.sh` is the one command that builds and runs this with the other benches.
//!
//! Method: every arm is loaded with the same samples; before any timing, every query of every
//! cell is answered by every arm and compared with tf2 (translation and rotation up to sign to
//! 1e-9, stamps exactly where the arm reports one). Then the arms run alternately (A B C …,
//! A B C …, …) for `--rounds` rounds of about `--ms` ms each, so slow drift of a shared
//! machine hits every arm alike; ratios are taken per round and summarised by median and range.

mod arms;
mod cxx;
mod minimal;
mod scenario;
mod tf2;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use arms::{Answer, Arm, Cell, How, Tf2, TfShm, TfTree};
use scenario::{Scenario, TimeKind};
use tf_shm::fast_path::{declines, reset_declines, Declines};
use tf_shm::rendezvous::{Join, Serve};
use tf_shm::{Arena, ArenaConfig, ArenaView, FramePair};

// The C++ arm (src/cxx_arm.cpp) calls tf_shm_c's C ABI: load the crate so its symbols link.
extern crate tf_shm_c;

const TOL: f64 = 1e-9;

/// tf_shm against tf2 BufferCore (C++) and tf_tree on identical scenarios, in one run, with a
/// minimal arm as this machine's floor. Prints Markdown (the body of docs/benchmarks.md) on
/// stdout and progress on stderr; scripts/bench.sh builds and runs it with the other benches.
///
/// Every arm answers every query of every cell first and is compared with tf2; then the arms run
/// alternately for --rounds rounds of about --ms ms each, and ratios are taken per round.
#[derive(clap::Parser)]
#[command(name = "tf_shm_bench", max_term_width = 100)]
struct Opts {
    /// Rounds: each arm is measured once per round, the arms alternating
    #[arg(long, default_value_t = 7, value_name = "N", value_parser = at_least_one)]
    rounds: usize,
    /// Length of one measurement, ms
    #[arg(long, default_value_t = 25, value_name = "MS")]
    ms: u64,
    /// Queries per cell (scenario and time kind)
    #[arg(long, default_value_t = 1024, value_name = "Q", value_parser = at_least_one)]
    queries: usize,
    /// Length of each multi-threaded run, s
    #[arg(long, default_value_t = 1.0, value_name = "S")]
    thread_secs: f64,
    /// Instead of the comparison, run one arm (`pair`, `names`, `tf_tree`, `tf2`) on one
    /// cell (scenario `1`, `3`, `8`, `15` or `tree`; kind `interp`, `recent`, `exact` or
    /// `time0`) for LOOKUPS lookups and print the checksum: for instruction counts under
    /// `valgrind --tool=callgrind` (per lookup: the difference of two runs over the difference
    /// of their LOOKUPS)
    #[arg(long, num_args = 4, value_names = ["ARM", "SCENARIO", "KIND", "LOOKUPS"])]
    profile: Option<Vec<String>>,
}

fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err("must be at least 1".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_opts() -> Opts {
    <Opts as clap::Parser>::parse()
}

fn arena_config() -> ArenaConfig {
    // Defaults (4096 frames, 10 s, 1 kHz max rate) except a budget that surely holds the
    // 200-frame tree's grown rings (~30 MiB) with room to spare.
    ArenaConfig {
        memory_budget_bytes: 96 << 20,
        ..ArenaConfig::default()
    }
}

/// Child mode: create one shared arena per scenario, fill it, print a read-only path to each
/// (`/proc/<pid>/fd/<n>`), then hold them until the parent closes our stdin.
fn writer_child() {
    use std::os::fd::AsRawFd;
    let mut keep = Vec::new();
    let out = std::io::stdout();
    let mut out = out.lock();
    for sc in scenario::all() {
        let mut shared =
            Arena::create_shared(&arena_config(), "tf_shm_bench").expect("create arena");
        arms::fill_tf_shm(&mut shared.writer, &sc);
        let fd = shared.reader_fd().expect("read-only fd");
        writeln!(out, "/proc/{}/fd/{}", std::process::id(), fd.as_raw_fd()).unwrap();
        keep.push((shared, fd));
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
    drop(keep);
}

/// Spawns the writer child and maps its arenas read-only.
fn remote_views() -> (std::process::Child, Vec<ArenaView>) {
    let mut child = Command::new(std::env::current_exe().expect("own path"))
        .arg("--writer-child")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn writer child");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut views = Vec::new();
    loop {
        let line = lines
            .next()
            .expect("writer child output")
            .expect("read child");
        if line == "ready" {
            break;
        }
        // Opening the path read-only gives a new read-only description; attach maps it
        // PROT_READ after checking its seals and header.
        let f = std::fs::File::open(&line).unwrap_or_else(|e| panic!("open {line}: {e}"));
        views.push(Arena::attach(&f).expect("attach"));
    }
    (child, views)
}

/// CPU time consumed by the calling thread, ns.
fn thread_cpu_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

fn close_enough(a: &Answer, r: &Answer) -> (f64, f64) {
    let dt = (0..3)
        .map(|i| (a.translation[i] - r.translation[i]).abs())
        .fold(0.0, f64::max);
    let same = (0..4)
        .map(|i| (a.rotation[i] - r.rotation[i]).abs())
        .fold(0.0, f64::max);
    let flip = (0..4)
        .map(|i| (a.rotation[i] + r.rotation[i]).abs())
        .fold(0.0, f64::max);
    (dt, same.min(flip))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn range(v: &[f64]) -> (f64, f64) {
    (
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// Results of one cell: per arm, ns/lookup per round (empty if the arm disagreed or failed).
struct CellResult {
    scenario: String,
    kind: TimeKind,
    ns: Vec<Vec<f64>>,
    notes: Vec<String>,
    /// Per arm, tf_shm's fast paths that declined over one calibration batch, and its size.
    declines: Vec<(Declines, usize)>,
}

const A_PAIR: usize = 0;
const A_NAMES: usize = 1;
const A_REMOTE: usize = 2;
const A_TF2: usize = 3;
const A_TREE: usize = 4;
const A_MIN: usize = 5;
const A_WALK: usize = 6;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--writer-child") {
        writer_child();
        return;
    }
    let o = parse_opts();
    if let Some(p) = &o.profile {
        profile(&o, p);
        return;
    }
    let scenarios = scenario::all();

    eprintln!("building arms …");
    let local: Vec<ArenaView> = scenarios
        .iter()
        .map(|sc| {
            let (mut w, v) = Arena::in_memory(&arena_config()).expect("arena");
            arms::fill_tf_shm(&mut w, sc);
            // The writer is dropped: the in-process view keeps the arena alive.
            v
        })
        .collect();
    let (mut child, remote) = remote_views();
    let tf_tree = TfTree::new(&scenarios);
    let mut arms: Vec<Option<Box<dyn Arm>>> = vec![
        Some(Box::new(TfShm::new(
            "tf_shm pair",
            local.clone(),
            &scenarios,
            How::Pair,
        ))),
        Some(Box::new(TfShm::new(
            "tf_shm names",
            local.clone(),
            &scenarios,
            How::Names,
        ))),
        Some(Box::new(TfShm::new(
            "tf_shm pair, other process",
            remote.clone(),
            &scenarios,
            How::Pair,
        ))),
        Some(Box::new(Tf2::new(&scenarios))),
        None,
        Some(Box::new(minimal::Minimal::new(&scenarios))),
        Some(Box::new(TfShm::new(
            "tf_shm walk",
            local.clone(),
            &scenarios,
            How::Walk,
        ))),
    ];
    let tf_tree_error = match tf_tree {
        Ok(t) => {
            arms[A_TREE] = Some(Box::new(t));
            None
        }
        Err(e) => Some(e),
    };
    let arm_names = [
        "tf_shm pair",
        "tf_shm names",
        "tf_shm pair, other process",
        "tf2",
        "tf_tree",
        "minimal",
        "tf_shm walk",
    ];

    let mut results = Vec::new();
    for (sc_i, sc) in scenarios.iter().enumerate() {
        for kind in TimeKind::ALL {
            let cell = Cell::new(sc_i, sc, scenario::queries(sc, kind, o.queries));
            results.push(run_cell(&o, &cell, kind, &mut arms, A_TF2));
        }
    }

    let threads = if let Some(e) = &tf_tree_error {
        eprintln!("tf_tree unavailable: {e}");
        thread_bench(&o, &scenarios, &local, None)
    } else {
        // Rebuild tf_tree for the thread bench: the boxed arm above is type-erased.
        thread_bench(
            &o,
            &scenarios,
            &local,
            TfTree::new(&scenarios).ok().as_ref(),
        )
    };

    drop(child.stdin.take());
    let _ = child.wait();

    let cxx = cxx_cells(&o, &scenarios, arms[A_TF2].take().expect("tf2 arm"));

    print_report(&o, &results, &threads, &arm_names, tf_tree_error.as_deref());
    print_cxx_report(&o, &cxx);
}

/// `--profile ARM SCENARIO KIND LOOKUPS`: one arm on one cell, nothing else built.
fn profile(o: &Opts, p: &[String]) {
    let [arm, sc, kind, n] = p else {
        unreachable!("clap takes four values")
    };
    let scenarios = vec![match sc.as_str() {
        "tree" => scenario::tree200(),
        d => scenario::chain(d.parse().expect("SCENARIO: 1, 3, 8, 15 or tree")),
    }];
    let kind = match kind.as_str() {
        "interp" => TimeKind::Interp,
        "recent" => TimeKind::Recent,
        "exact" => TimeKind::Exact,
        "time0" => TimeKind::Latest,
        k => panic!("KIND {k}: interp, recent, exact or time0"),
    };
    let n: usize = n.parse().expect("LOOKUPS: a count");
    let cell = Cell::new(
        0,
        &scenarios[0],
        scenario::queries(&scenarios[0], kind, o.queries),
    );
    let view = || {
        let (mut w, v) = Arena::in_memory(&arena_config()).expect("arena");
        arms::fill_tf_shm(&mut w, &scenarios[0]);
        vec![v]
    };
    let mut arm: Box<dyn Arm> = match arm.as_str() {
        "pair" => Box::new(TfShm::new("tf_shm pair", view(), &scenarios, How::Pair)),
        "names" => Box::new(TfShm::new("tf_shm names", view(), &scenarios, How::Names)),
        "tf_tree" => Box::new(TfTree::new(&scenarios).expect("tf_tree")),
        "tf2" => Box::new(Tf2::new(&scenarios)),
        a => panic!("ARM {a}: pair, names, tf_tree or tf2"),
    };
    // One pass over the queries first: a pair's first lookup resolves its names.
    let warm = arm.run(&cell, cell.queries.len());
    // Wall time through std (libc's clock, which valgrind runs; rustix's vDSO call it does
    // not): a quick A/B on a quiet machine, not the report's measurement.
    reset_declines();
    let start = Instant::now();
    let sum = arm.run(&cell, n);
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    println!("{}", warm + sum);
    eprintln!("{} {ns:.1} ns per lookup (wall time)", arm.name());
    eprintln!("fast paths that declined: {:?}", declines());
}

/// Arms of the C++ table, the reference (tf2) first.
const C_TF2: usize = 0;
const C_RUST_NAMES: usize = 1;
const C_CXX_NAMES: usize = 2;
const C_RUST_PAIR: usize = 3;
const C_CXX_PAIR: usize = 4;

/// The C++ rows: chains of depth 3 and 15 served through the rendezvous (as by the bridge),
/// read by `tf_shm.hpp`'s `tf_shm::Buffer` and by the Rust `tf_shm::Buffer` it wraps, with tf2.
fn cxx_cells(o: &Opts, scenarios: &[Scenario], tf2: Box<dyn Arm>) -> Vec<CellResult> {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("tf_shm_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("runtime dir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    // The C++ Buffer finds the arena through the environment, as a node would.
    std::env::set_var("TF_SHM_RUNTIME_DIR", &dir);
    let chosen = |s: &Scenario| s.name == "chain depth 3" || s.name == "chain depth 15";
    let names: Vec<Option<String>> = scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| chosen(s).then(|| format!("bench{i}")))
        .collect();
    let open = |n: &str| Join::new().runtime_dir(&dir).name(n).domain(0);
    let mut owners = Vec::new();
    for (sc, n) in scenarios.iter().zip(&names) {
        if let Some(n) = n {
            let mut owner = Serve::new(arena_config())
                .runtime_dir(&dir)
                .name(n)
                .domain(0)
                .serve()
                .expect("serve a bench arena");
            arms::fill_tf_shm(owner.writer(), sc);
            owners.push(owner);
        }
    }
    let buffers = || -> Vec<Option<tf_shm::Buffer>> {
        names
            .iter()
            .map(|n| {
                n.as_ref()
                    .map(|n| open(n).open().expect("open a bench arena"))
            })
            .collect()
    };
    let pairs: Vec<Vec<(String, String)>> = scenarios.iter().map(|s| s.pairs.clone()).collect();
    let mut arms: Vec<Option<Box<dyn Arm>>> = vec![
        Some(tf2),
        Some(Box::new(cxx::RustBuffer::new(
            "Rust Buffer names",
            buffers(),
            &pairs,
            true,
        ))),
        Some(Box::new(cxx::Cxx::new("C++ names", &names, &pairs, true))),
        Some(Box::new(cxx::RustBuffer::new(
            "Rust Buffer pair",
            buffers(),
            &pairs,
            false,
        ))),
        Some(Box::new(cxx::Cxx::new("C++ pair", &names, &pairs, false))),
    ];
    let mut results = Vec::new();
    for (sc_i, sc) in scenarios.iter().enumerate() {
        if names[sc_i].is_none() {
            continue;
        }
        for kind in [TimeKind::Interp, TimeKind::Recent, TimeKind::Latest] {
            let cell = Cell::new(sc_i, sc, scenario::queries(sc, kind, o.queries));
            results.push(run_cell(o, &cell, kind, &mut arms, C_TF2));
        }
    }
    drop(arms);
    drop(owners);
    let _ = std::fs::remove_dir_all(&dir);
    results
}

/// Median over rounds of (a − b), ns.
fn diff_ns(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    Some(median(&mut d))
}

fn print_cxx_report(o: &Opts, cxx: &[CellResult]) {
    println!("\n### C++: tf_shm.hpp against tf2's C++ BufferCore (ns per lookup, median of {} alternating rounds)\n", o.rounds);
    println!(
        "*C++ names* = `tf_shm::Buffer::lookupTransform(target, source, TimePoint)` of \
         `tf_shm.hpp` (returns a `TransformStamped` with both names, as tf2's does); *C++ pair* \
         = `tf_shm::FramePair::lookup(TimePoint)`; both called from C++ \
         (`crates/tf_shm_bench/src/cxx_arm.cpp`) through the C ABI of `tf_shm_c`. *Rust Buffer* \
         = the `tf_shm::Buffer::lookup_transform` / `lookup_pair` calls they wrap. The arenas \
         are served through the rendezvous as the bridge serves them. tf2 as above. *C++ − \
         Rust* = median of per-round differences.\n"
    );
    println!("| scenario | query | tf2 | Rust Buffer names | C++ names | Rust Buffer pair | C++ pair | tf2 / C++ names | tf2 / C++ pair | C++ − Rust, names | C++ − Rust, pair |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let fd = |d: Option<f64>| d.map_or("—".to_string(), |d| format!("{d:+.1} ns"));
    for r in cxx {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            r.kind.label(),
            fmt_ns(&r.ns[C_TF2]),
            fmt_ns(&r.ns[C_RUST_NAMES]),
            fmt_ns(&r.ns[C_CXX_NAMES]),
            fmt_ns(&r.ns[C_RUST_PAIR]),
            fmt_ns(&r.ns[C_CXX_PAIR]),
            fmt_ratio(ratios(&r.ns[C_TF2], &r.ns[C_CXX_NAMES])),
            fmt_ratio(ratios(&r.ns[C_TF2], &r.ns[C_CXX_PAIR])),
            fd(diff_ns(&r.ns[C_CXX_NAMES], &r.ns[C_RUST_NAMES])),
            fd(diff_ns(&r.ns[C_CXX_PAIR], &r.ns[C_RUST_PAIR])),
        );
    }
    for r in cxx.iter().flat_map(|r| r.notes.iter().map(move |n| (r, n))) {
        println!("\n- {} / {}: {}", r.0.scenario, r.0.kind.label(), r.1);
    }
    println!("\n### Targets (C++)\n");
    let find = |k: TimeKind| {
        cxx.iter()
            .find(|r| r.scenario == "chain depth 3" && r.kind == k)
    };
    for (k, goal) in [(TimeKind::Interp, 3.0), (TimeKind::Latest, 2.0)] {
        if let Some(r) = find(k) {
            let m = ratios(&r.ns[C_TF2], &r.ns[C_CXX_NAMES]).map_or(f64::NAN, |x| x.0);
            println!(
                "- C++ by name ≥ {goal:.0}× tf2 at depth 3, {}: {m:.1}× → {}",
                k.label(),
                if m >= goal { "met" } else { "**missed**" }
            );
        }
    }
    let worst = |a: usize, b: usize| {
        cxx.iter()
            .filter_map(|r| diff_ns(&r.ns[a], &r.ns[b]))
            .fold(f64::NEG_INFINITY, f64::max)
    };
    for (label, a, b) in [
        ("names", C_CXX_NAMES, C_RUST_NAMES),
        ("pair", C_CXX_PAIR, C_RUST_PAIR),
    ] {
        let w = worst(a, b);
        println!(
            "- C++ costs ≤ 10 ns more than the Rust call it wraps ({label}): at most {w:+.1} ns → {}",
            if w <= 10.0 { "met" } else { "**missed**" }
        );
    }
}

/// Times one cell: every arm is checked against `arms[reference]` (tf2), then timed in
/// alternating rounds.
fn run_cell(
    o: &Opts,
    cell: &Cell,
    kind: TimeKind,
    arms: &mut [Option<Box<dyn Arm>>],
    reference: usize,
) -> CellResult {
    eprintln!("{} / {}", cell.scenario.name, kind.label());
    let mut notes = Vec::new();
    // Agreement with tf2, query by query, before timing anything.
    let answers: Vec<Result<Answer, String>> = {
        let tf2 = arms[reference].as_mut().unwrap();
        cell.queries.iter().map(|q| tf2.answer(cell, q)).collect()
    };
    if let Some(e) = answers.iter().find_map(|r| r.as_ref().err()) {
        notes.push(format!("tf2 itself failed a query: {e}"));
    }
    let mut ok = vec![false; arms.len()];
    for (a, arm) in arms.iter_mut().enumerate() {
        let Some(arm) = arm else { continue };
        if !arm.supports(cell) {
            continue;
        }
        if a == reference {
            ok[a] = answers.iter().all(|r| r.is_ok());
            continue;
        }
        let (mut max_dt, mut max_dq, mut bad) = (0.0f64, 0.0f64, None);
        for (q, r) in cell.queries.iter().zip(&answers) {
            let Ok(r) = r else { continue };
            match arm.answer(cell, q) {
                Ok(ans) => {
                    let (dt, dq) = close_enough(&ans, r);
                    max_dt = max_dt.max(dt);
                    max_dq = max_dq.max(dq);
                    if let (Some(s), Some(rs)) = (ans.stamp, r.stamp) {
                        if s != rs && bad.is_none() {
                            bad = Some(format!("stamp {s} ≠ tf2's {rs} at time {}", q.time));
                        }
                    }
                }
                Err(e) => {
                    if bad.is_none() {
                        bad = Some(format!("error at time {}: {e}", q.time));
                    }
                }
            }
        }
        if max_dt > TOL || max_dq > TOL {
            bad.get_or_insert(format!(
                "max |Δt| {max_dt:.1e}, max |Δq| {max_dq:.1e} > {TOL:.0e}"
            ));
        }
        match bad {
            None => ok[a] = true,
            Some(b) => notes.push(format!("{} disagrees with tf2, not timed: {b}", arm.name())),
        }
    }

    // Calibrate a batch size per arm for ~o.ms per measurement.
    let mut n = vec![0usize; arms.len()];
    let mut declined = vec![(Declines::default(), 0); arms.len()];
    for (a, arm) in arms.iter_mut().enumerate() {
        let Some(arm) = arm else { continue };
        if !ok[a] {
            continue;
        }
        let probe = 2000;
        std::hint::black_box(arm.run(cell, probe)); // warm caches
        reset_declines();
        let t = thread_cpu_ns();
        std::hint::black_box(arm.run(cell, probe));
        let per = (thread_cpu_ns() - t) as f64 * 1e-9 / probe as f64;
        declined[a] = (declines(), probe);
        n[a] = ((o.ms as f64 * 1e-3 / per) as usize).clamp(1000, 50_000_000);
    }
    let mut ns = vec![Vec::new(); arms.len()];
    for _ in 0..o.rounds {
        for (a, arm) in arms.iter_mut().enumerate() {
            let Some(arm) = arm else { continue };
            if !ok[a] {
                continue;
            }
            // Thread CPU time, not wall time: on a shared 2-core machine a preempted
            // measurement would otherwise charge another process's time slice to this arm.
            let t = thread_cpu_ns();
            let sum = arm.run(cell, n[a]);
            let dt = thread_cpu_ns() - t;
            std::hint::black_box(sum);
            assert!(
                sum.is_finite(),
                "{} failed a lookup while timed",
                arm.name()
            );
            ns[a].push(dt as f64 / n[a] as f64);
        }
    }
    CellResult {
        scenario: cell.scenario.name.clone(),
        kind,
        ns,
        notes,
        declines: declined,
    }
}

/// Lookups/s with 1 and 2 reader threads (each its own handles), arms alternated per round.
struct ThreadResult {
    scenario: String,
    arm: &'static str,
    /// Per thread count (1, 2): lookups per wall second, per round.
    rates: [Vec<f64>; 2],
    /// Per thread count (1, 2): lookups per CPU second (all threads), per round.
    per_cpu: [Vec<f64>; 2],
}

fn thread_bench(
    o: &Opts,
    scenarios: &[Scenario],
    local: &[ArenaView],
    tree: Option<&TfTree>,
) -> Vec<ThreadResult> {
    let tf2 = Tf2::new(scenarios);
    let mut out = Vec::new();
    let chosen: Vec<usize> = scenarios
        .iter()
        .enumerate()
        .filter(|(_, s)| s.name == "chain depth 3" || s.name == "chain depth 15")
        .map(|(i, _)| i)
        .collect();
    let dur = Duration::from_secs_f64(o.thread_secs);
    let rounds = 3;
    for &sc in &chosen {
        let cell = Cell::new(
            sc,
            &scenarios[sc],
            scenario::queries(&scenarios[sc], TimeKind::Recent, o.queries),
        );
        eprintln!("threads: {}", scenarios[sc].name);
        let mut res = vec![
            ThreadResult {
                scenario: scenarios[sc].name.clone(),
                arm: "tf_shm pair",
                rates: [vec![], vec![]],
                per_cpu: [vec![], vec![]],
            },
            ThreadResult {
                scenario: scenarios[sc].name.clone(),
                arm: "tf2",
                rates: [vec![], vec![]],
                per_cpu: [vec![], vec![]],
            },
        ];
        if tree.is_some() {
            res.push(ThreadResult {
                scenario: scenarios[sc].name.clone(),
                arm: "tf_tree",
                rates: [vec![], vec![]],
                per_cpu: [vec![], vec![]],
            });
        }
        for _ in 0..rounds {
            for (ti, threads) in [1usize, 2].into_iter().enumerate() {
                for r in res.iter_mut() {
                    let rate = match r.arm {
                        "tf_shm pair" => run_threads(threads, dur, |stop: &dyn Fn() -> bool| {
                            let view = local[sc].clone();
                            let mut pairs: Vec<FramePair> = cell
                                .scenario
                                .pairs
                                .iter()
                                .map(|(t, s)| FramePair::new(t, s))
                                .collect();
                            let mut count = 0u64;
                            while !stop() {
                                for q in &cell.queries {
                                    let r = view.lookup_pair(
                                        &mut pairs[q.pair],
                                        std::hint::black_box(q.time),
                                    );
                                    std::hint::black_box(r.is_ok());
                                }
                                count += cell.queries.len() as u64;
                            }
                            count
                        }),
                        "tf2" => run_threads(threads, dur, |stop: &dyn Fn() -> bool| {
                            let b = &tf2.buffers[sc];
                            let mut count = 0u64;
                            while !stop() {
                                std::hint::black_box(b.run(
                                    &cell.pair_idx,
                                    &cell.times,
                                    cell.queries.len(),
                                ));
                                count += cell.queries.len() as u64;
                            }
                            count
                        }),
                        _ => {
                            let t = tree.unwrap();
                            run_threads(threads, dur, |stop: &dyn Fn() -> bool| {
                                let tr = t.tree(sc);
                                let plans = t.plans(sc);
                                let mut count = 0u64;
                                while !stop() {
                                    let g = tr.guard();
                                    for q in &cell.queries {
                                        let r = arms::tf_tree_eval(
                                            &plans[q.pair],
                                            &g,
                                            std::hint::black_box(q.time),
                                        );
                                        std::hint::black_box(r.is_ok());
                                    }
                                    count += cell.queries.len() as u64;
                                }
                                count
                            })
                        }
                    };
                    r.rates[ti].push(rate.0);
                    r.per_cpu[ti].push(rate.1);
                }
            }
        }
        out.extend(res);
    }
    out
}

/// Runs `body` on `threads` threads for `dur`; returns (total lookups per wall second,
/// lookups per CPU second summed over the threads). The second stays meaningful when other
/// processes compete for the two cores; the first is what a user sees on an idle machine.
fn run_threads<F>(threads: usize, dur: Duration, body: F) -> (f64, f64)
where
    F: Fn(&dyn Fn() -> bool) -> u64 + Sync,
{
    let barrier = Barrier::new(threads + 1);
    let (total, cpu) = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let c0 = thread_cpu_ns();
                    let deadline = Instant::now() + dur;
                    let n = body(&|| Instant::now() >= deadline);
                    (n, thread_cpu_ns() - c0)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let (n, c) = hs
            .into_iter()
            .map(|h| h.join().unwrap())
            .fold((0u64, 0i64), |a, b| (a.0 + b.0, a.1 + b.1));
        let wall = start.elapsed();
        ((n, wall), c)
    });
    let (n, wall) = total;
    (
        n as f64 / wall.as_secs_f64(),
        n as f64 / (cpu as f64 * 1e-9),
    )
}

fn fmt_ns(v: &[f64]) -> String {
    if v.is_empty() {
        return "—".into();
    }
    let mut c = v.to_vec();
    let m = median(&mut c);
    if m >= 10_000.0 {
        format!("{:.1} µs", m / 1000.0)
    } else {
        format!("{m:.0}")
    }
}

fn ratios(num: &[f64], den: &[f64]) -> Option<(f64, f64, f64)> {
    if num.is_empty() || den.is_empty() {
        return None;
    }
    let mut r: Vec<f64> = num.iter().zip(den).map(|(a, b)| a / b).collect();
    let (lo, hi) = range(&r);
    Some((median(&mut r), lo, hi))
}

fn fmt_ratio(r: Option<(f64, f64, f64)>) -> String {
    match r {
        None => "—".into(),
        Some((m, lo, hi)) => format!("{m:.1}× [{lo:.1}–{hi:.1}]"),
    }
}

fn print_report(
    o: &Opts,
    results: &[CellResult],
    threads: &[ThreadResult],
    arm_names: &[&str],
    tf_tree_error: Option<&str>,
) {
    println!(
        "### Lookup latency, ns per lookup (median of {} alternating rounds)\n",
        o.rounds
    );
    println!(
        "Each cell cycles through {} queries; lower is better. *pair* = `ArenaView::lookup_pair` \
         (resolved ids), *names* = `lookup_transform(&str, &str, t)`; *other process* = \
         `lookup_pair` through a `PROT_READ` mapping of an arena created and filled by a \
         separate writer process; tf2 = `BufferCore::lookupTransform` (C++, ROS 1 0.7.6); \
         tf_tree = `Plan::at` / `Plan::latest_common` with one `Guard` per batch; *minimal* = \
         the same reads and arithmetic as `lookup_pair`'s common case written inline over plain \
         memory, nothing else (chains queried inside their history only; see \
         `crates/tf_shm_bench/src/minimal.rs`); *walk* = `tf_shm::walk::lookup_transform` by \
         names, keeping nothing between lookups: at time 0, what a lookup costs when a link of \
         its chain changed since the last one (a pair, and the names API's cached one, give \
         their kept time-0 answer while no link of the chain changes).\n",
        o.queries
    );
    print!("| scenario | query |");
    for n in arm_names {
        print!(" {n} |");
    }
    println!();
    println!("|---|---|{}", "---:|".repeat(arm_names.len()));
    for r in results {
        print!("| {} | {} |", r.scenario, r.kind.label());
        for v in &r.ns {
            print!(" {} |", fmt_ns(v));
        }
        println!();
    }

    println!("\n### Ratios (median [min–max] of per-round ratios; > 1 means tf_shm is faster, except in the last two columns)\n");
    println!("| scenario | query | tf2 / tf_shm names | tf2 / tf_shm pair | tf_tree / tf_shm pair | tf_tree / tf_shm walk | other process / in-process (pair) | tf_shm names / pair | tf_shm pair / minimal |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in results {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            r.kind.label(),
            fmt_ratio(ratios(&r.ns[A_TF2], &r.ns[A_NAMES])),
            fmt_ratio(ratios(&r.ns[A_TF2], &r.ns[A_PAIR])),
            fmt_ratio(ratios(&r.ns[A_TREE], &r.ns[A_PAIR])),
            fmt_ratio(ratios(&r.ns[A_TREE], &r.ns[A_WALK])),
            fmt_ratio(ratios(&r.ns[A_REMOTE], &r.ns[A_PAIR])),
            fmt_ratio(ratios(&r.ns[A_NAMES], &r.ns[A_PAIR])),
            fmt_ratio(ratios(&r.ns[A_PAIR], &r.ns[A_MIN])),
        );
    }

    let notes: Vec<String> = results
        .iter()
        .flat_map(|r| {
            r.notes
                .iter()
                .map(move |n| format!("{} / {}: {n}", r.scenario, r.kind.label()))
        })
        .collect();
    println!("\n### Agreement check\n");
    println!(
        "Before timing, every query of every cell was answered by every arm and compared with \
         tf2: translation within {TOL:.0e}, rotation within {TOL:.0e} up to sign, and the \
         returned stamp equal (tf_shm; tf_tree returns none)."
    );
    if let Some(e) = tf_tree_error {
        println!("\n**tf_tree could not be used:** {e}");
    }
    if notes.is_empty() {
        println!("\nAll arms agreed on every query.");
    } else {
        println!();
        for n in notes {
            println!("- {n}");
        }
    }

    print_declines(results, arm_names);

    println!(
        "\n### Reader threads (lookups/s, chain queried at off-grid times in the newest 100 ms)\n"
    );
    println!(
        "Median of 3 alternating rounds of {:.1} s. *per CPU-s* divides by the CPU time the \
         reader threads actually got, which stays meaningful when other processes share the \
         2 cores; wall-clock rates and their scaling are only meaningful on an idle machine \
         (see the load average above).\n",
        o.thread_secs
    );
    println!("| scenario | arm | 1 thread, lookups/s | 2 threads, lookups/s | 2 / 1 | 1 thread, per CPU-s | 2 threads, per CPU-s |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for t in threads {
        let med = |v: &Vec<f64>| median(&mut v.clone());
        let (m1, m2) = (med(&t.rates[0]), med(&t.rates[1]));
        let (c1, c2) = (med(&t.per_cpu[0]), med(&t.per_cpu[1]));
        println!(
            "| {} | {} | {:.2} M | {:.2} M | {:.2}× | {:.2} M | {:.2} M |",
            t.scenario,
            t.arm,
            m1 / 1e6,
            m2 / 1e6,
            m2 / m1,
            c1 / 1e6,
            c2 / 1e6
        );
    }

    println!("\n### Targets\n");
    let find = |sc: &str, k: TimeKind| results.iter().find(|r| r.scenario == sc && r.kind == k);
    let med = |v: &[f64]| {
        let mut c = v.to_vec();
        if c.is_empty() {
            f64::NAN
        } else {
            median(&mut c)
        }
    };
    if let Some(r) = find("chain depth 3", TimeKind::Interp) {
        let p = med(&r.ns[A_PAIR]);
        let n = med(&r.ns[A_NAMES]);
        println!(
            "- depth-3 interpolated lookup < 150 ns: pair {p:.0} ns, names {n:.0} ns → {}",
            if p < 150.0 {
                "met (pair)"
            } else {
                "**missed**"
            }
        );
    }
    for (sc, k) in [
        ("chain depth 3", TimeKind::Interp),
        ("chain depth 3", TimeKind::Recent),
        ("chain depth 15", TimeKind::Interp),
        ("chain depth 15", TimeKind::Recent),
    ] {
        if let Some(r) = find(sc, k) {
            let a = ratios(&r.ns[A_TF2], &r.ns[A_NAMES]).map_or(f64::NAN, |x| x.0);
            let b = ratios(&r.ns[A_TF2], &r.ns[A_PAIR]).map_or(f64::NAN, |x| x.0);
            println!(
                "- ≥ 8× tf2 at {sc}, {}: {a:.1}× (names), {b:.1}× (pair) → {}",
                k.label(),
                if a >= 8.0 {
                    "met"
                } else if b >= 8.0 {
                    "met with pair only"
                } else {
                    "**missed**"
                }
            );
        }
    }
    for k in [TimeKind::Interp, TimeKind::Recent] {
        if let Some(r) = find("chain depth 3", k) {
            let c = ratios(&r.ns[A_TREE], &r.ns[A_PAIR]).map_or(f64::NAN, |x| x.0);
            println!(
                "- ≥ 3× tf_tree at depth 3, {}: {c:.1}× → {}",
                k.label(),
                if c >= 3.0 { "met" } else { "**missed**" }
            );
        }
    }
    // The one lookup engine's targets.
    let ratio =
        |r: &CellResult, a: usize, b: usize| ratios(&r.ns[a], &r.ns[b]).map_or(f64::NAN, |x| x.0);
    let verdict = |ok: bool| if ok { "met" } else { "**missed**" };
    let mut worst: Option<(f64, String)> = None;
    for r in results
        .iter()
        .filter(|r| r.scenario.starts_with("chain depth"))
    {
        let m = ratio(r, A_NAMES, A_PAIR);
        if worst.as_ref().is_none_or(|(w, _)| m > *w) {
            worst = Some((m, format!("{} / {}", r.scenario, r.kind.label())));
        }
    }
    if let Some((m, cell)) = worst {
        println!(
            "- by name within 1.2× of the pair in every chain cell: worst {m:.2}× ({cell}) → {}",
            verdict(m <= 1.2)
        );
    }
    for d in [1, 3, 8] {
        if let Some(r) = find(&format!("chain depth {d}"), TimeKind::Latest) {
            let c = ratio(r, A_TREE, A_PAIR);
            let w = ratio(r, A_TREE, A_WALK);
            println!(
                "- time 0 through a pair ≥ 1.3× tf_tree `latest_common` at depth {d}: {c:.1}× \
                 (kept answer; {w:.1}× walking, after its chain changed) → {}",
                verdict(c >= 1.3)
            );
        }
    }
    if let Some(r) = find("chain depth 3", TimeKind::Latest) {
        let n = ratio(r, A_TF2, A_NAMES);
        println!(
            "- by name ≥ 3× tf2 at time 0, depth 3: {n:.1}× → {}",
            verdict(n >= 3.0)
        );
    }
    if let Some(r) = find("chain depth 3", TimeKind::Interp) {
        let t = ratio(r, A_TF2, A_PAIR);
        let c = ratio(r, A_TREE, A_PAIR);
        println!(
            "- interpolated at depth 3 ≥ 5× tf2 and ≥ 1.5× tf_tree (pair): {t:.1}× / {c:.1}× → {}",
            verdict(t >= 5.0 && c >= 1.5)
        );
    }

    println!("\n### Where tf_shm loses or misses (generated from the numbers above)\n");
    // One line per comparison, listing the cells, so the section stays readable when most
    // cells miss (a line per cell would bury the pattern).
    let summarise = |label: &str, num: usize, den: usize, keep: &dyn Fn(f64) -> bool| {
        let hits: Vec<(String, f64)> = results
            .iter()
            .filter_map(|r| {
                let m = ratios(&r.ns[num], &r.ns[den])?.0;
                keep(m).then(|| (format!("{} / {}", r.scenario, r.kind.label()), m))
            })
            .collect();
        if hits.is_empty() {
            return false;
        }
        let (lo, hi) = range(&hits.iter().map(|h| h.1).collect::<Vec<_>>());
        let cells: Vec<String> = hits.iter().map(|(c, m)| format!("{c} ({m:.2}×)")).collect();
        println!(
            "- {label} in {} of {} cells ({lo:.2}×–{hi:.2}×): {}.",
            hits.len(),
            results.len(),
            cells.join("; ")
        );
        true
    };
    let mut any = false;
    any |= summarise("tf2 is faster than tf_shm (names)", A_TF2, A_NAMES, &|m| {
        m < 1.0
    });
    any |= summarise(
        "tf_shm (names) is faster than tf2 but by less than the 8× target",
        A_TF2,
        A_NAMES,
        &|m| (1.0..8.0).contains(&m),
    );
    any |= summarise(
        "tf_tree is faster than tf_shm (pair)",
        A_TREE,
        A_PAIR,
        &|m| m < 1.0,
    );
    any |= summarise(
        "tf_shm (pair) is faster than tf_tree but by less than the 3× target",
        A_TREE,
        A_PAIR,
        &|m| (1.0..3.0).contains(&m),
    );
    any |= summarise(
        "the other-process mapping is more than 10% slower than in-process",
        A_REMOTE,
        A_PAIR,
        &|m| m > 1.1,
    );
    for t in threads {
        let s = median(&mut t.rates[1].clone()) / median(&mut t.rates[0].clone());
        if t.arm == "tf_shm pair" && s < 1.6 {
            any = true;
            println!(
                "- {}: tf_shm scales only {s:.2}× from 1 to 2 reader threads (wall clock).",
                t.scenario
            );
        }
    }
    if !any {
        println!("Nowhere in these cells.");
    }
}

/// The fast paths of tf_shm that declined in each cell (per 1000 lookups of one calibration
/// batch): what sent a lookup to a slower read, by design or not (`tf_shm::fast_path`).
fn print_declines(results: &[CellResult], arm_names: &[&str]) {
    println!("\n### tf_shm's fast paths that declined (per 1000 lookups)\n");
    println!(
        "Counted by `tf_shm::fast_path::declines` over one calibration batch of each arm \
         (cells and arms with none are left out). *fused link*: a link read through the \
         general reader; *bracket*: its bracket search found none; *sign*: the walk run again \
         with tf2's slerp; *kept newest* / *kept answer*: a time-0 lookup that read a link \
         again / walked; *names cache*, *moment retry* as documented there.\n"
    );
    let mut rows = Vec::new();
    for r in results {
        for (a, (d, n)) in r.declines.iter().enumerate() {
            let per = |v: u64| v as f64 * 1000.0 / (*n).max(1) as f64;
            let cols = [
                d.fused_link,
                d.bracket,
                d.newest,
                d.sign_decision,
                d.kept_newest,
                d.kept_answer,
                d.names_cache,
                d.moment_retry,
            ];
            if *n == 0 || cols.iter().all(|&v| v == 0) {
                continue;
            }
            let cells: Vec<String> = cols.iter().map(|&v| format!("{:.1}", per(v))).collect();
            rows.push(format!(
                "| {} | {} | {} | {} |",
                r.scenario,
                r.kind.label(),
                arm_names.get(a).copied().unwrap_or("?"),
                cells.join(" | ")
            ));
        }
    }
    if rows.is_empty() {
        println!("None declined.");
        return;
    }
    println!("| scenario | query | arm | fused link | bracket | newest | sign | kept newest | kept answer | names cache | moment retry |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        println!("{row}");
    }
}
