//! The bridge logs through ROS: every `tracing` event (and every `log` record of r2r) goes to
//! rcutils under the node's logger name with the matching severity, so it reaches the console
//! in ROS's format (`[WARN] [stamp] [tf_shm_bridge]: …`, coloured only on a terminal), the node's
//! log file under `$ROS_LOG_DIR` and `/rosout`, like an rclcpp node's `RCLCPP_*` lines.
//!
//! rcl has already read `--ros-args --log-level LEVEL` and `--log-level NAME:=LEVEL` when the
//! context is created; the node's effective level decides which events are formatted at all.
//!
//! Since Iron, rcl no longer creates a node's `/rosout` publisher in `rcl_node_init`: the client
//! library does (rclcpp's `NodeBase`), and r2r 0.9.7 does not. So the layer publishes each line
//! on `/rosout` itself, with rcl's rosout QoS, unless `--ros-args --disable-rosout-logs`.
#![allow(unsafe_code)] // rcutils has no safe binding in r2r: each call is an FFI boundary

use std::cell::Cell;
use std::ffi::CString;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use r2r::rcl_interfaces::msg::Log;
use r2r::{LogSeverity, Publisher, QosProfile};
use r2r_rcl::RCUTILS_LOG_SEVERITY as Native;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// Most verbose tracing level forwarded, as [`rank`]; rcutils has no level below DEBUG, so
/// TRACE events are DEBUG lines.
static MAX_RANK: AtomicU8 = AtomicU8::new(INFO_RANK);
static READY: AtomicBool = AtomicBool::new(false);

const INFO_RANK: u8 = 3;

/// A severity as ROS spells it on the command line and in `log_level` (case-insensitive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Debug,
    Info,
    Warn,
    Error,
    Fatal,
}

impl Severity {
    /// Parses `debug`, `info`, `warn`, `error` or `fatal`, as `--ros-args --log-level` does.
    pub fn parse(s: &str) -> Result<Severity, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "debug" => Severity::Debug,
            "info" => Severity::Info,
            "warn" => Severity::Warn,
            "error" => Severity::Error,
            "fatal" => Severity::Fatal,
            _ => {
                return Err(format!(
                    "log_level \"{s}\": expected debug, info, warn, error or fatal"
                ))
            }
        })
    }

    fn native(self) -> Native {
        match self {
            Severity::Debug => Native::RCUTILS_LOG_SEVERITY_DEBUG,
            Severity::Info => Native::RCUTILS_LOG_SEVERITY_INFO,
            Severity::Warn => Native::RCUTILS_LOG_SEVERITY_WARN,
            Severity::Error => Native::RCUTILS_LOG_SEVERITY_ERROR,
            Severity::Fatal => Native::RCUTILS_LOG_SEVERITY_FATAL,
        }
    }
}

