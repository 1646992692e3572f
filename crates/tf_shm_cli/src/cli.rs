//! The command line: global options and one struct per sub-command (clap derive).
//!
//! Times are seconds (`f64`) as `tf2_echo` takes them; rates are Hz.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// See, check and debug the shared TF tree of a tf_shm arena, with no ROS installed.
///
/// The arena is found like `tf_shm::open()` finds it: runtime dir from $TF_SHM_RUNTIME_DIR,
/// else $XDG_RUNTIME_DIR/tf_shm, else /run/tf_shm, else /tmp/tf_shm-<uid>; domain from
/// --domain, else $TF_SHM_DOMAIN, else $ROS_DOMAIN_ID, else 0; name from --name, else
/// $TF_SHM_NAME, else "default".
///
/// Units: times and durations in seconds (s), rates in hertz (Hz), translations in metres (m),
/// angles in radians (rad) and degrees (deg). Colour only when writing to a terminal (set
/// NO_COLOR to turn it off).
///
/// Exit status: 0 success, 1 a lookup or a doctor check failed, 2 bad usage, 3 no arena (no
/// bridge serving, invalid environment) or an I/O error, 4 record: the bridge went away while
/// recording (the bag is valid, but what was published without a bridge is not in it).
#[derive(Debug, Parser)]
#[command(name = "tf_shm", version, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every sub-command takes.
#[derive(Debug, Default, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// ROS domain of the arena [default: $TF_SHM_DOMAIN, else $ROS_DOMAIN_ID, else 0]
    #[arg(long, global = true, value_name = "ID")]
    pub domain: Option<u32>,
    /// Arena name [default: $TF_SHM_NAME, else "default"]
    #[arg(long, global = true, value_name = "NAME")]
    pub name: Option<String>,
    /// Runtime directory of the rendezvous [default: $TF_SHM_RUNTIME_DIR, else
    /// $XDG_RUNTIME_DIR/tf_shm, else /run/tf_shm, else /tmp/tf_shm-<uid>]
    #[arg(long, global = true, value_name = "DIR")]
    pub runtime_dir: Option<PathBuf>,
    /// Print machine-readable JSON instead of text (one JSON document per line for
    /// repeating commands; NaN and infinite numbers as the strings "NaN", "Infinity",
    /// "-Infinity", never null)
    #[arg(long, global = true)]
    pub json: bool,
}

