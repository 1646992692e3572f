//! The arena: one block of shared memory holding every frame's transforms.
//!
//! One [`ArenaWriter`](crate::ArenaWriter) (the bridge) fills it; any number of
//! [`ArenaView`](crate::ArenaView)s read it, in the
//! writer's process or, through a read-only mapping of the sealed memfd, in others. The shared
//! records (`layout.rs`) are the crate's business; what a user needs of them is here:
//! [`FORMAT_VERSION`], [`layout_hash`] and [`ring_bytes`] for sizing a budget; tools read
//! arena-wide counters as typed [`ArenaStats`](crate::inspect::ArenaStats).
//!
//! ```
//! use tf_shm::{Arena, ArenaConfig, validate::TransformInput};
//! let (mut writer, view) = Arena::in_memory(&ArenaConfig::default())?;
//! writer.set_transform(&TransformInput {
//!     frame_id: "map", child_frame_id: "odom", stamp: 1_000_000_000,
//!     translation: [1.0, 0.0, 0.0], rotation: [0.0, 0.0, 0.0, 1.0],
//! }, "doc", false)?;
//! let t = view.lookup_transform("map", "odom", 0)?;
//! assert_eq!(t.transform.translation, [1.0, 0.0, 0.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod layout;
pub(crate) mod memfd;
pub(crate) mod names;
pub(crate) mod notify;
pub(crate) mod region;

use std::fmt;

use layout::*;
pub use layout::{layout_hash, ring_bytes, FORMAT_VERSION, MAX_NAME_LEN as MAX_FRAME_NAME_LEN};
use region::Region;

use crate::sync::Ordering;

/// Capacities of an arena, fixed at creation.
#[derive(Clone, Debug, PartialEq)]
pub struct ArenaConfig {
    /// Most frames the arena can ever hold, ids `1..=max_frames` (ids are never reused; id 0 is
    /// tf2's "no parent"). Default 4096.
    pub max_frames: u32,
    /// tf2's cache time: how much history each dynamic frame keeps, ns. Default 10 s.
    pub cache_time_ns: i64,
    /// Total size of the arena, bytes; what the frame tables leave is the ring pool.
    /// Default 64 MiB.
    pub memory_budget_bytes: usize,
    /// Highest publishing rate per frame for which the full cache time is kept, Hz; sets the
    /// largest ring. Default 1000.
    pub max_rate_hz: u32,
    /// Samples in a new frame's first ring (a power of two, ≥ 2). Default 16.
    pub initial_ring_capacity: u32,
}

impl Default for ArenaConfig {
    fn default() -> Self {
        ArenaConfig {
            max_frames: 4096,
            cache_time_ns: 10_000_000_000,
            memory_budget_bytes: 64 << 20,
            max_rate_hz: 1000,
            initial_ring_capacity: 16,
        }
    }
}

/// An [`ArenaConfig`] that cannot be built; names the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The offending field.
    pub field: &'static str,
    /// Why.
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid arena config: {}: {}", self.field, self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// Why an existing arena cannot be used by this build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttachError {
    /// Not a tf_shm arena.
    BadMagic,
    /// Written by another format version.
    VersionMismatch {
        /// The arena's.
        found: u32,
        /// Ours.
        expected: u32,
    },
    /// Same version, different record geometry (another build).
    LayoutMismatch {
        /// The arena's.
        found: u64,
        /// Ours.
        expected: u64,
    },
    /// A header field is inconsistent with the mapping; names the field.
    Corrupt {
        /// The field.
        field: &'static str,
    },
    /// The file could not be inspected or mapped.
    Io(String),
}

impl fmt::Display for AttachError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttachError::BadMagic => write!(f, "not a tf_shm arena (bad magic)"),
            AttachError::VersionMismatch { found, expected } => write!(
                f,
                "arena format version {found} is not this build's {expected}: rebuild the \
                 consumer or the bridge so both use the same tf_shm"
            ),
            AttachError::LayoutMismatch { found, expected } => write!(
                f,
                "arena layout hash {found:#018x} is not this build's {expected:#018x}: rebuild \
                 the consumer or the bridge so both use the same tf_shm"
            ),
            AttachError::Corrupt { field } => {
                write!(
                    f,
                    "arena header field {field} is inconsistent with the mapping"
                )
            }
            AttachError::Io(e) => write!(f, "cannot map the arena: {e}"),
        }
    }
}

