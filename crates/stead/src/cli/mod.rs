//! The command line: one module per command, one place mapping errors to exit codes.

mod apply;
mod cancel;
mod completions;
mod cron;
mod dashboard;
mod doctor;
mod errors;
mod gate;
mod guard;
mod hold;
mod hosts;
mod install;
mod job;
mod logs;
#[cfg(feature = "mcp")]
mod mcp;
mod monitor;
mod notify;
mod output;
mod prune;
mod queue;
pub(crate) mod render;
mod restart;
mod run;
mod runs;
mod serve;
mod service;
mod show;
mod status;
mod stop;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use errors::report_error;
use stead_client::{Client, ClientError, Connection};

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
    /// Add, list, show, remove, enable and disable jobs
    Job(job::Args),
    /// Make the jobs match a job file (`[[job]]` tables)
    Apply(apply::Args),
    /// Open the web dashboard: print its URL (with the token), starting the HTTP API on a
    /// free loopback port if it is off
    Dashboard(dashboard::Args),
    /// Preview cron expressions (no server needed)
    Cron(cron::Args),
    /// Run a job now
    Run(run::Args),
    /// List runs, newest first
    Runs(runs::Args),
    /// Show one run
    Show(show::Args),
    /// Print a run's output
    Logs(logs::Args),
    /// Cancel a queued or running run
    Cancel(cancel::Args),
    /// Remove old runs and run logs now, by the retention rules (--dry-run: only say)
    Prune(prune::Args),
    /// The hosts sharing the ledger, which one leads the scheduler, their heartbeats
    Hosts(hosts::Args),
    /// Declare, list and remove the services runs depend on
    Service(service::Args),
    /// Limit how many runs of a group of jobs go at once: set, list and remove queues
    Queue(queue::Args),
    /// Send events about runs (failures, cut runs not resumed, ...) to webhooks: add,
    /// list, remove and test notifiers
    Notify(notify::Args),
    /// Hold a service while mid-work on it, so a restart of it waits
    Hold(hold::Args),
    /// Show what a restart of a service would cut now
    Readiness(gate::ReadinessArgs),
    /// Wait until a restart of a service would cut nothing (exit 0), or time out (exit 75)
    Gate(gate::GateArgs),
    /// Restart stead or a declared service: the gate, the restart, then proof it is back
    Restart(restart::Args),
    /// Refuse a shell command that would restart a guarded service without the gate
    /// (exit 2), or answer an agent's pre-tool-use hook (--hook)
    Guard(guard::Args),
    /// Write a user service (systemd unit or launchd agent) that runs the server
    Install(install::InstallArgs),
    /// Remove the user service `stead install` wrote
    Uninstall(install::UninstallArgs),
    /// Print the completion script for a shell
    Completions(completions::CompletionsArgs),
    /// Print the man page, or write all of them into a directory (--dir)
    Man(completions::ManArgs),
    /// Serve stead's tools to an AI agent over the Model Context Protocol (stdio)
    #[cfg(feature = "mcp")]
    Mcp(mcp::Args),
    /// Watch one run (started by the server; reads its plan on stdin)
    #[command(hide = true)]
    Monitor,
    /// Fork runs' monitors on the server's request (started by the server; its control
    /// socket is stdin)
    #[cfg(target_os = "linux")]
    #[command(hide = true)]
    Spawner,
}

/// Runs a parsed command line and returns the exit code.
impl Command {
    /// The daemon, a run's monitor and the spawner of monitors live long and start other
    /// processes: they begin with only stdin, stdout and stderr (see `fds.rs`).
    pub fn is_long_lived(&self) -> bool {
        match self {
            Command::Serve(_) | Command::Monitor => true,
            #[cfg(target_os = "linux")]
            Command::Spawner => true,
            _ => false,
        }
    }
}

pub fn run(cli: Cli) -> anyhow::Result<i32> {
    let dir = cli.state_dir.as_deref();
    match cli.command {
        Command::Status(args) => status::run(dir, args),
        Command::Serve(args) => serve::run(dir, args),
        Command::Stop(args) => stop::run(dir, args),
        Command::Hosts(args) => hosts::run(dir, args),
        Command::Dashboard(args) => dashboard::run(dir, args),
        Command::Doctor(args) => doctor::run(dir, args),
        Command::Job(args) => job::run(dir, args),
        Command::Apply(args) => apply::run(dir, args),
        Command::Cron(args) => cron::run(dir, args),
        Command::Run(args) => run::run(dir, args),
        Command::Runs(args) => runs::run(dir, args),
        Command::Show(args) => show::run(dir, args),
        Command::Logs(args) => logs::run(dir, args),
        Command::Cancel(args) => cancel::run(dir, args),
        Command::Prune(args) => prune::run(dir, args),
        Command::Service(args) => service::run(dir, args),
        Command::Queue(args) => queue::run(dir, args),
        Command::Notify(args) => notify::run(dir, args),
        Command::Hold(args) => hold::run(dir, args),
        Command::Readiness(args) => gate::readiness(dir, args),
        Command::Gate(args) => gate::run(dir, args),
        Command::Restart(args) => restart::run(dir, args),
        Command::Guard(args) => guard::run(dir, args),
        Command::Install(args) => install::install(dir, args),
        Command::Uninstall(args) => install::uninstall(dir, args),
        Command::Completions(args) => completions::completions(args),
        Command::Man(args) => completions::man(args),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => mcp::run(dir, args),
        Command::Monitor => Ok(monitor::run()),
        #[cfg(target_os = "linux")]
        Command::Spawner => Ok(stead_monitor::spawner::serve()),
    }
}

/// Connects to the state directory's server, starting this very binary's `serve` when
/// none serves.
pub(crate) fn connect(client: &Client) -> Result<Connection, ClientError> {
    client.connect_or_start(&std::env::current_exe()?)
}
