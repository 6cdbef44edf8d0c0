//! `stead guard`: refuses a shell command that would restart, stop or kill a guarded
//! service without its gate, for an agent's pre-tool-use hook (`--hook`) or any other
//! tool (`stead guard -- 'CMD'`: exit 0 allowed, 2 refused).
//!
//! The hook path answers 2 whatever goes wrong: agents read any other exit code as
//! "not blocked", so an input too large, a failure to read stdin or a panic must end
//! in a denial, never in a crash that lets the call through.

use std::io::{Read, Write};
use std::path::Path;

use serde_json::json;
use stead_client::paths::StatePaths;
use stead_client::{Client, ClientError};
use stead_guard::{EXIT_REFUSED, Guard, HookAnswer, MAX_COMMAND, Protected, Refusal, Verdict};
use stead_protocol::{ErrorCode, Service, ServiceSpec, exit};

use super::output::{self, OutputArgs};

/// The largest tool call the hook reads: a command at the guard's limit, escaped.
const MAX_HOOK_INPUT: u64 = 2 * MAX_COMMAND as u64 + 1;

#[derive(Debug, clap::Args)]
#[command(mut_arg("json", |json| json.help("Print the verdict as JSON on stdout")))]
pub struct Args {
    #[command(flatten)]
    format: OutputArgs,
    /// Answer an agent's pre-tool-use hook: the tool call as JSON on stdin; exit 0 to
    /// allow it, 2 to deny it (the reason on stderr, the decision as JSON on stdout)
    #[arg(long, conflicts_with = "command")]
    hook: bool,
    /// The shell command to check, after `--` (several words are joined with spaces)
    #[arg(last = true, required_unless_present = "hook", value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    // A panic while reading a command is a refusal that says so; the default hook
    // would print it a second time.
    std::panic::set_hook(Box::new(|_| {}));
    if args.hook {
        let answer = std::panic::catch_unwind(|| hook(dir)).unwrap_or_else(|_| {
            HookAnswer::deny("stead guard: the guard failed while answering; the call is denied")
        });
        output::text(&answer.stdout)?;
        say(&answer.stderr);
        return Ok(answer.exit_code);
    }
    let verdict = guard(dir).check(&args.command.join(" "));
    // Not one value shown two ways: a refusal is told to a person on stderr (stdout
    // stays empty), to a program as JSON on stdout.
    match (verdict, args.format.json) {
        (Verdict::Allow, false) => output::text("allowed\n")?,
        (Verdict::Allow, true) => output::json(&json!({ "allowed": true }))?,
        (Verdict::Refuse(refusal), true) => {
            let Refusal {
                service,
                matched,
                reason,
                instead,
            } = refusal;
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
        (Verdict::Refuse(refusal), false) => {
            let next = match &refusal.instead {
                Some(instead) => format!("run instead: {instead}"),
                None => "no command to suggest: make it readable first".to_owned(),
            };
            say(&format!(
                "stead guard: refused: {}\n{next}\n",
                refusal.reason
            ));
            return Ok(EXIT_REFUSED);
        }
    }
    Ok(exit::SUCCESS)
}

/// Answers one hook call from stdin.
fn hook(dir: Option<&Path>) -> HookAnswer {
    let mut input = Vec::new();
    let read = std::io::stdin()
        .take(MAX_HOOK_INPUT)
        .read_to_end(&mut input);
    if let Err(e) = read {
        return HookAnswer::deny(&format!("stead guard: cannot read the tool call ({e})"));
    }
    if input.len() as u64 >= MAX_HOOK_INPUT {
        return HookAnswer::deny(&format!(
            "stead guard: the tool call is larger than the {MAX_HOOK_INPUT} bytes the guard reads"
        ));
    }
    guard(dir).hook(&String::from_utf8_lossy(&input))
}

/// The guard for the declared services, aimed at this state directory's ledger.
fn guard(dir: Option<&Path>) -> Guard {
    let own = StatePaths::resolve(dir).ok();
    let dirs = Protected {
        state_dir: own.as_ref().map(|p| p.dir().to_path_buf()),
        default_state_dir: StatePaths::chosen(None).ok(),
        socket: own.as_ref().map(|p| p.socket().to_path_buf()),
        exe: super::daemon::client_program(),
    };
    Guard::new(&declared(dir)).protecting(dirs)
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