impl std::error::Error for AttachError {}

/// Where each region lives; derived from a config (creator) or validated from a header (joiner).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub size: u64,
    pub max_frames: u32,
    pub index_capacity: u32,
    pub names_words: u64,
    pub index_off: u64,
    pub names_off: u64,
    /// The copy this geometry reads or writes (`copy(k)`): 0 or 1, its frame table and pool.
    pub copy: u64,
    pub frames_off: u64,
    pub pool_off: u64,
    /// Bytes of each copy's pool.
    pub pool_size: u64,
    /// Bytes from copy 0 to copy 1.
    pub copy_stride: u64,
    pub max_ring_capacity: u32,
    pub initial_ring_capacity: u32,
    pub cache_time_ns: i64,
}

/// Largest `max_frames` accepted (ids must fit the index and stay far from `u32::MAX`).
const MAX_FRAMES_LIMIT: u32 = 1 << 20;
/// Average frame name length the names region is sized for, bytes.
const NAME_BYTES_PER_FRAME: u64 = 64;
/// Distinct authorities recorded, and their longest recorded name, bytes: authorities are
/// informational, so they get a fixed reserve and can never crowd out frame names.
pub(crate) const MAX_AUTHORITIES: usize = 64;
pub(crate) const MAX_AUTHORITY_LEN: usize = 64;
const AUTHORITY_WORDS: u64 = (MAX_AUTHORITIES * MAX_AUTHORITY_LEN / 8) as u64;

fn align_up(v: u64) -> u64 {
    v.div_ceil(ALIGN as u64) * ALIGN as u64
}

impl Geometry {
    pub(crate) fn from_config(c: &ArenaConfig) -> Result<Geometry, ConfigError> {
        let err = |field, reason: &str| ConfigError {
            field,
            reason: reason.to_string(),
        };
        if c.max_frames < 2 || c.max_frames > MAX_FRAMES_LIMIT {
            return Err(err("max_frames", "must be between 2 and 1048576"));
        }
        if c.cache_time_ns <= 0 {
            return Err(err("cache_time_ns", "must be positive"));
        }
        if c.max_rate_hz == 0 || c.max_rate_hz > 1_000_000 {
            return Err(err("max_rate_hz", "must be between 1 and 1000000"));
        }
        let init = c.initial_ring_capacity;
        if init < 2 || !init.is_power_of_two() {
            return Err(err("initial_ring_capacity", "must be a power of two ≥ 2"));
        }
        // Samples tf2 would keep at the max rate: one per period over the cache time, plus the
        // boundary sample.
        let wanted = (c.cache_time_ns as u128 * c.max_rate_hz as u128).div_ceil(1_000_000_000) + 1;
        let max_ring = u32::try_from(wanted.next_power_of_two())
            .ok()
            .filter(|&m| m <= 1 << 24)
            .ok_or_else(|| {
                err(
                    "max_rate_hz",
                    "rate × cache time needs more than 2^24 samples",
                )
            })?
            .max(init);
        let records = u64::from(c.max_frames) + 1;
        let index_capacity = ((c.max_frames + 1) * 2).next_power_of_two();
        let names_words =
            (u64::from(c.max_frames) * NAME_BYTES_PER_FRAME / 8).max(1024) + AUTHORITY_WORDS;
        let index_off = HEADER_SIZE as u64;
        let names_off = align_up(index_off + u64::from(index_capacity) * 4);
        let frames_off = align_up(names_off + names_words * 8);
        let pool_off = align_up(frames_off + records * std::mem::size_of::<FrameRecord>() as u64);
        let size = c.memory_budget_bytes as u64 / ALIGN as u64 * ALIGN as u64;
        // Two copies of the frame table and the pool share what the budget leaves.
        let copy_stride = size.saturating_sub(frames_off) / 2 / ALIGN as u64 * ALIGN as u64;
        let first_rings = u64::from(c.max_frames.min(64)) * ring_bytes(init as usize) as u64;
        let needed = frames_off + 2 * (pool_off - frames_off + first_rings);
        if size < needed {
            return Err(ConfigError {
                field: "memory_budget_bytes",
                reason: format!(
                    "{} bytes cannot hold the tables for {} frames and a ring pool, twice: \
                     need at least {needed} bytes",
                    c.memory_budget_bytes, c.max_frames,
                ),
            });
        }
        Ok(Geometry {
            size,
            max_frames: c.max_frames,
            index_capacity,
            names_words,
            index_off,
            names_off,
            copy: 0,
            frames_off,
            pool_off,
            pool_size: frames_off + copy_stride - pool_off,
            copy_stride,
            max_ring_capacity: max_ring,
            initial_ring_capacity: init,
            cache_time_ns: c.cache_time_ns,
        })
    }

