//! The command line: one module per command, one place mapping errors to exit codes.

mod doctor;
mod errors;
mod output;
mod serve;
mod status;
mod stop;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use errors::report_error;

/// A job server that never loses a run.
#[derive(Debug, Parser)]
#[command(name = "stead", version, about, propagate_version = true)]
pub struct Cli {
    /// The state directory [default: $STEAD_STATE_DIR, else the platform's state directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the server serving the state directory, starting one if none serves
    Status(status::Args),
    /// Run the server in the foreground (what clients start on demand)
    Serve(serve::Args),
    /// Stop the server gracefully
    Stop(stop::Args),
    /// Diagnose the state directory: lock file, lease, socket, ledger
    Doctor(doctor::Args),
}

/// Runs a parsed command line and returns the exit code.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    let dir = cli.state_dir.as_deref();
    match cli.command {
        Command::Status(args) => status::run(dir, args),
        Command::Serve(args) => serve::run(dir, args),
        Command::Stop(args) => stop::run(dir, args),
        Command::Doctor(args) => doctor::run(dir, args),
    }
}
