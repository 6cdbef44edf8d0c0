//! The guard: the restart gate made the only way through.
//!
//! `stead gate` waits until a restart of a service would cut nothing, but a gate that
//! can be forgotten is only a suggestion. The guard reads a shell command before it
//! runs (an agent's pre-tool-use hook, or any tool that asks `stead guard`) and refuses
//! one that would restart, stop or kill a guarded service unless a real, waiting gate
//! for it on the same ledger rides in the same command, ahead of it in one `&&` chain
//! (`stead gate --service web && systemctl --user restart web`), so that a deferral
//! stops the chain. `stead restart`, which gates itself, always passes. A refusal names
//! the exact command to run instead.
//!
//! It is a fail-closed decision, not a list of bad shapes. The command is read as a
//! shell would run it: braces expanded, quotes removed, variables the command assigns
//! substituted and split, aliases and functions it defines read where they are used,
//! wrappers, shells, tools that take commands, and interpreters looked through. What it
//! cannot read (an unknown program word, a target in an expansion, code in another
//! language) is refused when the command names a guarded service; what is too large or
//! nested too deep to read safely, or makes the reader fail, is refused outright. The
//! threat model, the rules and the limits are in `docs/guard.md`.
//!
//! - [`Guard`]: the verdict on a command and on an agent's hook call;
//! - `limits`: sizes, depths and budgets, and the reader's own thread;
//!   `continuation`: lines continued with a backslash, which the parser does not always
//!   join as the shell does;
//! - `shell`: walking a command as the shell would run it, `words`: what its words
//!   expand to, `programs`: what a command line runs besides itself, `opts`: options
//!   read the way getopt reads them;
//! - `services`: what is guarded and the names a command reaches it by, `rules`: which
//!   command lines restart, stop or kill it, `stead_cmd`: stead's own gate and stop;
//! - `refusal`: a refusal in words, with the command to run instead.

mod continuation;
mod hook;
mod limits;
mod opts;
mod programs;
mod refusal;
mod rules;
mod services;
mod shell;
mod stead_cmd;
mod words;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use stead_protocol::ServiceSpec;

pub use hook::HookAnswer;
pub use limits::{DEADLINE, MAX_COMMAND, MAX_NESTING, MAX_SUBSTITUTIONS, MAX_WORD_NESTING};
pub use stead_cmd::Protected;

use refusal::Finding;
use services::{Guarded, plain};
use shell::{Context, Event};

/// The exit code of a refusal, from `stead guard` and its hook: agents read 2 from a
/// pre-tool-use hook as "block this call".
pub const EXIT_REFUSED: i32 = 2;

/// What the guard says of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Refuse(Refusal),
}

/// Why a command may not run, and what to run instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The first service it would reach ungated; `None` when the command was refused
    /// without being read (too large, nested too deep, the reader failed).
    pub service: Option<String>,
    /// The offending simple command, as written (shortened when long).
    pub matched: String,
    pub reason: String,
    /// The exact command to run instead; `None` when there is none to give (a command
    /// that must first be rewritten so that it can be read).
    pub instead: Option<String>,
}

/// The guard for a set of declared services (stead itself is always guarded). Cheap
/// to clone.
#[derive(Clone)]
pub struct Guard {
    inner: Arc<Inner>,
}

struct Inner {
    guarded: Vec<Guarded>,
    dirs: Protected,
    deadline: Duration,
    /// Why the declarations could not be read, when they could not: then every
    /// command is refused.
    broken: Option<String>,
}

impl Guard {
    pub fn new(services: &[ServiceSpec]) -> Guard {
        // Declared restart commands are parsed too, on a reader's stack.
        let specs = services.to_vec();
        let read = limits::contained(limits::stack(0), limits::DEADLINE, move || {
            Guarded::all(&specs)
        });
        let (guarded, broken) = match read {
            Ok(guarded) => (guarded, None),
            Err(why) => (
                Guarded::all(&[]),
                Some(format!("the declared services: {why}")),
            ),
        };
        Guard {
            inner: Arc::new(Inner {
                guarded,
                dirs: Protected::default(),
                deadline: limits::DEADLINE,
                broken,
            }),
        }
    }

    /// Which ledger the guard protects, so that only a gate aimed at it counts.
    pub fn protecting(self, dirs: Protected) -> Guard {
        self.changed(|inner| inner.dirs = dirs)
    }

    /// How long one command may take to read before it is refused (10 seconds unless
    /// set).
    pub fn with_deadline(self, deadline: Duration) -> Guard {
        self.changed(|inner| inner.deadline = deadline)
    }

