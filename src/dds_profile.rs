//! The bridge's own Fast DDS participant profile, so that a restarted bridge gets fresh data
//! soon (docs/benchmarks.md, "Restart, a Fast DDS profile for the bridge alone").
//!
//! A bridge SIGKILLed and started at once took, by Fast DDS's default, the lowest free
//! participant id, which is usually its predecessor's, and with it the predecessor's UDP and
//! shared-memory ports; publishers that still hold the dead participant (until its 20 s lease
//! runs out) then delivered to the new one only seconds after discovering it. With an id none
//! of the last few bridges used, the first `/tf` came 5–21 ms after the publisher was seen.
//!
//! So before rcl creates the participant, the bridge writes a participant profile into its
//! runtime dir and points `FASTRTPS_DEFAULT_PROFILES_FILE` at it in its own environment: Fast
//! DDS reads that variable in this process only, and the profile is the default for this
//! process's participants only, so no other participant is reconfigured. It sets the
//! participant id (the next of a small range after the one the previous bridge of this runtime
//! dir took, remembered in `<runtime dir>/tf_shm_bridge.dds_participant_id`) and repeats the
//! initial announcements 20 times 50 ms apart (Fast DDS: 5 times 100 ms), so a publisher that
//! misses the first ones hears one within the first second. Everything else is Fast DDS's
//! default, as without a profile; rmw applies its own settings on top as it always does.
//!
//! Left alone (Fast DDS's defaults, or the user's profile) when the user gives a profile
//! (`FASTRTPS_DEFAULT_PROFILES_FILE`, `FASTDDS_DEFAULT_PROFILES_FILE`, or
//! `DEFAULT_FASTRTPS_PROFILES.xml` in the working directory, which Fast DDS loads by itself),
//! when the middleware is not Fast DDS (`RMW_IMPLEMENTATION`), or with
//! `--dds-participant-ids off`.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the last bridge's participant id is remembered, in the runtime dir.
const LAST_ID_FILE: &str = "tf_shm_bridge.dds_participant_id";

/// A range of Fast DDS participant ids, inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdRange {
    pub first: u32,
    pub last: u32,
}

/// The default range: 8 ids, so a bridge restarted every 3 s still takes an id no bridge took
/// within a dead participant's 20 s lease. Fast DDS gives id `n` the UDP ports
/// `7410 + 250 * domain + 2 * n` and the next one: 7450–7465 on domain 0, clear of the ids
/// Fast DDS hands out by itself from 0 upwards.
pub const DEFAULT_IDS: IdRange = IdRange {
    first: 20,
    last: 27,
};

/// The highest participant id whose ports (`7400 + 250 * domain + 10 + 2 * id`, and the next
/// one) stay below 65536 on every ROS domain (0–232) with Fast DDS's default port parameters.
const MAX_ID: u32 = 62;

/// Parses `--dds-participant-ids`: `FIRST-LAST`, one id, or `off` (None).
pub fn parse_ids(s: &str) -> Result<Option<IdRange>, String> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let bad =
        || format!("dds_participant_ids \"{s}\": expected FIRST-LAST (e.g. 20-27), one id, or off");
    let num = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
    let range = match s.split_once('-') {
        Some((a, b)) => IdRange {
            first: num(a)?,
            last: num(b)?,
        },
        None => {
            let id = num(s)?;
            IdRange {
                first: id,
                last: id,
            }
        }
    };
    if range.first > range.last || range.last > MAX_ID {
        return Err(format!(
            "dds_participant_ids \"{s}\": ids must rise and be at most {MAX_ID}"
        ));
    }
    Ok(Some(range))
}

/// What [`apply`] did.
#[derive(Debug)]
pub enum Applied {
    /// The profile is in `path` (removed by [`Applied::participant_created`]); the participant
    /// gets id `id`, to be remembered in `last_id_path` once the runtime dir exists.
    Profile {
        id: u32,
        path: PathBuf,
        last_id_path: PathBuf,
    },
    /// Left to Fast DDS or the user, for this reason.
    Skipped(String),
}