/// The sub-commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print T_target_source repeatedly, like tf2_echo: stamp, translation (m), quaternion
    /// (xyzw), roll/pitch/yaw (rad and deg) and the 4×4 matrix. On failure prints tf2's error
    /// text and keeps trying.
    Echo(EchoArgs),
    /// One lookup, printed like `echo --once`; exit status 1 with tf2's error text on failure.
    Lookup(LookupArgs),
    /// The frame tree as an indented tree (parent → children): kind, rate (Hz), newest stamp
    /// (s), history span (s) and samples per frame; or Graphviz DOT / SVG like view_frames.
    Tree(TreeArgs),
    /// Like tf2_monitor: per frame the publishing rate (Hz), the delay between stamp and now
    /// (avg/max, s) and the largest gap between samples (s); for a chain, per link. Refreshes
    /// live.
    ///
    /// A delay is this machine's wall clock when monitor first sees a frame's new newest sample
    /// minus that sample's header stamp: the publisher's stamping-to-send time, DDS, the
    /// bridge's write, and on average half a poll period (5 ms at --poll 100). tf2_monitor
    /// measures the same at message receipt. It means something only when the publishers stamp
    /// with this wall clock: a delay alike on every frame of a publisher is its stamps running
    /// behind it (stamps taken early, another machine's clock, sim time or a bag). The net delay
    /// of a chain is now minus its latest common time. Rates count the samples the bridge
    /// accepted while monitoring; gaps are measured to one poll period.
    Monitor(MonitorArgs),
    /// Every participant entry of the arena (pid, name, mode; alive, stuck or free again), read
    /// from the lock file, even when no bridge serves.
    ///
    /// With --json each record's place in the table is `entry` ("owner" or its index); the
    /// same value is also given as `slot`, its former name, until the next release.
    Participants,
    /// Health checks, each with a code, a one-line verdict and a hint; exit status 1 when a
    /// check fails (to gate a launch or CI).
    ///
    /// Codes: RUNTIME_DIR, BRIDGE, COMPAT, CAPACITY, HISTORY, PARENTS, DATA, STALE, REFUSED,
    /// INTAKE, READY, PARTICIPANTS. PARTICIPANTS was called SLOTS: until the next release
    /// --json also lists it under SLOTS, marked "replaced_by": "PARTICIPANTS".
    Doctor(DoctorArgs),
    /// Serve the TF of a rosbag2 MCAP file (/tf, /tf_static) through an arena, as the bridge
    /// serves a live robot's: statics first, then /tf at the recorded receive times (--rate),
    /// or as fast as possible; --loop clears history at each pass like a clock jump.
    Replay(crate::replay::ReplayArgs),
    /// Record what the arena receives into a rosbag2-compatible MCAP file (/tf, /tf_static,
    /// tf2_msgs/msg/TFMessage in CDR); Ctrl-C leaves a valid, indexed file.
    ///
    /// If the arena's owner (the bridge) goes away, recording goes on and follows its restart,
    /// as `ros2 bag record` does; what was published while no owner served reached no arena and
    /// is not in the bag. That is said when it happens and in the summary (each span without an
    /// owner, from the last poll that saw the old owner to the first that saw the new one), and
    /// --json has owner_losses, owner_restarts, seconds_without_owner, owner_gaps and complete
    /// (nothing missed or lost and an owner throughout); the exit status is then 4. Messages
    /// the bridge received meanwhile but could not store (intake queue full) are said at the
    /// end and in --json's intake_lost.
    Record(crate::record::RecordArgs),
    /// Serve a live picture of the tree to a web browser, from the arena (no ROS): the graph as
    /// view_frames lays it out, each edge with its rate (Hz), delay (s), buffer length (s) and
    /// broadcaster, what doctor flags shown on its frame, and a picked pair's transform as
    /// `echo` prints it. Refreshes 4 times a second; Ctrl-C stops it.
    ///
    /// The page works offline (Graphviz, as WebAssembly, is inside this binary). It is served
    /// only at a URL with a random token, printed on start: a request without the token gets
    /// 403. Loopback only unless --bind says otherwise: whoever holds the URL sees the TF data.
    View(ViewArgs),
}

/// `tf_shm view`.
#[derive(Debug, Clone, Args)]
pub struct ViewArgs {
    /// Address to listen on. Anything but loopback shows the tree to the network (to whoever
    /// has the URL)
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub bind: std::net::IpAddr,
    /// Port to listen on (0: any free port)
    #[arg(long, default_value_t = 0, value_name = "PORT")]
    pub port: u16,
    /// Open the page in the desktop's browser (xdg-open)
    #[arg(long)]
    pub open: bool,
    /// A frame is flagged stale when no sample came for this many of its periods (as doctor)
    #[arg(long, default_value_t = 10.0, value_name = "PERIODS", value_parser = positive_f64)]
    pub stale_periods: f64,
    /// Window in which a parent change flags the frame, s [default: the arena's cache time]
    #[arg(long, value_name = "SEC", value_parser = positive_f64)]
    pub recent: Option<f64>,
}

/// `tf_shm echo`.
#[derive(Debug, Clone, Args)]
pub struct EchoArgs {
    /// Target frame: the result maps points from the source frame into this one
    pub target: String,
    /// Source frame
    pub source: String,
    /// Printing rate, Hz
    #[arg(long, default_value_t = 1.0, value_name = "HZ", value_parser = positive_f64)]
    pub rate: f64,
    /// Time to look up, s (0 = latest common time)
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "SEC",
        allow_negative_numbers = true
    )]
    pub time: f64,
    /// Print once and exit (exit status 1 if the lookup fails)
    #[arg(long)]
    pub once: bool,
    /// Stop after this many prints (results or errors); exit status 1 if the last failed
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Digits after the decimal point in the text output
    #[arg(long, short = 'p', default_value_t = 3, value_name = "DIGITS")]
    pub precision: usize,
}

