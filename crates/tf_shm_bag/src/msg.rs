//! `tf2_msgs/msg/TFMessage` as rosbag2 stores it: CDR, a 4-byte encapsulation header, then
//! the message. Read by [`tf_shm::cdr`] (XCDR1 or XCDR2, either byte order, as the bridge reads
//! what the middleware delivers); written here as ROS 2 Jazzy's `rmw` serialises it
//! (little-endian XCDR1), by the `cdr-encoding` crate from the serde types below.

use byteorder::LittleEndian;
use serde::Serialize;
use tf_shm::cdr::CdrError;
use tf_shm::validate::TransformInput;

/// Schema name of the message, as rosbag2 writes it in the MCAP schema record.
pub const SCHEMA_NAME: &str = "tf2_msgs/msg/TFMessage";
/// Schema encodings a TFMessage schema may have (rosbag2 writes `ros2msg`; `ros2idl` is the
/// IDL form of the same type).
pub const SCHEMA_ENCODINGS: [&str; 2] = ["ros2msg", "ros2idl"];
/// Channel message encoding of CDR-serialised ROS 2 messages.
pub const MESSAGE_ENCODING: &str = "cdr";
/// Schema name of the simulated clock's message (`/clock`, what `use_sim_time` nodes follow).
pub const CLOCK_SCHEMA_NAME: &str = "rosgraph_msgs/msg/Clock";

/// The `ros2msg` definition of TFMessage with its dependencies, in the layout rosbag2 and
/// `mcap-ros2-support` write (each dependency after a line of 80 `=` and `MSG: <type>`).
pub const SCHEMA_TEXT: &str = "geometry_msgs/TransformStamped[] transforms
================================================================================
MSG: geometry_msgs/TransformStamped
std_msgs/Header header
string child_frame_id
Transform transform
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
================================================================================
MSG: geometry_msgs/Transform
Vector3 translation
Quaternion rotation
================================================================================
MSG: geometry_msgs/Vector3
float64 x
float64 y
float64 z
================================================================================
MSG: geometry_msgs/Quaternion
float64 x 0
float64 y 0
float64 z 0
float64 w 1
";

/// `builtin_interfaces/msg/Time`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Time {
    pub sec: i32,
    pub nanosec: u32,
}

impl Time {
    /// Nanoseconds since the epoch of the clock, as tf2 converts stamps.
    pub fn to_ns(self) -> i64 {
        i64::from(self.sec) * 1_000_000_000 + i64::from(self.nanosec)
    }

    /// The message time of `ns` (floor division, so negative times keep `nanosec < 1e9`).
    /// Saturates outside the range of a 32-bit second count.
    pub fn from_ns(ns: i64) -> Time {
        let sec = ns.div_euclid(1_000_000_000);
        let nanosec = ns.rem_euclid(1_000_000_000) as u32;
        match i32::try_from(sec) {
            Ok(sec) => Time { sec, nanosec },
            Err(_) if sec < 0 => Time {
                sec: i32::MIN,
                nanosec: 0,
            },
            Err(_) => Time {
                sec: i32::MAX,
                nanosec: 999_999_999,
            },
        }
    }
}

/// `std_msgs/msg/Header`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Header {
    pub stamp: Time,
    pub frame_id: String,
}

/// `geometry_msgs/msg/Vector3`, metres.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Vector3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// `geometry_msgs/msg/Quaternion`, x, y, z, w.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Quaternion {
    pub x: f64,
    pub y: f64,
    pub z: f64,
    pub w: f64,
}

/// `geometry_msgs/msg/Transform`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Transform {
    pub translation: Vector3,
    pub rotation: Quaternion,
}

/// `geometry_msgs/msg/TransformStamped`: the pose of `child_frame_id` in `header.frame_id`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TransformStamped {
    pub header: Header,
    pub child_frame_id: String,
    pub transform: Transform,
}

/// `tf2_msgs/msg/TFMessage`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TfMessage {
    pub transforms: Vec<TransformStamped>,
}

