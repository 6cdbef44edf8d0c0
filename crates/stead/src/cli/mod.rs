//! The command line: one module per command, one place mapping errors to exit codes.

mod apply;
mod cancel;
mod checkpoint;
mod completions;
mod cron;
pub(crate) mod daemon;
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
mod secret;
mod serve;
mod service;
pub(crate) mod show;
mod sleeps;
mod status;
mod step;
mod stop;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use errors::{report_daemon_error, report_error};
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
    Status(Deferred<status::Args>),
    /// Run the server in the foreground (what clients start on demand)
    Serve(Deferred<serve::Args>),
    /// Stop the server gracefully
    Stop(Deferred<stop::Args>),
    /// Diagnose the state directory: lock file, lease, socket, ledger
    Doctor(Deferred<doctor::Args>),
    /// Add, list, show, remove, enable and disable jobs
    Job(Deferred<job::Args>),
    /// Make the jobs match a job file (`[[job]]` tables)
    Apply(Deferred<apply::Args>),
    /// Open the web dashboard: print its URL (with the token), starting the HTTP API on a
    /// free loopback port if it is off
    Dashboard(Deferred<dashboard::Args>),
    /// Preview cron expressions (no server needed)
    Cron(Deferred<cron::Args>),
    /// Run a job now
    Run(Deferred<run::Args>),
    /// List runs, newest first
    Runs(Deferred<runs::Args>),
    /// Show one run
    Show(Deferred<show::Args>),
    /// Print a run's output
    Logs(Deferred<logs::Args>),
    /// Cancel a queued or running run
    Cancel(Deferred<cancel::Args>),
    /// Inside a run: a durable key/value map its resume and retries see (set, get, ls)
    Checkpoint(Deferred<checkpoint::Args>),
    /// Inside a run: run a command unless this step completed already (its resume and
    /// retries skip it)
    Step(Deferred<step::Args>),
    /// Remove old runs and run logs now, by the retention rules (--dry-run: only say)
    Prune(Deferred<prune::Args>),
    /// The hosts sharing the ledger, which one leads the scheduler, their heartbeats
    Hosts(Deferred<hosts::Args>),
    /// The sleeps the machine woke from, newest first: when and how long
    Sleeps(Deferred<sleeps::Args>),
    /// Declare, list and remove the services runs depend on
    Service(Deferred<service::Args>),
    /// Limit how many runs of a group of jobs go at once: set, list and remove queues
    Queue(Deferred<queue::Args>),
    /// Keep secrets on this host for jobs' runs (never in the ledger): set, list, remove
    Secret(Deferred<secret::Args>),
    /// Send events about runs (failures, cut runs not resumed, ...) to webhooks: add,
    /// list, remove and test notifiers
    Notify(Deferred<notify::Args>),
    /// Hold a service while mid-work on it, so a restart of it waits
    Hold(Deferred<hold::Args>),
    /// Show what a restart of a service would cut now
    Readiness(Deferred<gate::ReadinessArgs>),
    /// Wait until a restart of a service would cut nothing (exit 0), or time out (exit 75)
    Gate(Deferred<gate::GateArgs>),
    /// Restart stead or a declared service: the gate, the restart, then proof it is back
    Restart(Deferred<restart::Args>),
    /// Refuse a shell command that would restart a guarded service without the gate
    /// (exit 2), or answer an agent's pre-tool-use hook (--hook)
    Guard(Deferred<guard::Args>),
    /// Write a user service (systemd unit or launchd agent) that runs the server
    Install(Deferred<install::InstallArgs>),
    /// Remove the user service `stead install` wrote
    Uninstall(Deferred<install::UninstallArgs>),
    /// Print the completion script for a shell
    Completions(Deferred<completions::CompletionsArgs>),
    /// Print the man page, or write all of them into a directory (--dir)
    Man(Deferred<completions::ManArgs>),
    /// Serve stead's tools to an AI agent over the Model Context Protocol (stdio)
    #[cfg(feature = "mcp")]
    Mcp(Deferred<mcp::Args>),
    /// Watch one run (started by the server; reads its plan on stdin)
    #[command(hide = true)]
    Monitor,
    /// Fork runs' monitors on the server's request (started by the server; its control
    /// socket is stdin)
    #[command(hide = true)]
    Spawner,
}

/// A command's arguments, built into its part of the command tree only when that command
/// is the one run (or help, completions or a man page need them all). Built eagerly, the
/// tree of every command and flag was most of what the client did before its socket's
/// first byte: heap for every argument of thirty commands, then dropped.
#[derive(Debug)]
pub struct Deferred<T>(pub T);

impl<T: clap::Args> clap::Args for Deferred<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.defer(T::augment_args)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        cmd.defer(T::augment_args_for_update)
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T: clap::FromArgMatches> clap::FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Deferred)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
}

/// The commands `steadd` runs itself (the rest are `stead`'s, which `steadd` refuses).
const DAEMON_COMMANDS: &[&str] = &[
    "serve",
    "doctor",
    "guard",
    "completions",
    "man",
    "mcp",
    "monitor",
    "spawner",
    "help",
];

impl Cli {
    /// The command line as `steadd` reads it: `stead`'s grammar (a command `stead` hands
    /// over parses alike), with the commands that are `stead`'s left out of the help.
    pub fn parse_daemon() -> Cli {
        use clap::FromArgMatches;
        let mut command = daemon_command();
        let matches = command.get_matches_mut();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit())
    }
}

