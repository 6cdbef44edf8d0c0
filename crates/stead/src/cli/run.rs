//! `stead run NAME [--env K=V]... [-- ARGS...]`: start a run of a job now, with its own
//! environment and arguments, and, with `--wait`, exit as it did.

use std::path::Path;

use stead_client::Client;
use stead_protocol::{Run, RunParams, RunStatus, exit};

use super::output;
use super::runs;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The job to run
    name: String,
    /// Wait for the run to end and exit with its exit code (128+N if killed by signal N)
    #[arg(long)]
    wait: bool,
    /// Print the run as JSON (with --wait, the ended run)
    #[arg(long)]
    json: bool,
    /// An environment variable for this run only; repeat for more (a later K wins)
    #[arg(long = "env", value_name = "K=V", value_parser = super::job::env_pair)]
    env: Vec<(String, String)>,
    /// Arguments appended to the command for this run only (a shell job's `$@`), after `--`
    #[arg(last = true, value_name = "ARGS")]
    args: Vec<String>,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let mut conn = super::connect(&client)?;
    let params = RunParams {
        env: args.env.into_iter().collect(),
        args: args.args,
    };
    let mut run = conn.run_with(&args.name, params)?;
    if !args.wait {
        if args.json {
            output::json(&run)?;
        } else {
            output::text(&format!("{}\n", runs::summary(&run)))?;
        }
        return Ok(exit::SUCCESS);
    }
    if !args.json && !run.status.is_terminal() {
        // Say which run it is before waiting, so a long wait can be followed elsewhere.
        output::text(&format!("{}\n", runs::summary(&run)))?;
    }
    // The server may answer a wait before the end (it bounds how long it holds a call),
    // so wait until the run is really over.
    while !run.status.is_terminal() {
        run = runs::wait(&client, &mut conn, run.id, None)?;
    }
    if args.json {
        output::json(&run)?;
    } else {
        output::text(&format!("{}\n", runs::summary(&run)))?;
    }
    Ok(wait_exit_code(&run))
}

/// The exit code of `stead run --wait`, as a shell would report the command: its own
/// exit code, 128+N when signal N killed it, and 1 for any other ending that is not a
/// success (cancelled before it started, interrupted, skipped, failed to start).
fn wait_exit_code(run: &Run) -> i32 {
    if run.status == RunStatus::Succeeded {
        return exit::SUCCESS;
    }
    match (run.exit_code, run.signal) {
        // An exit code of 0 on a run that did not succeed (a cancelled command that
        // exited cleanly on SIGTERM) must not read as success.
        (Some(code), _) if (1..=255).contains(&code) => code,
        (_, Some(signal)) if (1..=127).contains(&signal) => 128 + signal,
        _ => exit::FAILURE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::runs::tests::sample_run;

    fn ended(status: RunStatus, exit_code: Option<i32>, signal: Option<i32>) -> Run {
        let mut run = sample_run(1, status);
        run.exit_code = exit_code;
        run.signal = signal;
        run
    }

    #[test]
    fn wait_exits_as_the_command_did() {
        assert_eq!(
            wait_exit_code(&ended(RunStatus::Succeeded, Some(0), None)),
            0
        );
        assert_eq!(wait_exit_code(&ended(RunStatus::Failed, Some(3), None)), 3);
        assert_eq!(
            wait_exit_code(&ended(RunStatus::Failed, Some(255), None)),
            255
        );
        assert_eq!(
            wait_exit_code(&ended(RunStatus::Failed, None, Some(9))),
            137
        );
        assert_eq!(
            wait_exit_code(&ended(RunStatus::Cancelled, None, Some(15))),
            143
        );
    }

    #[test]
    fn other_endings_exit_1() {
        assert_eq!(wait_exit_code(&ended(RunStatus::Cancelled, None, None)), 1);
        assert_eq!(
            wait_exit_code(&ended(RunStatus::Cancelled, Some(0), None)),
            1
        );
        assert_eq!(
            wait_exit_code(&ended(RunStatus::Interrupted, None, None)),
            1
        );
        assert_eq!(wait_exit_code(&ended(RunStatus::Skipped, None, None)), 1);
        assert_eq!(wait_exit_code(&ended(RunStatus::Failed, None, None)), 1);
        assert_eq!(wait_exit_code(&ended(RunStatus::Failed, Some(-1), None)), 1);
    }
}
