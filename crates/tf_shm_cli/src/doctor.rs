//! `tf_shm doctor`: health checks of the rendezvous and the arena, each with a stable code, a
//! one-line verdict and a hint. Any failed check makes the exit status 1.
//!
//! | code         | fails when                                                                |
//! |--------------|---------------------------------------------------------------------------|
//! | RUNTIME_DIR  | a rendezvous directory or file is unsafe (other users may write it)       |
//! | BRIDGE       | no bridge serves the arena                                                |
//! | COMPAT       | the bridge's arena format, layout or boot differs from this build's       |
//! | CAPACITY     | the frame table or the names region filled up                             |
//! | HISTORY      | a frame's history is shorter than the cache time (ring pool exhausted)    |
//! | PARENTS      | a frame changed parent within the recent window                           |
//! | DATA         | no transform arrived since the bridge started, or for `--no-data-after` (warns) |
//! | STALE        | a dynamic frame got no sample for `--stale-periods` of its periods        |
//! | REFUSED      | the bridge refused transforms (TF_OLD_DATA alone only warns)              |
//! | INTAKE       | messages were lost on the way in (middleware or the bridge's queue)       |
//! | READY        | the arena is not declared ready yet (warns: the bridge is catching up)    |
//! | STATICS      | a `/tf_static` publisher in the ROS graph delivered nothing to the bridge (warns) |
//! | PARTICIPANTS | a participant entry is stuck: held while its recorded process is gone     |
//!
//! Renamed codes: `PARTICIPANTS` was `SLOTS`. Until the next release `--json` lists such a
//! check twice, the second time under its former code with `"replaced_by"` naming the new one
//! (same status, verdict and hint; `ok` and the exit status count it once); text shows the new
//! code only.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use serde::Serialize;
use tf_shm::arena::{layout_hash, FORMAT_VERSION};
use tf_shm::inspect::{ArenaStats, FrameInfo, FrameKind};
use tf_shm::rendezvous::discovery::{check_dir, Location};
use tf_shm::rendezvous::{JoinError, LocationError, Refusal};
use tf_shm::time::unix_now_ns;
use tf_shm::{ArenaView, AttachError, Buffer};

use crate::cli::{DoctorArgs, Global};
use crate::connect;
use crate::out::{print_json, Painter, Style};
use crate::participants::{self, EntryState, ParticipantRow};

/// Outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Healthy.
    Ok,
    /// Worth a look; does not fail the exit status (unless `--strict`).
    Warn,
    /// Unhealthy: the exit status is 1.
    Fail,
    /// Could not be checked (e.g. no bridge to read the arena from).
    Skip,
}

/// One check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Stable code, e.g. `"STALE"`.
    pub code: &'static str,
    /// The outcome.
    pub status: Verdict,
    /// One line: what was found.
    pub verdict: String,
    /// What to do about it (empty when healthy).
    pub hint: String,
    /// Set only on the copy of a renamed check that `--json` lists under its former code: the
    /// code that replaces it. Absent from the JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<&'static str>,
}

/// Renamed check codes, `(former, current)`; see the module documentation.
pub const FORMER_CODES: &[(&str, &str)] = &[("SLOTS", "PARTICIPANTS")];

/// `checks` as `--json` lists them: each renamed check followed by a copy under its former
/// code.
pub fn with_former_codes(checks: &[Check]) -> Vec<Check> {
    let mut out = Vec::with_capacity(checks.len() + FORMER_CODES.len());
    for c in checks {
        out.push(c.clone());
        for &(former, current) in FORMER_CODES {
            if c.code == current {
                out.push(Check {
                    code: former,
                    replaced_by: Some(current),
                    ..c.clone()
                });
            }
        }
    }
    out
}

fn check(
    code: &'static str,
    status: Verdict,
    verdict: impl Into<String>,
    hint: impl Into<String>,
) -> Check {
    Check {
        code,
        status,
        verdict: verdict.into(),
        hint: hint.into(),
        replaced_by: None,
    }
}

