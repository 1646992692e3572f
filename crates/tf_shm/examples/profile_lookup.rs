//! A fixed lookup loop for instruction-level profiling (e.g. `valgrind --tool=callgrind`):
//! a chain of `DEPTH` dynamic links at 100 Hz over 10 s, `N` interpolated `lookup_pair`s at
//! off-grid times spread over the window (or, with `exact`, at sample stamps; with `time0`, at time 0).
//!
//! A fourth argument `names` looks up by name (`lookup_transform`) instead; `buffer` by name
//! through a [`tf_shm::Buffer`] joined to an owner served in this process (what the Python
//! and C bindings call); `buffer-pair` through the buffer's `lookup_pair`.
//!
//! `cargo run --release -p tf_shm --example profile_lookup -- [depth] [lookups] [exact|time0|interp] [names|buffer|buffer-pair]`
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaWriter, FramePair, Join, Serve};

/// A fixed lookup loop for instruction-level profiling: a chain of DEPTH dynamic links at
/// 100 Hz over 10 s, LOOKUPS interpolated lookup_pair calls at off-grid times over the window.
#[derive(clap::Parser)]
#[command(name = "profile_lookup")]
struct Args {
    /// Links in the chain
    #[arg(default_value_t = 3)]
    depth: usize,
    /// Lookups to run
    #[arg(default_value_t = 100_000)]
    lookups: usize,
    /// Query times: off-grid (interp, the default), at sample stamps (exact) or time 0 (time0)
    #[arg(value_parser = ["exact", "time0", "interp"])]
    mode: Option<String>,
    /// `names`: look up by name (`lookup_transform`) instead of through a `FramePair`;
    /// `buffer`: by name through a `Buffer`; `buffer-pair`: through a `Buffer`'s `lookup_pair`
    #[arg(value_parser = ["names", "buffer", "buffer-pair"])]
    names: Option<String>,
}

/// Lookups through a `Buffer`: an owner served in a private runtime directory (removed on
/// drop), and a buffer joined to it.
struct Served {
    dir: std::path::PathBuf,
    owner: tf_shm::Owner,
    buffer: tf_shm::Buffer,
}

impl Served {
    fn new() -> Served {
        let dir = std::env::temp_dir().join(format!("tf_shm-profile-{}", std::process::id()));
        let owner = Serve::new(ArenaConfig::default())
            .runtime_dir(&dir)
            .require_create(true)
            .serve()
            .expect("owner");
        let buffer = Join::new().runtime_dir(&dir).open().expect("buffer");
        Served { dir, owner, buffer }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn main() {
    let args: Args = clap::Parser::parse();
    let (depth, n) = (args.depth, args.lookups);
    let mode = args.mode.unwrap_or_default();
    let kind = args.names.unwrap_or_default();
    // Decided before the loop: a string compare per lookup would count against one path.
    #[derive(Clone, Copy, PartialEq)]
    enum Via {
        Pair,
        Names,
        Buffer,
        BufferPair,
    }
    let via = match kind.as_str() {
        "names" => Via::Names,
        "buffer" => Via::Buffer,
        "buffer-pair" => Via::BufferPair,
        _ => Via::Pair,
    };
    let (time0, exact) = (mode == "time0", mode == "exact");
    let (mut in_memory, view) = Arena::in_memory(&ArenaConfig::default()).expect("arena");
    let mut served = matches!(via, Via::Buffer | Via::BufferPair).then(Served::new);
    let w: &mut ArenaWriter = match &mut served {
        Some(s) => s.owner.writer(),
        None => &mut in_memory,
    };
    let names: Vec<String> = (0..=depth).map(|i| format!("c{i}")).collect();
    let t0 = 1_000_000_000_000i64;
    for k in 0..1001i64 {
        for i in 1..=depth {
            let a = 0.3 + 0.5 * (0.2 * k as f64 * 0.01 + i as f64).sin();
            w.set_transform(
                &TransformInput {
                    frame_id: &names[i - 1],
                    child_frame_id: &names[i],
                    stamp: t0 + k * 10_000_000,
                    translation: [0.5, 0.1 * i as f64, 0.0],
                    rotation: [0.0, 0.0, (a / 2.0).sin(), (a / 2.0).cos()],
                },
                "profile",
                false,
            )
            .expect("accepted");
        }
    }
    let mut pair = FramePair::new(&names[0], &names[depth]);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut sum = 0.0;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let t = if time0 {
            0
        } else if exact {
            t0 + (1 + (x % 999) as i64) * 10_000_000
        } else {
            t0 + 10_000_000 + (x % 9_980_000_000) as i64
        };
        let tf = match (via, &served) {
            (Via::Names, _) => {
                view.lookup_transform(&names[0], &names[depth], t)
                    .expect("answers")
                    .transform
            }
            (Via::Buffer, Some(s)) => {
                s.buffer
                    .lookup_transform(&names[0], &names[depth], t)
                    .expect("answers")
                    .transform
            }
            (Via::BufferPair, Some(s)) => s.buffer.lookup_pair(&mut pair, t).expect("answers").1,
            _ => view.lookup_pair(&mut pair, t).expect("answers").1,
        };
        sum += tf.translation[0];
    }
    println!("{sum}");
}
