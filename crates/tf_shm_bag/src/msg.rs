//! `tf2_msgs/msg/TFMessage` as rosbag2 stores it: CDR (XCDR1, the encoding ROS 2 Jazzy's
//! `rmw` serialises with), a 4-byte encapsulation header, then the message. Serde types here,
//! the encoding itself is the `cdr-encoding` crate's.

use byteorder::{BigEndian, LittleEndian};
use serde::{Deserialize, Serialize};

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub stamp: Time,
    pub frame_id: String,
}

/// `geometry_msgs/msg/Vector3`, metres.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Vector3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// `geometry_msgs/msg/Quaternion`, x, y, z, w.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quaternion {
    pub x: f64,
    pub y: f64,
    pub z: f64,
    pub w: f64,
}

/// `geometry_msgs/msg/Transform`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Transform {
    pub translation: Vector3,
    pub rotation: Quaternion,
}

/// `geometry_msgs/msg/TransformStamped`: the pose of `child_frame_id` in `header.frame_id`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TransformStamped {
    pub header: Header,
    pub child_frame_id: String,
    pub transform: Transform,
}

/// `tf2_msgs/msg/TFMessage`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TfMessage {
    pub transforms: Vec<TransformStamped>,
}

/// `rosgraph_msgs/msg/Clock`: the ROS time a simulator (or `ros2 bag play --clock`) publishes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    pub clock: Time,
}

/// Why a message's bytes are not a TFMessage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

/// Encapsulation identifiers of plain CDR (RTPS 2.3 §10.5): big and little endian.
const CDR_BE: [u8; 2] = [0x00, 0x00];
const CDR_LE: [u8; 2] = [0x00, 0x01];

/// Decodes one serialised TFMessage (encapsulation header included).
///
/// Errors: [`DecodeError`] for a payload shorter than its header, an encapsulation other than
/// plain CDR, or bytes that end early or do not form a TFMessage (e.g. a string that is not
/// UTF-8 or a length past the end).
pub fn decode(bytes: &[u8]) -> Result<TfMessage, DecodeError> {
    decode_cdr(bytes, "TFMessage")
}

/// Decodes one serialised `rosgraph_msgs/msg/Clock` (encapsulation header included).
///
/// Errors: as [`decode`].
pub fn decode_clock(bytes: &[u8]) -> Result<Clock, DecodeError> {
    decode_cdr(bytes, "Clock")
}

fn decode_cdr<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, DecodeError> {
    if bytes.len() < 4 {
        return Err(DecodeError(format!(
            "{} bytes, shorter than the 4-byte CDR encapsulation header",
            bytes.len()
        )));
    }
    let (head, body) = bytes.split_at(4);
    let decoded = match [head[0], head[1]] {
        CDR_LE => cdr_encoding::from_bytes::<T, LittleEndian>(body),
        CDR_BE => cdr_encoding::from_bytes::<T, BigEndian>(body),
        other => {
            return Err(DecodeError(format!(
                "encapsulation {:#06x} is not plain CDR (0x0000 or 0x0001)",
                u16::from_be_bytes(other)
            )))
        }
    };
    decoded
        .map(|(m, _)| m)
        .map_err(|e| DecodeError(format!("not a {what} in CDR: {e}")))
}

/// Serialises a TFMessage as ROS 2 does: little-endian CDR with its encapsulation header.
pub fn encode(msg: &TfMessage) -> Vec<u8> {
    encode_cdr(msg)
}

/// Serialises a Clock as ROS 2 does (see [`encode`]).
pub fn encode_clock(msg: &Clock) -> Vec<u8> {
    encode_cdr(msg)
}

fn encode_cdr<T: Serialize>(msg: &T) -> Vec<u8> {
    let mut out = vec![CDR_LE[0], CDR_LE[1], 0, 0];
    // Serialising plain structs of numbers and strings into a Vec cannot fail.
    let body = cdr_encoding::to_vec::<T, LittleEndian>(msg)
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
    fn bad_bytes_are_errors() {
        let good = encode(&sample());
        assert!(decode(&good[..3]).is_err());
        assert!(decode(&good[..good.len() - 1]).is_err());
        let mut xcdr2 = good.clone();
        xcdr2[1] = 0x07;
        assert!(decode(&xcdr2).unwrap_err().0.contains("not plain CDR"));
        let mut long_string = good.clone();
        long_string[16..20].copy_from_slice(&1_000_000u32.to_le_bytes());
        assert!(decode(&long_string).is_err());
    }

    /// rclpy's `serialize_message(Clock(clock=Time(sec=7, nanosec=5)))`, written out by hand.
    #[test]
    fn clock_layout_matches_ros2_cdr() {
        let mut want = vec![0u8, 1, 0, 0];
        want.extend(7i32.to_le_bytes());
        want.extend(5u32.to_le_bytes());
        let c = Clock {
            clock: Time { sec: 7, nanosec: 5 },
        };
        assert_eq!(encode_clock(&c), want);
        assert_eq!(decode_clock(&want).unwrap(), c);
        assert!(decode_clock(&want[..7]).unwrap_err().0.contains("Clock"));
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