/// A short list of names: the first few, then how many more.
fn some(names: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut s = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s += &format!(" and {} more", names.len() - SHOWN);
    }
    s
}

fn runtime_dir_check(loc: &Location) -> Check {
    let hint = "the rendezvous must be private: chmod go-w (or remove) it, or set TF_SHM_RUNTIME_DIR to a \
                directory of your own";
    let mut present = true;
    for dir in [&loc.runtime_dir, &loc.domain_dir] {
        match check_dir(dir, None) {
            Ok(true) => {}
            Ok(false) => present = false,
            Err(LocationError::UnsafeDir { path, reason }) => {
                // Accept a group-shared directory (allow_group): not writable by others.
                if let Ok(m) = std::fs::symlink_metadata(&path) {
                    if m.is_dir()
                        && m.permissions().mode() & 0o002 == 0
                        && reason != "is not a directory"
                    {
                        continue;
                    }
                }
                return check(
                    "RUNTIME_DIR",
                    Verdict::Fail,
                    format!("{} {reason}", path.display()),
                    hint,
                );
            }
            Err(e) => return check("RUNTIME_DIR", Verdict::Fail, e.to_string(), hint),
        }
    }
    if !present {
        return check(
            "RUNTIME_DIR",
            Verdict::Warn,
            format!(
                "{} does not exist: no bridge ever served here",
                loc.domain_dir.display()
            ),
            "start tf_shm_bridge, or check --domain, --name and TF_SHM_RUNTIME_DIR",
        );
    }
    for file in [&loc.lock_path, &loc.sock_path] {
        if let Some(problem) = file_problem(file) {
            return check(
                "RUNTIME_DIR",
                Verdict::Fail,
                format!("{} {problem}", file.display()),
                hint,
            );
        }
    }
    check(
        "RUNTIME_DIR",
        Verdict::Ok,
        format!("{} is private", loc.domain_dir.display()),
        "",
    )
}

fn file_problem(path: &Path) -> Option<&'static str> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if m.file_type().is_symlink() {
        return Some("is a symbolic link");
    }
    if m.permissions().mode() & 0o002 != 0 {
        return Some("is writable by other users");
    }
    let me = rustix::process::geteuid().as_raw();
    (m.uid() != me && m.permissions().mode() & 0o020 == 0).then_some("belongs to another user")
}

/// How to start a bridge, both ways the README's quick start gives: `ros2 launch` finds the
/// package only once it is colcon-installed and sourced; a cargo build runs the binary directly.
const START_BRIDGE: &str =
    "start tf_shm_bridge: `ros2 launch tf_shm_bridge tf_shm_bridge.launch.py` \
     where it is colcon-installed and sourced; from a cargo build, in the repository after \
     `eval \"$(scripts/ros-env.sh env)\"`: `target/release/tf_shm_bridge --ros-args \
     --params-file config/tf_shm_bridge.yaml`";

