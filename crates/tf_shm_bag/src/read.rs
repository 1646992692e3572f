//! Streaming the TF messages out of a rosbag2 MCAP file, in file order, one chunk in memory at
//! a time (`mcap`'s sans-io linear reader: chunks are decompressed and CRC-checked as read).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use mcap::records::Record;
use mcap::sans_io::{LinearReadEvent, LinearReader, LinearReaderOptions};

use crate::error::BagError;
use crate::msg::{self, TfMessage};

/// Largest record accepted, bytes: a damaged length field must not make the reader buffer
/// gigabytes. rosbag2's chunks are ~1 MiB; a TFMessage of 10⁶ transforms is ~100 MiB.
const RECORD_LENGTH_LIMIT: usize = 1 << 30;

/// The topics to read. rosbag2 records TF under `/tf` and `/tf_static`, and a simulator's
/// clock under `/clock`, unless remapped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topics {
    /// Dynamic transforms. Default `/tf`.
    pub tf: String,
    /// Static transforms. Default `/tf_static`.
    pub tf_static: String,
    /// The ROS clock (`rosgraph_msgs/msg/Clock`) a `use_sim_time` node follows. Default
    /// `/clock`; `None`: not read (the bag is replayed as if it had none).
    pub clock: Option<String>,
}

impl Default for Topics {
    fn default() -> Self {
        Topics {
            tf: "/tf".into(),
            tf_static: "/tf_static".into(),
            clock: Some("/clock".into()),
        }
    }
}

/// What a topic of [`Topics`] carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Tf { is_static: bool },
    Clock,
}

impl Topics {
    fn kind(&self, topic: &str) -> Option<Kind> {
        if topic == self.tf_static {
            Some(Kind::Tf { is_static: true })
        } else if topic == self.tf {
            Some(Kind::Tf { is_static: false })
        } else if self.clock.as_deref() == Some(topic) {
            Some(Kind::Clock)
        } else {
            None
        }
    }
}

/// One TF message of a bag.
#[derive(Clone, Debug, PartialEq)]
pub struct TfRecord {
    /// Read from the static topic.
    pub is_static: bool,
    /// Receive time rosbag2 logged, ns since the Unix epoch (or sim time when recorded so).
    pub log_time: u64,
    /// The message.
    pub message: TfMessage,
}

/// One `/clock` message of a bag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockRecord {
    /// Receive time rosbag2 logged, ns.
    pub log_time: u64,
    /// The ROS time it sets, ns.
    pub clock: i64,
}

/// One message of a bag on the topics read.
#[derive(Clone, Debug, PartialEq)]
pub enum BagRecord {
    /// On `/tf` or `/tf_static`.
    Tf(TfRecord),
    /// On `/clock`.
    Clock(ClockRecord),
}

impl BagRecord {
    /// Receive time rosbag2 logged, ns.
    pub fn log_time(&self) -> u64 {
        match self {
            BagRecord::Tf(t) => t.log_time,
            BagRecord::Clock(c) => c.log_time,
        }
    }
}

/// Reads the TF (and clock) messages of one bag in file order (rosbag2 writes in receive
/// order).
///
/// Every CRC the file carries is checked (a chunk's before any of its messages is returned,
/// the data and summary sections' at their end), so a damaged chunk is an error, not wrong
/// transforms.
///
/// Channels on the topics read are checked when they appear: schema `tf2_msgs/msg/TFMessage`
/// (or `rosgraph_msgs/msg/Clock` for the clock; `ros2msg` or `ros2idl`) and message encoding
/// `cdr`, else [`BagError::WrongSchema`] or [`BagError::WrongEncoding`]. Other topics are
/// skipped without decoding.
pub struct BagReader {
    path: PathBuf,
    file: File,
    reader: LinearReader,
    topics: Topics,
    bytes_read: u64,
    schemas: HashMap<u16, (String, String)>,
    /// Channel id → (topic, kind) for the channels read.
    channels: HashMap<u16, (String, Kind)>,
    /// Every topic seen, with its schema name (for the "no TF" error).
    all_topics: BTreeMap<String, String>,
    tf_messages: u64,
    /// Messages returned so far (TF and clock).
    messages: u64,
    done: bool,
}