    fn changed(self, change: impl FnOnce(&mut Inner)) -> Guard {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            guarded: shared.guarded.clone(),
            dirs: shared.dirs.clone(),
            deadline: shared.deadline,
            broken: shared.broken.clone(),
        });
        change(&mut inner);
        Guard {
            inner: Arc::new(inner),
        }
    }

    /// Whether `command` may run.
    pub fn check(&self, command: &str) -> Verdict {
        if let Some(broken) = &self.inner.broken {
            return refusal::unread(command, broken);
        }
        if command.len() > MAX_COMMAND {
            let why = format!(
                "it is {} bytes long, more than the {MAX_COMMAND} the guard reads",
                command.len()
            );
            return refusal::unread(command, &why);
        }
        let substitutions = limits::substitutions(command);
        if substitutions > MAX_SUBSTITUTIONS {
            let why = format!(
                "it holds {substitutions} substitutions, more than the {MAX_SUBSTITUTIONS} the guard reads"
            );
            return refusal::unread(command, &why);
        }
        let stack = limits::stack(substitutions);
        let (guard, owned) = (self.clone(), command.to_owned());
        let read = move || guard.read(&owned, substitutions);
        match limits::contained(stack, self.inner.deadline, read) {
            Ok(verdict) => verdict,
            Err(why) => refusal::unread(command, &why),
        }
    }

    /// Answers one pre-tool-use hook call.
    pub fn hook(&self, input: &str) -> HookAnswer {
        hook::answer(self, input)
    }

    fn read(&self, command: &str, substitutions: usize) -> Verdict {
        let ctx = Context {
            max_substitutions: substitutions.max(limits::MIN_SUBSTITUTIONS),
            dirs: &self.inner.dirs,
            restart_programs: self
                .inner
                .guarded
                .iter()
                .flat_map(|g| g.restarts.iter().map(|r| r.program().to_owned()))
                .collect(),
            stead_redefined: stead_cmd::redefined(&plain(command)),
        };
        match shell::walk(command, &ctx) {
            Ok(walk) => {
                if let Some(limit) = walk.limit {
                    return refusal::unread(command, &limit);
                }
                let mentioned = self.mentioned(command, &walk.own);
                let findings = self.findings(&walk.events, &mentioned);
                refusal::verdict(command, &findings, &self.inner.dirs)
            }
            Err(e) if limits::unreadable(&e) => refusal::unread(command, &e),
            Err(e) => {
                let plain = plain(command);
                let named: Vec<&str> = self
                    .inner
                    .guarded
                    .iter()
                    .filter(|g| g.mentions(&plain) > 0)
                    .map(|g| g.name.as_str())
                    .collect();
                refusal::unparsable(command, &e, &named)
            }
        }
    }

    /// The services the command names, not counting stead's own gates and restarts:
    /// `stead gate && xargs kill` does not name stead any more than `xargs kill` does.
    fn mentioned(&self, command: &str, own: &[String]) -> Vec<&str> {
        let plain_command = plain(command);
        let own: Vec<String> = own.iter().map(|t| plain(t)).collect();
        self.inner
            .guarded
            .iter()
            .filter(|g| {
                let own: usize = own.iter().map(|t| g.mentions(t)).sum();
                g.mentions(&plain_command) > own
            })
            .map(|g| g.name.as_str())
            .collect()
    }

    /// What the command runs that reaches a guarded service ungated. A hit that rests
    /// on a word the guard cannot read, and anything it cannot read at all, count only
    /// for the services the command mentions; code in another language counts for the
    /// services it names.
    fn findings(&self, events: &[Event], mentioned: &[&str]) -> Vec<Finding> {
        let is_mentioned = |name: &str| mentioned.contains(&name);
        let own = rules::Own::of(&self.inner.dirs);
        let mut findings = Vec::new();
        for event in events {
            match event {
                Event::Command {
                    argv,
                    text,
                    gated,
                    lenient,
                } => {
                    for hit in rules::hits(argv, &self.inner.guarded, &own) {
                        let name = &hit.service.name;
                        let unsure_skipped =
                            hit.unsure.is_some() && (*lenient || !is_mentioned(name));
                        if gated.contains(name) || unsure_skipped {
                            continue;
                        }
                        findings.push(Finding::hit(&hit, text, &self.inner.dirs));
                    }
                }
                Event::Opaque { text, why, gated } => {
                    for name in mentioned.iter().filter(|n| !gated.contains(**n)) {
                        let what = format!(
                            "the guard cannot read {why}, and the command mentions the guarded service {name}"
                        );
                        findings.push(Finding::new(name, None, text, what, &self.inner.dirs));
                    }
                }
                Event::Code {
                    language,
                    code,
                    text,
                    gated,
                } => {
                    let code = plain(code);
                    for service in &self.inner.guarded {
                        let name = &service.name;
                        if gated.contains(name) || service.mentions(&code) == 0 {
                            continue;
                        }
                        let what = format!(
                            "it runs {language} code that mentions the guarded service {name}, and the guard does not read {language}"
                        );
                        findings.push(Finding::new(name, None, text, what, &self.inner.dirs));
                    }
                }
            }
        }
        findings
    }
}