    /// Reads and checks a header against the mapping's length; every later bound check relies
    /// on the values returned here, never on re-reading the header.
    pub(crate) fn from_header(region: &Region) -> Result<Geometry, AttachError> {
        let h = region.header().ok_or(AttachError::Corrupt {
            field: "arena_size",
        })?;
        let ld = |a: &crate::sync::AtomicU64| a.load(Ordering::Acquire);
        let ld32 = |a: &crate::sync::AtomicU32| a.load(Ordering::Acquire);
        if ld(&h.magic) != MAGIC {
            return Err(AttachError::BadMagic);
        }
        let version = ld32(&h.format_version);
        if version != FORMAT_VERSION {
            return Err(AttachError::VersionMismatch {
                found: version,
                expected: FORMAT_VERSION,
            });
        }
        let hash = ld(&h.layout_hash);
        if hash != layout_hash() {
            return Err(AttachError::LayoutMismatch {
                found: hash,
                expected: layout_hash(),
            });
        }
        let corrupt = |field| Err(AttachError::Corrupt { field });
        if ld32(&h.header_size) as usize != HEADER_SIZE {
            return corrupt("header_size");
        }
        let g = Geometry {
            size: ld(&h.arena_size),
            max_frames: ld32(&h.max_frames),
            index_capacity: ld32(&h.index_capacity),
            names_words: ld(&h.names_words),
            index_off: ld(&h.index_off),
            names_off: ld(&h.names_off),
            copy: 0,
            frames_off: ld(&h.frames_off),
            pool_off: ld(&h.pool_off),
            pool_size: ld(&h.pool_size),
            copy_stride: ld(&h.copy_stride),
            max_ring_capacity: ld32(&h.max_ring_capacity),
            initial_ring_capacity: ld32(&h.initial_ring_capacity),
            cache_time_ns: h.cache_time_ns.load(Ordering::Acquire),
        };
        if g.size != region.len() as u64 {
            return corrupt("arena_size");
        }
        if g.max_frames < 2 || g.max_frames > MAX_FRAMES_LIMIT {
            return corrupt("max_frames");
        }
        if !g.index_capacity.is_power_of_two() || g.index_capacity <= g.max_frames {
            return corrupt("index_capacity");
        }
        if !g.max_ring_capacity.is_power_of_two() || g.max_ring_capacity > 1 << 24 {
            return corrupt("max_ring_capacity");
        }
        if g.cache_time_ns <= 0 {
            return corrupt("cache_time_ns");
        }
        let frames_end = (u64::from(g.max_frames) + 1) * std::mem::size_of::<FrameRecord>() as u64;
        let regions = [
            ("index_off", g.index_off, u64::from(g.index_capacity) * 4),
            ("names_off", g.names_off, g.names_words.saturating_mul(8)),
            ("frames_off", g.frames_off, frames_end),
            ("pool_off", g.pool_off, g.pool_size),
        ];
        let mut end_prev = HEADER_SIZE as u64;
        for (field, off, len) in regions {
            if off % ALIGN as u64 != 0 || off < end_prev || off.saturating_add(len) > g.size {
                return corrupt(field);
            }
            end_prev = off + len;
        }
        // Copy 1 is copy 0 moved by the stride: it must not overlap copy 0 and must fit.
        let copy_len = end_prev - g.frames_off;
        if !g.copy_stride.is_multiple_of(ALIGN as u64)
            || g.copy_stride < copy_len
            || g.frames_off.saturating_add(g.copy_stride.saturating_mul(2)) > g.size
        {
            return corrupt("copy_stride");
        }
        Ok(g)
    }

    /// The geometry of copy `k` (0 or 1): the same arena, its copy's header, frames and pool.
    pub(crate) fn copy(&self, k: u64) -> Geometry {
        let shift = self.copy_stride * k;
        Geometry {
            copy: k,
            frames_off: self.frames_off + shift,
            pool_off: self.pool_off + shift,
            ..*self
        }
    }

