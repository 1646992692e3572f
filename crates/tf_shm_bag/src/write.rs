//! Writing TF as rosbag2 writes it to MCAP: profile `ros2`, one `tf2_msgs/msg/TFMessage`
//! schema (`ros2msg`), channels `/tf` and `/tf_static` with CDR messages and the offered QoS
//! rosbag2 records, zstd-compressed chunks, message and chunk indexes and a summary.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use mcap::records::MessageHeader;

use crate::error::BagError;
use crate::msg::{self, TfMessage};
use crate::read::Topics;

/// rosbag2's `offered_qos_profiles` for a topic (Jazzy's YAML; durability 1 =
/// transient-local, 2 = volatile; reliability 1 = reliable; infinite durations).
fn offered_qos(transient_local: bool) -> String {
    let inf = "    sec: 9223372036\n    nsec: 854775807\n";
    format!(
        "- history: 3\n  depth: 0\n  reliability: 1\n  durability: {}\n  deadline:\n{inf}  \
         lifespan:\n{inf}  liveliness: 1\n  liveliness_lease_duration:\n{inf}  \
         avoid_ros_namespace_conventions: false",
        if transient_local { 1 } else { 2 }
    )
}

/// A bag being written. [`BagWriter::finish`] writes the summary and indexes; a writer
/// dropped without it still finishes the file (the `mcap` writer does on drop), but errors
/// are then lost.
pub struct BagWriter {
    path: PathBuf,
    out: mcap::Writer<BufWriter<File>>,
    tf: u16,
    tf_static: u16,
    sequence: u32,
    /// Messages written.
    pub messages: u64,
}

impl BagWriter {
    /// Creates (or truncates) `path`.
    ///
    /// Errors: [`BagError::Io`] when the file cannot be created, [`BagError::Container`] when
    /// the header cannot be written.
    pub fn create(path: &Path, topics: &Topics) -> Result<BagWriter, BagError> {
        let file = File::create(path).map_err(|source| BagError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let container = |source| BagError::Container {
            path: path.to_path_buf(),
            offset: 0,
            source,
        };
        let mut out = mcap::WriteOptions::new()
            .profile("ros2")
            .library(concat!("tf_shm_bag ", env!("CARGO_PKG_VERSION")))
            .compression(Some(mcap::Compression::Zstd))
            .create(BufWriter::new(file))
            .map_err(container)?;
        let schema = out
            .add_schema(msg::SCHEMA_NAME, "ros2msg", msg::SCHEMA_TEXT.as_bytes())
            .map_err(container)?;
        let channel = |out: &mut mcap::Writer<_>, topic: &str, latched: bool| {
            let meta = BTreeMap::from([("offered_qos_profiles".to_string(), offered_qos(latched))]);
            out.add_channel(schema, topic, msg::MESSAGE_ENCODING, &meta)
        };
        let tf = channel(&mut out, &topics.tf, false).map_err(container)?;
        let tf_static = channel(&mut out, &topics.tf_static, true).map_err(container)?;
        Ok(BagWriter {
            path: path.to_path_buf(),
            out,
            tf,
            tf_static,
            sequence: 0,
            messages: 0,
        })
    }

    /// Writes one message received at `log_time` (ns).
    ///
    /// Errors: [`BagError::Container`] when writing fails (e.g. disk full).
    pub fn write(
        &mut self,
        is_static: bool,
        log_time: u64,
        message: &TfMessage,
    ) -> Result<(), BagError> {
        self.sequence = self.sequence.wrapping_add(1);
        let header = MessageHeader {
            channel_id: if is_static { self.tf_static } else { self.tf },
            sequence: self.sequence,
            log_time,
            publish_time: log_time,
        };
        self.out
            .write_to_known_channel(&header, &msg::encode(message))
            .map_err(|source| BagError::Container {
                path: self.path.clone(),
                offset: 0,
                source,
            })?;
        self.messages += 1;
        Ok(())
    }

    /// Ends the file: last chunk, indexes, summary, footer.
    ///
    /// Errors: [`BagError::Container`] when writing fails.
    pub fn finish(mut self) -> Result<(), BagError> {
        self.out
            .finish()
            .map(|_| ())
            .map_err(|source| BagError::Container {
                path: self.path.clone(),
                offset: 0,
                source,
            })
    }
}
