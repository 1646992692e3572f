//! The lock file `<name>.lock`: who owns the arena and who takes part, as OFD byte-range locks.
//!
//! Byte 0 is ownership (write-locked by the owner), byte `1 + slot` is participant `slot`
//! (read-locked by that participant), byte `1 + SLOTS` guards the socket path while an owner
//! replaces or removes it. The kernel drops a lock when the last descriptor of its open file
//! description closes, so a lock held is a process alive; that is the only liveness we trust
//! ("cannot tell" counts as alive). A probe must use its own open file description, because
//! `F_OFD_GETLK` does not report the caller's own locks.
//!
//! The file's contents (independent of the locks) are identity records that tools read without
//! joining: a 64-byte header, the owner's 64-byte record, then one 64-byte record per slot,
//! written by the owner when it grants the slot. The file is never unlinked: a second owner must lock
//! the same inode to be refused.

#![allow(unsafe_code)] // `fcntl` OFD locks and `flock` structs have no safe binding

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Participant slots (and lock bytes) per arena.
pub const SLOTS: u32 = 256;
const OWNER_BYTE: u64 = 0;
const GUARD_BYTE: u64 = 1 + SLOTS as u64;
const RECORD: u64 = 64;
const FILE_MAGIC: &[u8; 8] = b"TFSHMLCK";
const FILE_VERSION: u32 = 1;
const NAME_MAX: usize = 32;

/// Size of a complete lock file.
const FILE_LEN: u64 = RECORD * (2 + SLOTS as u64);
const OWNER_RECORD_AT: u64 = RECORD;

fn slot_record_at(slot: u32) -> u64 {
    RECORD * (2 + u64::from(slot))
}

fn slot_byte(slot: u32) -> u64 {
    1 + u64::from(slot)
}

/// Who last held a slot (or the ownership), as the owner recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Process id (in the owner's pid namespace).
    pub pid: u32,
    /// Start time of that process, clock ticks after boot (`/proc/<pid>/stat` field 22); tells
    /// a reused pid from the recorded process. 0 if unknown.
    pub start_time: u64,
    /// Access mode (wire value: 1 read-only, 2 read-write).
    pub mode: u32,
    /// Instance uuid of the arena the record belongs to.
    pub instance_uuid: [u8; 16],
    /// Short name the participant gave.
    pub name: String,
}

impl Record {
    fn encode(&self) -> [u8; RECORD as usize] {
        let mut b = [0u8; RECORD as usize];
        b[0..4].copy_from_slice(&self.pid.to_le_bytes());
        b[4..8].copy_from_slice(&self.mode.to_le_bytes());
        b[8..16].copy_from_slice(&self.start_time.to_le_bytes());
        b[16..32].copy_from_slice(&self.instance_uuid);
        let mut n = self.name.len().min(NAME_MAX);
        while !self.name.is_char_boundary(n) {
            n -= 1;
        }
        b[32..32 + n].copy_from_slice(&self.name.as_bytes()[..n]);
        b
    }

    fn decode(b: &[u8; RECORD as usize]) -> Option<Record> {
        let pid = u32::from_le_bytes(b[0..4].try_into().ok()?);
        if pid == 0 {
            return None;
        }
        let name = &b[32..64];
        let end = name.iter().position(|&c| c == 0).unwrap_or(NAME_MAX);
        Some(Record {
            pid,
            mode: u32::from_le_bytes(b[4..8].try_into().ok()?),
            start_time: u64::from_le_bytes(b[8..16].try_into().ok()?),
            instance_uuid: b[16..32].try_into().ok()?,
            name: String::from_utf8_lossy(&name[..end]).into_owned(),
        })
    }
}

/// One open file description of a lock file; its locks live and die with it.
#[derive(Debug)]
pub struct LockFile {
    file: File,
    path: PathBuf,
}

