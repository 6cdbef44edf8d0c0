//! `stead checkpoint set|get|ls`: the durable key/value map of the run a command runs
//! inside of, kept under its idempotency key so its resume and retries see it (see
//! docs/checkpoints.md). The run is the one `STEAD_RUN_ID` names; a write also needs
//! its `STEAD_RUN_TOKEN`, and is answered once it is durable.

use std::io::Read;
use std::path::Path;

use clap::Subcommand;
use stead_client::{Client, ClientError, RunContext};
use stead_protocol::checkpoint::MAX_CHECKPOINT_VALUE_BYTES;
use stead_protocol::{Checkpoints, ErrorCode, exit};

use super::errors::DataError;
use super::output::{self, OutputArgs, Show};
use super::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: CheckpointCommand,
}

#[derive(Debug, Subcommand)]
enum CheckpointCommand {
    /// Set KEY to VALUE (or to what stdin holds) once it is durable; from inside a run
    Set(SetArgs),
    /// Print KEY's value (exit 1 when it is not set)
    Get(GetArgs),
    /// List the checkpoints and completed steps
    Ls(LsArgs),
}

#[derive(Debug, clap::Args)]
struct SetArgs {
    /// 1 to 128 letters, digits, '-', '_', '.', ':' or '/'
    key: String,
    /// At most 64 KiB of UTF-8 [default: stdin, as it is]
    value: Option<String>,
}

#[derive(Debug, clap::Args)]
struct GetArgs {
    key: String,
    /// Read the checkpoints of this run's idempotency key [default: $STEAD_RUN_ID]
    #[arg(long, value_name = "ID")]
    run: Option<i64>,
}

#[derive(Debug, clap::Args)]
struct LsArgs {
    /// Read the checkpoints of this run's idempotency key [default: $STEAD_RUN_ID]
    #[arg(long, value_name = "ID")]
    run: Option<i64>,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let context = RunContext::from_env();
    match args.command {
        CheckpointCommand::Set(a) => {
            let Some((run_id, token)) = writer(context.as_ref(), "stead checkpoint set") else {
                return Ok(exit::USAGE);
            };
            let value = match a.value {
                Some(value) => value,
                None => stdin_value()?,
            };
            let mut conn = super::connect(&Client::for_state_dir(dir)?)?;
            refused_fails(
                conn.checkpoint_set(run_id, token, &a.key, &value)
                    .map(|_| ()),
            )
        }
        CheckpointCommand::Get(a) => {
            let Some(run_id) = reader(a.run, context.as_ref(), "stead checkpoint get") else {
                return Ok(exit::USAGE);
            };
            let mut conn = super::connect(&Client::for_state_dir(dir)?)?;
            match conn.checkpoint_get(run_id, &a.key)? {
                Some(found) => {
                    let mut value = found.value;
                    if !value.ends_with('\n') {
                        value.push('\n');
                    }
                    output::text(&value)?;
                    Ok(exit::SUCCESS)
                }
                None => Ok(exit::FAILURE),
            }
        }
        CheckpointCommand::Ls(a) => {
            let Some(run_id) = reader(a.run, context.as_ref(), "stead checkpoint ls") else {
                return Ok(exit::USAGE);
            };
            let mut conn = super::connect(&Client::for_state_dir(dir)?)?;
            output::show(&conn.checkpoint_list(run_id)?, a.format)?;
            Ok(exit::SUCCESS)
        }
    }
}

/// The run and token a write comes from; `None` (said on stderr) outside any run.
pub(super) fn writer<'a>(context: Option<&'a RunContext>, command: &str) -> Option<(i64, &'a str)> {
    match context {
        Some(RunContext {
            run_id,
            token: Some(token),
        }) => Some((*run_id, token.as_str())),
        Some(RunContext { token: None, .. }) => {
            eprintln!(
                "{command}: STEAD_RUN_TOKEN is not set: only a run's own command may write (its monitor gives it the token); nothing was written"
            );
            None
        }
        None => {
            eprintln!(
                "{command}: not inside a stead run (STEAD_RUN_ID is not set); nothing was written"
            );
            None
        }
    }
}

/// The run a read is about: `--run`, else the run the command is inside of.
fn reader(run: Option<i64>, context: Option<&RunContext>, command: &str) -> Option<i64> {
    let found = run.or(context.map(|c| c.run_id));
    if found.is_none() {
        eprintln!(
            "{command}: not inside a stead run (STEAD_RUN_ID is not set); name one with --run ID"
        );
    }
    found
}

/// What stdin holds, as it is: UTF-8 only, and no more than a value may hold (read no
/// further than one byte past it, whatever is piped in).
fn stdin_value() -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    let limit = MAX_CHECKPOINT_VALUE_BYTES as u64 + 1;
    std::io::stdin().take(limit).read_to_end(&mut bytes)?;
    if bytes.len() > MAX_CHECKPOINT_VALUE_BYTES {
        return Err(DataError(format!(
            "limit reached: a checkpoint's value holds at most {MAX_CHECKPOINT_VALUE_BYTES} bytes (stdin holds more); nothing was written"
        ))
        .into());
    }
    String::from_utf8(bytes).map_err(|_| {
        DataError("a checkpoint's value is UTF-8 text; stdin held other bytes (encode them, e.g. with base64)".into())
            .into()
    })
}

/// A write the ledger refused because of who asked (a wrong token, a run that no longer
/// holds its key) exits 1 like any refusal, saying why; other errors go on as errors.
pub(super) fn refused_fails(result: Result<(), ClientError>) -> anyhow::Result<i32> {
    match result {
        Ok(()) => Ok(exit::SUCCESS),
        Err(ClientError::Server(body)) if body.code == ErrorCode::Unauthorized => {
            eprintln!("stead: {}", body.message);
            Ok(exit::FAILURE)
        }
        Err(e) => Err(e.into()),
    }
}

impl Show for Checkpoints {
    fn human(&self) -> String {
        let mut out = render::table(
            &["KEY", "VALUE", "SET BY", "SET AT"],
            self.checkpoints.iter().map(|c| {
                vec![
                    c.key.clone(),
                    render::truncate(&c.value, 48),
                    format!("run {}", c.run_id),
                    c.set_at.clone(),
                ]
            }),
        );
        out.push('\n');
        out.push_str(&render::table(
            &["STEP", "COMPLETED BY", "COMPLETED AT"],
            self.steps.iter().map(|s| {
                vec![
                    s.name.clone(),
                    format!("run {} (attempt {})", s.run_id, s.attempt),
                    s.completed_at.clone(),
                ]
            }),
        ));
        out
    }
}
