//! The `tf_shm` command: look at the TF tree a `tf_shm_bridge` serves, from the arena
//! directly, with no ROS installed.
//!
//! Each sub-command is a module with a `run` function taking its parsed arguments; they share
//! how the arena is found ([`connect`]), how a transform is shown ([`report`]) and how text
//! is laid out for people ([`out`]). Every data command also prints `--json`.
//!
//! ```no_run
//! // What `tf_shm lookup map base_link` does, as a library call:
//! let global = tf_shm_cli::cli::Global::default();
//! let buffer = tf_shm_cli::connect::open(&global)?;
//! let t = buffer.lookup_transform("map", "base_link", 0)?;
//! let report = tf_shm_cli::report::TransformReport::new(&t);
//! print!("{}", report.to_text(3));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod cli;
pub mod connect;
pub mod doctor;
pub mod echo;
pub mod graph;
pub mod monitor;
pub mod out;
pub mod participants;
pub mod record;
pub mod record_owner;
pub mod replay;
pub mod report;
pub mod tree;
pub mod view;

use std::process::ExitCode;

/// Exit status: a lookup or a doctor check failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit status: the arena could not be opened (no bridge, bad environment) or an I/O error.
pub const EXIT_NO_ARENA: u8 = 3;
/// Exit status: `record` wrote a valid bag, but the arena's owner went away while it recorded,
/// so what was published meanwhile is not in it.
pub const EXIT_OWNER_GAP: u8 = 4;

/// Runs one parsed command line; returns the process exit status.
pub fn run(cli: cli::Cli) -> ExitCode {
    let g = &cli.global;
    let code = match cli.command {
        cli::Command::Echo(a) => echo::run_echo(g, &a),
        cli::Command::Lookup(a) => echo::run_lookup(g, &a),
        cli::Command::Tree(a) => tree::run(g, &a),
        cli::Command::Monitor(a) => monitor::run(g, &a),
        cli::Command::Participants => participants::run(g),
        cli::Command::Doctor(a) => doctor::run(g, &a),
        cli::Command::Replay(a) => replay::run(g, &a),
        cli::Command::Record(a) => record::run(g, &a),
        cli::Command::View(a) => view::run(g, &a),
    };
    ExitCode::from(code)
}
