//! `tf_shm participants`: the lock file's participant table, read without joining.
//!
//! One row per record: the owner's, then each participant entry's (the table's places,
//! `0..MAX_PARTICIPANTS`). `--json` gives a row's place as `entry`, and the same value as
//! `slot`, its former name, until the next release.

use serde::Serialize;
use tf_shm::rendezvous::{Mode, Participant, Participants};

use crate::cli::Global;
use crate::connect;
use crate::out::{print_json, Align, Painter, Style, Table};

/// One participant as shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParticipantRow {
    /// `"owner"`, or the participant's entry (its index in the lock file's table,
    /// `0..MAX_PARTICIPANTS`) as a decimal number.
    pub entry: String,
    /// Pid as recorded (the owner's pid namespace).
    pub pid: u32,
    /// Name the participant gave.
    pub name: String,
    /// `"read-only"`, `"read-write"` or `"?"`.
    pub mode: &'static str,
    /// The kernel sees its lock byte held.
    pub alive: bool,
    /// Whether the recorded process still runs here (same pid and start time); `None` when
    /// it cannot be told (no start time recorded).
    pub process_running: Option<bool>,
    /// Its record belongs to the arena of the current (or last) owner.
    pub current_arena: bool,
    /// First 8 hex digits of the arena instance it belongs to.
    pub arena: String,
    /// What the entry is now: see [`EntryState`].
    pub state: EntryState,
}

/// What a participant record means now. An entry's lock byte is held while its process keeps
/// the lock file open; the kernel releases it when the process ends, and the owner grants the
/// entry again: so a record whose lock is free is history, not a leak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryState {
    /// Held, and the recorded process runs (or cannot be told apart).
    Alive,
    /// Held, but the recorded process is gone: a process that inherited its lock file
    /// descriptor keeps the entry until it exits.
    Stuck,
    /// Released: the process ended or detached; the entry is reclaimed, free for the next
    /// participant (the record stays until then).
    Free,
    /// The owner's record with its lock released: no bridge serves this arena.
    Gone,
}

impl EntryState {
    /// The word printed.
    pub fn name(self) -> &'static str {
        match self {
            EntryState::Alive => "alive",
            EntryState::Stuck => "stuck",
            EntryState::Free => "free",
            EntryState::Gone => "gone",
        }
    }

    /// The state of a record: its lock, whether its process still runs, and whether it is
    /// the owner's.
    pub fn of(alive: bool, process_running: Option<bool>, owner: bool) -> EntryState {
        match (alive, process_running) {
            (true, Some(false)) => EntryState::Stuck,
            (true, _) => EntryState::Alive,
            (false, _) if owner => EntryState::Gone,
            (false, _) => EntryState::Free,
        }
    }
}

fn hex8(uuid: &[u8; 16]) -> String {
    uuid[..4].iter().map(|b| format!("{b:02x}")).collect()
}

fn mode_name(m: Option<Mode>) -> &'static str {
    match m {
        Some(Mode::ReadOnly) => "read-only",
        Some(Mode::ReadWrite) => "read-write",
        None => "?",
    }
}

impl ParticipantRow {
    fn new(p: &Participant, owner_uuid: Option<[u8; 16]>) -> ParticipantRow {
        let running = p.process_running();
        ParticipantRow {
            entry: p
                .index
                .map_or_else(|| "owner".to_owned(), |s| s.to_string()),
            pid: p.pid,
            name: p.name.clone(),
            mode: mode_name(p.mode),
            alive: p.alive,
            process_running: running,
            current_arena: owner_uuid.is_none() || owner_uuid == Some(p.instance_uuid),
            arena: hex8(&p.instance_uuid),
            state: EntryState::of(p.alive, running, p.index.is_none()),
        }
    }
}

/// Every record: the owner first, then the participant entries.
pub fn rows(ps: &Participants) -> Vec<ParticipantRow> {
    let owner_uuid = ps.owner.as_ref().map(|o| o.instance_uuid);
    ps.owner
        .iter()
        .chain(&ps.consumers)
        .map(|p| ParticipantRow::new(p, owner_uuid))
        .collect()
}

/// The table as text.
pub fn text(rows: &[ParticipantRow], p: &Painter) -> String {
    if rows.is_empty() {
        return "no participants recorded (no lock file: no bridge ever served here)\n".into();
    }
    let mut t = Table::new(&[
        ("entry", Align::Right),
        ("pid", Align::Right),
        ("name", Align::Left),
        ("mode", Align::Left),
        ("state", Align::Left),
        ("arena", Align::Left),
        ("note", Align::Left),
    ]);
    for r in rows {
        let style = match r.state {
            EntryState::Alive => Style::Green,
            EntryState::Stuck | EntryState::Gone => Style::Red,
            EntryState::Free => Style::Dim,
        };
        let state = r.state.name();
        let mut notes = Vec::new();
        match r.state {
            EntryState::Stuck => notes.push("lock held but process gone"),
            EntryState::Free if r.process_running == Some(true) => {
                notes.push("detached; process still runs")
            }
            EntryState::Free => notes.push("process ended; entry reclaimed"),
            EntryState::Gone => notes.push("no bridge serves"),
            EntryState::Alive => {}
        }
        if r.alive && !r.current_arena {
            notes.push("attached to an earlier arena");
        }
        t.styled_row(vec![
            (r.entry.clone(), None),
            (r.pid.to_string(), None),
            (r.name.clone(), None),
            (r.mode.to_string(), None),
            (state.to_string(), Some(style)),
            (r.arena.clone(), Some(Style::Dim)),
            (notes.join("; "), Some(Style::Yellow)),
        ]);
    }
    t.render(p)
}

/// `tf_shm participants`.
pub fn run(g: &Global) -> u8 {
    let ps = match connect::location(g).and_then(|loc| tf_shm::rendezvous::participants(&loc)) {
        Ok(ps) => ps,
        Err(e) => return connect::report_open_error(&e),
    };
    let rows = rows(&ps);
    if g.json {
        #[derive(Serialize)]
        struct Row<'a> {
            #[serde(flatten)]
            row: &'a ParticipantRow,
            /// `entry` under its former name, for scripts written against it; dropped in the
            /// next release.
            slot: &'a str,
        }
        #[derive(Serialize)]
        struct Out<'a> {
            participants: Vec<Row<'a>>,
        }
        print_json(&Out {
            participants: rows
                .iter()
                .map(|row| Row {
                    row,
                    slot: &row.entry,
                })
                .collect(),
        });
    } else {
        print!("{}", text(&rows, &Painter::stdout()));
    }
    0
}