/// `tf_shm lookup`.
#[derive(Debug, Clone, Args)]
pub struct LookupArgs {
    /// Target frame: the result maps points from the source frame into this one
    pub target: String,
    /// Source frame
    pub source: String,
    /// Time to look up, s (0 = latest common time)
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "SEC",
        allow_negative_numbers = true
    )]
    pub time: f64,
    /// Two-time lookup: time of the target frame, s (needs --source-time and --fixed)
    #[arg(long, value_name = "SEC", requires_all = ["source_time", "fixed"], conflicts_with = "time", allow_negative_numbers = true)]
    pub target_time: Option<f64>,
    /// Two-time lookup: time of the source frame, s (needs --target-time and --fixed)
    #[arg(long, value_name = "SEC", requires_all = ["target_time", "fixed"], allow_negative_numbers = true)]
    pub source_time: Option<f64>,
    /// Two-time lookup: the frame fixed in time between the two
    #[arg(long, value_name = "FRAME", requires_all = ["target_time", "source_time"])]
    pub fixed: Option<String>,
    /// Digits after the decimal point in the text output
    #[arg(long, short = 'p', default_value_t = 3, value_name = "DIGITS")]
    pub precision: usize,
}

/// `tf_shm tree`.
#[derive(Debug, Clone, Args)]
pub struct TreeArgs {
    /// Print Graphviz DOT (as view_frames draws it: parent → child, each edge with its
    /// broadcaster, rate, buffer length, stamps and delay; what doctor flags written on the
    /// frame) instead of the text tree
    #[arg(long)]
    pub dot: bool,
    /// Render that graph to this SVG file with Graphviz `dot` (must be installed)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Render that graph to this PDF file with Graphviz `dot`, as view_frames writes frames.pdf
    #[arg(long, value_name = "FILE")]
    pub pdf: Option<PathBuf>,
    /// Every column, however wide. Otherwise, on a terminal (or with $COLUMNS set), columns
    /// are left out, last first, until the tree fits its width
    #[arg(long)]
    pub wide: bool,
}

/// `tf_shm monitor`.
#[derive(Debug, Clone, Args)]
pub struct MonitorArgs {
    /// Target frame of a chain to monitor (with SOURCE); all frames when omitted
    #[arg(requires = "source")]
    pub target: Option<String>,
    /// Source frame of the chain
    pub source: Option<String>,
    /// How often the table is refreshed, Hz
    #[arg(long, default_value_t = 1.0, value_name = "HZ", value_parser = positive_f64)]
    pub rate: f64,
    /// How often the arena is sampled between refreshes, Hz (bounds the resolution of gaps)
    #[arg(long, default_value_t = 100.0, value_name = "HZ", value_parser = positive_f64)]
    pub poll: f64,
    /// Stop after this many refreshes (default: run until interrupted)
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
}

/// `tf_shm doctor`.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// A frame is stale when no sample came for this many of its periods
    #[arg(long, default_value_t = 10.0, value_name = "PERIODS", value_parser = positive_f64)]
    pub stale_periods: f64,
    /// Warn when no transform arrived for this long while dynamic frames exist, s
    #[arg(long, default_value_t = 5.0, value_name = "SEC", value_parser = positive_f64)]
    pub no_data_after: f64,
    /// Window in which a parent change counts as recent, s [default: the arena's cache time]
    #[arg(long, value_name = "SEC", value_parser = positive_f64)]
    pub recent: Option<f64>,
    /// Treat warnings as failures for the exit status
    #[arg(long)]
    pub strict: bool,
}

impl DoctorArgs {
    /// The thresholds `doctor` uses when given no options.
    pub fn defaults() -> DoctorArgs {
        use clap::{FromArgMatches, Parser};
        #[derive(Parser)]
        struct Only {
            #[command(flatten)]
            a: DoctorArgs,
        }
        let m = <Only as clap::CommandFactory>::command().get_matches_from(["doctor"]);
        Only::from_arg_matches(&m).expect("defaults parse").a
    }
}

pub(crate) fn positive_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err("must be a positive number".into()),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn two_time_lookup_needs_all_three() {
        let r = Cli::try_parse_from(["tf_shm", "lookup", "a", "b", "--target-time", "1"]);
        assert!(r.is_err());
        let r = Cli::try_parse_from([
            "tf_shm",
            "lookup",
            "a",
            "b",
            "--target-time",
            "1",
            "--source-time",
            "2",
            "--fixed",
            "m",
        ]);
        assert!(r.is_ok());
    }
}
