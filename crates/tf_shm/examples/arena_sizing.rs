//! How much arena a robot needs: feeds an in-memory arena the stream of a robot described as
//! groups of dynamic frames at fixed rates, in stamp order, for the cache time and 2 s more
//! (every history full and pruning), with the bridge's write call, then prints one JSON line:
//! the ring pool used, the tables, the smallest `memory_budget_mb` that holds it, and whether
//! every frame kept its whole cache time.
//!
//! `cargo run --release -p tf_shm --example arena_sizing -- [--cache-time S] [--max-rate HZ]
//! [GROUP...]` with each GROUP `COUNT@HZ` (default `200@100 50@1000`: a large robot, 200
//! frames at 100 Hz, 50 at 1 kHz). Rings start small and double (old rings are not reused),
//! so this measures what the bridge's allocation really takes, not a formula.

use clap::Parser;
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig};

/// How much arena a robot needs (see the module docs).
#[derive(Parser)]
#[command(name = "arena_sizing")]
struct Args {
    /// tf2's cache time, s (the bridge's `cache_time`).
    #[arg(long, default_value_t = 10.0)]
    cache_time: f64,
    /// The bridge's `max_rate_hz`.
    #[arg(long, default_value_t = 1000)]
    max_rate: u32,
    /// The bridge's `max_frames` (sizes the frame tables).
    #[arg(long, default_value_t = 4096)]
    max_frames: u32,
    /// Groups of dynamic frames, `COUNT@HZ`.
    #[arg(default_values_t = ["200@100".to_string(), "50@1000".to_string()])]
    groups: Vec<String>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = Args::parse();
    let mut groups = Vec::new();
    for g in &a.groups {
        let (n, hz) = g.split_once('@').ok_or("a group is COUNT@HZ")?;
        groups.push((n.parse::<u32>()?, hz.parse::<u64>()?));
    }
    let frames: u32 = groups.iter().map(|g| g.0).sum();
    let cache_ns = (a.cache_time * 1e9).round() as i64;
    let config = ArenaConfig {
        max_frames: a.max_frames.max(frames + 1),
        cache_time_ns: cache_ns,
        memory_budget_bytes: 4 << 30,
        max_rate_hz: a.max_rate,
        ..Default::default()
    };
    let (mut writer, view) = Arena::in_memory(&config)?;
    let names: Vec<Vec<String>> = groups
        .iter()
        .enumerate()
        .map(|(g, &(n, _))| (0..n).map(|i| format!("g{g}_f{i}")).collect())
        .collect();
    // One tick per µs-aligned period of the fastest group; each group writes on its own period.
    let end = cache_ns + 2_000_000_000;
    let tick = groups
        .iter()
        .map(|&(_, hz)| 1_000_000_000 / hz as i64)
        .min()
        .ok_or("no groups")?;
    let mut t = 1_000_000_000i64;
    while t <= 1_000_000_000 + end {
        for (g, &(_, hz)) in groups.iter().enumerate() {
            let period = 1_000_000_000 / hz as i64;
            if (t - 1_000_000_000) % period != 0 {
                continue;
            }
            for child in &names[g] {
                let input = TransformInput {
                    frame_id: "base_link",
                    child_frame_id: child,
                    stamp: t,
                    translation: [0.1, 0.2, 0.3],
                    rotation: [0.0, 0.0, 0.0, 1.0],
                };
                writer.set_transform(&input, "sizing", false)?;
            }
        }
        t += tick;
    }
    let stats = view.stats();
    let mut short = 0;
    let mut rings = std::collections::BTreeMap::<u32, u32>::new();
    for f in view.frames()? {
        short += u32::from(f.history_short);
        if f.ring_capacity > 0 {
            *rings.entry(f.ring_capacity).or_default() += 1;
        }
    }
    // The arena keeps two copies of the pool (tf_shm::moment's latch).
    let tables = stats.arena_size - 2 * stats.pool_size;
    let needed = tables + 2 * stats.pool_used;
    let rings: Vec<String> = rings.iter().map(|(c, n)| format!("\"{c}\":{n}")).collect();
    println!(
        "{{\"cache_time_s\":{},\"groups\":\"{}\",\"frames\":{frames},\"pool_used_bytes\":{},\
         \"tables_bytes\":{tables},\"needed_bytes\":{needed},\"needed_mib\":{:.1},\
         \"frames_with_short_history\":{short},\"ring_capacities\":{{{}}},\"pool_exhausted\":{}}}",
        a.cache_time,
        a.groups.join(" "),
        stats.pool_used,
        needed as f64 / (1 << 20) as f64,
        rings.join(","),
        stats.ring_pool_exhausted
    );
    Ok(())
}
