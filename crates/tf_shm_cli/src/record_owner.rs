//! What `tf_shm record` says about the arena's owner going away and coming back: as it happens,
//! in the summary, and in `--json`. A span without an owner is data no count can hold (it
//! reached no arena), so it is stated with its times rather than folded into "missed".

use tf_shm_bag::owner_watch::{Gap, OwnerChange, OwnerWatch};

/// Seconds from the recording's start `start` (ns) to `t` (ns).
fn at(start: u64, t: u64) -> f64 {
    t.saturating_sub(start) as f64 / 1e9
}

/// The line printed when the owner of arena `arena` goes or a new one comes.
pub fn change_text(change: &OwnerChange, start: u64, arena: &str) -> String {
    match change {
        OwnerChange::Lost(g) => format!(
            "tf_shm record: the owner of arena {arena} (pid {}) went away (last seen at \
             {:.2} s); still recording, to follow a new owner; what is published until one \
             serves is not recorded",
            g.owner_pid,
            at(start, g.from_ns)
        ),
        OwnerChange::Restarted(g) => {
            let to = g.to_ns.unwrap_or(g.from_ns);
            format!(
                "tf_shm record: a new owner (pid {}) serves arena {arena} at {:.2} s, {:.2} s \
                 after pid {} was last seen; recording its arena from its beginning",
                g.new_owner_pid.unwrap_or_default(),
                at(start, to),
                g.duration_ns(to) as f64 / 1e9,
                g.owner_pid
            )
        }
    }
}

/// The summary's clause about the owner: empty when it served throughout.
pub fn summary_clause(w: &OwnerWatch, end: u64) -> String {
    if w.gaps().is_empty() {
        return String::new();
    }
    let (lost, restarts) = (w.gaps().len(), w.restarts());
    format!(
        "; no owner for {:.2} s (owner gone {lost} time{}, {restarts} new owner{} followed): what \
         was published then is not in the bag and is not counted in missed",
        w.without_owner_ns(end) as f64 / 1e9,
        if lost == 1 { "" } else { "s" },
        if restarts == 1 { "" } else { "s" }
    )
}

/// One line per span without an owner.
pub fn gap_lines(w: &OwnerWatch, start: u64, end: u64) -> Vec<String> {
    w.gaps()
        .iter()
        .map(|g| match (g.to_ns, g.new_owner_pid) {
            (Some(to), Some(pid)) => format!(
                "tf_shm record: no owner from {:.2} s to {:.2} s (pid {} went away, pid {pid} \
                 followed)",
                at(start, g.from_ns),
                at(start, to),
                g.owner_pid
            ),
            _ => format!(
                "tf_shm record: no owner from {:.2} s to the end at {:.2} s (pid {} went away, \
                 no new owner came)",
                at(start, g.from_ns),
                at(start, end),
                g.owner_pid
            ),
        })
        .collect()
}

fn gap_json(g: &Gap, start: u64) -> serde_json::Value {
    serde_json::json!({
        "from": at(start, g.from_ns),
        "to": g.to_ns.map(|t| at(start, t)),
        "from_unix_ns": g.from_ns,
        "to_unix_ns": g.to_ns,
        "owner_pid": g.owner_pid,
        "new_owner_pid": g.new_owner_pid,
    })
}

/// The `--json` fields about the owner, merged into the summary document.
pub fn json_fields(
    w: &OwnerWatch,
    start: u64,
    end: u64,
) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    m.insert("owner_losses".into(), w.gaps().len().into());
    m.insert("owner_restarts".into(), w.restarts().into());
    m.insert(
        "seconds_without_owner".into(),
        (w.without_owner_ns(end) as f64 / 1e9).into(),
    );
    m.insert(
        "owner_gaps".into(),
        w.gaps().iter().map(|g| gap_json(g, start)).collect(),
    );
    m
}
