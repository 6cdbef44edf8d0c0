//! `stead run NAME [--env K=V]... [-- ARGS...]`: start a run of a job now, with its own
//! environment and arguments, and, with `--wait`, exit as it did.
//!
//! Waiting follows the run through what carries it on: a genuine failure with retries
//! left is followed by its retry (after its delay), a cut run by its resume, so the exit
//! code is the last attempt's. `--follow` prints the output of each attempt as it is
//! written.

use std::path::Path;
use std::time::Instant;

use stead_client::{Client, ClientError, Connection, Follow};
use stead_protocol::{Run, RunParams, exit};

use super::output::{self, OutputArgs};
use super::{logs, runs};

#[derive(Debug, clap::Args)]
#[command(mut_arg("json", |json| json.help("Print the run as JSON (with --wait, the ended run)")))]
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
    #[command(flatten)]
    format: OutputArgs,
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
    let run = conn.run_with(&args.name, params)?;
    if !args.wait && !args.follow {
        output::show_with(&run, args.format, || format!("{}\n", runs::summary(&run)))?;
        return Ok(exit::SUCCESS);
    }
    let following = Following {
        client: &client,
        follow: args.follow,
        json: args.format.json,
    };
    if !run.status.is_terminal() {
        // Say which run it is before waiting, so a long wait can be followed elsewhere.
        following.say(&run)?;
    }
    let last = conn.wait_final(run, following)?;
    if args.follow {
        // stdout carried the output; the end is a status line like the others.
        following.say(&last.run)?;
    } else {
        output::show_with(&last.run, args.format, || {
            format!("{}\n", runs::summary(&last.run))
        })?;
    }
    Ok(last.exit_code())
}

/// How `stead run` follows a run to its final attempt: a line for each attempt as the
/// wait comes to it (not with `--json`, which prints the final attempt alone), and with
/// `--follow` each attempt's output on stdout, the lines on stderr.
#[derive(Clone, Copy)]
struct Following<'a> {
    client: &'a Client,
    follow: bool,
    json: bool,
}

impl Following<'_> {
    fn say(&self, run: &Run) -> std::io::Result<()> {
        if self.json {
            Ok(())
        } else if self.follow {
            eprintln!("{}", runs::summary(run));
            Ok(())
        } else {
            output::text(&format!("{}\n", runs::summary(run)))
        }
    }
}

impl Follow for Following<'_> {
    type Error = anyhow::Error;

    fn reconnect(&mut self) -> Result<Connection, ClientError> {
        super::connect(self.client)
    }

    fn wait_attempt(
        &mut self,
        conn: &mut Connection,
        run: Run,
        deadline: Option<Instant>,
    ) -> anyhow::Result<Run> {
        if self.follow {
            logs::print(self.client, conn, run, true)
        } else {
            Ok(conn.wait_ended(run, deadline, || super::connect(self.client))?)
        }
    }

    fn carried_on(&mut self, ended: &Run, next: &Run) -> anyhow::Result<()> {
        self.say(ended)?;
        // One that has already ended is told once, when the wait comes to its end.
        if !next.status.is_terminal() {
            self.say(next)?;
        }
        Ok(())
    }
}