impl BagReader {
    /// Opens `path` for reading.
    ///
    /// Errors: [`BagError::Io`] when the file cannot be opened.
    pub fn open(path: &Path, topics: &Topics) -> Result<BagReader, BagError> {
        let file = File::open(path).map_err(|source| BagError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(BagReader {
            path: path.to_path_buf(),
            file,
            reader: LinearReader::new_with_options(
                LinearReaderOptions::default()
                    .with_prevalidate_chunk_crcs(true)
                    .with_validate_data_section_crc(true)
                    .with_validate_summary_section_crc(true)
                    .with_record_length_limit(RECORD_LENGTH_LIMIT),
            ),
            topics: topics.clone(),
            bytes_read: 0,
            schemas: HashMap::new(),
            channels: HashMap::new(),
            all_topics: BTreeMap::new(),
            tf_messages: 0,
            messages: 0,
            done: false,
        })
    }

    /// TF messages returned so far.
    pub fn tf_messages(&self) -> u64 {
        self.tf_messages
    }

    /// Bytes of the file read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Every topic seen so far with its schema name, sorted by topic.
    pub fn topics(&self) -> Vec<(String, String)> {
        self.all_topics
            .iter()
            .map(|(t, s)| (t.clone(), s.clone()))
            .collect()
    }

    /// The "no TF" error for this file.
    pub fn no_tf_error(&self) -> BagError {
        BagError::NoTf {
            path: self.path.clone(),
            wanted: vec![self.topics.tf.clone(), self.topics.tf_static.clone()],
            topics: self.topics(),
        }
    }

    fn container(&self, source: mcap::McapError) -> BagError {
        BagError::Container {
            path: self.path.clone(),
            offset: self.bytes_read,
            source,
        }
    }

    /// The next message, `None` at the end of the file. After an error, returns `None`.
    pub fn next_message(&mut self) -> Option<Result<BagRecord, BagError>> {
        if self.done {
            return None;
        }
        let r = self.advance();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }

    fn advance(&mut self) -> Option<Result<BagRecord, BagError>> {
        loop {
            let event = match self.reader.next_event()? {
                Ok(e) => e,
                Err(e) => return Some(Err(self.container(e))),
            };
            let (opcode, data) = match event {
                LinearReadEvent::ReadRequest(need) => {
                    let buf = self.reader.insert(need);
                    match read_some(&mut self.file, buf) {
                        Ok(n) => {
                            self.reader.notify_read(n);
                            self.bytes_read += n as u64;
                        }
                        Err(source) => {
                            return Some(Err(BagError::Io {
                                path: self.path.clone(),
                                source,
                            }))
                        }
                    }
                    continue;
                }
                LinearReadEvent::Record { opcode, data } => (opcode, data),
            };
            let record = match mcap::parse_record(opcode, data) {
                Ok(r) => r,
                Err(e) => {
                    let (path, offset) = (self.path.clone(), self.bytes_read);
                    return Some(Err(BagError::Container {
                        path,
                        offset,
                        source: e,
                    }));
                }
            };
            match record {
                Record::Schema { header, .. } => {
                    self.schemas
                        .insert(header.id, (header.name, header.encoding));
                }
                Record::Channel(ch) => {
                    let (schema, encoding) =
                        self.schemas.get(&ch.schema_id).cloned().unwrap_or_default();
                    self.all_topics.insert(ch.topic.clone(), schema.clone());
                    if let Some(kind) = self.topics.kind(&ch.topic) {
                        let expected = match kind {
                            Kind::Tf { .. } => msg::SCHEMA_NAME,
                            Kind::Clock => msg::CLOCK_SCHEMA_NAME,
                        };
                        if schema != expected || !msg::SCHEMA_ENCODINGS.contains(&encoding.as_str())
                        {
                            return Some(Err(BagError::WrongSchema {
                                path: self.path.clone(),
                                topic: ch.topic,
                                schema,
                                encoding,
                                expected,
                            }));
                        }
                        if ch.message_encoding != msg::MESSAGE_ENCODING {
                            return Some(Err(BagError::WrongEncoding {
                                path: self.path.clone(),
                                topic: ch.topic,
                                encoding: ch.message_encoding,
                            }));
                        }
                        self.channels.insert(ch.id, (ch.topic, kind));
                    }
                }
                Record::Message { header, data } => {
                    let Some((topic, kind)) = self.channels.get(&header.channel_id) else {
                        continue;
                    };
                    let index = self.messages;
                    self.messages += 1;
                    let log_time = header.log_time;
                    let decoded = match *kind {
                        Kind::Tf { is_static } => {
                            self.tf_messages += 1;
                            msg::decode(&data).map(|message| {
                                BagRecord::Tf(TfRecord {
                                    is_static,
                                    log_time,
                                    message,
                                })
                            })
                        }
                        Kind::Clock => tf_shm::cdr::decode_clock(&data)
                            .map(|clock| BagRecord::Clock(ClockRecord { log_time, clock })),
                    };
                    return Some(decoded.map_err(|source| BagError::Undecodable {
                        path: self.path.clone(),
                        topic: topic.clone(),
                        index,
                        log_time,
                        source,
                    }));
                }
                _ => {}
            }
        }
    }
}

impl Iterator for BagReader {
    type Item = Result<BagRecord, BagError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_message()
    }
}

fn read_some(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}