/// Orders tracing levels from quiet to verbose: ERROR 1 … TRACE 5.
fn rank(level: Level) -> u8 {
    match level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => INFO_RANK,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// The most verbose tracing rank an rcutils effective level lets through (0: none, FATAL).
fn max_rank(effective: i32) -> u8 {
    match effective {
        e if e <= Native::RCUTILS_LOG_SEVERITY_DEBUG as i32 => rank(Level::TRACE),
        e if e <= Native::RCUTILS_LOG_SEVERITY_INFO as i32 => rank(Level::INFO),
        e if e <= Native::RCUTILS_LOG_SEVERITY_WARN as i32 => rank(Level::WARN),
        e if e <= Native::RCUTILS_LOG_SEVERITY_ERROR as i32 => rank(Level::ERROR),
        _ => 0,
    }
}

fn severity(level: Level) -> LogSeverity {
    match level {
        Level::ERROR => LogSeverity::Error,
        Level::WARN => LogSeverity::Warn,
        Level::INFO => LogSeverity::Info,
        Level::DEBUG | Level::TRACE => LogSeverity::Debug,
    }
}

fn c_name(logger: &str) -> Result<CString, String> {
    CString::new(logger).map_err(|_| format!("logger name {logger:?} contains a NUL"))
}

/// Re-reads the logger's effective level from rcutils (after rcl or [`set_level`] changed it).
fn refresh(logger: &str) -> Result<(), String> {
    let name = c_name(logger)?;
    // SAFETY: `name` is a NUL-terminated string alive for the call; rcutils logging is
    // initialised (rcl_logging_configure ran in r2r::Context::create). The call only reads the
    // level table, or adds the name's resolved level to it, from this (the main) thread, which
    // is the only one that changes levels.
    let effective = unsafe { r2r_rcl::rcutils_logging_get_logger_effective_level(name.as_ptr()) };
    if effective < 0 {
        return Err(format!("cannot read the level of logger {logger}"));
    }
    MAX_RANK.store(max_rank(effective), Ordering::Relaxed);
    Ok(())
}

/// Sets the severity of `logger` as `--ros-args --log-level LOGGER:=LEVEL` would (the
/// `log_level` parameter).
pub fn set_level(logger: &str, level: Severity) -> Result<(), String> {
    let name = c_name(logger)?;
    // SAFETY: as in `refresh`; rcutils copies the name into its level table.
    let ret =
        unsafe { r2r_rcl::rcutils_logging_set_logger_level(name.as_ptr(), level.native() as i32) };
    if ret != 0 {
        return Err(format!(
            "cannot set the level of logger {logger} (rcutils error {ret})"
        ));
    }
    refresh(logger)
}

/// rcl's `rcl_qos_profile_rosout_default`: late joiners get the last lines for 10 s.
fn rosout_qos() -> QosProfile {
    QosProfile::default()
        .keep_last(1000)
        .reliable()
        .transient_local()
        .lifespan(Duration::from_secs(10))
}

/// Routes every tracing event to rcutils and `/rosout` as the node's logger. Call once, right
/// after the node is created.
pub fn init(node: &mut r2r::Node) -> Result<(), String> {
    let logger = node.logger().to_owned();
    refresh(&logger)?;
    // SAFETY: reads a flag rcl_logging_configure set (r2r::Context::create); no arguments.
    let rosout = if unsafe { r2r_rcl::rcl_logging_rosout_enabled() } {
        let publisher = node
            .create_publisher::<Log>("/rosout", rosout_qos())
            .map_err(|e| format!("cannot create the /rosout publisher: {e}"))?;
        Some(Mutex::new(publisher))
    } else {
        None
    };
    tracing_subscriber::registry()
        .with(RosLayer { logger, rosout })
        .try_init()
        .map_err(|e| format!("cannot install the log subscriber: {e}"))?;
    READY.store(true, Ordering::Relaxed);
    Ok(())
}

/// Whether [`init`] succeeded: errors can go through ROS logging rather than plain stderr.
pub fn ready() -> bool {
    READY.load(Ordering::Relaxed)
}

struct RosLayer {
    logger: String,
    /// r2r's publisher is Send, not Sync; events come from any thread.
    rosout: Option<Mutex<Publisher<Log>>>,
}

thread_local! {
    /// Set while publishing on /rosout: r2r logs a failed publish, which must not recurse.
    static PUBLISHING: Cell<bool> = const { Cell::new(false) };
}

impl RosLayer {
    fn publish(&self, level: Level, meta: &Metadata<'_>, line: &str) {
        let Some(rosout) = &self.rosout else { return };
        if PUBLISHING.with(|p| p.replace(true)) {
            return;
        }
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let msg = Log {
            stamp: r2r::builtin_interfaces::msg::Time {
                sec: i32::try_from(now.as_secs()).unwrap_or(i32::MAX),
                nanosec: now.subsec_nanos(),
            },
            level: rosout_level(level),
            name: self.logger.clone(),
            msg: line.to_owned(),
            file: meta.file().unwrap_or("").to_owned(),
            function: meta.module_path().unwrap_or("").to_owned(),
            line: meta.line().unwrap_or(0),
        };
        // A failed publish (the node is shutting down) loses only the /rosout copy of the line.
        if let Ok(rosout) = rosout.lock() {
            let _ = rosout.publish(&msg);
        }
        PUBLISHING.with(|p| p.set(false));
    }
}

/// rcl_interfaces/msg/Log's level constants.
fn rosout_level(level: Level) -> u8 {
    match level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG | Level::TRACE => 10,
    }
}

