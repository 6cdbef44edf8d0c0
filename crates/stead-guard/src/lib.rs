//! The guard: the restart gate made the only way through.
//!
//! `stead gate` waits until a restart of a service would cut nothing, but a gate that
//! can be forgotten is only a suggestion. The guard reads a shell command before it
//! runs (an agent's pre-tool-use hook, or any tool that asks `stead guard`) and refuses
//! one that would restart, stop or kill a guarded service unless the gate rides in the
//! same command, ahead of it in one `&&` chain (`stead gate --service web && systemctl
//! --user restart web`), so that a deferral stops the chain. `stead restart`, which
//! gates itself, always passes. A refusal names the exact command to run instead.
//!
//! The command is parsed as a real shell would parse it: quotes are removed before
//! matching (`pk'ill' stead` is `pkill stead`), scripts handed to `sh -c`, `eval` and
//! here-documents fed to a shell are read too, and so are command substitutions, while
//! a mention in data (an `echo`, a commit message, a quoted here-document) is left
//! alone. What the guard cannot read (a command that does not parse, a unit held in a
//! variable, a script piped into a shell) is refused when the command names a guarded
//! service anywhere, and allowed otherwise: a guard that lets through what it cannot
//! read is no guard, and one that refuses everything it cannot read is one nobody
//! keeps. The rules are in `docs/guard.md`.
//!
//! - [`check`] and [`hook`]: the verdict on a command, and the same as an agent's hook;
//! - `shell`: walking a command as the shell would run it, `words`: words with their
//!   quotes removed, `wrappers`: commands that run another command, `opts`: options read
//!   the way getopt reads them;
//! - `services`: what is guarded and the names a command reaches it by, `rules`: which
//!   command lines restart, stop or kill it, `kill`: killing by process name or pattern,
//!   `stead_cmd`: stead's own gate and stop;
//! - `refusal`: a refusal in words, with the command to run instead.

mod hook;
mod kill;
mod opts;
mod refusal;
mod rules;
mod services;
mod shell;
mod stead_cmd;
mod words;
mod wrappers;

#[cfg(test)]
mod tests;

use stead_protocol::ServiceSpec;

pub use hook::{HookAnswer, hook};

use refusal::{Finding, refusal, unparsable};
use services::{Guarded, plain};
use shell::Event;

/// The exit code of a refusal, from `stead guard` and its hook: agents read 2 from a
/// pre-tool-use hook as "block this call".
pub const EXIT_REFUSED: i32 = 2;

/// What the guard says of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Refuse {
        /// The first service it would reach ungated.
        service: String,
        /// The offending simple command, as written.
        matched: String,
        reason: String,
        /// The exact command to run instead.
        instead: String,
    },
}

/// Whether `command` may run, given the declared services (stead itself is always
/// guarded).
pub fn check(command: &str, services: &[ServiceSpec]) -> Verdict {
    let guarded = Guarded::all(services);
    let mentioning =
        |text: &str| -> Vec<&Guarded> { guarded.iter().filter(|g| g.mentioned_in(text)).collect() };
    match shell::events(command) {
        Ok(events) => {
            let mentioned = mentioning(&without_stead_own(command, &events));
            refusal(command, &findings(&events, &guarded, &mentioned))
        }
        Err(err) => unparsable(command, &err, &mentioning(&plain(command))),
    }
}

/// What the command runs that reaches a guarded service ungated. A hit that rests on a
/// word the guard cannot read, and anything it cannot read at all, count only for the
/// services the command mentions.
fn findings(events: &[Event], guarded: &[Guarded], mentioned: &[&Guarded]) -> Vec<Finding> {
    let is_mentioned = |name: &str| mentioned.iter().any(|g| g.name == name);
    let mut findings = Vec::new();
    for event in events {
        match event {
            Event::Command { argv, text, gated } => {
                for hit in rules::hits(argv, guarded) {
                    let name = &hit.service.name;
                    if gated.contains(name) || (hit.unsure.is_some() && !is_mentioned(name)) {
                        continue;
                    }
                    let verb = hit.act.verb();
                    let what = match &hit.unsure {
                        None => format!("it would {verb} the guarded service {name}"),
                        Some(word) => format!(
                            "it may {verb} the guarded service {name}: the guard cannot tell what `{word}` stands for, and the command mentions {name}"
                        ),
                    };
                    findings.push(Finding::new(name, Some(hit.act), text, what));
                }
            }
            Event::Opaque { text, why, gated } => {
                for service in mentioned.iter().filter(|g| !gated.contains(&g.name)) {
                    let name = &service.name;
                    let what = format!(
                        "the guard cannot read {why}, and the command mentions the guarded service {name}"
                    );
                    findings.push(Finding::new(name, None, text, what));
                }
            }
        }
    }
    findings
}

/// The command, quotes removed, without stead's own gates and restarts: `stead gate
/// && xargs kill` does not name stead any more than `xargs kill` does.
fn without_stead_own(command: &str, events: &[Event]) -> String {
    let mut text = plain(command);
    for event in events {
        if let Event::Command {
            argv, text: own, ..
        } = event
            && matches!(stead_cmd::subcommand(argv), Some(("gate" | "restart", _)))
        {
            text = text.replace(&plain(own), " ");
        }
    }
    text
}

/// Whether `text` names any guarded service: the guard's test for input it cannot read.
fn names_a_service(text: &str, services: &[ServiceSpec]) -> bool {
    let plain = plain(text);
    Guarded::all(services)
        .iter()
        .any(|g| g.mentioned_in(&plain))
}
