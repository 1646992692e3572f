//! What can be wrong with a bag, each naming the file and the problem.

use std::fmt;
use std::path::PathBuf;

use tf_shm::cdr::CdrError;

/// An error reading a bag.
#[derive(Debug)]
pub enum BagError {
    /// The file cannot be opened or read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The MCAP container is damaged: truncated (no end magic, a record cut short), bad magic,
    /// a CRC mismatch, an unsupported compression, a record that does not parse.
    Container {
        path: PathBuf,
        /// Bytes of the file read when the problem was found.
        offset: u64,
        source: mcap::McapError,
    },
    /// The bag has no message on the TF topics.
    NoTf {
        path: PathBuf,
        /// The TF topics looked for.
        wanted: Vec<String>,
        /// Every topic the bag has, with its schema name.
        topics: Vec<(String, String)>,
    },
    /// A TF topic's channel has a schema other than `tf2_msgs/msg/TFMessage` (the clock
    /// topic's, other than `rosgraph_msgs/msg/Clock`).
    WrongSchema {
        path: PathBuf,
        topic: String,
        /// Schema name and encoding (empty for a channel without schema).
        schema: String,
        encoding: String,
        /// The schema the topic must have.
        expected: &'static str,
    },
    /// A TF (or clock) topic's channel is not CDR-encoded.
    WrongEncoding {
        path: PathBuf,
        topic: String,
        encoding: String,
    },
    /// A message on a TF topic does not decode as a TFMessage (on the clock topic, as a Clock).
    Undecodable {
        path: PathBuf,
        topic: String,
        /// Index of the message among the messages read (TF and clock), from 0.
        index: u64,
        /// Its receive time (log time), ns.
        log_time: u64,
        /// What is wrong with its bytes.
        source: CdrError,
    },
}

impl fmt::Display for BagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BagError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BagError::Container {
                path,
                offset,
                source,
            } => {
                let what = match source {
                    mcap::McapError::UnexpectedEof => {
                        "the file ends early (truncated, or still being written)".to_string()
                    }
                    mcap::McapError::BadMagic => "not an MCAP file (bad magic)".to_string(),
                    e => format!("damaged MCAP file: {e}"),
                };
                write!(f, "{}: {what}, after {offset} bytes", path.display())
            }
            BagError::NoTf {
                path,
                wanted,
                topics,
            } => {
                write!(
                    f,
                    "{}: no TF in this bag: no message on {}",
                    path.display(),
                    wanted.join(" or ")
                )?;
                if topics.is_empty() {
                    write!(f, " (the bag has no topics)")
                } else {
                    let list: Vec<String> =
                        topics.iter().map(|(t, s)| format!("{t} [{s}]")).collect();
                    write!(f, " (topics: {})", list.join(", "))
                }
            }
            BagError::WrongSchema {
                path,
                topic,
                schema,
                encoding,
                expected,
            } => {
                if schema.is_empty() {
                    write!(
                        f,
                        "{}: topic {topic} has no schema; expected {expected}",
                        path.display(),
                    )
                } else {
                    write!(
                        f,
                        "{}: topic {topic} has schema {schema} ({encoding}); expected {expected} \
                         (ros2msg)",
                        path.display(),
                    )
                }
            }
            BagError::WrongEncoding {
                path,
                topic,
                encoding,
            } => write!(
                f,
                "{}: topic {topic} has message encoding \"{encoding}\"; expected \"cdr\"",
                path.display()
            ),
            BagError::Undecodable {
                path,
                topic,
                index,
                log_time,
                source,
            } => write!(
                f,
                "{}: message #{index} on {topic} (log time {}.{:09} s) does not decode: {source}",
                path.display(),
                log_time / 1_000_000_000,
                log_time % 1_000_000_000
            ),
        }
    }
}

impl BagError {
    /// The topic the error is about, if it is about one.
    pub fn topic(&self) -> Option<&str> {
        match self {
            BagError::WrongSchema { topic, .. }
            | BagError::WrongEncoding { topic, .. }
            | BagError::Undecodable { topic, .. } => Some(topic),
            _ => None,
        }
    }
}

impl std::error::Error for BagError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BagError::Io { source, .. } => Some(source),
            BagError::Container { source, .. } => Some(source),
            BagError::Undecodable { source, .. } => Some(source),
            _ => None,
        }
    }
}