impl LockFile {
    /// Opens (creating if missing) for the owner: read-write, `mode` permission bits, and
    /// refused if the file belongs to another user. Sizes and stamps a new file.
    pub fn open_owner(path: &Path, mode: u32) -> io::Result<LockFile> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)?;
        let meta = file.metadata()?;
        if std::os::unix::fs::MetadataExt::uid(&meta) != rustix::process::geteuid().as_raw() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} belongs to another user", path.display()),
            ));
        }
        if meta.permissions().mode() & 0o7777 != mode {
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        let lf = LockFile {
            file,
            path: path.to_owned(),
        };
        if meta.len() < FILE_LEN {
            // Extending with zeros keeps any records already there; concurrent owners-to-be
            // write the same header, so the race is harmless.
            lf.file.set_len(FILE_LEN)?;
            let mut head = [0u8; 16];
            head[0..8].copy_from_slice(FILE_MAGIC);
            head[8..12].copy_from_slice(&FILE_VERSION.to_le_bytes());
            head[12..16].copy_from_slice(&SLOTS.to_le_bytes());
            lf.file.write_all_at(&head, 0)?;
        }
        Ok(lf)
    }

    /// Opens an existing lock file read-only: enough to probe and to read-lock a slot.
    pub fn open_read(path: &Path) -> io::Result<LockFile> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)?;
        Ok(LockFile {
            file,
            path: path.to_owned(),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes ownership (byte 0) without waiting; `false` if another description holds it.
    pub fn try_own(&self) -> io::Result<bool> {
        set_lock(&self.file, OWNER_BYTE, libc::F_WRLCK, false)
    }

    /// Gives ownership back.
    pub fn release_ownership(&self) -> io::Result<()> {
        set_lock(&self.file, OWNER_BYTE, libc::F_UNLCK, false).map(drop)
    }

    /// Waits for the socket-path guard (owners only; held for microseconds).
    pub fn lock_guard(&self) -> io::Result<()> {
        set_lock(&self.file, GUARD_BYTE, libc::F_WRLCK, true).map(drop)
    }

    /// Releases the socket-path guard.
    pub fn unlock_guard(&self) -> io::Result<()> {
        set_lock(&self.file, GUARD_BYTE, libc::F_UNLCK, false).map(drop)
    }

    /// Marks `slot` as ours (a shared lock: only the owner's bookkeeping keeps slots unique).
    pub fn hold_participant(&self, slot: u32) -> io::Result<()> {
        if slot >= SLOTS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "slot out of range",
            ));
        }
        if set_lock(&self.file, slot_byte(slot), libc::F_RDLCK, false)? {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "slot byte is write-locked",
            ))
        }
    }

    /// Does any other open file description hold ownership? Errors count as "held".
    pub fn owner_alive(&self) -> bool {
        probe(&self.file, OWNER_BYTE).unwrap_or(true)
    }

    /// Does any other open file description hold `slot`? Errors count as "held".
    pub fn participant_alive(&self, slot: u32) -> bool {
        probe(&self.file, slot_byte(slot)).unwrap_or(true)
    }

    /// Writes the owner's record.
    pub fn write_owner(&self, r: &Record) -> io::Result<()> {
        self.file.write_all_at(&r.encode(), OWNER_RECORD_AT)
    }

    /// Reads the owner's record (the last owner's, if it died).
    pub fn read_owner(&self) -> Option<Record> {
        let mut b = [0u8; RECORD as usize];
        self.file.read_exact_at(&mut b, OWNER_RECORD_AT).ok()?;
        Record::decode(&b)
    }

    /// Writes `slot`'s record (one `pwrite`).
    pub fn write_slot(&self, slot: u32, r: &Record) -> io::Result<()> {
        self.file.write_all_at(&r.encode(), slot_record_at(slot))
    }

    /// Reads `slot`'s record, if one was ever written.
    pub fn read_participant(&self, slot: u32) -> Option<Record> {
        let mut b = [0u8; RECORD as usize];
        self.file.read_exact_at(&mut b, slot_record_at(slot)).ok()?;
        Record::decode(&b)
    }
}

fn flock_for(byte: u64, kind: libc::c_int) -> libc::flock {
    // SAFETY: `flock` is a plain C struct for which all-zero bytes is a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = byte as libc::off_t;
    fl.l_len = 1;
    fl
}

/// `F_OFD_SETLK(W)`; `Ok(false)` when another description holds a conflicting lock. rustix
/// only offers whole-file OFD locks, hence libc.
fn set_lock(file: &File, byte: u64, kind: libc::c_int, wait: bool) -> io::Result<bool> {
    let fl = flock_for(byte, kind);
    let cmd = if wait {
        libc::F_OFD_SETLKW
    } else {
        libc::F_OFD_SETLK
    };
    loop {
        // SAFETY: the fd is open for the call's duration (borrowed from `file`) and `fl` is a
        // valid, initialised `flock` that outlives the call.
        let r = unsafe { libc::fcntl(file.as_raw_fd(), cmd, &fl as *const libc::flock) };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) | Some(libc::EACCES) if !wait => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// `F_OFD_GETLK` for a write lock on `byte`: `true` if another description holds any lock on it.
fn probe(file: &File, byte: u64) -> io::Result<bool> {
    let mut fl = flock_for(byte, libc::F_WRLCK);
    // SAFETY: as in `set_lock`; the kernel writes the conflicting lock (or F_UNLCK) into `fl`.
    let r = unsafe {
        libc::fcntl(
            file.as_raw_fd(),
            libc::F_OFD_GETLK,
            &mut fl as *mut libc::flock,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fl.l_type != libc::F_UNLCK as libc::c_short)
}

/// Start time of `pid` in clock ticks after boot (`/proc/<pid>/stat` field 22), if readable.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_path(tag: &str) -> PathBuf {
        std::env::temp_dir().join(format!("tf_shm_lock_{tag}_{}", std::process::id()))
    }

    #[test]
    fn ownership_is_exclusive_per_description_and_released_on_close() {
        let p = temp_path("own");
        let a = LockFile::open_owner(&p, 0o600).unwrap();
        let b = LockFile::open_owner(&p, 0o600).unwrap();
        let probe = LockFile::open_read(&p).unwrap();
        assert!(!probe.owner_alive());
        assert!(a.try_own().unwrap());
        assert!(!b.try_own().unwrap());
        assert!(probe.owner_alive());
        drop(a);
        assert!(!probe.owner_alive());
        assert!(b.try_own().unwrap());
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn slots_are_seen_by_other_descriptions_only() {
        let p = temp_path("slot");
        let owner = LockFile::open_owner(&p, 0o600).unwrap();
        let member = LockFile::open_read(&p).unwrap();
        member.hold_participant(5).unwrap();
        assert!(owner.participant_alive(5));
        assert!(!owner.participant_alive(6));
        assert!(
            !member.participant_alive(5),
            "GETLK does not report our own locks"
        );
        owner
            .write_slot(
                5,
                &Record {
                    pid: 9,
                    start_time: 3,
                    mode: 1,
                    instance_uuid: [2; 16],
                    name: "rviz".into(),
                },
            )
            .unwrap();
        assert_eq!(member.read_participant(5).unwrap().name, "rviz");
        assert_eq!(member.read_participant(6), None);
        drop(member);
        assert!(!owner.participant_alive(5));
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn start_time_of_self_is_readable() {
        assert!(process_start_time(std::process::id()).is_some());
    }
}