fn bridge_checks(opened: &Result<Buffer, JoinError>, owner: Option<&ParticipantRow>) -> [Check; 2] {
    let compat_ok = || {
        check(
            "COMPAT",
            Verdict::Ok,
            format!(
                "arena format version {FORMAT_VERSION}, layout hash {:#018x}",
                layout_hash()
            ),
            "",
        )
    };
    let rebuild = "rebuild tf_shm (this tool) or tf_shm_bridge so both use the same tf_shm";
    match opened {
        Ok(b) => {
            let pid = owner.map_or_else(|| "?".to_owned(), |o| o.pid.to_string());
            let uuid: String = b.identity().instance_uuid[..4]
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect();
            [
                check(
                    "BRIDGE",
                    Verdict::Ok,
                    format!("bridge pid {pid} serves {} (arena {uuid})", b.location()),
                    "",
                ),
                compat_ok(),
            ]
        }
        Err(e) => {
            let skip = || check("COMPAT", Verdict::Skip, "no bridge to compare with", "");
            let serving_but = |why: String, hint: &str| {
                [
                    check("BRIDGE", Verdict::Ok, "a bridge is serving", ""),
                    check("COMPAT", Verdict::Fail, why, hint),
                ]
            };
            match e {
                JoinError::Refused {
                    refusal:
                        Refusal::VersionMismatch
                        | Refusal::LayoutMismatch
                        | Refusal::BootMismatch
                        | Refusal::Malformed,
                    ..
                } => serving_but(e.to_string(), rebuild),
                JoinError::Attach(
                    a @ (AttachError::VersionMismatch { .. }
                    | AttachError::LayoutMismatch { .. }
                    | AttachError::BadMagic),
                ) => serving_but(a.to_string(), rebuild),
                JoinError::NotServing { .. } => [
                    check("BRIDGE", Verdict::Fail, e.to_string(), START_BRIDGE),
                    skip(),
                ],
                JoinError::NotServingYet { .. } => [
                    check(
                        "BRIDGE",
                        Verdict::Fail,
                        e.to_string(),
                        "wait for it to start, or restart it if it hangs",
                    ),
                    skip(),
                ],
                _ => [
                    check(
                        "BRIDGE",
                        Verdict::Fail,
                        e.to_string(),
                        "see the message; `tf_shm participants` shows the lock file",
                    ),
                    skip(),
                ],
            }
        }
    }
}

fn capacity_check(stats: &ArenaStats) -> Check {
    let (frames, max_frames) = (stats.frames, stats.max_frames);
    let mut full = Vec::new();
    if stats.frame_table_full {
        full.push(format!(
            "the frame table is full ({frames} of {max_frames} frames)"
        ));
    }
    if stats.names_full {
        full.push("the names region is full".to_owned());
    }
    if full.is_empty() {
        check(
            "CAPACITY",
            Verdict::Ok,
            format!("{frames} of {max_frames} frames used"),
            "",
        )
    } else {
        check(
            "CAPACITY",
            Verdict::Fail,
            full.join("; ") + ": new frames are refused",
            "existing frames keep answering; raise max_frames in the bridge's parameters, or \
             stop what floods new frame names, and restart the bridge (it starts with an empty \
             frame table; consumers keep answering through the restart)",
        )
    }
}

fn history_check(
    frames: &[FrameInfo],
    pool_exhausted: bool,
    pool_used: u64,
    pool_size: u64,
    cache_time_s: f64,
) -> Check {
    let short: Vec<String> = frames
        .iter()
        .filter(|f| history_short(f))
        .map(|f| {
            if f.no_ring {
                format!("{} (no history at all)", f.name)
            } else {
                f.name.clone()
            }
        })
        .collect();
    let pool = format!(
        "ring pool {:.1} of {:.1} MiB used (in each of the arena's two copies)",
        pool_used as f64 / 1048576.0,
        pool_size as f64 / 1048576.0
    );
    if short.is_empty() && !pool_exhausted {
        return check(
            "HISTORY",
            Verdict::Ok,
            format!("every history spans the cache time ({cache_time_s:.1} s); {pool}"),
            "",
        );
    }
    let what = if short.is_empty() {
        "the ring pool is exhausted".to_owned()
    } else {
        format!(
            "{} frame(s) keep less than the cache time ({cache_time_s:.1} s): {}",
            short.len(),
            some(&short)
        )
    };
    check(
        "HISTORY",
        Verdict::Fail,
        format!("{what}; {pool}"),
        "raise memory_budget_bytes of the bridge (or lower max_rate_hz / the cache time) and restart it",
    )
}

