//! `tf2_msgs/msg/TFMessage` (and `rosgraph_msgs/msg/Clock`) read straight from its serialized
//! form, the bytes the middleware delivers (`rcl_take_serialized_message`) and rosbag2 stores:
//! CDR in XCDR version 1 (OMG DDS-XTypes 1.3 §7.4.3.5, as rmw_fastrtps and rmw_cyclonedds
//! write ROS 2 messages) or XCDR version 2, either byte order. Names are borrowed from the
//! buffer: nothing is allocated per message.
//!
//! The encapsulation header is read as the middleware reads it (Fast CDR's
//! `Cdr::read_encapsulation`, under rmw_fastrtps, ROS 2's default): the first byte is 0, bit 0
//! of the second is the byte order and its other bits the encoding. TFMessage is a final type,
//! so the parameter-list and delimited kinds read as their plain kind: PLAIN_CDR and PL_CDR
//! (0x00–0x03) as XCDR1, PLAIN_CDR2, DELIMIT_CDR2 and PL_CDR2 (0x06–0x0b) as XCDR2, whose
//! only difference here is that an `f64` is aligned to 4 instead of 8. Every other id is
//! refused, as the middleware refuses it; the two option bytes are ignored, as it ignores them.
//!
//! Layout after the 4-byte encapsulation header (alignment counts from its end):
//! `u32` transform count, then per transform `i32 sec, u32 nanosec`, `frame_id`,
//! `child_frame_id` (each `u32` length counting a terminating NUL, then the bytes), padding to
//! 8 (XCDR2: 4), then translation `x y z` (metres) and rotation `x y z w` as `f64`. A stamp is
//! returned in nanoseconds, `sec · 10⁹ + nanosec`, as tf2 converts it. A Clock is its
//! `i32 sec, u32 nanosec` alone.
//!
//! A message is checked whole before any of it is used, so a malformed one is refused whole, as
//! the middleware's own deserialisation refuses it ([`CdrError`]). Names are what r2r makes of
//! them (rcl's C strings read by `r2r_rcl`): cut at the first NUL, and empty when not UTF-8
//! (tf2 then refuses the transform for its empty frame id, and that refusal is counted).
//!
//! ```
//! // A little-endian XCDR1 TFMessage with no transforms, then a Clock at 7.000000005 s.
//! let empty = [0u8, 1, 0, 0, 0, 0, 0, 0];
//! assert_eq!(tf_shm::cdr::decode(&empty)?.len(), 0);
//! let clock = [0u8, 1, 0, 0, 7, 0, 0, 0, 5, 0, 0, 0];
//! assert_eq!(tf_shm::cdr::decode_clock(&clock)?, 7_000_000_005);
//! # Ok::<(), tf_shm::cdr::CdrError>(())
//! ```

use std::fmt;

use crate::validate::TransformInput;

/// Why a serialized message could not be read as a TFMessage (or a Clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CdrError {
    /// An encapsulation id the middleware refuses too (the 2-byte id; see the module doc).
    Encapsulation(u16),
    /// The message ends inside a field (or its count of transforms is more than its bytes can
    /// hold).
    Truncated {
        /// Offset of the field in the message (encapsulation header included), bytes.
        at: usize,
        /// Bytes the field needs.
        need: usize,
        /// Length of the message, bytes.
        len: usize,
    },
}

impl fmt::Display for CdrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CdrError::Encapsulation(id) => write!(
                f,
                "encapsulation 0x{id:04x} is not CDR (0x0000-0x0003 XCDR1, 0x0006-0x000b \
                 XCDR2; an odd id is little-endian)"
            ),
            CdrError::Truncated { at, need, len } => write!(
                f,
                "message of {len} bytes ends inside a field ({need} bytes wanted at offset {at})"
            ),
        }
    }
}

impl std::error::Error for CdrError {}

/// Size of a transform without its names' bytes: stamp 8, two lengths 8, seven f64 56.
const MIN_TRANSFORM: usize = 8 + 8 + 56;

