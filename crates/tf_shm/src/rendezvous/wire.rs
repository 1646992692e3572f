//! The hello on the rendezvous socket: one fixed-size little-endian request from the joiner,
//! one fixed-size response from the owner (plus the memfd as `SCM_RIGHTS` when granted).
//!
//! Every parser checks the datagram's length before reading a field, and reads fields only
//! through bounds-checked slices, so no input can make it panic (fuzzed in
//! `tests/rendezvous_wire_fuzz.rs`).
//!
//! Request (`REQUEST_LEN` = 96 bytes):
//!
//! | offset | size | field                                               |
//! |-------:|-----:|-----------------------------------------------------|
//! |      0 |    8 | magic `b"TFSHMHEL"`                                 |
//! |      8 |    2 | wire version (`WIRE_VERSION`)                       |
//! |     10 |    2 | total length (96)                                   |
//! |     12 |    4 | arena format version the joiner was built with      |
//! |     16 |    8 | arena layout hash the joiner was built with         |
//! |     24 |    4 | access mode (1 read-only, 2 read-write)             |
//! |     28 |    4 | pid (informational; the owner trusts `SO_PEERCRED`) |
//! |     32 |   16 | boot id of the joiner                               |
//! |     48 |    1 | name length (≤ 32)                                  |
//! |     49 |   32 | participant name, UTF-8, zero padded                |
//! |     81 |   15 | reserved, zero                                      |
//!
//! Response (`RESPONSE_LEN` = 64 bytes):
//!
//! | offset | size | field                                          |
//! |-------:|-----:|------------------------------------------------|
//! |      0 |    8 | magic `b"TFSHMACK"`                            |
//! |      8 |    2 | wire version                                   |
//! |     10 |    2 | total length (64)                              |
//! |     12 |    4 | status ([`Status`])                            |
//! |     16 |    4 | participant slot (`u32::MAX` when not granted) |
//! |     20 |    4 | the owner's arena format version               |
//! |     24 |    8 | the owner's arena layout hash                  |
//! |     32 |    8 | arena size, bytes                              |
//! |     40 |   16 | arena instance uuid                            |
//! |     56 |    4 | owner pid                                      |
//! |     60 |    4 | reserved, zero                                 |
//!
//! Once attached, a consumer sends only one-byte datagrams: [`WAIT_BEGIN`] when a thread of
//! it starts waiting for data, [`WAIT_END`] when none waits any more; the owner keeps the
//! consumer's bit in the arena header's `waiting` words accordingly (and clears it at hang-up).

use std::fmt;

/// Attached consumer to owner: a thread of mine waits for data (set my `waiting` bit).
pub const WAIT_BEGIN: u8 = 1;
/// Attached consumer to owner: none of my threads waits any more (clear my `waiting` bit).
pub const WAIT_END: u8 = 0;

/// Version of this wire format; a different one is answered with [`Status::VersionMismatch`].
pub const WIRE_VERSION: u16 = 1;
/// First bytes of a request.
pub const REQUEST_MAGIC: [u8; 8] = *b"TFSHMHEL";
/// First bytes of a response.
pub const RESPONSE_MAGIC: [u8; 8] = *b"TFSHMACK";
/// Exact length of a request datagram.
pub const REQUEST_LEN: usize = 96;
/// Exact length of a response datagram.
pub const RESPONSE_LEN: usize = 64;
/// Longest participant name, bytes.
pub const MAX_PEER_NAME: usize = 32;
/// Slot value of a response that grants none.
pub const NO_SLOT: u32 = u32::MAX;

/// Access a participant asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A consumer: maps the arena read-only. The default.
    ReadOnly,
    /// The writer. Only the creator writes; a joiner asking for it is refused with
    /// [`Status::ModeNotPermitted`].
    ReadWrite,
}

impl Mode {
    /// Wire value.
    pub fn to_wire(self) -> u32 {
        match self {
            Mode::ReadOnly => 1,
            Mode::ReadWrite => 2,
        }
    }

    /// From the wire value.
    pub fn from_wire(v: u32) -> Option<Mode> {
        match v {
            1 => Some(Mode::ReadOnly),
            2 => Some(Mode::ReadWrite),
            _ => None,
        }
    }
}

/// The owner's answer to a hello.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Granted: the memfd is attached.
    Ok,
    /// Wire or arena format version differs.
    VersionMismatch,
    /// Same version, different record geometry.
    LayoutMismatch,
    /// The joiner runs in another boot (or boot namespace) than the arena was made in.
    BootMismatch,
    /// Every participant slot is taken.
    NoFreeSlot,
    /// The access mode asked for is not granted to joiners.
    ModeNotPermitted,
    /// The request could not be parsed.
    Malformed,
    /// The peer's credentials are not allowed (other uid, not in the allowed group).
    PermissionDenied,
    /// Too many handshakes were in progress: the owner closed this one, the oldest, to serve
    /// newer ones. Worth retrying.
    Busy,
}