fn parents_check(frames: &[FrameInfo], now: i64, recent_ns: i64) -> Check {
    let moved: Vec<String> = frames
        .iter()
        .filter(|f| moved_recently(f, now, recent_ns))
        .map(|f| {
            format!(
                "{} ({} change(s), last {:.1} s ago, now under {})",
                f.name,
                f.parent_changes,
                (now - f.last_parent_change_unix_ns) as f64 / 1e9,
                f.parent.as_deref().unwrap_or("?")
            )
        })
        .collect();
    let window = recent_ns as f64 / 1e9;
    if moved.is_empty() {
        check(
            "PARENTS",
            Verdict::Ok,
            format!("no frame changed parent in the last {window:.1} s"),
            "",
        )
    } else {
        check(
            "PARENTS",
            Verdict::Fail,
            format!("{} frame(s) had more than one parent in the last {window:.1} s: {}", moved.len(), some(&moved)),
            "two publishers disagree on these frames' parents (see the authority in `tf_shm tree`); tf2 \
             lookups across such a frame flip between trees",
        )
    }
}

/// How `STALE` judges one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Freshness {
    /// Not judged: not dynamic, fewer than two samples or no write time (no rate to expect).
    Unjudged,
    /// A sample came within the allowed number of periods.
    Fresh,
    /// No sample for `age_s` seconds, more than the allowed periods of `period_s` seconds.
    Stale {
        /// Wall-clock time since the bridge last wrote the frame, s.
        age_s: f64,
        /// Average period of the history, s.
        period_s: f64,
    },
}

/// Whether a frame is stale: a dynamic frame that got no sample for `periods` of its average
/// periods (wall clock since the bridge's last write against the history's stamp spacing).
pub fn freshness(f: &FrameInfo, now: i64, periods: f64) -> Freshness {
    if f.kind != FrameKind::Dynamic || f.last_write_unix_ns <= 0 {
        return Freshness::Unjudged;
    }
    let Some(h) = f.history.filter(|h| h.len >= 2 && h.newest > h.oldest) else {
        return Freshness::Unjudged;
    };
    let period_s = (h.newest - h.oldest) as f64 / 1e9 / (h.len - 1) as f64;
    let age_s = (now - f.last_write_unix_ns) as f64 / 1e9;
    if age_s > periods * period_s {
        Freshness::Stale { age_s, period_s }
    } else {
        Freshness::Fresh
    }
}

/// Whether a frame changed parent within `recent_ns` of `now` (what `PARENTS` fails on).
pub fn moved_recently(f: &FrameInfo, now: i64, recent_ns: i64) -> bool {
    f.parent_changes > 0
        && f.last_parent_change_unix_ns > 0
        && now - f.last_parent_change_unix_ns <= recent_ns
}

/// Whether a frame keeps less than the cache time (what `HISTORY` fails on).
pub fn history_short(f: &FrameInfo) -> bool {
    f.history_short || f.no_ring
}

fn stale_check(frames: &[FrameInfo], now: i64, periods: f64) -> Check {
    let mut judged = 0;
    let mut stale = Vec::new();
    for f in frames {
        match freshness(f, now, periods) {
            Freshness::Unjudged => {}
            Freshness::Fresh => judged += 1,
            Freshness::Stale { age_s, period_s } => {
                judged += 1;
                stale.push(format!(
                    "{} (no sample for {age_s:.2} s, period {period_s:.3} s)",
                    f.name
                ));
            }
        }
    }
    if stale.is_empty() {
        check(
            "STALE",
            Verdict::Ok,
            format!(
                "{judged} dynamic frame(s) with a rate all got a sample within {periods} periods"
            ),
            "",
        )
    } else {
        check(
            "STALE",
            Verdict::Fail,
            format!("{} stale frame(s): {}", stale.len(), some(&stale)),
            "check that the publishers of these frames still run (`tf_shm monitor` shows their rates)",
        )
    }
}

