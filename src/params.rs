//! The bridge's settings: ROS parameters (`--ros-args --params-file config/tf_shm_bridge.yaml`)
//! and the same options on the command line (clap), which win when both are given.

use std::collections::HashMap;

use clap::Parser;
use tf_shm::ArenaConfig;

use crate::logging::Severity;

const ROS_HELP: &str = "\
ROS arguments (after --ros-args, as `ros2 run` and `ros2 launch` pass them):
  --params-file FILE         Parameters from a YAML file (config/tf_shm_bridge.yaml, keyed /**:)
  -p NAME:=VALUE             One parameter, e.g. -p cache_time:=5.0 -p use_sim_time:=true
  --log-level LEVEL          debug, info, warn, error or fatal for every logger;
                             --log-level tf_shm_bridge:=debug for this node's logger only
  -r __ns:=/robot1           Namespace (the node's logger becomes robot1.tf_shm_bridge)
  -r __node:=NAME            Node name

Parameters: each option above with underscores (cache_time, arena_name, ...) but
--dds-participant-ids (the DDS participant exists before parameters are read), and
  use_sim_time               Follow /clock (simulation, bag replay) [default: false]; a backward
                             jump of the ROS clock clears the dynamic history, as tf2_ros does
An option given on the command line wins over the parameter of the same name.

Log lines go through ROS logging: the console ([INFO] [stamp] [tf_shm_bridge]: ..., coloured
only on a terminal), the node's log file under $ROS_LOG_DIR (default ~/.ros/log) and /rosout.

Example:
  tf_shm_bridge --ros-args --params-file config/tf_shm_bridge.yaml -p arena_name:=robot1";

/// Serve /tf and /tf_static to every local process through a shared-memory arena.
///
/// ROS arguments go after `--ros-args` as usual; every option below but
/// `--dds-participant-ids` is also a ROS parameter of the same name with underscores (e.g.
/// `cache_time`), which the command line overrides.
#[derive(Parser, Debug, Default)]
#[command(name = "tf_shm_bridge", version, about, long_about = None, after_help = ROS_HELP)]
pub struct Cli {
    /// Arena name: consumers open it with `tf_shm::open()` (env TF_SHM_NAME). [default: default]
    #[arg(long)]
    pub arena_name: Option<String>,
    /// Domain of the rendezvous (default: $TF_SHM_DOMAIN, else $ROS_DOMAIN_ID, else 0).
    #[arg(long)]
    pub domain: Option<u32>,
    /// History kept per dynamic frame, seconds (tf2's cache time). [default: 10.0]
    #[arg(long, value_name = "SEC")]
    pub cache_time: Option<f64>,
    /// Arena size, MiB (frame table, names and the ring pool). [default: 64]
    #[arg(long, value_name = "MIB")]
    pub memory_budget_mb: Option<u64>,
    /// Most frames the arena can ever hold. [default: 4096]
    #[arg(long)]
    pub max_frames: Option<u32>,
    /// Highest per-frame rate for which the full cache time is kept, Hz. [default: 1000]
    #[arg(long, value_name = "HZ")]
    pub max_rate_hz: Option<u32>,
    /// Dynamic transforms topic. [default: /tf]
    #[arg(long)]
    pub tf_topic: Option<String>,
    /// Static transforms topic. [default: /tf_static]
    #[arg(long)]
    pub tf_static_topic: Option<String>,
    /// Subscription depth (keep-last) on the dynamic topic, messages. [default: 100]
    #[arg(long)]
    pub tf_depth: Option<u32>,
    /// Subscription depth (keep-last) on the static topic, messages. [default: 100]
    #[arg(long)]
    pub tf_static_depth: Option<u32>,
    /// Unix group (name or gid) whose members may also attach; default: same user only.
    #[arg(long)]
    pub allowed_group: Option<String>,
    /// Level of the node's logger (debug, info, warn, error, fatal); wins over --ros-args
    /// --log-level, which decides when this is unset. [default: unset]
    #[arg(long)]
    pub log_level: Option<String>,
    /// Fast DDS participant ids a restarted bridge rotates through (FIRST-LAST, one id, or
    /// off), so it never takes the id and ports of a predecessor that publishers still hold:
    /// fresh data within milliseconds of seeing a publisher instead of seconds. Applied
    /// through a Fast DDS profile for the bridge's own participant, written to its runtime dir
    /// (also 20 initial announcements 50 ms apart); skipped when FASTRTPS_DEFAULT_PROFILES_FILE
    /// is set or the middleware is not Fast DDS. Command line only: it applies before the
    /// node, and with it its ROS parameters, exists. [default: 20-27]
    #[arg(long, value_name = "IDS")]
    pub dds_participant_ids: Option<String>,
}

/// Resolved settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub arena_name: Option<String>,
    pub domain: Option<u32>,
    pub arena: ArenaConfig,
    pub tf_topic: String,
    pub tf_static_topic: String,
    pub tf_depth: u32,
    pub tf_static_depth: u32,
    pub allowed_group: Option<u32>,
    /// Set only when given; otherwise `--ros-args --log-level` (default info) applies.
    pub log_level: Option<Severity>,
}

/// A ROS parameter value as the bridge reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    Bool(bool),
    Int(i64),
    Double(f64),
    Str(String),
}

/// Splits argv at `--ros-args`: clap sees what comes before, rcl everything.
pub fn split_args(args: &[String]) -> &[String] {
    let end = args
        .iter()
        .position(|a| a == "--ros-args")
        .unwrap_or(args.len());
    &args[..end]
}

fn int_param(params: &HashMap<String, Param>, name: &str) -> Result<Option<i64>, String> {
    match params.get(name) {
        None => Ok(None),
        Some(Param::Int(v)) => Ok(Some(*v)),
        Some(other) => Err(format!(
            "parameter {name}: expected an integer, got {other:?}"
        )),
    }
}

fn float_param(params: &HashMap<String, Param>, name: &str) -> Result<Option<f64>, String> {
    match params.get(name) {
        None => Ok(None),
        Some(Param::Double(v)) => Ok(Some(*v)),
        Some(Param::Int(v)) => Ok(Some(*v as f64)),
        Some(other) => Err(format!(
            "parameter {name}: expected a number, got {other:?}"
        )),
    }
}

fn str_param(params: &HashMap<String, Param>, name: &str) -> Result<Option<String>, String> {
    match params.get(name) {
        None => Ok(None),
        Some(Param::Str(v)) => Ok(Some(v.clone())),
        Some(other) => Err(format!(
            "parameter {name}: expected a string, got {other:?}"
        )),
    }
}

fn ranged<T: TryFrom<i64>>(
    name: &str,
    v: Option<i64>,
    lo: i64,
    hi: i64,
) -> Result<Option<T>, String> {
    match v {
        None => Ok(None),
        Some(v) if (lo..=hi).contains(&v) => Ok(Some(
            T::try_from(v).map_err(|_| format!("{name}: {v} out of range"))?,
        )),
        Some(v) => Err(format!("{name}: {v} is outside {lo}..={hi}")),
    }
}

/// Resolves a group name or numeric gid.
fn group_id(group: &str) -> Result<u32, String> {
    if let Ok(gid) = group.parse::<u32>() {
        return Ok(gid);
    }
    let groups = std::fs::read_to_string("/etc/group").map_err(|e| format!("/etc/group: {e}"))?;
    groups
        .lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            Some((f.next()?, f.nth(1)?))
        })
        .find(|(name, _)| *name == group)
        .and_then(|(_, gid)| gid.parse().ok())
        .ok_or_else(|| format!("allowed_group: no group named \"{group}\""))
}

/// Merges command line over ROS parameters over defaults, checking every value; an error
/// names the option.
pub fn resolve(cli: &Cli, params: &HashMap<String, Param>) -> Result<Settings, String> {
    let d = ArenaConfig::default();
    let cache_time = match cli.cache_time.or(float_param(params, "cache_time")?) {
        None => d.cache_time_ns,
        Some(s) if s.is_finite() && s > 0.0 => tf_shm::time::secs_to_ns(s)
            .ok_or_else(|| format!("cache_time: {s} s is out of range"))?,
        Some(s) => {
            return Err(format!(
                "cache_time: must be a positive number of seconds, got {s}"
            ))
        }
    };
    let budget_mb = match cli.memory_budget_mb {
        Some(v) => Some(v),
        None => ranged::<u64>(
            "memory_budget_mb",
            int_param(params, "memory_budget_mb")?,
            1,
            1 << 20,
        )?,
    };
    let max_frames = match cli.max_frames {
        Some(v) => Some(v),
        None => ranged("max_frames", int_param(params, "max_frames")?, 2, 1 << 20)?,
    };
    let max_rate = match cli.max_rate_hz {
        Some(v) => Some(v),
        None => ranged(
            "max_rate_hz",
            int_param(params, "max_rate_hz")?,
            1,
            1_000_000,
        )?,
    };
    let domain = match cli.domain {
        Some(v) => Some(v),
        None => ranged(
            "domain",
            int_param(params, "domain")?,
            -1,
            i64::from(u32::MAX),
        )?
        .and_then(|v: i64| u32::try_from(v).ok()),
    };
    let depth = |cli: Option<u32>, name: &str| -> Result<u32, String> {
        Ok(match cli {
            Some(v) => v,
            None => ranged(name, int_param(params, name)?, 1, 100_000)?.unwrap_or(100),
        })
    };
    let allowed_group = cli
        .allowed_group
        .clone()
        .or(str_param(params, "allowed_group")?)
        .filter(|g| !g.is_empty())
        .map(|g| group_id(&g))
        .transpose()?;
    let arena = ArenaConfig {
        max_frames: max_frames.unwrap_or(d.max_frames),
        cache_time_ns: cache_time,
        memory_budget_bytes: budget_mb
            .map(|mb| (mb as usize).saturating_mul(1 << 20))
            .unwrap_or(d.memory_budget_bytes),
        max_rate_hz: max_rate.unwrap_or(d.max_rate_hz),
        initial_ring_capacity: d.initial_ring_capacity,
    };
    let topic = |cli: &Option<String>, name: &str, default: &str| -> Result<String, String> {
        let t = cli
            .clone()
            .or(str_param(params, name)?)
            .unwrap_or_else(|| default.into());
        if t.is_empty() {
            return Err(format!("{name}: topic name is empty"));
        }
        Ok(t)
    };
    Ok(Settings {
        arena_name: cli.arena_name.clone().or(str_param(params, "arena_name")?),
        domain,
        arena,
        tf_topic: topic(&cli.tf_topic, "tf_topic", "/tf")?,
        tf_static_topic: topic(&cli.tf_static_topic, "tf_static_topic", "/tf_static")?,
        tf_depth: depth(cli.tf_depth, "tf_depth")?,
        tf_static_depth: depth(cli.tf_static_depth, "tf_static_depth")?,
        allowed_group,
        log_level: cli
            .log_level
            .clone()
            .or(str_param(params, "log_level")?)
            .filter(|l| !l.is_empty())
            .map(|l| Severity::parse(&l))
            .transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kv: &[(&str, Param)]) -> HashMap<String, Param> {
        kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn defaults_are_tf2s() {
        let s = resolve(&Cli::default(), &HashMap::new()).unwrap();
        assert_eq!(s.arena.cache_time_ns, 10_000_000_000);
        assert_eq!((s.tf_topic.as_str(), s.tf_depth), ("/tf", 100));
        assert_eq!(
            (s.tf_static_topic.as_str(), s.tf_static_depth),
            ("/tf_static", 100)
        );
    }

    #[test]
    fn command_line_wins_over_params() {
        let cli = Cli {
            cache_time: Some(2.5),
            ..Cli::default()
        };
        let p = params(&[
            ("cache_time", Param::Double(5.0)),
            ("max_frames", Param::Int(128)),
        ]);
        let s = resolve(&cli, &p).unwrap();
        assert_eq!(s.arena.cache_time_ns, 2_500_000_000);
        assert_eq!(s.arena.max_frames, 128);
    }

    #[test]
    fn bad_values_name_the_option() {
        let p = params(&[("max_frames", Param::Str("many".into()))]);
        assert!(resolve(&Cli::default(), &p)
            .unwrap_err()
            .starts_with("parameter max_frames"));
        let p = params(&[("cache_time", Param::Double(-1.0))]);
        assert!(resolve(&Cli::default(), &p)
            .unwrap_err()
            .starts_with("cache_time"));
        let p = params(&[("tf_depth", Param::Int(0))]);
        assert!(resolve(&Cli::default(), &p)
            .unwrap_err()
            .starts_with("tf_depth"));
        let cli = Cli {
            allowed_group: Some("no-such-group-xyz".into()),
            ..Cli::default()
        };
        assert!(resolve(&cli, &HashMap::new())
            .unwrap_err()
            .contains("no-such-group-xyz"));
        let p = params(&[("log_level", Param::Str("tf_shm=debug".into()))]);
        assert!(resolve(&Cli::default(), &p)
            .unwrap_err()
            .starts_with("log_level"));
    }

    #[test]
    fn log_level_is_set_only_when_given() {
        assert_eq!(
            resolve(&Cli::default(), &HashMap::new()).unwrap().log_level,
            None
        );
        let p = params(&[("log_level", Param::Str(String::new()))]);
        assert_eq!(resolve(&Cli::default(), &p).unwrap().log_level, None);
        let p = params(&[("log_level", Param::Str("WARN".into()))]);
        let cli = Cli {
            log_level: Some("debug".into()),
            ..Cli::default()
        };
        assert_eq!(
            resolve(&Cli::default(), &p).unwrap().log_level,
            Some(Severity::Warn)
        );
        assert_eq!(resolve(&cli, &p).unwrap().log_level, Some(Severity::Debug));
    }

    #[test]
    fn ros_args_are_not_clap_args() {
        let argv: Vec<String> = ["bridge", "--cache-time", "3", "--ros-args", "-p", "x:=1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(split_args(&argv).len(), 3);
    }
}