impl Status {
    /// Wire value.
    pub fn to_wire(self) -> u32 {
        match self {
            Status::Ok => 0,
            Status::VersionMismatch => 1,
            Status::LayoutMismatch => 2,
            Status::BootMismatch => 3,
            Status::NoFreeSlot => 4,
            Status::ModeNotPermitted => 5,
            Status::Malformed => 6,
            Status::PermissionDenied => 7,
            Status::Busy => 8,
        }
    }

    /// From the wire value.
    pub fn from_wire(v: u32) -> Option<Status> {
        Some(match v {
            0 => Status::Ok,
            1 => Status::VersionMismatch,
            2 => Status::LayoutMismatch,
            3 => Status::BootMismatch,
            4 => Status::NoFreeSlot,
            5 => Status::ModeNotPermitted,
            6 => Status::Malformed,
            7 => Status::PermissionDenied,
            8 => Status::Busy,
            _ => return None,
        })
    }
}

/// Why a datagram is not a valid hello; the first check that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Datagram length is not the fixed one (checked before anything else).
    Length {
        /// Bytes received.
        got: usize,
        /// Bytes expected.
        expected: usize,
    },
    /// Wrong magic.
    Magic,
    /// Another wire version.
    WireVersion(u16),
    /// The length field disagrees with the fixed length.
    LengthField(u16),
    /// Unknown access mode.
    Mode(u32),
    /// Unknown status.
    Status(u32),
    /// Name longer than [`MAX_PEER_NAME`], or not UTF-8.
    Name,
    /// A reserved byte is not zero.
    Reserved,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Length { got, expected } => {
                write!(f, "datagram is {got} bytes, expected {expected}")
            }
            WireError::Magic => write!(f, "bad magic"),
            WireError::WireVersion(v) => write!(f, "wire version {v}, expected {WIRE_VERSION}"),
            WireError::LengthField(v) => write!(f, "length field {v} disagrees with the datagram"),
            WireError::Mode(v) => write!(f, "unknown access mode {v}"),
            WireError::Status(v) => write!(f, "unknown status {v}"),
            WireError::Name => write!(f, "participant name too long or not UTF-8"),
            WireError::Reserved => write!(f, "reserved bytes are not zero"),
        }
    }
}

impl std::error::Error for WireError {}

/// A joiner's hello.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Arena format version the joiner understands.
    pub format_version: u32,
    /// Arena layout hash the joiner was built with.
    pub layout_hash: u64,
    /// Access asked for.
    pub mode: Mode,
    /// The joiner's pid as it sees it.
    pub pid: u32,
    /// The joiner's boot id (zeros if unknown).
    pub boot_id: [u8; 16],
    name_len: u8,
    name: [u8; MAX_PEER_NAME],
}

impl Request {
    /// A request; `name` is cut to [`MAX_PEER_NAME`] bytes at a character boundary.
    pub fn new(
        format_version: u32,
        layout_hash: u64,
        mode: Mode,
        pid: u32,
        boot_id: [u8; 16],
        name: &str,
    ) -> Request {
        let mut end = name.len().min(MAX_PEER_NAME);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        let mut buf = [0u8; MAX_PEER_NAME];
        buf[..end].copy_from_slice(&name.as_bytes()[..end]);
        Request {
            format_version,
            layout_hash,
            mode,
            pid,
            boot_id,
            name_len: end as u8,
            name: buf,
        }
    }

    /// The participant name.
    pub fn name(&self) -> &str {
        // Checked UTF-8 at construction and parse.
        std::str::from_utf8(&self.name[..usize::from(self.name_len)]).unwrap_or("")
    }

    /// The datagram.
    pub fn encode(&self) -> [u8; REQUEST_LEN] {
        let mut b = [0u8; REQUEST_LEN];
        b[0..8].copy_from_slice(&REQUEST_MAGIC);
        b[8..10].copy_from_slice(&WIRE_VERSION.to_le_bytes());
        b[10..12].copy_from_slice(&(REQUEST_LEN as u16).to_le_bytes());
        b[12..16].copy_from_slice(&self.format_version.to_le_bytes());
        b[16..24].copy_from_slice(&self.layout_hash.to_le_bytes());
        b[24..28].copy_from_slice(&self.mode.to_wire().to_le_bytes());
        b[28..32].copy_from_slice(&self.pid.to_le_bytes());
        b[32..48].copy_from_slice(&self.boot_id);
        b[48] = self.name_len;
        b[49..81].copy_from_slice(&self.name);
        b
    }

    /// Parses a received datagram: length first, then magic, version, length field, fields.
    pub fn parse(b: &[u8]) -> Result<Request, WireError> {
        let b: &[u8; REQUEST_LEN] = b.try_into().map_err(|_| WireError::Length {
            got: b.len(),
            expected: REQUEST_LEN,
        })?;
        check_head(b, &REQUEST_MAGIC)?;
        let mode = u32_at(b, 24);
        let mode = Mode::from_wire(mode).ok_or(WireError::Mode(mode))?;
        let name_len = b[48];
        if usize::from(name_len) > MAX_PEER_NAME {
            return Err(WireError::Name);
        }
        let mut name = [0u8; MAX_PEER_NAME];
        name.copy_from_slice(&b[49..81]);
        let used = &name[..usize::from(name_len)];
        if std::str::from_utf8(used).is_err()
            || name[usize::from(name_len)..].iter().any(|&c| c != 0)
        {
            return Err(WireError::Name);
        }
        if b[81..].iter().any(|&c| c != 0) {
            return Err(WireError::Reserved);
        }
        Ok(Request {
            format_version: u32_at(b, 12),
            layout_hash: u64_at(b, 16),
            mode,
            pid: u32_at(b, 28),
            boot_id: b[32..48].try_into().expect("16 bytes"),
            name_len,
            name,
        })
    }
}

