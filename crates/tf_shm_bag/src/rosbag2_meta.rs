//! rosbag2 Jazzy's metadata in an MCAP file, as its MCAP storage plugin writes it: each
//! channel's `offered_qos_profiles` (the publishers' QoS) and `topic_type_hash`, and a
//! Metadata record named `rosbag2` whose `serialized_metadata` is the bag's metadata (what
//! `metadata.yaml` holds under `rosbag2_bagfile_information`), metadata version 9: QoS
//! policies by name. The YAML is written out here in the layout yaml-cpp's `YAML::Dump` gives
//! it (block style, two-space indents, keys in rosbag2's order); sources: rosbag2 (jazzy)
//! `rosbag2_storage/src/rosbag2_storage/qos.cpp`, `rosbag2_storage/include/rosbag2_storage/
//! yaml.hpp`, `rosbag2_storage_mcap/src/mcap_storage.cpp`.

use std::fmt::Write as _;

/// Metadata version rosbag2 Jazzy writes (`BagMetadata::version`).
pub const VERSION: u32 = 9;

/// `ROS_DISTRO` recorded in the metadata.
pub const ROS_DISTRO: &str = "jazzy";

/// rosidl's type hash of `tf2_msgs/msg/TFMessage` in ROS 2 Jazzy (RIHS01: SHA-256 of its type
/// description), as rosbag2 records it per topic.
pub const TF_MESSAGE_TYPE_HASH: &str =
    "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087";

/// An infinite QoS duration (`RMW_DURATION_INFINITE`), as rosbag2 writes it.
const INFINITE: (u64, u64) = (9_223_372_036, 854_775_807);

/// The QoS a TF publisher offers as the ROS graph reports it to a recorder: reliable;
/// transient-local for `/tf_static` (tf2_ros's `StaticBroadcasterQoS`), volatile for `/tf`;
/// history and depth are not part of what DDS discovery carries (`unknown`, 0).
fn qos_lines(transient_local: bool, indent: &str) -> String {
    let mut s = String::new();
    let inf = |s: &mut String, key: &str| {
        let _ = write!(
            s,
            "{indent}  {key}:\n{indent}    sec: {}\n{indent}    nsec: {}\n",
            INFINITE.0, INFINITE.1
        );
    };
    let _ = write!(
        s,
        "{indent}- history: unknown\n{indent}  depth: 0\n{indent}  reliability: reliable\n\
         {indent}  durability: {}\n",
        if transient_local {
            "transient_local"
        } else {
            "volatile"
        }
    );
    inf(&mut s, "deadline");
    inf(&mut s, "lifespan");
    let _ = writeln!(s, "{indent}  liveliness: automatic");
    inf(&mut s, "liveliness_lease_duration");
    let _ = write!(s, "{indent}  avoid_ros_namespace_conventions: false");
    s
}

/// A channel's `offered_qos_profiles`: the YAML sequence of one profile (no final newline, as
/// `YAML::Dump` gives it).
pub fn offered_qos(transient_local: bool) -> String {
    qos_lines(transient_local, "")
}

/// A YAML scalar: plain when it is a plain-safe name (what ROS topic, type and file names
/// usually are), else double-quoted, as yaml-cpp's emitter decides.
fn scalar(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
        && !v.starts_with(['-', '.']);
    if plain {
        return v.to_string();
    }
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One topic of a bag, for [`serialized_metadata`].
pub struct TopicInfo<'a> {
    pub name: &'a str,
    pub type_name: &'a str,
    pub transient_local: bool,
    pub message_count: u64,
}

/// What `serialized_metadata` describes.
pub struct BagSummary<'a> {
    /// The file's name (no directory), as `relative_file_paths` and `files` give it.
    pub file: &'a str,
    /// Receive time of the first message and from it to the last, ns (0, 0 when empty).
    pub starting_time_ns: u64,
    pub duration_ns: u64,
    pub topics: &'a [TopicInfo<'a>],
}

/// The `rosbag2` Metadata record's `serialized_metadata`: `YAML::Dump` of rosbag2's
/// `BagMetadata` (version 9, storage `mcap`, chunk compression not recorded as message
/// compression, so both compression fields are empty).
pub fn serialized_metadata(b: &BagSummary<'_>) -> String {
    let count: u64 = b.topics.iter().map(|t| t.message_count).sum();
    let mut s = String::new();
    let _ = write!(
        s,
        "version: {VERSION}\nstorage_identifier: mcap\nduration:\n  nanoseconds: {}\n\
         starting_time:\n  nanoseconds_since_epoch: {}\nmessage_count: {count}\n\
         topics_with_message_count:\n",
        b.duration_ns, b.starting_time_ns
    );
    for t in b.topics {
        let _ = write!(
            s,
            "  - topic_metadata:\n      name: {}\n      type: {}\n      \
             serialization_format: cdr\n      offered_qos_profiles:\n{}\n      \
             type_description_hash: {TF_MESSAGE_TYPE_HASH}\n    message_count: {}\n",
            scalar(t.name),
            scalar(t.type_name),
            qos_lines(t.transient_local, "        "),
            t.message_count
        );
    }
    let _ = write!(
        s,
        "compression_format: \"\"\ncompression_mode: \"\"\nrelative_file_paths:\n  - {file}\n\
         files:\n  - path: {file}\n    starting_time:\n      nanoseconds_since_epoch: {}\n    \
         duration:\n      nanoseconds: {}\n    message_count: {count}\ncustom_data: ~\n\
         ros_distro: {ROS_DISTRO}",
        b.starting_time_ns,
        b.duration_ns,
        file = scalar(b.file)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The form rosbag2 Jazzy's `qos.cpp` gives a reliable, volatile publisher seen through
    /// the graph (policies by name, infinite durations as sec/nsec).
    #[test]
    fn offered_qos_is_jazzys_version_9_form() {
        assert_eq!(
            offered_qos(false),
            "- history: unknown\n  depth: 0\n  reliability: reliable\n  durability: volatile\n  \
             deadline:\n    sec: 9223372036\n    nsec: 854775807\n  lifespan:\n    sec: \
             9223372036\n    nsec: 854775807\n  liveliness: automatic\n  \
             liveliness_lease_duration:\n    sec: 9223372036\n    nsec: 854775807\n  \
             avoid_ros_namespace_conventions: false"
        );
        assert!(offered_qos(true).contains("durability: transient_local\n"));
    }
}