/// A CDR reader over one message body.
#[derive(Debug)]
struct Reader<'a> {
    body: &'a [u8],
    at: usize,
    little: bool,
    /// Alignment of an `f64`: 8 in XCDR1, 4 in XCDR2.
    f64_align: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, align: usize, n: usize) -> Result<&'a [u8], CdrError> {
        let start = self.at.next_multiple_of(align);
        let end = start.checked_add(n).filter(|&e| e <= self.body.len());
        let Some(end) = end else {
            return Err(CdrError::Truncated {
                at: start.min(self.body.len()) + 4,
                need: n,
                len: self.body.len() + 4,
            });
        };
        self.at = end;
        Ok(&self.body[start..end])
    }

    fn u32(&mut self) -> Result<u32, CdrError> {
        let b: [u8; 4] = self.take(4, 4)?.try_into().expect("4 bytes");
        Ok(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    fn f64(&mut self) -> Result<f64, CdrError> {
        let b: [u8; 8] = self.take(self.f64_align, 8)?.try_into().expect("8 bytes");
        Ok(if self.little {
            f64::from_le_bytes(b)
        } else {
            f64::from_be_bytes(b)
        })
    }

    /// A CDR string as r2r reads it (see the module documentation).
    fn name(&mut self) -> Result<&'a str, CdrError> {
        let n = self.u32()? as usize;
        let bytes = self.take(1, n)?;
        let bytes = match bytes.iter().position(|&b| b == 0) {
            Some(nul) => &bytes[..nul],
            None => bytes,
        };
        Ok(std::str::from_utf8(bytes).unwrap_or(""))
    }

    /// A `builtin_interfaces/Time`, ns.
    fn stamp(&mut self) -> Result<i64, CdrError> {
        let sec = self.u32()? as i32;
        let nanosec = self.u32()?;
        Ok(i64::from(sec) * 1_000_000_000 + i64::from(nanosec))
    }

    fn transform(&mut self) -> Result<TransformInput<'a>, CdrError> {
        let stamp = self.stamp()?;
        let frame_id = self.name()?;
        let child_frame_id = self.name()?;
        let mut v = [0.0; 7];
        for x in &mut v {
            *x = self.f64()?;
        }
        Ok(TransformInput {
            frame_id,
            child_frame_id,
            stamp,
            translation: [v[0], v[1], v[2]],
            rotation: [v[3], v[4], v[5], v[6]],
        })
    }
}

/// The transforms of one serialized TFMessage, checked whole; iterating yields them in order.
#[derive(Debug)]
pub struct Transforms<'a> {
    reader: Reader<'a>,
    left: usize,
}

impl<'a> Iterator for Transforms<'a> {
    type Item = TransformInput<'a>;

    fn next(&mut self) -> Option<TransformInput<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Checked by `decode` before this iterator was made: cannot fail.
        self.reader.transform().ok()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Transforms<'_> {}

/// The reader of a message's body, after its encapsulation header.
fn body(message: &[u8]) -> Result<Reader<'_>, CdrError> {
    if message.len() < 4 {
        return Err(CdrError::Truncated {
            at: 0,
            need: 4,
            len: message.len(),
        });
    }
    let id = u16::from_be_bytes([message[0], message[1]]);
    let f64_align = match id & !1 {
        0x0000 | 0x0002 => 8,
        0x0006 | 0x0008 | 0x000a => 4,
        _ => return Err(CdrError::Encapsulation(id)),
    };
    Ok(Reader {
        body: &message[4..],
        at: 0,
        little: id & 1 == 1,
        f64_align,
    })
}