/// The owner's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// Granted or why not.
    pub status: Status,
    /// Participant slot granted, or [`NO_SLOT`].
    pub slot: u32,
    /// The owner's arena format version.
    pub format_version: u32,
    /// The owner's arena layout hash.
    pub layout_hash: u64,
    /// Arena size, bytes.
    pub arena_size: u64,
    /// The arena's instance uuid.
    pub instance_uuid: [u8; 16],
    /// The owner's pid.
    pub owner_pid: u32,
}

impl Response {
    /// The datagram.
    pub fn encode(&self) -> [u8; RESPONSE_LEN] {
        let mut b = [0u8; RESPONSE_LEN];
        b[0..8].copy_from_slice(&RESPONSE_MAGIC);
        b[8..10].copy_from_slice(&WIRE_VERSION.to_le_bytes());
        b[10..12].copy_from_slice(&(RESPONSE_LEN as u16).to_le_bytes());
        b[12..16].copy_from_slice(&self.status.to_wire().to_le_bytes());
        b[16..20].copy_from_slice(&self.slot.to_le_bytes());
        b[20..24].copy_from_slice(&self.format_version.to_le_bytes());
        b[24..32].copy_from_slice(&self.layout_hash.to_le_bytes());
        b[32..40].copy_from_slice(&self.arena_size.to_le_bytes());
        b[40..56].copy_from_slice(&self.instance_uuid);
        b[56..60].copy_from_slice(&self.owner_pid.to_le_bytes());
        b
    }

    /// Parses a received datagram: length first, then magic, version, length field, fields.
    pub fn parse(b: &[u8]) -> Result<Response, WireError> {
        let b: &[u8; RESPONSE_LEN] = b.try_into().map_err(|_| WireError::Length {
            got: b.len(),
            expected: RESPONSE_LEN,
        })?;
        check_head(b, &RESPONSE_MAGIC)?;
        let status = u32_at(b, 12);
        let status = Status::from_wire(status).ok_or(WireError::Status(status))?;
        if b[60..].iter().any(|&c| c != 0) {
            return Err(WireError::Reserved);
        }
        Ok(Response {
            status,
            slot: u32_at(b, 16),
            format_version: u32_at(b, 20),
            layout_hash: u64_at(b, 24),
            arena_size: u64_at(b, 32),
            instance_uuid: b[40..56].try_into().expect("16 bytes"),
            owner_pid: u32_at(b, 56),
        })
    }
}

fn check_head(b: &[u8], magic: &[u8; 8]) -> Result<(), WireError> {
    if b[0..8] != magic[..] {
        return Err(WireError::Magic);
    }
    let version = u16::from_le_bytes([b[8], b[9]]);
    if version != WIRE_VERSION {
        return Err(WireError::WireVersion(version));
    }
    let len = u16::from_le_bytes([b[10], b[11]]);
    if usize::from(len) != b.len() {
        return Err(WireError::LengthField(len));
    }
    Ok(())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trips() {
        let r = Request::new(3, 0xdead_beef, Mode::ReadOnly, 42, [7; 16], "rviz");
        let b = r.encode();
        assert_eq!(Request::parse(&b), Ok(r));
        assert_eq!(Request::parse(&b).unwrap().name(), "rviz");
    }

    #[test]
    fn long_names_are_cut_at_a_char_boundary() {
        let r = Request::new(1, 1, Mode::ReadOnly, 1, [0; 16], &"é".repeat(20));
        assert_eq!(r.name(), "é".repeat(16));
    }

    #[test]
    fn length_is_checked_first() {
        assert_eq!(
            Request::parse(&[0u8; 3]),
            Err(WireError::Length {
                got: 3,
                expected: REQUEST_LEN
            })
        );
        let mut b = Request::new(1, 1, Mode::ReadOnly, 1, [0; 16], "x").encode();
        b[10] = 95;
        assert_eq!(Request::parse(&b), Err(WireError::LengthField(95)));
        b[10] = 96;
        b[8] = 9;
        assert_eq!(Request::parse(&b), Err(WireError::WireVersion(9)));
    }

    #[test]
    fn response_round_trips() {
        let r = Response {
            status: Status::NoFreeSlot,
            slot: NO_SLOT,
            format_version: 3,
            layout_hash: 9,
            arena_size: 1 << 20,
            instance_uuid: [1; 16],
            owner_pid: 77,
        };
        assert_eq!(Response::parse(&r.encode()), Ok(r));
    }
}
