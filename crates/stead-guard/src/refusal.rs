//! A refusal in words: what the offending command would do, why the guard stops it, and
//! the exact command to run instead (the gate ahead of the original, or for a lone
//! restart of stead, `stead restart`).

use stead_protocol::STEAD_SERVICE;

use super::Verdict;
use super::rules::Act;
use super::services::Guarded;
use super::shell;

/// One refused simple command.
pub(super) struct Finding {
    service: String,
    act: Option<Act>,
    matched: String,
    reason: String,
}

impl Finding {
    pub fn new(service: &str, act: Option<Act>, matched: &str, what: String) -> Finding {
        let reason = format!(
            "{what}; no `{gate}` runs before it in the same `&&` chain to wait until that would cut nothing",
            gate = gate_for(service)
        );
        Finding {
            service: service.to_owned(),
            act,
            matched: matched.trim().to_owned(),
            reason,
        }
    }
}

pub(super) fn refusal(command: &str, findings: &[Finding]) -> Verdict {
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
        "stead restart".to_owned()
    } else {
        format!("{} && {}", gates(&services), chainable(command))
    };
    Verdict::Refuse {
        service: first.service.clone(),
        matched: first.matched.clone(),
        reason: first.reason.clone(),
        instead,
    }
}

pub(super) fn unparsable(command: &str, err: &str, mentioned: &[&Guarded]) -> Verdict {
    let Some(first) = mentioned.first() else {
        return Verdict::Allow;
    };
    let names: Vec<&str> = mentioned.iter().map(|g| g.name.as_str()).collect();
    Verdict::Refuse {
        service: first.name.clone(),
        matched: command.trim().to_owned(),
        reason: format!(
            "the command does not parse as a shell command ({err}), and it mentions the guarded service {}: the guard refuses what it cannot read",
            first.name
        ),
        instead: format!(
            "{} && <the command, rewritten so that it parses>",
            gates(&names)
        ),
    }
}

/// The gate for one service: `stead gate` for stead itself.
fn gate_for(service: &str) -> String {
    match service {
        STEAD_SERVICE => "stead gate".to_owned(),
        name => format!("stead gate --service {}", shell_words::quote(name)),
    }
}

fn gates(services: &[&str]) -> String {
    let gates: Vec<String> = services.iter().map(|s| gate_for(s)).collect();
    gates.join(" && ")
}

/// The command as one link of an `&&` chain: as it is if it is one chain already,
/// else grouped, so that a failing gate stops all of it.
fn chainable(command: &str) -> String {
    let command = command.trim();
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