impl Applied {
    /// Once the participant exists the profile has been read: the file goes; the id is
    /// remembered for the next bridge (the runtime dir exists once the arena is served).
    pub fn participant_created(&self) {
        if let Applied::Profile { path, .. } = self {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Remembers the id taken for the next bridge of this runtime dir (written through a
    /// temporary file and a rename, so a reader never sees half a number).
    pub fn remember(&self) -> Result<(), String> {
        let Applied::Profile {
            id, last_id_path, ..
        } = self
        else {
            return Ok(());
        };
        let tmp = last_id_path.with_extension(format!("{}.tmp", std::process::id()));
        std::fs::write(&tmp, format!("{id}\n"))
            .and_then(|()| std::fs::rename(&tmp, last_id_path))
            .map_err(|e| format!("cannot write {}: {e}", last_id_path.display()))
    }

    /// For the log: what the participant was given.
    pub fn describe(&self) -> String {
        match self {
            Applied::Profile { id, .. } => format!(
                "DDS participant id {id} (not the previous bridge's), initial announcements 20 x \
                 50 ms (the bridge's own Fast DDS profile; --dds-participant-ids)"
            ),
            Applied::Skipped(why) => format!("DDS participant left to Fast DDS: {why}"),
        }
    }
}

/// The environment as [`apply`] reads it (a function, for tests).
pub trait Env {
    fn var(&self, k: &str) -> Option<String>;
    fn default_xml_in_cwd(&self) -> bool;
}

/// The process's own environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, k: &str) -> Option<String> {
        std::env::var(k).ok().filter(|v| !v.is_empty())
    }
    fn default_xml_in_cwd(&self) -> bool {
        Path::new("DEFAULT_FASTRTPS_PROFILES.xml").exists()
    }
}

/// Why the bridge must not give its participant a profile, if it must not.
fn skip_reason(ids: Option<IdRange>, env: &impl Env) -> Option<String> {
    if ids.is_none() {
        return Some("--dds-participant-ids off".into());
    }
    for var in [
        "FASTRTPS_DEFAULT_PROFILES_FILE",
        "FASTDDS_DEFAULT_PROFILES_FILE",
    ] {
        if let Some(v) = env.var(var) {
            return Some(format!("{var}={v} is the user's profile"));
        }
    }
    if let Some(rmw) = env.var("RMW_IMPLEMENTATION") {
        if !rmw.starts_with("rmw_fastrtps") {
            return Some(format!("RMW_IMPLEMENTATION={rmw} is not Fast DDS"));
        }
    }
    if env.var("SKIP_DEFAULT_XML").is_none() && env.default_xml_in_cwd() {
        return Some("DEFAULT_FASTRTPS_PROFILES.xml in the working directory is the user's".into());
    }
    None
}

/// The id after `last` in `ids` (the first one if `last` is none or outside).
fn next_id(ids: IdRange, last: Option<u32>) -> u32 {
    match last {
        Some(l) if (ids.first..ids.last).contains(&l) => l + 1,
        _ => ids.first,
    }
}

/// The profile for participant id `id`.
fn profile_xml(id: u32) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by tf_shm_bridge for its own participant (see its src/dds_profile.rs). -->
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <participant profile_name="tf_shm_bridge" is_default_profile="true">
    <rtps>
      <builtin>
        <discovery_config>
          <initialAnnouncements>
            <count>20</count>
            <period><sec>0</sec><nanosec>50000000</nanosec></period>
          </initialAnnouncements>
        </discovery_config>
      </builtin>
      <participantID>{id}</participantID>
    </rtps>
  </participant>
</profiles>
"#
    )
}

