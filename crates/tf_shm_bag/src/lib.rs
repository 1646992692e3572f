//! rosbag2 MCAP files and tf_shm arenas, without ROS.
//!
//! - [`load()`]: a bag's `/tf` and `/tf_static` in a process-local arena, for tf2 lookups at any
//!   bag time in-process;
//! - [`replay()`]: a bag into an arena writer (what `tf_shm replay` serves to every process),
//!   paced by the recorded receive times or as fast as possible, looped or not, following the
//!   bag's `/clock` as a `use_sim_time` tf2_ros node does (a backward jump clears dynamic
//!   history);
//! - [`record`]: an arena into a rosbag2-compatible MCAP file (`tf_shm record`), across bridge
//!   restarts, with the spans without a bridge kept ([`owner_watch`]).
//!
//! The container is read and written by the `mcap` crate (chunks uncompressed, zstd or lz4,
//! as rosbag2 writes them); messages are read by `tf_shm::cdr` (XCDR1 or XCDR2, either byte
//! order, as the bridge reads them) and written by the `cdr-encoding` crate (little-endian
//! XCDR1, as ROS 2 writes them); topics and encodings come from the file's own schema and
//! channel records. Every transform goes through tf2's `setTransform` rules in the arena's
//! writer, with the authority tf2_ros's listener uses.
//!
//! ```no_run
//! let bag = tf_shm_bag::load(std::path::Path::new("run.mcap"))?;
//! // T_map_base_link at a time inside the bag (ns), interpolated as tf2 does:
//! let t = bag.view.lookup_transform("map", "base_link", 1_700_000_000_500_000_000)?;
//! println!("{:?}", t.transform.translation);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod error;
pub mod feed;
pub mod load;
pub mod msg;
pub mod owner_watch;
pub mod read;
pub mod record;
pub mod replay;
pub mod rosbag2_meta;
pub mod scan;
pub mod write;

pub use error::BagError;
pub use load::{load, load_with, LoadError, LoadedBag};
pub use read::{BagReader, BagRecord, ClockRecord, TfRecord, Topics};
pub use record::Recorder;
pub use replay::{replay, Event, Progress, ReplayEnd, ReplayOptions};
pub use scan::{scan, BagInfo, ClockJump, ScannedBag, StampStep};
pub use write::BagWriter;
