//! Killing by process: `kill $(pgrep NAME)`, `pkill [-f] PATTERN`, `killall NAME`.
//!
//! pkill and pgrep take a regular expression, matched against the process name, or
//! with `-f` against its whole command line. The guard reads the simple ones (anchors,
//! `.`, `.*`, escapes); a richer pattern it cannot read counts as unsure.

use super::opts::{self, Spec};
use super::rules::Seen;
use super::services::Guarded;
use super::shell::{self, Event};
use super::words::{Arg, basename};

const KILL: Spec = Spec {
    short_values: "sn",
    long_values: &[],
    signals: true,
};

const PGREP: Spec = Spec {
    short_values: "gGOPstuUFrqd",
    long_values: &[
        "signal",
        "pgroup",
        "group",
        "older",
        "parent",
        "session",
        "terminal",
        "euid",
        "uid",
        "pidfile",
        "runstates",
        "ns",
        "nslist",
        "delimiter",
        "queue",
    ],
    signals: true,
};

const KILLALL: Spec = Spec {
    short_values: "suoyZn",
    long_values: &[
        "signal",
        "user",
        "older-than",
        "younger-than",
        "context",
        "ns",
    ],
    signals: true,
};

const PIDOF: Spec = Spec {
    short_values: "o",
    long_values: &[],
    signals: false,
};

/// `kill PID…`: a pid from `$(pgrep NAME)` or `$(pidof NAME)` is the service's; a pid
/// the guard cannot trace (`$PID`, `$(cat pidfile)`) is unsure; a number or a job
/// (`%1`, `$!`: the shell's own children) is not.
pub(super) fn kill(args: &[Arg], service: &Guarded) -> Seen {
    let scan = opts::scan(args, &KILL);
    if scan.has("l") || scan.has("L") {
        return Seen::No; // lists signals
    }
    scan.operands.iter().fold(Seen::No, |seen, pid| {
        let this = if !pid.subs.is_empty() {
            pid.subs
                .iter()
                .fold(Seen::No, |s, script| s.or(selected_by(script, service)))
        } else if pid.dynamic && pid.text != "$!" {
            Seen::Unsure(pid.text.clone())
        } else {
            Seen::No
        };
        seen.or(this)
    })
}

/// `pkill` (and `pgrep`, which selects the same processes).
pub(super) fn pkill(args: &[Arg], service: &Guarded) -> Seen {
    let scan = opts::scan(args, &PGREP);
    let full = scan.has("f") || scan.has("full");
    let exact = scan.has("x") || scan.has("exact");
    let fold = scan.has("i") || scan.has("ignore-case");
    let names = |pattern: &str| {
        let each = service
            .processes
            .iter()
            .map(|p| pattern_selects(pattern, p, full, exact, fold));
        any(each)
    };
    Seen::any(scan.operands.iter().copied(), names)
}

/// `killall NAME…` (exact names, or with `-r` patterns as pkill reads them).
pub(super) fn killall(args: &[Arg], service: &Guarded) -> Seen {
    let scan = opts::scan(args, &KILLALL);
    let regex = scan.has("r") || scan.has("regexp");
    let fold = scan.has("I") || scan.has("ignore-case");
    let names = |name: &str| {
        any(service.processes.iter().map(|p| match regex {
            true => pattern_selects(name, p, false, false, fold),
            false => Some(same(basename(name), p, fold)),
        }))
    };
    Seen::any(scan.operands.iter().copied(), names)
}

/// `pidof NAME…`.
fn pidof(args: &[Arg], service: &Guarded) -> Seen {
    let scan = opts::scan(args, &PIDOF);
    let names = |name: &str| Some(service.processes.iter().any(|p| basename(name) == p));
    Seen::any(scan.operands.iter().copied(), names)
}

/// Whether the pids a substitution prints are the service's.
fn selected_by(script: &str, service: &Guarded) -> Seen {
    let Ok(events) = shell::events(script) else {
        return Seen::Unsure(format!("$({script})"));
    };
    let mut seen = None;
    for event in &events {
        let Event::Command { argv, .. } = event else {
            continue;
        };
        let this = match basename(&argv[0].text) {
            "pgrep" => pkill(&argv[1..], service),
            "pidof" => pidof(&argv[1..], service),
            _ => continue,
        };
        seen = Some(seen.unwrap_or(Seen::No).or(this));
    }
    // Pids from anything else (a pid file, lsof) cannot be traced to a service.
    seen.unwrap_or_else(|| Seen::Unsure(format!("$({script})")))
}

/// Whether a pkill pattern selects the process `name`; `None` when the pattern is too
/// rich to read. With `full`, the pattern is matched against a command line the guard
/// does not know, so it counts when it names the process as a word (`stead serve`,
/// `/usr/bin/stead`).
fn pattern_selects(pattern: &str, name: &str, full: bool, exact: bool, fold: bool) -> Option<bool> {
    let (pattern, name) = match fold {
        true => (pattern.to_lowercase(), name.to_lowercase()),
        false => (pattern.to_owned(), name.to_owned()),
    };
    if full && contains_word(&pattern, &name) {
        return Some(true);
    }
    let glob = regex_glob(&pattern, exact)?;
    Some(glob_chars(&glob, &name.chars().collect::<Vec<_>>()))
}

fn same(a: &str, b: &str, fold: bool) -> bool {
    match fold {
        true => a.eq_ignore_ascii_case(b),
        false => a == b,
    }
}

/// True if any is true, else unknown if any is unknown, else false.
fn any(each: impl Iterator<Item = Option<bool>>) -> Option<bool> {
    let mut unknown = false;
    for this in each {
        match this {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    (!unknown).then_some(false)
}

/// Whether `needle` occurs in `hay` as a word of its own: `stead serve` names stead,
/// `homestead` and `stead-bench` do not.
fn contains_word(hay: &str, needle: &str) -> bool {
    let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_');
    hay.match_indices(needle).any(|(at, _)| {
        !part(hay[..at].chars().next_back()) && !part(hay[at + needle.len()..].chars().next())
    })
}

/// A simple regular expression as a glob (`*`, `?`), unanchored unless it says so;
/// `None` for anything richer.
fn regex_glob(pattern: &str, exact: bool) -> Option<Vec<char>> {
    let mut chars = pattern.chars().peekable();
    let mut glob = Vec::new();
    let anchored_start = exact || chars.next_if_eq(&'^').is_some();
    if !anchored_start {
        glob.push('*');
    }
    let mut anchored_end = exact;
    while let Some(c) = chars.next() {
        match c {
            '.' if chars.next_if_eq(&'*').is_some() => glob.push('*'),
            '.' => glob.push('?'),
            '\\' => glob.push(chars.next()?),
            '$' if chars.peek().is_none() => anchored_end = true,
            '^' | '$' | '[' | ']' | '(' | ')' | '{' | '}' | '|' | '+' | '?' | '*' => return None,
            c => glob.push(c),
        }
    }
    if !anchored_end {
        glob.push('*');
    }
    Some(glob)
}

/// Shell-style glob match (`*`, `?`) of `pattern` against all of `text`.
pub(super) fn glob(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    glob_chars(&pattern, &text.chars().collect::<Vec<_>>())
}

fn glob_chars(pattern: &[char], text: &[char]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some(('*', rest)) => (0..=text.len()).any(|skip| glob_chars(rest, &text[skip..])),
        Some((c, rest)) => text
            .split_first()
            .is_some_and(|(t, more)| (*c == '?' || c == t) && glob_chars(rest, more)),
    }
}
