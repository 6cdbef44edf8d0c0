//! `stead run NAME [--env K=V]... [-- ARGS...]`: start a run of a job now, with its own
//! environment and arguments, and, with `--wait`, exit as it did.
//!
//! Waiting follows the run through what carries it on: a genuine failure with retries
//! left is followed by its retry (after its delay), a cut run by its resume, so the exit
//! code is the last attempt's. `--follow` prints the output of each attempt as it is
//! written.

use std::path::Path;
use std::time::{Duration, Instant};

use stead_client::{Client, Connection};
use stead_protocol::{Run, RunParams, RunStatus, exit};

use super::{logs, output, runs};

/// How often a cut run is looked at again until its debt is settled (resumed, or not).
const SETTLE_INTERVAL: Duration = Duration::from_millis(200);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The job's name
    name: String,
    /// Wait for the run to end (through its retries and a resume) and exit with its exit
    /// code
    #[arg(long)]
    wait: bool,
    /// Print the run's output as it is written, then exit with its exit code (implies
    /// --wait; status lines go to stderr)
    #[arg(long, short, conflicts_with = "json")]
    follow: bool,
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
    if !args.wait && !args.follow {
        if args.json {
            output::json(&run)?;
        } else {
            output::text(&format!("{}\n", runs::summary(&run)))?;
        }
        return Ok(exit::SUCCESS);
    }
    // What happens along the way: on stdout, unless stdout carries the run's output.
    let say = |line: String| -> std::io::Result<()> {
        if args.json {
            Ok(())
        } else if args.follow {
            eprintln!("{line}");
            Ok(())
        } else {
            output::text(&format!("{line}\n"))
        }
    };
    if !run.status.is_terminal() {
        // Say which run it is before waiting, so a long wait can be followed elsewhere.
        say(runs::summary(&run))?;
    }
    loop {
        run = if args.follow {
            logs::print(&client, &mut conn, run, true)?
        } else {
            ended(&client, &mut conn, run, None)?
        };
        run = settled(&client, &mut conn, run, None)?;
        let Some(next) = run.followed_by else {
            break;
        };
        say(runs::summary(&run))?;
        run = conn.run_get(next)?;
        // One that has already ended is told once, when the loop comes to it.
        if !run.status.is_terminal() {
            say(runs::summary(&run))?;
        }
    }
    if args.json {
        output::json(&run)?;
    } else {
        say(runs::summary(&run))?;
    }
    Ok(wait_exit_code(&run))
}

/// Waits until `run` has really ended (the server may answer a wait before the end: it
/// bounds how long it holds a call), or until `deadline` passes: the run as it is then.
pub fn ended(
    client: &Client,
    conn: &mut Connection,
    mut run: Run,
    deadline: Option<Instant>,
) -> anyhow::Result<Run> {
    while !run.status.is_terminal() {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|left| left.is_zero()) {
            break;
        }
        run = runs::wait(client, conn, run.id, left)?;
    }
    Ok(run)
}

/// An ended run once it is known whether another carries it on (`followed_by`): at
/// once for a failure (its retry is written with it), after the resume delay for a cut
/// run, whose debt is settled by a resume, a receipt (the run is then closed as
/// succeeded) or a decision not to resume it; or as it is when `deadline` passes.
pub fn settled(
    client: &Client,
    conn: &mut Connection,
    mut run: Run,
    deadline: Option<Instant>,
) -> anyhow::Result<Run> {
    while run.status == RunStatus::Interrupted
        && run.resolution.is_none()
        && run.followed_by.is_none()
        && deadline.is_none_or(|d| Instant::now() < d)
    {
        std::thread::sleep(SETTLE_INTERVAL);
        run = match conn.run_get(run.id) {
            Ok(run) => run,
            // The server went away meanwhile (a restart cuts runs): ask the next one.
            Err(_) => {
                *conn = super::connect(client)?;
                conn.run_get(run.id)?
            }
        };
    }
    Ok(run)
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
