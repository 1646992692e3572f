//! `tf_shm`: see, check and debug the shared TF tree. All behaviour lives in the library.

use clap::Parser;

fn main() -> std::process::ExitCode {
    tf_shm_cli::run(tf_shm_cli::cli::Cli::parse())
}