/// Writes the profile, unless [`skip_reason`] says not to; the caller points
/// `FASTRTPS_DEFAULT_PROFILES_FILE` at it before rcl creates the participant. `runtime_dir` holds the profile and the last id; where it does not exist yet (the first
/// bridge since boot: the arena's serve creates it with the right mode and group) the profile
/// goes to the temporary directory and the range starts at its first id.
pub fn apply(ids: Option<IdRange>, runtime_dir: &Path, env: &impl Env) -> Result<Applied, String> {
    if let Some(why) = skip_reason(ids, env) {
        return Ok(Applied::Skipped(why));
    }
    let ids = ids.unwrap_or(DEFAULT_IDS);
    let last_id_path = runtime_dir.join(LAST_ID_FILE);
    let last = std::fs::read_to_string(&last_id_path)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    let id = next_id(ids, last);
    let dir = if runtime_dir.is_dir() {
        runtime_dir.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("tf_shm_bridge.{}.fastdds.xml", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)?;
        f.write_all(profile_xml(id).as_bytes())
    };
    write().map_err(|e| format!("cannot write the DDS profile {}: {e}", path.display()))?;
    Ok(Applied::Profile {
        id,
        path,
        last_id_path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct FakeEnv(HashMap<&'static str, &'static str>, bool);

    impl Env for FakeEnv {
        fn var(&self, k: &str) -> Option<String> {
            self.0.get(k).map(|v| v.to_string())
        }
        fn default_xml_in_cwd(&self) -> bool {
            self.1
        }
    }

    fn env(kv: &[(&'static str, &'static str)], xml: bool) -> FakeEnv {
        FakeEnv(kv.iter().copied().collect(), xml)
    }

    #[test]
    fn ids_parse() {
        assert_eq!(parse_ids("20-27").unwrap(), Some(DEFAULT_IDS));
        assert_eq!(parse_ids("5").unwrap(), Some(IdRange { first: 5, last: 5 }));
        assert_eq!(parse_ids("OFF").unwrap(), None);
        for bad in ["27-20", "x", "1-", "20-63", ""] {
            assert!(parse_ids(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ids_rotate_over_the_range() {
        let r = IdRange {
            first: 20,
            last: 22,
        };
        assert_eq!(next_id(r, None), 20);
        assert_eq!(next_id(r, Some(20)), 21);
        assert_eq!(next_id(r, Some(21)), 22);
        assert_eq!(next_id(r, Some(22)), 20);
        // A memory from another range starts this one.
        assert_eq!(next_id(r, Some(3)), 20);
    }

    #[test]
    fn a_users_profile_or_another_middleware_is_left_alone() {
        let ids = Some(DEFAULT_IDS);
        assert_eq!(skip_reason(ids, &env(&[], false)), None);
        assert_eq!(
            skip_reason(
                ids,
                &env(&[("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")], false)
            ),
            None
        );
        for e in [
            env(&[("FASTRTPS_DEFAULT_PROFILES_FILE", "/a.xml")], false),
            env(&[("FASTDDS_DEFAULT_PROFILES_FILE", "/a.xml")], false),
            env(&[("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp")], false),
            env(&[], true),
        ] {
            assert!(skip_reason(ids, &e).is_some());
        }
        assert_eq!(
            skip_reason(ids, &env(&[("SKIP_DEFAULT_XML", "1")], true)),
            None
        );
        assert!(skip_reason(None, &env(&[], false)).is_some());
    }

    #[test]
    fn the_next_bridge_takes_the_next_id() {
        let dir = std::env::temp_dir().join(format!("tf_shm_dds_profile_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let range = Some(IdRange {
            first: 30,
            last: 31,
        });
        let mut ids = vec![];
        for _ in 0..3 {
            let a = apply(range, &dir, &env(&[], false)).unwrap();
            let Applied::Profile { id, path, .. } = &a else {
                panic!("{a:?}")
            };
            let xml = std::fs::read_to_string(path).unwrap();
            assert!(xml.contains(&format!("<participantID>{id}</participantID>")));
            a.participant_created();
            assert!(!path.exists());
            a.remember().unwrap();
            ids.push(*id);
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(ids, [30, 31, 30]);
    }
}