/// Reads a serialized TFMessage: every transform is checked before the first is returned.
/// Bytes after the last transform (CDR padding) are ignored, as the middleware ignores them.
///
/// Errors: [`CdrError`], for the whole message.
pub fn decode(message: &[u8]) -> Result<Transforms<'_>, CdrError> {
    let mut reader = body(message)?;
    let count = reader.u32()? as usize;
    let start = reader.at;
    // A count the bytes cannot hold fails here, before any per-transform work.
    let room = (reader.body.len() - start) / MIN_TRANSFORM;
    if count > room {
        return Err(CdrError::Truncated {
            at: start + 4,
            need: count.saturating_mul(MIN_TRANSFORM),
            len: message.len(),
        });
    }
    for _ in 0..count {
        reader.transform()?;
    }
    reader.at = start;
    Ok(Transforms {
        reader,
        left: count,
    })
}

/// Reads a serialized `rosgraph_msgs/msg/Clock`: the time it sets, ns. Bytes after it are
/// ignored, as in [`decode`].
///
/// Errors: [`CdrError`].
pub fn decode_clock(message: &[u8]) -> Result<i64, CdrError> {
    body(message)?.stamp()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message built field by field in either byte order, `f64` aligned to 8 as XCDR1 has
    /// it (the test's own CDR writer).
    #[derive(Default)]
    struct Cdr(Vec<u8>);

    impl Cdr {
        fn new(encapsulation: [u8; 4]) -> Cdr {
            Cdr(encapsulation.to_vec())
        }
        fn pad(&mut self, align: usize) {
            let padded = 4 + (self.0.len() - 4).next_multiple_of(align);
            self.0.resize(padded, 0);
        }
        fn u32(&mut self, v: u32, be: bool) -> &mut Self {
            self.pad(4);
            let b = if be { v.to_be_bytes() } else { v.to_le_bytes() };
            self.0.extend_from_slice(&b);
            self
        }
        fn string(&mut self, s: &[u8], be: bool) -> &mut Self {
            self.u32(s.len() as u32 + 1, be);
            self.0.extend_from_slice(s);
            self.0.push(0);
            self
        }
        fn f64(&mut self, v: f64, be: bool) -> &mut Self {
            self.pad(8);
            let b = if be { v.to_be_bytes() } else { v.to_le_bytes() };
            self.0.extend_from_slice(&b);
            self
        }
        fn transform(&mut self, parent: &[u8], child: &[u8], base: f64, be: bool) -> &mut Self {
            self.u32(7, be).u32(500, be);
            self.string(parent, be).string(child, be);
            for i in 0..7 {
                self.f64(base + i as f64, be);
            }
            self
        }
    }

    fn two(be: bool) -> Vec<u8> {
        let mut m = Cdr::new(if be { [0, 0, 0, 0] } else { [0, 1, 0, 0] });
        m.u32(2, be);
        m.transform(b"map", b"odom", 1.0, be);
        m.transform(b"odom", b"base_link", 10.0, be);
        m.0
    }

    #[test]
    fn both_byte_orders_read_the_same_transforms() {
        for be in [false, true] {
            let bytes = two(be);
            let t: Vec<_> = decode(&bytes).unwrap().collect();
            assert_eq!(t.len(), 2);
            assert_eq!((t[0].frame_id, t[0].child_frame_id), ("map", "odom"));
            assert_eq!((t[1].frame_id, t[1].child_frame_id), ("odom", "base_link"));
            assert_eq!(t[0].stamp, 7_000_000_500);
            assert_eq!(t[0].translation, [1.0, 2.0, 3.0]);
            assert_eq!(t[1].rotation, [13.0, 14.0, 15.0, 16.0]);
        }
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = two(false);
        for n in 0..bytes.len() {
            // The last transform's final f64 ends the message: every shorter prefix is cut.
            assert!(
                matches!(decode(&bytes[..n]), Err(CdrError::Truncated { .. })),
                "prefix of {n} bytes accepted"
            );
        }
        assert_eq!(decode(&bytes).unwrap().len(), 2);
    }

    #[test]
    fn trailing_padding_is_ignored() {
        let mut bytes = two(false);
        bytes.extend_from_slice(&[0, 0, 0]);
        assert_eq!(decode(&bytes).unwrap().len(), 2);
    }

    #[test]
    fn other_encapsulations_are_refused() {
        for (b0, b1) in [(0, 4), (0, 5), (0, 0x0c), (1, 1), (0x80, 0)] {
            let mut bytes = two(false);
            bytes[..2].copy_from_slice(&[b0, b1]);
            let id = u16::from_be_bytes([b0, b1]);
            assert_eq!(decode(&bytes).err(), Some(CdrError::Encapsulation(id)));
            assert!(decode(&bytes)
                .unwrap_err()
                .to_string()
                .contains(&format!("0x{id:04x}")));
        }
    }

    #[test]
    fn xcdr2_aligns_f64_to_4() {
        // One transform whose names end 4 bytes past an 8-byte boundary: XCDR1 pads, XCDR2 not.
        let mut m = Cdr::new([0, 0x07, 0, 0]);
        m.u32(1, false).u32(7, false).u32(500, false);
        m.string(b"ab", false).string(b"c", false).pad(4);
        for i in 0..7 {
            m.0.extend_from_slice(&(i as f64).to_le_bytes());
        }
        let t: Vec<_> = decode(&m.0).unwrap().collect();
        assert_eq!(t[0].translation, [0.0, 1.0, 2.0]);
        assert_eq!(t[0].rotation, [3.0, 4.0, 5.0, 6.0]);
        m.0[1] = 0x01;
        assert_ne!(
            decode(&m.0).map(|t| t.collect::<Vec<_>>()[0].translation),
            Ok([0.0, 1.0, 2.0])
        );
    }

    #[test]
    fn a_count_the_bytes_cannot_hold_fails_before_reading() {
        let mut m = Cdr::new([0, 1, 0, 0]);
        m.u32(u32::MAX, false);
        m.transform(b"a", b"b", 0.0, false);
        assert!(matches!(decode(&m.0), Err(CdrError::Truncated { .. })));
    }

    #[test]
    fn a_string_longer_than_the_message_fails() {
        let mut m = Cdr::new([0, 1, 0, 0]);
        m.u32(1, false)
            .u32(0, false)
            .u32(0, false)
            .u32(0xffff_fff0, false);
        m.0.resize(200, 0);
        assert!(matches!(decode(&m.0), Err(CdrError::Truncated { .. })));
    }

    #[test]
    fn names_are_read_as_r2r_reads_them() {
        let mut m = Cdr::new([0, 1, 0, 0]);
        m.u32(3, false);
        m.transform(b"ma\0p", b"od\xffom", 0.0, false);
        // Length 0 (no NUL at all) and a name without its NUL.
        m.u32(0, false).u32(0, false).u32(0, false);
        m.u32(3, false);
        m.0.extend_from_slice(b"abc");
        for i in 0..7 {
            m.f64(i as f64, false);
        }
        m.transform(b"", b"x", 0.0, false);
        let t: Vec<_> = decode(&m.0).unwrap().collect();
        assert_eq!((t[0].frame_id, t[0].child_frame_id), ("ma", ""));
        assert_eq!((t[1].frame_id, t[1].child_frame_id), ("", "abc"));
        assert_eq!((t[2].frame_id, t[2].child_frame_id), ("", "x"));
    }

    #[test]
    fn clocks_read_in_every_encoding_and_byte_order() {
        for (id, be) in [(0x00, true), (0x01, false), (0x06, true), (0x0b, false)] {
            let mut m = Cdr::new([0, id, 0, 0]);
            m.u32(-3i32 as u32, be).u32(5, be);
            assert_eq!(decode_clock(&m.0), Ok(-2_999_999_995), "id {id:#04x}");
            for n in 0..m.0.len() {
                assert!(matches!(
                    decode_clock(&m.0[..n]),
                    Err(CdrError::Truncated { .. })
                ));
            }
        }
        let mut m = Cdr::new([0, 4, 0, 0]);
        m.u32(1, false).u32(0, false);
        assert_eq!(decode_clock(&m.0), Err(CdrError::Encapsulation(4)));
    }
}
