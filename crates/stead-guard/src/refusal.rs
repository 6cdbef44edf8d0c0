//! A refusal in words: what the offending command would do, why the guard stops it, and
//! the exact command to run instead (the gates ahead of the original, or for a lone
//! restart of stead, `stead restart`). A command refused unread gets no suggestion: it
//! must first be made readable.

use stead_protocol::STEAD_SERVICE;

use super::rules::{Act, Hit};
use super::shell;
use super::stead_cmd::Protected;
use super::{Refusal, Verdict};

/// How much of a command a refusal quotes.
const QUOTED: usize = 240;

/// One refused simple command.
pub(crate) struct Finding {
    service: String,
    act: Option<Act>,
    matched: String,
    reason: String,
}

impl Finding {
    pub fn new(
        service: &str,
        act: Option<Act>,
        matched: &str,
        what: String,
        dirs: &Protected,
    ) -> Finding {
        let reason = format!(
            "{what}; no `{gate}` runs before it in the same `&&` chain to wait until that would cut nothing",
            gate = dirs.gate_for(service)
        );
        Finding {
            service: service.to_owned(),
            act,
            matched: shortened(matched.trim()),
            reason,
        }
    }

    pub fn hit(hit: &Hit<'_>, matched: &str, dirs: &Protected) -> Finding {
        let name = &hit.service.name;
        let verb = hit.act.verb();
        let what = match (&hit.unsure, hit.because) {
            (None, None) => format!("it would {verb} the guarded service {name}"),
            (None, Some(because)) => {
                format!("it would {verb} the guarded service {name} ({because})")
            }
            (Some(word), _) => format!(
                "it may {verb} the guarded service {name}: the guard cannot tell what `{word}` stands for, and the command mentions {name}"
            ),
        };
        Finding::new(name, Some(hit.act), matched, what, dirs)
    }
}

/// A long command cut to its first characters.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

pub(crate) fn verdict(command: &str, findings: &[Finding], dirs: &Protected) -> Verdict {
    let Some(first) = findings.first() else {
        return Verdict::Allow;
    };
    let mut services: Vec<&str> = Vec::new();
    for finding in findings {
        if !services.contains(&finding.service.as_str()) {
            services.push(&finding.service);
        }
    }
    // A lone restart or kill of stead is what `stead restart` does, gated; anything
    // more (a stop, a build before it) keeps its own words behind the gate.
    let lone = findings.iter().all(|f| {
        f.service == STEAD_SERVICE
            && matches!(f.act, Some(Act::Restart | Act::Kill))
            && f.matched == command.trim()
    });
    let instead = if lone {
        dirs.command("restart")
    } else {
        let gates: Vec<String> = services.iter().map(|s| dirs.gate_for(s)).collect();
        format!("{} && {}", gates.join(" && "), chainable(command))
    };
    Verdict::Refuse(Refusal {
        service: Some(first.service.clone()),
        matched: first.matched.clone(),
        reason: first.reason.clone(),
        instead: Some(instead),
    })
}

/// A command refused without being read.
pub(crate) fn unread(command: &str, why: &str) -> Verdict {
    Verdict::Refuse(Refusal {
        service: None,
        matched: shortened(command.trim()),
        reason: format!(
            "the guard refuses what it cannot read, and cannot read this command: {why}; split it into smaller commands"
        ),
        instead: None,
    })
}

/// A command that does not parse: refused when it names a guarded service.
pub(crate) fn unparsable(command: &str, err: &str, named: &[&str]) -> Verdict {
    let Some(first) = named.first() else {
        return Verdict::Allow;
    };
    Verdict::Refuse(Refusal {
        service: Some((*first).to_owned()),
        matched: shortened(command.trim()),
        reason: format!(
            "the command does not parse as a shell command ({err}), and it mentions the guarded service {first}: the guard refuses what it cannot read; rewrite it so that it parses"
        ),
        instead: None,
    })
}

/// The command as one link of an `&&` chain: as it is if it is one chain already,
/// else grouped, so that a failing gate stops all of it.
fn chainable(command: &str) -> String {
    let mut command = command.trim();
    // A backslash at the very end continues the line into nothing: drop it, or it
    // would join the closing brace.
    let backslashes = command.len() - command.trim_end_matches('\\').len();
    if backslashes % 2 == 1 {
        command = command[..command.len() - 1].trim_end();
    }
    if shell::is_and_chain(command) {
        command.to_owned()
    } else if command.contains(['\n', '#']) {
        // A comment would swallow a closing brace on the same line.
        format!("{{\n{command}\n}}")
    } else if command.ends_with([';', '&']) {
        format!("{{ {command} }}")
    } else {
        format!("{{ {command}; }}")
    }
}