fn daemon_command() -> clap::Command {
    use clap::CommandFactory;
    let command = Cli::command().about(
        "stead's daemon program: the server, run monitors, and the commands stead hands \
         it. Everything else is run with stead (`stead --help`).",
    );
    let clients: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|name| !DAEMON_COMMANDS.contains(&name.as_str()))
        .collect();
    clients.into_iter().fold(command, |command, name| {
        command.mut_subcommand(name, |c| c.hide(true))
    })
}

impl Command {
    /// The daemon, a run's monitor and the spawner of monitors live long and start other
    /// processes: they begin with only stdin, stdout and stderr (see `fds.rs`).
    pub fn is_long_lived(&self) -> bool {
        matches!(
            self,
            Command::Serve(_) | Command::Monitor | Command::Spawner
        )
    }
}

/// Runs a command of the client program (`stead`) and returns the exit code; the
/// daemon's commands are handed over to `steadd` (see the library's documentation).
pub fn run_client(cli: Cli) -> anyhow::Result<i32> {
    let dir = cli.state_dir.as_deref();
    match cli.command {
        Command::Status(Deferred(args)) => status::run(dir, args),
        Command::Stop(Deferred(args)) => stop::run(dir, args),
        Command::Hosts(Deferred(args)) => hosts::run(dir, args),
        Command::Dashboard(Deferred(args)) => dashboard::run(dir, args),
        Command::Job(Deferred(args)) => job::run(dir, args),
        Command::Apply(Deferred(args)) => apply::run(dir, args),
        Command::Cron(Deferred(args)) => cron::run(dir, args),
        Command::Run(Deferred(args)) => run::run(dir, args),
        Command::Runs(Deferred(args)) => runs::run(dir, args),
        Command::Show(Deferred(args)) => show::run(dir, args),
        Command::Logs(Deferred(args)) => logs::run(dir, args),
        Command::Cancel(Deferred(args)) => cancel::run(dir, args),
        Command::Checkpoint(Deferred(args)) => checkpoint::run(dir, args),
        Command::Step(Deferred(args)) => step::run(dir, args),
        Command::Prune(Deferred(args)) => prune::run(dir, args),
        Command::Sleeps(Deferred(args)) => sleeps::run(dir, args),
        Command::Service(Deferred(args)) => service::run(dir, args),
        Command::Queue(Deferred(args)) => queue::run(dir, args),
        Command::Notify(Deferred(args)) => notify::run(dir, args),
        Command::Secret(Deferred(args)) => secret::run(dir, args),
        Command::Hold(Deferred(args)) => hold::run(dir, args),
        Command::Readiness(Deferred(args)) => gate::readiness(dir, args),
        Command::Gate(Deferred(args)) => gate::run(dir, args),
        Command::Restart(Deferred(args)) => restart::run(dir, args),
        Command::Install(Deferred(args)) => install::install(dir, args),
        Command::Uninstall(Deferred(args)) => install::uninstall(dir, args),
        command @ (Command::Serve(_)
        | Command::Doctor(_)
        | Command::Guard(_)
        | Command::Completions(_)
        | Command::Man(_)
        | Command::Monitor) => Ok(daemon::hand_over(&command)),
        #[cfg(feature = "mcp")]
        command @ Command::Mcp(_) => Ok(daemon::hand_over(&command)),
        command @ Command::Spawner => Ok(daemon::hand_over(&command)),
    }
}

/// Runs a command of the daemon program (`steadd`) and returns the exit code; the
/// client's commands are refused there (they belong to `stead`).
pub fn run_daemon(cli: Cli) -> anyhow::Result<i32> {
    let dir = cli.state_dir.as_deref();
    match cli.command {
        Command::Serve(Deferred(args)) => serve::run(dir, args),
        Command::Doctor(Deferred(args)) => doctor::run(dir, args),
        Command::Guard(Deferred(args)) => guard::run(dir, args),
        Command::Completions(Deferred(args)) => completions::completions(args),
        Command::Man(Deferred(args)) => completions::man(args),
        #[cfg(feature = "mcp")]
        Command::Mcp(Deferred(args)) => mcp::run(dir, args),
        Command::Monitor => Ok(monitor::run()),
        Command::Spawner => Ok(stead_monitor::spawner::serve()),
        _ => Ok(daemon::refuse_client_command()),
    }
}

/// Connects to the state directory's server, starting the daemon program beside this one
/// when none serves.
pub(crate) fn connect(client: &Client) -> Result<Connection, ClientError> {
    // Looked for only when no server answers: a server already serving is reached
    // whatever is (or is not) beside this program.
    let daemon = daemon::sibling_daemon().map_err(ClientError::Io)?;
    client
        .connect_or_start(&daemon)
        .map_err(|e| match daemon::program() {
            Err(missing) => missing,
            Ok(_) => e,
        })
}

#[cfg(test)]
mod tests {
    use super::{DAEMON_COMMANDS, daemon_command};

    #[test]
    fn the_daemons_help_lists_its_own_commands_only() {
        let command = daemon_command();
        let shown: Vec<&str> = command
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name())
            .collect();
        for name in ["serve", "doctor", "guard", "completions", "man"] {
            assert!(shown.contains(&name), "{name} missing from {shown:?}");
        }
        for name in ["status", "run", "job", "logs"] {
            assert!(!shown.contains(&name), "{name} shown in {shown:?}");
        }
        // Every name in the list is a command, so a renamed one is not silently hidden.
        let all: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
        for name in DAEMON_COMMANDS.iter().filter(|n| **n != "help") {
            let cfg_gated = matches!(*name, "mcp" | "spawner");
            assert!(cfg_gated || all.contains(name), "{name} is not a command");
        }
    }
}
