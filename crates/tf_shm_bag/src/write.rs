//! Writing TF as rosbag2 Jazzy writes it to MCAP: profile `ros2`, one `tf2_msgs/msg/TFMessage`
//! schema (`ros2msg`), channels `/tf` and `/tf_static` with CDR messages, the offered QoS and
//! type hash rosbag2 records per channel, zstd-compressed chunks, the `rosbag2` metadata
//! record (metadata version 9, see [`crate::rosbag2_meta`]), message and chunk indexes and a
//! summary.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use mcap::records::{MessageHeader, Metadata};

use crate::error::BagError;
use crate::msg::{self, TfMessage};
use crate::read::Topics;
use crate::rosbag2_meta::{self, BagSummary, TopicInfo};

/// A bag being written. [`BagWriter::finish`] writes the summary and indexes; a writer
/// dropped without it still finishes the file (the `mcap` writer does on drop), but errors
/// are then lost.
pub struct BagWriter {
    path: PathBuf,
    out: mcap::Writer<BufWriter<File>>,
    topics: Topics,
    tf: u16,
    tf_static: u16,
    sequence: u32,
    /// Messages written.
    pub messages: u64,
    /// Messages written per topic: `/tf`, `/tf_static`.
    counts: [u64; 2],
    /// Receive times of the first and last message, ns.
    log_times: Option<(u64, u64)>,
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
            let meta = BTreeMap::from([
                (
                    "offered_qos_profiles".to_string(),
                    rosbag2_meta::offered_qos(latched),
                ),
                (
                    "topic_type_hash".to_string(),
                    rosbag2_meta::TF_MESSAGE_TYPE_HASH.to_string(),
                ),
            ]);
            out.add_channel(schema, topic, msg::MESSAGE_ENCODING, &meta)
        };
        let tf = channel(&mut out, &topics.tf, false).map_err(container)?;
        let tf_static = channel(&mut out, &topics.tf_static, true).map_err(container)?;
        Ok(BagWriter {
            path: path.to_path_buf(),
            out,
            topics: topics.clone(),
            tf,
            tf_static,
            sequence: 0,
            messages: 0,
            counts: [0; 2],
            log_times: None,
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
        self.counts[usize::from(is_static)] += 1;
        let (lo, hi) = self.log_times.get_or_insert((log_time, log_time));
        *lo = (*lo).min(log_time);
        *hi = (*hi).max(log_time);
        Ok(())
    }

    /// Ends the file: last chunk, the `rosbag2` metadata record, indexes, summary, footer.
    ///
    /// Errors: [`BagError::Container`] when writing fails.
    pub fn finish(mut self) -> Result<(), BagError> {
        let (first, last) = self.log_times.unwrap_or((0, 0));
        let file = self
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let topics = [
            TopicInfo {
                name: &self.topics.tf,
                type_name: msg::SCHEMA_NAME,
                transient_local: false,
                message_count: self.counts[0],
            },
            TopicInfo {
                name: &self.topics.tf_static,
                type_name: msg::SCHEMA_NAME,
                transient_local: true,
                message_count: self.counts[1],
            },
        ];
        let yaml = rosbag2_meta::serialized_metadata(&BagSummary {
            file: &file,
            starting_time_ns: first,
            duration_ns: last - first,
            topics: &topics,
        });
        let container = |source| BagError::Container {
            path: self.path.clone(),
            offset: 0,
            source,
        };
        self.out
            .write_metadata(&Metadata {
                name: "rosbag2".into(),
                metadata: BTreeMap::from([("serialized_metadata".to_string(), yaml)]),
            })
            .map_err(container)?;
        self.out.finish().map(|_| ()).map_err(container)
    }
}