/// A transform as [`tf_shm::cdr`] reads it, its stamp split as [`Time::from_ns`] splits it.
impl From<TransformInput<'_>> for TransformStamped {
    fn from(t: TransformInput<'_>) -> Self {
        let ([x, y, z], [qx, qy, qz, qw]) = (t.translation, t.rotation);
        TransformStamped {
            header: Header {
                stamp: Time::from_ns(t.stamp),
                frame_id: t.frame_id.to_owned(),
            },
            child_frame_id: t.child_frame_id.to_owned(),
            transform: Transform {
                translation: Vector3 { x, y, z },
                rotation: Quaternion {
                    x: qx,
                    y: qy,
                    z: qz,
                    w: qw,
                },
            },
        }
    }
}

/// Reads one serialised TFMessage (encapsulation header included) with [`tf_shm::cdr::decode`]:
/// XCDR1 or XCDR2, either byte order, names as r2r reads them.
///
/// Errors: [`CdrError`], for the whole message (as [`tf_shm::cdr::decode`]).
pub fn decode(bytes: &[u8]) -> Result<TfMessage, CdrError> {
    Ok(TfMessage {
        transforms: tf_shm::cdr::decode(bytes)?
            .map(TransformStamped::from)
            .collect(),
    })
}

/// Encapsulation identifier of little-endian XCDR1 (RTPS 2.3 §10.5, `CDR_LE`).
const CDR_LE: [u8; 2] = [0x00, 0x01];

/// Serialises a TFMessage as ROS 2 does: little-endian XCDR1 with its encapsulation header.
pub fn encode(msg: &TfMessage) -> Vec<u8> {
    let mut out = vec![CDR_LE[0], CDR_LE[1], 0, 0];
    // Serialising plain structs of numbers and strings into a Vec cannot fail.
    let body = cdr_encoding::to_vec::<TfMessage, LittleEndian>(msg)
        .expect("CDR serialisation of a message into memory");
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TfMessage {
        TfMessage {
            transforms: vec![TransformStamped {
                header: Header {
                    stamp: Time {
                        sec: 12,
                        nanosec: 345,
                    },
                    frame_id: "odom".into(),
                },
                child_frame_id: "base_link".into(),
                transform: Transform {
                    translation: Vector3 {
                        x: 1.0,
                        y: -2.0,
                        z: 0.5,
                    },
                    rotation: Quaternion {
                        x: 0.0,
                        y: 0.0,
                        z: 0.0,
                        w: 1.0,
                    },
                },
            }],
        }
    }

    /// The bytes rclpy's `serialize_message` gives for `sample()` (little-endian CDR): written
    /// out by hand from the XCDR1 rules so the layout (string lengths with the NUL, 8-byte
    /// alignment of the doubles after the 4-byte header) is checked independently.
    #[test]
    fn layout_matches_ros2_cdr() {
        let mut want = vec![0u8, 1, 0, 0];
        want.extend(1u32.to_le_bytes()); // sequence length
        want.extend(12i32.to_le_bytes());
        want.extend(345u32.to_le_bytes());
        want.extend(5u32.to_le_bytes());
        want.extend(b"odom\0");
        want.extend([0, 0, 0]); // align to 4
        want.extend(10u32.to_le_bytes());
        want.extend(b"base_link\0");
        want.extend([0, 0]); // 38 bytes of body so far; align to 8 → 40
        for v in [1.0f64, -2.0, 0.5, 0.0, 0.0, 0.0, 1.0] {
            want.extend(v.to_le_bytes());
        }
        assert_eq!(encode(&sample()), want);
        assert_eq!(decode(&want).unwrap(), sample());
    }

    #[test]
    fn negative_times_floor() {
        assert_eq!(
            Time::from_ns(-1),
            Time {
                sec: -1,
                nanosec: 999_999_999
            }
        );
        assert_eq!(Time::from_ns(-1).to_ns(), -1);
        assert_eq!(Time::from_ns(1_500_000_000).to_ns(), 1_500_000_000);
    }
}
