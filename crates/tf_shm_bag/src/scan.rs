//! A first pass over a bag: validates the whole file (container, schemas, every TF message
//! decodes) before anything is served, keeps the static messages to load first, and measures
//! what sizing and progress need.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::BagError;
use crate::msg::TfMessage;
use crate::read::{BagReader, Topics};

/// What a bag holds on its TF topics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BagInfo {
    /// Messages on the static topic, in file order (kept: they are loaded first).
    pub static_messages: Vec<TfMessage>,
    /// Messages on the dynamic topic.
    pub dynamic_messages: u64,
    /// Transforms in the dynamic messages.
    pub dynamic_transforms: u64,
    /// Transforms in the static messages.
    pub static_transforms: u64,
    /// Log (receive) time of the first and last dynamic message, ns.
    pub log_time_range: Option<(u64, u64)>,
    /// Oldest and newest stamp of the dynamic transforms, ns.
    pub stamp_range: Option<(i64, i64)>,
    /// Dynamic transforms per child frame.
    pub per_frame: HashMap<String, u64>,
    /// Every topic of the bag with its schema name.
    pub topics: Vec<(String, String)>,
    /// Size of the file, bytes.
    pub file_bytes: u64,
}

/// Reads the whole bag once.
///
/// Errors: every [`BagError`]; [`BagError::NoTf`] when neither TF topic has a message.
pub fn scan(path: &Path, topics: &Topics) -> Result<BagInfo, BagError> {
    let mut reader = BagReader::open(path, topics)?;
    let mut info = BagInfo::default();
    for rec in reader.by_ref() {
        let rec = rec?;
        if rec.is_static {
            info.static_transforms += rec.message.transforms.len() as u64;
            info.static_messages.push(rec.message);
            continue;
        }
        info.dynamic_messages += 1;
        info.dynamic_transforms += rec.message.transforms.len() as u64;
        let (lo, hi) = info
            .log_time_range
            .get_or_insert((rec.log_time, rec.log_time));
        *lo = (*lo).min(rec.log_time);
        *hi = (*hi).max(rec.log_time);
        for t in &rec.message.transforms {
            let s = t.header.stamp.to_ns();
            let (lo, hi) = info.stamp_range.get_or_insert((s, s));
            *lo = (*lo).min(s);
            *hi = (*hi).max(s);
            match info.per_frame.get_mut(t.child_frame_id.as_str()) {
                Some(n) => *n += 1,
                None => {
                    info.per_frame.insert(t.child_frame_id.clone(), 1);
                }
            }
        }
    }
    info.topics = reader.topics();
    info.file_bytes = reader.bytes_read();
    if reader.tf_messages() == 0 {
        return Err(reader.no_tf_error());
    }
    Ok(info)
}

/// A bag checked by [`scan`], ready to replay.
#[derive(Clone, Debug)]
pub struct ScannedBag {
    /// The file.
    pub path: PathBuf,
    /// Its TF topics.
    pub topics: Topics,
    /// What it holds.
    pub info: BagInfo,
}

impl ScannedBag {
    /// [`scan`]s `path`.
    ///
    /// Errors: as [`scan`].
    pub fn open(path: &Path, topics: &Topics) -> Result<ScannedBag, BagError> {
        Ok(ScannedBag {
            path: path.to_path_buf(),
            topics: topics.clone(),
            info: scan(path, topics)?,
        })
    }
}
