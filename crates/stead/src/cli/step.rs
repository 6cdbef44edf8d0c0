//! `stead step NAME -- CMD...`: runs CMD unless step NAME of the run it is inside of
//! completed already under its idempotency key, and records the step completed once CMD
//! exits 0. CMD's exit code is passed through; nothing of stead's own goes to stdout
//! (CMD's output is the step's).

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;

use stead_client::{Client, RunContext};
use stead_protocol::exit;

use super::checkpoint::{refused_fails, writer};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The step's name: 1 to 128 letters, digits, '-', '_', '.', ':' or '/'
    name: String,
    /// The command the step runs, and its arguments
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let context = RunContext::from_env();
    let Some((run_id, token)) = writer(context.as_ref(), "stead step") else {
        return Ok(exit::USAGE);
    };
    let client = Client::for_state_dir(dir)?;
    let mut conn = super::connect(&client)?;
    let state = conn.step_begin(run_id, token, &args.name);
    let state = match state {
        Ok(state) => state,
        Err(e) => return refused_fails(Err(e)),
    };
    if let Some(done) = state.completed {
        eprintln!(
            "stead: step {} completed already (run {}, attempt {}); skipped",
            args.name, done.run_id, done.attempt
        );
        return Ok(exit::SUCCESS);
    }
    let status = match Command::new(&args.command[0])
        .args(&args.command[1..])
        .status()
    {
        Ok(status) => status,
        Err(e) => {
            eprintln!("stead step: cannot run {:?}: {e}", args.command[0]);
            return Ok(if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            });
        }
    };
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => exit::FAILURE,
    };
    if code != 0 {
        return Ok(code);
    }
    // The command may have outlived the server that answered before it (a restart, an idle
    // connection closed): a lost connection or a stopping server is asked again, once, on
    // a fresh connection. Recording a completed step again keeps its first completion.
    let done = conn.again(&mut || super::connect(&client), |conn| {
        conn.step_done(run_id, token, &args.name)
    });
    refused_fails(done.map(|_| ()))
}
