//! The participant table of an arena, read from its lock file without joining: who owns it,
//! and which consumers hold an entry of the table (the lock file's byte `1 + index`). (In this
//! crate a bare "slot" is a ring's seqlock cell; the table's places are participant entries.)

use super::discovery::Location;
use super::lockfile::{process_start_time, LockFile, Record, SLOTS};
use super::wire::Mode;
use super::LocationError;

/// One participant entry as the lock file records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Participant {
    /// Index in the participant table, `0..MAX_PARTICIPANTS` (the owner's record has none).
    pub index: Option<u32>,
    /// Pid (in the owner's pid namespace).
    pub pid: u32,
    /// Process start time, clock ticks after boot (0 if unknown).
    pub start_time: u64,
    /// Access mode.
    pub mode: Option<Mode>,
    /// Short name.
    pub name: String,
    /// Instance uuid of the arena it belongs to.
    pub instance_uuid: [u8; 16],
    /// The kernel still sees its lock byte held.
    pub alive: bool,
}

/// The participant table of an arena.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Participants {
    /// The owner's record (the last owner's, if none is alive).
    pub owner: Option<Participant>,
    /// Every consumer entry that was ever granted, alive or not, by index.
    pub consumers: Vec<Participant>,
}

impl Participant {
    /// Whether the recorded process still runs on this host: same pid, same start time.
    /// `None` when it cannot be told (no start time recorded); a pid not running, or running
    /// with another start time (reused), is `Some(false)`.
    pub fn process_running(&self) -> Option<bool> {
        match (process_start_time(self.pid), self.start_time) {
            (None, _) => Some(false),
            (Some(_), 0) => None,
            (Some(t), s) => Some(t == s),
        }
    }
}

impl Participants {
    /// Consumers alive now.
    pub fn alive(&self) -> impl Iterator<Item = &Participant> {
        self.consumers.iter().filter(|p| p.alive)
    }
}

/// Reads the participant table of `loc` without joining (empty if there is no lock file).
pub fn participants(loc: &Location) -> Result<Participants, LocationError> {
    let lock = match LockFile::open_read(&loc.lock_path) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Participants::default()),
        Err(e) => return Err(LocationError::io("open", &loc.lock_path, e)),
    };
    let entry = |index: Option<u32>, r: Record, alive: bool| Participant {
        index,
        pid: r.pid,
        start_time: r.start_time,
        mode: Mode::from_wire(r.mode),
        name: r.name,
        instance_uuid: r.instance_uuid,
        alive,
    };
    let owner = lock
        .read_owner()
        .map(|r| entry(None, r, lock.owner_alive()));
    let consumers = (0..SLOTS)
        .filter_map(|s| {
            lock.read_participant(s)
                .map(|r| entry(Some(s), r, lock.participant_alive(s)))
        })
        .collect();
    Ok(Participants { owner, consumers })
}
