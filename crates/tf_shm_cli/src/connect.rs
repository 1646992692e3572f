//! Finding the arena from the global options, as `tf_shm::open()` does from the environment.

use tf_shm::rendezvous::discovery::{self, Location, Overrides};
use tf_shm::rendezvous::{Join, LocationError, Serve};
use tf_shm::{ArenaConfig, Buffer, JoinError};

use crate::cli::Global;

/// Name this tool records in the participant table.
pub const PARTICIPANT_NAME: &str = "tf_shm";

/// The joiner for the global options (read-only; unset options come from the environment).
pub fn opener(g: &Global) -> Join {
    let mut o = Join::new().participant_name(PARTICIPANT_NAME);
    if let Some(d) = g.domain {
        o = o.domain(d);
    }
    if let Some(n) = &g.name {
        o = o.name(n);
    }
    if let Some(r) = &g.runtime_dir {
        o = o.runtime_dir(r);
    }
    o
}

/// The owner of a new arena with `config` at the global options' location.
pub fn server(g: &Global, config: ArenaConfig) -> Serve {
    let mut o = Serve::new(config).participant_name(PARTICIPANT_NAME);
    if let Some(d) = g.domain {
        o = o.domain(d);
    }
    if let Some(n) = &g.name {
        o = o.name(n);
    }
    if let Some(r) = &g.runtime_dir {
        o = o.runtime_dir(r);
    }
    o
}

/// Where the arena of the global options lives.
pub fn location(g: &Global) -> Result<Location, LocationError> {
    discovery::resolve(&Overrides {
        runtime_dir: g.runtime_dir.clone(),
        domain: g.domain,
        name: g.name.clone(),
    })
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