    pub(crate) fn write_header(&self, h: &Header, instance_uuid: [u8; 16], boot_id: [u8; 16]) {
        let st = |a: &crate::sync::AtomicU64, v| a.store(v, Ordering::Relaxed);
        let st32 = |a: &crate::sync::AtomicU32, v| a.store(v, Ordering::Relaxed);
        st(&h.magic, MAGIC);
        st32(&h.format_version, FORMAT_VERSION);
        st32(&h.header_size, HEADER_SIZE as u32);
        st(&h.layout_hash, layout_hash());
        st(&h.arena_size, self.size);
        for (i, a) in h.instance_uuid.iter().enumerate() {
            st(
                a,
                u64::from_le_bytes(instance_uuid[i * 8..i * 8 + 8].try_into().unwrap()),
            );
        }
        for (i, a) in h.boot_id.iter().enumerate() {
            st(
                a,
                u64::from_le_bytes(boot_id[i * 8..i * 8 + 8].try_into().unwrap()),
            );
        }
        h.created_unix_ns
            .store(crate::time::unix_now_ns(), Ordering::Relaxed);
        h.cache_time_ns.store(self.cache_time_ns, Ordering::Relaxed);
        st32(&h.max_frames, self.max_frames);
        st32(&h.index_capacity, self.index_capacity);
        st(&h.names_words, self.names_words);
        st(&h.index_off, self.index_off);
        st(&h.names_off, self.names_off);
        st(&h.frames_off, self.frames_off);
        st(&h.pool_off, self.pool_off);
        st(&h.pool_size, self.pool_size);
        st(&h.copy_stride, self.copy_stride);
        st32(&h.max_ring_capacity, self.max_ring_capacity);
        st32(&h.initial_ring_capacity, self.initial_ring_capacity);
        st32(&h.owner_pid, std::process::id());
        // Release: a reader that sees the magic sees every field above.
        h.magic.store(MAGIC, Ordering::Release);
    }
}

/// Identity of an arena: what a joiner compares to tell arenas apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArenaIdentity {
    /// Random per arena: a new bridge is a new instance.
    pub instance_uuid: [u8; 16],
    /// The kernel boot the arena was created in (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: [u8; 16],
    /// Size of the arena, bytes.
    pub size: u64,
}

pub(crate) fn identity_of(h: &Header, size: u64) -> ArenaIdentity {
    let mut uuid = [0u8; 16];
    let mut boot = [0u8; 16];
    for i in 0..2 {
        uuid[i * 8..i * 8 + 8]
            .copy_from_slice(&h.instance_uuid[i].load(Ordering::Relaxed).to_le_bytes());
        boot[i * 8..i * 8 + 8].copy_from_slice(&h.boot_id[i].load(Ordering::Relaxed).to_le_bytes());
    }
    ArenaIdentity {
        instance_uuid: uuid,
        boot_id: boot,
        size,
    }
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`), or zeros where it cannot be read.
pub fn boot_id() -> [u8; 16] {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .and_then(|s| parse_uuid(s.trim()))
        .unwrap_or([0; 16])
}

fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

pub(crate) fn random_uuid() -> [u8; 16] {
    let mut b = [0u8; 16];
    // getrandom never fails for 16 bytes after early boot; fall back to time ⊕ pid regardless.
    if rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty()).ok() != Some(16) {
        let t = crate::time::unix_now_ns() as u64 ^ u64::from(std::process::id()) << 32;
        b[..8].copy_from_slice(&t.to_le_bytes());
    }
    b
}

/// Constructors of arenas: [`Arena::in_memory`] and [`Arena::create_shared`] are defined
/// beside the writer they make (`writer.rs`), [`Arena::attach`] beside the view (`view.rs`), so
/// this module, which both build on, depends on neither.
pub struct Arena;

/// Why a shared arena could not be created.
#[derive(Debug)]
pub enum CreateError {
    /// The config is invalid.
    Config(ConfigError),
    /// A system call failed.
    Io(std::io::Error),
}

impl fmt::Display for CreateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateError::Config(e) => e.fmt(f),
            CreateError::Io(e) => write!(f, "cannot create the arena memfd: {e}"),
        }
    }
}

impl std::error::Error for CreateError {}
