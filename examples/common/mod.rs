//! What both fan-out arms share, so that they do and count exactly the same lookup work.

use tf_shm::{FramePair, Transform, TransformError};

/// The options both fan-out arms take: what to look up, for how long, and what to count.
#[derive(clap::Args)]
pub struct Window {
    /// Frame pairs to look up: target:source,target:source,…
    #[arg(long, default_value = "", value_name = "PAIRS")]
    pub pairs: String,
    /// Run for this long, s
    #[arg(long, default_value_t = 60.0, value_name = "S")]
    pub secs: f64,
    /// Count lookups only after this long, s
    #[arg(long, default_value_t = 0.0, value_name = "S0")]
    pub skip: f64,
}

/// `target:source,target:source,…` as frame pairs; exits 2 naming `who` on a malformed pair.
pub fn parse_pairs(s: &str, who: &str) -> Vec<FramePair> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once(':') {
            Some((t, s)) => FramePair::new(t, s),
            None => {
                eprintln!("{who}: pair \"{p}\" is not target:source");
                std::process::exit(2)
            }
        })
        .collect()
}

/// Counts of lookup outcomes; `sink` keeps the results observable so none is optimised away.
#[derive(Default)]
pub struct Tally {
    pub ok: u64,
    pub err: u64,
    pub sink: f64,
    pub first_err: String,
}

impl Tally {
    /// Records one lookup of `pair`.
    pub fn record(&mut self, pair: &FramePair, r: Result<(i64, Transform), TransformError>) {
        match r {
            Ok((_, t)) => {
                self.ok += 1;
                self.sink += t.translation[0];
            }
            Err(e) => {
                if self.err == 0 {
                    self.first_err = format!("{}->{}: {e}", pair.target(), pair.source());
                }
                self.err += 1;
            }
        }
    }
}