fn refused_check(refusals: &[(&'static str, u64)], capacity: u64) -> Check {
    let counted: Vec<_> = refusals
        .iter()
        .copied()
        .chain([("CAPACITY", capacity)])
        .filter(|(_, n)| *n > 0)
        .collect();
    if counted.is_empty() {
        return check("REFUSED", Verdict::Ok, "no transform refused", "");
    }
    let list = counted
        .iter()
        .map(|(c, n)| format!("{c} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let only_old = counted.iter().all(|(c, _)| *c == "TF_OLD_DATA");
    if only_old {
        check(
            "REFUSED",
            Verdict::Warn,
            format!("transforms refused: {list}"),
            "TF_OLD_DATA: a publisher sends stamps older than the cache time (clock skew, or a bag \
             replayed without --clock)",
        )
    } else {
        check(
            "REFUSED",
            Verdict::Fail,
            format!("transforms refused: {list}"),
            "a publisher sends transforms tf2 rejects (the bridge logs tf2's message for each); \
             CAPACITY: see the CAPACITY and HISTORY checks",
        )
    }
}

fn intake_check(messages_lost: u64) -> Check {
    if messages_lost == 0 {
        return check("INTAKE", Verdict::Ok, "no received message lost", "");
    }
    check(
        "INTAKE",
        Verdict::Fail,
        format!(
            "{messages_lost} messages lost on the way in (not delivered by the middleware, or \
             dropped by the bridge's full intake queue)"
        ),
        "a message is lost for one of these causes: (1) the network between the publisher's \
         host and the bridge's was down or lossy (a cable, switch or Wi-Fi outage, a saturated \
         link: DDS delivers nothing while the link is down, and a reliable publisher resends only \
         what its QoS history still holds; check the link and `ros2 topic hz /tf` on both hosts); \
         (2) the publisher's own KEEP_LAST history replaced samples before this reader took \
         them; (3) the bridge did not take messages as fast as they came, so more waited than \
         the subscription's QoS depth (tf_depth / tf_static_depth): check its CPU (a starved, \
         stopped or throttled process) and the publishers' rates; (4) the bridge's intake queue \
         was full because its writer fell behind. The bridge's warn lines say how many were not \
         delivered by the middleware (1-3) and how many its queue dropped (4)",
    )
}

fn ready_check(ready_unix_ns: i64, created_unix_ns: i64, now: i64) -> Check {
    if ready_unix_ns != 0 {
        return check(
            "READY",
            Verdict::Ok,
            format!(
                "ready {:.1} s after its creation",
                (ready_unix_ns - created_unix_ns) as f64 / 1e9
            ),
            "",
        );
    }
    check(
        "READY",
        Verdict::Warn,
        format!(
            "not ready: the bridge is still receiving what it must have first ({:.1} s since \
             creation)",
            (now - created_unix_ns) as f64 / 1e9
        ),
        "consumers of the previous arena keep answering from it until it is ready (at most a \
         few seconds)",
    )
}

fn statics_check(unheard: u64) -> Check {
    if unheard == 0 {
        return check(
            "STATICS",
            Verdict::Ok,
            "every /tf_static publisher in the ROS graph has delivered",
            "",
        );
    }
    check(
        "STATICS",
        Verdict::Warn,
        format!(
            "{unheard} /tf_static publisher(s) in the ROS graph delivered nothing to the bridge: \
             whatever they sent is not in the arena"
        ),
        "the bridge's warn line names each (node, durability, and whether its QoS can match). \
         A volatile or best-effort publisher cannot match the bridge's transient-local, \
         reliable subscription (tf2_ros's StaticTransformBroadcaster is both): fix its QoS; \
         restarting does not help. Otherwise DDS did not \
         deliver its latched sample (seen after a SIGKILLed bridge was restarted at once): \
         restart the bridge or the publisher. A broadcaster that has sent nothing yet (made \
         before its transforms are known) is counted too: nothing is missing then",
    )
}

/// Participant entries, in the words and states of `tf_shm participants` ([`EntryState`]).
fn participants_check(rows: &[ParticipantRow]) -> Check {
    let entries: Vec<&ParticipantRow> = rows.iter().filter(|r| r.entry != "owner").collect();
    let count = |s: EntryState| entries.iter().filter(|r| r.state == s).count();
    let label = |r: &&ParticipantRow| format!("entry {} (pid {} {})", r.entry, r.pid, r.name);
    let stuck: Vec<String> = entries
        .iter()
        .filter(|r| r.state == EntryState::Stuck)
        .map(label)
        .collect();
    let earlier: Vec<String> = entries
        .iter()
        .filter(|r| r.state == EntryState::Alive && !r.current_arena)
        .map(label)
        .collect();
    let summary = format!(
        "{} of {} participant entries alive, {} stuck; {} free again (process ended or detached)",
        count(EntryState::Alive),
        tf_shm::rendezvous::MAX_PARTICIPANTS,
        stuck.len(),
        count(EntryState::Free),
    );
    if !stuck.is_empty() {
        return check(
            "PARTICIPANTS",
            Verdict::Fail,
            format!("{summary}; stuck: {}", some(&stuck)),
            "a stuck entry's lock is held although its recorded process is gone: a child process \
             inherited the lock file descriptor; stop it (see `tf_shm participants`)",
        );
    }
    if !earlier.is_empty() {
        return check(
            "PARTICIPANTS",
            Verdict::Warn,
            format!(
                "{summary}; {} still attached to an earlier arena: {}",
                earlier.len(),
                some(&earlier)
            ),
            "they re-attach by themselves when they use tf_shm::Buffer; otherwise restart them",
        );
    }
    check("PARTICIPANTS", Verdict::Ok, summary, "")
}

/// Whether transforms reach the bridge at all: none since it started (publishers on another
/// ROS domain, DDS discovery not matching), or none for `quiet_s` while dynamic frames exist.
/// A tree of static transforms alone expects no new samples.
fn data_check(stats: &ArenaStats, frames: &[FrameInfo], now: i64, quiet_s: f64) -> Check {
    let hint = "the bridge hears no /tf or /tf_static: check that the publishers run, on the \
                bridge's ROS_DOMAIN_ID and with matching discovery settings \
                (ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS); `ros2 topic hz /tf` beside the \
                bridge shows whether DDS delivers them";
    let ago = |t: i64| (now - t) as f64 / 1e9;
    if stats.accepted_total == 0 {
        return check(
            "DATA",
            Verdict::Warn,
            format!(
                "no transform arrived since the bridge started {:.1} s ago",
                ago(stats.created_unix_ns)
            ),
            hint,
        );
    }
    let dynamic = frames
        .iter()
        .filter(|f| f.kind == FrameKind::Dynamic)
        .count();
    if dynamic == 0 {
        return check(
            "DATA",
            Verdict::Ok,
            format!(
                "{} transform(s) arrived, all static: no new samples expected",
                stats.accepted_total
            ),
            "",
        );
    }
    let quiet = ago(stats.last_write_unix_ns);
    if quiet > quiet_s {
        return check(
            "DATA",
            Verdict::Warn,
            format!(
                "no transform arrived for {quiet:.1} s ({dynamic} dynamic frame(s) known, {} \
                 transform(s) before)",
                stats.accepted_total
            ),
            hint,
        );
    }
    check(
        "DATA",
        Verdict::Ok,
        format!(
            "the last transform arrived {quiet:.2} s ago ({} in all)",
            stats.accepted_total
        ),
        "",
    )
}

/// The checks of an open arena's contents (CAPACITY … STATICS), at `now` (Unix ns).
pub fn arena_checks(view: &ArenaView, a: &DoctorArgs, now: i64) -> Vec<Check> {
    let stats = view.stats();
    let frames = match view.frames() {
        Ok(f) => f,
        Err(e) => {
            return vec![check(
                "CAPACITY",
                Verdict::Fail,
                e.to_string(),
                "restart tf_shm_bridge",
            )];
        }
    };
    let recent_ns = recent_ns(a, &stats);
    vec![
        capacity_check(&stats),
        history_check(
            &frames,
            stats.ring_pool_exhausted,
            stats.pool_used,
            stats.pool_size,
            stats.cache_time_ns as f64 / 1e9,
        ),
        parents_check(&frames, now, recent_ns),
        data_check(&stats, &frames, now, a.no_data_after),
        stale_check(&frames, now, a.stale_periods),
        refused_check(&stats.refusals, stats.capacity_refusals),
        intake_check(stats.messages_lost),
        ready_check(stats.ready_unix_ns, stats.created_unix_ns, now),
        statics_check(stats.static_publishers_unheard),
    ]
}

/// The window of `PARENTS`, ns: `--recent`, else the arena's cache time.
pub fn recent_ns(a: &DoctorArgs, stats: &ArenaStats) -> i64 {
    a.recent
        .and_then(tf_shm::time::secs_to_ns)
        .unwrap_or(stats.cache_time_ns)
}

/// Runs every check.
pub fn checks(g: &Global, a: &DoctorArgs) -> Result<Vec<Check>, LocationError> {
    let loc = connect::location(g)?;
    let mut out = vec![runtime_dir_check(&loc)];
    let rows = tf_shm::rendezvous::participants(&loc)
        .map(|p| participants::rows(&p))
        .unwrap_or_default();
    let opened = connect::open(g);
    let owner = rows.iter().find(|r| r.entry == "owner");
    out.extend(bridge_checks(&opened, owner));
    match &opened {
        Ok(b) => out.extend(arena_checks(&b.view(), a, unix_now_ns())),
        Err(_) => {
            for code in [
                "CAPACITY", "HISTORY", "PARENTS", "DATA", "STALE", "REFUSED", "INTAKE", "READY",
                "STATICS",
            ] {
                out.push(check(code, Verdict::Skip, "no arena to read", ""));
            }
        }
    }
    out.push(participants_check(&rows));
    Ok(out)
}

/// The checks as text: one line each, hints under what is not ok.
pub fn text(checks: &[Check], p: &Painter) -> String {
    let w = checks.iter().map(|c| c.code.len()).max().unwrap_or(0);
    let mut s = String::new();
    for c in checks {
        let (label, style) = match c.status {
            Verdict::Ok => ("ok  ", Style::Green),
            Verdict::Warn => ("WARN", Style::Yellow),
            Verdict::Fail => ("FAIL", Style::Red),
            Verdict::Skip => ("skip", Style::Dim),
        };
        s += &format!("{}  {:<w$}  {}\n", p.paint(style, label), c.code, c.verdict);
        if !c.hint.is_empty() && matches!(c.status, Verdict::Warn | Verdict::Fail) {
            s += &format!(
                "      {:<w$}  {} {}\n",
                "",
                p.paint(Style::Dim, "hint:"),
                c.hint
            );
        }
    }
    let fails = checks.iter().filter(|c| c.status == Verdict::Fail).count();
    let warns = checks.iter().filter(|c| c.status == Verdict::Warn).count();
    s += &format!("{} checks: {fails} failed, {warns} warned\n", checks.len());
    s
}

/// `tf_shm doctor`.
pub fn run(g: &Global, a: &DoctorArgs) -> u8 {
    let checks = match checks(g, a) {
        Ok(c) => c,
        Err(e) => return connect::report_open_error(&e),
    };
    let failed = checks
        .iter()
        .any(|c| c.status == Verdict::Fail || (a.strict && c.status == Verdict::Warn));
    if g.json {
        #[derive(Serialize)]
        struct Out<'a> {
            ok: bool,
            checks: &'a [Check],
        }
        print_json(&Out {
            ok: !failed,
            checks: &with_former_codes(&checks),
        });
    } else {
        print!("{}", text(&checks, &Painter::stdout()));
    }
    if failed {
        crate::EXIT_FAILED
    } else {
        0
    }
}
