//! `stead guard`: refuses a shell command that would restart, stop or kill a guarded
//! service without its gate, for an agent's pre-tool-use hook (`--hook`) or any other
//! tool (`stead guard -- 'CMD'`: exit 0 allowed, 2 refused).

use std::io::{Read, Write};
use std::path::Path;

use serde_json::json;
use stead_client::{Client, ClientError};
use stead_guard::{self as guard, EXIT_REFUSED, Verdict};
use stead_protocol::{ErrorCode, Service, ServiceSpec, exit};

use super::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the verdict as JSON on stdout
    #[arg(long)]
    json: bool,
    /// Answer an agent's pre-tool-use hook: the tool call as JSON on stdin; exit 0 to
    /// allow it, 2 to deny it (the reason on stderr, the decision as JSON on stdout)
    #[arg(long, conflicts_with = "command")]
    hook: bool,
    /// The shell command to check, after `--` (several words are joined with spaces)
    #[arg(last = true, required_unless_present = "hook", value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    if args.hook {
        let mut input = Vec::new();
        std::io::stdin().read_to_end(&mut input)?;
        let answer = guard::hook(&String::from_utf8_lossy(&input), &declared(dir));
        output::text(&answer.stdout)?;
        say(&answer.stderr);
        return Ok(answer.exit_code);
    }
    let verdict = guard::check(&args.command.join(" "), &declared(dir));
    match (verdict, args.json) {
        (Verdict::Allow, false) => output::text("allowed\n")?,
        (Verdict::Allow, true) => output::json(&json!({ "allowed": true }))?,
        (
            Verdict::Refuse {
                service,
                matched,
                reason,
                instead,
            },
            true,
        ) => {
            let refusal = json!({
                "allowed": false,
                "service": service,
                "matched": matched,
                "reason": reason,
                "instead": instead,
            });
            output::json(&refusal)?;
            return Ok(EXIT_REFUSED);
        }
        (
            Verdict::Refuse {
                reason, instead, ..
            },
            false,
        ) => {
            say(&format!(
                "stead guard: refused: {reason}\nrun instead: {instead}\n"
            ));
            return Ok(EXIT_REFUSED);
        }
    }
    Ok(exit::SUCCESS)
}

/// The declared services. When they cannot be read, stead itself is still guarded:
/// a server that does not answer has no runs in flight to cut, which is also why its
/// gate lets a restart through then.
fn declared(dir: Option<&Path>) -> Vec<ServiceSpec> {
    match list(dir) {
        Ok(services) => services.into_iter().map(|s| s.spec).collect(),
        Err(err) => {
            let why = match &err {
                ClientError::Server(body) if body.code == ErrorCode::UnknownMethod => {
                    "this server does not list services".to_owned()
                }
                other => other.to_string(),
            };
            say(&format!("stead guard: guarding only stead ({why})\n"));
            Vec::new()
        }
    }
}

fn list(dir: Option<&Path>) -> Result<Vec<Service>, ClientError> {
    super::connect(&Client::for_state_dir(dir)?)?.service_list()
}

/// Writes to stderr; a closed stderr is no reason to fail a verdict.
fn say(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}