impl<S: Subscriber> Layer<S> for RosLayer {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        // The level can change after a callsite is first seen (`set_level`): ask every time.
        tracing::subscriber::Interest::sometimes()
    }

    fn enabled(&self, meta: &Metadata<'_>, _: Context<'_, S>) -> bool {
        rank(*meta.level()) <= MAX_RANK.load(Ordering::Relaxed)
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut text = Message::default();
        event.record(&mut text);
        let meta = event.metadata();
        // rcutils takes C strings: a NUL (from a frame name, say) would end the line early.
        let line = text.0.replace('\0', "\\0");
        r2r::log(
            &line,
            &self.logger,
            meta.file().unwrap_or(""),
            meta.line().unwrap_or(0),
            severity(*meta.level()),
        );
        self.publish(*meta.level(), meta, &line);
    }
}

/// An event as one line: its message, then `name=value` for each other field, as
/// tracing-subscriber's default format writes them.
#[derive(Default)]
struct Message(String);

impl Message {
    fn push_field(&mut self, field: &Field, value: std::fmt::Arguments<'_>) {
        let name = field.name();
        // Records forwarded from the `log` crate carry their origin as `log.*` fields.
        if name.starts_with("log.") {
            return;
        }
        if name == "message" {
            let rest = std::mem::take(&mut self.0);
            let _ = write!(self.0, "{value}");
            self.0.push_str(&rest);
        } else {
            let _ = write!(self.0, " {name}={value}");
        }
    }
}

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push_field(field, format_args!("{value}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.push_field(field, format_args!("{value:?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_parse_as_ros_spells_them() {
        assert_eq!(Severity::parse("DEBUG"), Ok(Severity::Debug));
        assert_eq!(Severity::parse("warn"), Ok(Severity::Warn));
        assert_eq!(Severity::parse("Fatal"), Ok(Severity::Fatal));
        let e = Severity::parse("tf_shm=debug").unwrap_err();
        assert!(
            e.contains("tf_shm=debug") && e.contains("debug, info"),
            "{e}"
        );
    }

    #[test]
    fn rcutils_level_decides_which_tracing_levels_pass() {
        let passes = |effective: Native| {
            [
                Level::ERROR,
                Level::WARN,
                Level::INFO,
                Level::DEBUG,
                Level::TRACE,
            ]
            .into_iter()
            .filter(|l| rank(*l) <= max_rank(effective as i32))
            .count()
        };
        assert_eq!(passes(Native::RCUTILS_LOG_SEVERITY_DEBUG), 5);
        assert_eq!(passes(Native::RCUTILS_LOG_SEVERITY_INFO), 3);
        assert_eq!(passes(Native::RCUTILS_LOG_SEVERITY_WARN), 2);
        assert_eq!(passes(Native::RCUTILS_LOG_SEVERITY_ERROR), 1);
        assert_eq!(passes(Native::RCUTILS_LOG_SEVERITY_FATAL), 0);
    }

    #[test]
    fn events_keep_their_fields_after_the_message() {
        use tracing_subscriber::layer::SubscriberExt;
        #[derive(Clone, Default)]
        struct Lines(std::sync::Arc<std::sync::Mutex<Vec<String>>>);
        impl<S: Subscriber> Layer<S> for Lines {
            fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
                let mut m = Message::default();
                event.record(&mut m);
                self.0.lock().unwrap().push(m.0);
            }
        }
        let lines = Lines::default();
        let subscriber = tracing_subscriber::registry().with(lines.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(code = "TF_NAN_INPUT", frame = %"base_link", "ignoring {}", 1);
            tracing::info!("plain");
        });
        assert_eq!(
            *lines.0.lock().unwrap(),
            [
                "ignoring 1 code=TF_NAN_INPUT frame=base_link".to_string(),
                "plain".to_string()
            ]
        );
    }
}
