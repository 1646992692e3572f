//! A bag's TF in a process-local arena, for lookups at bag times without a bridge.

use std::fmt;
use std::path::Path;

use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter, ConfigError};

use std::sync::atomic::AtomicBool;

use crate::error::BagError;
use crate::feed::{Counts, Feed};
use crate::read::Topics;
use crate::replay::{replay, ReplayOptions};
use crate::scan::{BagInfo, ScannedBag};

/// A loaded bag.
pub struct LoadedBag {
    /// The arena's writer (more can be written, e.g. to compare).
    pub writer: ArenaWriter,
    /// A view answering tf2's queries (`lookup_transform`, `can_transform`, ...).
    pub view: ArenaView,
    /// What the bag holds.
    pub info: BagInfo,
    /// What happened to its transforms.
    pub counts: Counts,
    /// The first refusals (frame and reason), if any.
    pub refusals: Vec<String>,
    /// Clears of dynamic history at backward jumps of the bag's `/clock`.
    pub clock_clears: u64,
}

/// Why a bag could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file: see [`BagError`].
    Bag(BagError),
    /// The arena configuration (given, or sized for the bag) cannot be built.
    Config(ConfigError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Bag(e) => e.fmt(f),
            LoadError::Config(e) => write!(f, "arena for the bag: {e}"),
        }
    }
}

impl std::error::Error for LoadError {}

impl From<BagError> for LoadError {
    fn from(e: BagError) -> Self {
        LoadError::Bag(e)
    }
}

/// Bytes per sample in a ring (the slot and its stamp word).
const SAMPLE_BYTES: u64 = 88;

/// An arena configuration that keeps the whole bag: cache time covering every stamp (tf2
/// would otherwise prune history older than its cache time behind the newest sample), rings
/// large enough for the busiest frame, room for every frame.
pub fn config_for(info: &BagInfo) -> ArenaConfig {
    let d = ArenaConfig::default();
    let span = info.stamp_range.map_or(0, |(lo, hi)| hi.saturating_sub(lo));
    let cache_time_ns = span.saturating_add(1_000_000_000).max(d.cache_time_ns);
    let busiest = info.per_frame.values().copied().max().unwrap_or(0);
    // The largest ring is max_rate_hz × cache time samples.
    let rate = (busiest as u128 * 1_000_000_000).div_ceil(cache_time_ns as u128) + 1;
    let max_rate_hz = (rate as u64).clamp(u64::from(d.max_rate_hz), 1_000_000) as u32;
    let frames = (info.per_frame.len() as u64 + info.static_transforms + 16) as u32;
    let max_frames = frames.saturating_mul(2).max(d.max_frames);
    // Rings grow by doubling; the outgrown ones stay in the pool.
    let rings: u64 = info
        .per_frame
        .values()
        .map(|&n| n.max(16).next_power_of_two() * 2 * SAMPLE_BYTES)
        .sum();
    let memory_budget_bytes = (rings + u64::from(max_frames) * 1024 + (16 << 20))
        .max(d.memory_budget_bytes as u64) as usize;
    ArenaConfig {
        max_frames,
        cache_time_ns,
        memory_budget_bytes,
        max_rate_hz,
        ..d
    }
}

/// Loads the TF of the bag at `path` (topics `/tf`, `/tf_static` and `/clock`) into a new
/// in-memory arena sized by [`config_for`]: statics first, as a latched topic delivers them,
/// then the dynamic messages in file order, each through tf2's `setTransform`; a backward jump
/// of the bag's `/clock` clears dynamic history there, as in a `use_sim_time` tf2_ros node (so
/// after a simulation reset the view holds what followed the last reset). This is
/// [`replay`](crate::replay()) as fast as possible.
///
/// Errors: [`LoadError::Bag`] for a file that cannot be read, is damaged or truncated, has no
/// TF, a TF topic with another schema or a message that does not decode (the whole file is
/// checked before anything is loaded); [`LoadError::Config`] when no arena can be sized.
pub fn load(path: &Path) -> Result<LoadedBag, LoadError> {
    load_with(path, &Topics::default(), None)
}

/// [`load`] with other topics (`clock: None` ignores the bag's clock), or an arena
/// configuration of the caller's.
pub fn load_with(
    path: &Path,
    topics: &Topics,
    config: Option<ArenaConfig>,
) -> Result<LoadedBag, LoadError> {
    let bag = ScannedBag::open(path, topics)?;
    let config = config.unwrap_or_else(|| config_for(&bag.info));
    let (mut writer, view) = Arena::in_memory(&config).map_err(LoadError::Config)?;
    let mut feed = Feed::default();
    let opts = ReplayOptions {
        rate: None,
        ..ReplayOptions::default()
    };
    let end = replay(
        &bag,
        &mut writer,
        &mut feed,
        &opts,
        &AtomicBool::new(false),
        |_| {},
    )?;
    Ok(LoadedBag {
        writer,
        view,
        info: bag.info,
        counts: feed.counts,
        refusals: feed.refusals,
        clock_clears: end.clock_clears,
    })
}
