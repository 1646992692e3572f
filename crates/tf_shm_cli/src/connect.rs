//! Finding the arena from the global options, as `tf_shm::open()` does from the environment.

use tf_shm::rendezvous::Location;
use tf_shm::rendezvous::{Join, LocationError, Serve};
use tf_shm::{ArenaConfig, Buffer, JoinError};

use crate::cli::Global;

/// Name this tool records in the participant table.
pub const PARTICIPANT_NAME: &str = "tf_shm";

/// Sets the global options' domain, name and runtime dir on a [`Join`] or a [`Serve`] builder
/// (the two roles have the same setters); unset options come from the environment.
macro_rules! at_global {
    ($builder:expr, $g:expr) => {{
        let mut b = $builder;
        if let Some(d) = $g.domain {
            b = b.domain(d);
        }
        if let Some(n) = &$g.name {
            b = b.name(n);
        }
        if let Some(r) = &$g.runtime_dir {
            b = b.runtime_dir(r);
        }
        b
    }};
}

/// The joiner for the global options (read-only).
pub fn opener(g: &Global) -> Join {
    at_global!(Join::new().participant_name(PARTICIPANT_NAME), g)
}

/// The owner of a new arena with `config` at the global options' location.
pub fn server(g: &Global, config: ArenaConfig) -> Serve {
    at_global!(Serve::new(config).participant_name(PARTICIPANT_NAME), g)
}

/// Where the arena of the global options lives.
pub fn location(g: &Global) -> Result<Location, LocationError> {
    opener(g).location()
}

/// Joins the arena once.
pub fn open(g: &Global) -> Result<Buffer, JoinError> {
    opener(g).open()
}

/// Prints a join (or location) error as the commands do and returns the exit status for it.
pub fn report_open_error(e: &dyn std::fmt::Display) -> u8 {
    eprintln!("tf_shm: {e}");
    crate::EXIT_NO_ARENA
}
