//! pkill's patterns: extended regular expressions, matched against a process's name,
//! or with `-f` against its whole command line. The command line of a service is not
//! known here, so with `-f` a pattern counts when it matches the likely command lines
//! of its process (`stead serve`, `/usr/local/bin/web-server`) or names the process as
//! a word of its own.

use regex::RegexBuilder;

use crate::services::Guarded;
use crate::words::Arg;

/// The longest process name the kernel keeps (`comm`): pkill without `-f` matches
/// against it.
const COMM: usize = 15;

/// How much memory one compiled pattern may take.
const SIZE_LIMIT: usize = 1 << 20;

/// How pkill reads its pattern.
#[derive(Clone, Copy)]
pub(super) struct Mode {
    pub full: bool,
    pub exact: bool,
    pub fold: bool,
}

/// Whether `pattern` selects one of the service's processes; `None` when the guard
/// cannot tell (an expansion, a pattern the regex engine rejects).
pub(super) fn selects(pattern: &Arg, service: &Guarded, mode: Mode) -> Option<bool> {
    if pattern.dynamic {
        return None;
    }
    let source = match mode.exact {
        true => format!("^(?:{})$", pattern.text),
        false => pattern.text.clone(),
    };
    let regex = RegexBuilder::new(&source)
        .case_insensitive(mode.fold)
        .size_limit(SIZE_LIMIT)
        .build()
        .ok()?;
    let hit = service.processes.iter().any(|process| {
        candidates(process, service.is_stead(), mode.full)
            .iter()
            .any(|line| regex.is_match(line))
            || (mode.full && names_word(&pattern.text, process, mode.fold))
    });
    Some(hit)
}

/// What pkill compares a pattern with for this process.
fn candidates(process: &str, stead: bool, full: bool) -> Vec<String> {
    let comm: String = process.chars().take(COMM).collect();
    if !full {
        return vec![process.to_owned(), comm];
    }
    let mut lines = vec![
        process.to_owned(),
        format!("/usr/bin/{process}"),
        format!("/usr/local/bin/{process}"),
        format!("/home/user/.local/bin/{process} --config /etc/{process}.conf"),
    ];
    if stead {
        lines.extend([
            format!("{process} serve"),
            format!(
                "/home/user/.cargo/bin/{process} --state-dir /home/user/.local/state/stead serve"
            ),
            format!("{process} monitor"),
        ]);
    }
    lines
}

/// Whether `needle` occurs in `hay` as a word of its own: `stead serve` names stead,
/// `homestead` and `stead-bench` do not.
pub(super) fn names_word(hay: &str, needle: &str, fold: bool) -> bool {
    let (hay, needle) = match fold {
        true => (hay.to_lowercase(), needle.to_lowercase()),
        false => (hay.to_owned(), needle.to_owned()),
    };
    let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_');
    hay.match_indices(needle.as_str()).any(|(at, _)| {
        !part(hay[..at].chars().next_back()) && !part(hay[at + needle.len()..].chars().next())
    })
}
