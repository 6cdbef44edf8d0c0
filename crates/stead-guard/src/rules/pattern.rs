//! pkill's patterns: extended regular expressions (read as glibc reads them, `ere`),
//! matched against a process's name, or with `-f` against its whole command line. The
//! command line of a declared service is not known here, so with `-f` a pattern counts
//! when it matches a likely command line of its process (`/usr/local/bin/web-server`)
//! or names the process as a word of its own; stead's own are known (`command_lines`).
//! Inverted (`pgrep -v`, `pkill --inverse`), a pattern selects the processes it does
//! not match.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::bytes::{Regex, RegexBuilder};

use super::ere;
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
    pub inverse: bool,
}

/// Whether `pattern` selects one of the service's processes, whose command lines are
/// `lines` besides the likely ones; `None` when the guard cannot tell (an expansion, a
/// pattern the regex engine rejects).
pub(super) fn selects(
    pattern: &Arg,
    service: &Guarded,
    lines: &[String],
    mode: Mode,
) -> Option<bool> {
    if pattern.dynamic {
        return None;
    }
    let (regex, exact) = compiled(&pattern.text, mode)?;
    let likely: Vec<String> = service
        .processes
        .iter()
        .flat_map(|process| candidates(process, mode.full))
        .collect();
    let known = lines.iter().filter(|_| mode.full);
    let mut matched = likely
        .iter()
        .chain(known)
        .map(|line| regex.is_match(line.as_bytes()));
    if mode.inverse {
        // A pattern that matches more than pkill's may hide a line it leaves out.
        return Some(!exact || matched.any(|m| !m));
    }
    let named = |process: &String| mode.full && names_word(&pattern.text, process, mode.fold);
    Some(matched.any(|m| m) || service.processes.iter().any(named))
}

/// How many compiled patterns one reading keeps.
const CACHED: usize = 256;

/// A pattern compiled, and whether it matches exactly what pkill's does (else at least
/// that).
type Compiled = Option<(Regex, bool)>;

thread_local! {
    /// Patterns compiled so far: a command may name one pattern for every service.
    static COMPILED: RefCell<HashMap<(String, bool, bool), Compiled>> =
        RefCell::new(HashMap::new());
}

/// A pkill pattern compiled as pkill reads it (extended, on bytes; anchored with
/// `-x`, folded with `-i`).
fn compiled(pattern: &str, mode: Mode) -> Compiled {
    let key = (pattern.to_owned(), mode.exact, mode.fold);
    if let Some(known) = COMPILED.with(|c| c.borrow().get(&key).cloned()) {
        return known;
    }
    let regex = ere::translated(pattern).and_then(|translated| {
        let source = match mode.exact {
            true => format!("^(?:{})$", translated.source),
            false => translated.source,
        };
        let regex = RegexBuilder::new(&source)
            .case_insensitive(mode.fold)
            .unicode(false)
            .size_limit(SIZE_LIMIT)
            .build()
            .ok()?;
        Some((regex, translated.exact))
    });
    COMPILED.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= CACHED {
            cache.clear();
        }
        cache.insert(key, regex.clone());
    });
    regex
}

/// What pkill compares a pattern with for a process of this name: the name (as the
/// kernel keeps it), or with `-f` its likely command lines.
fn candidates(process: &str, full: bool) -> Vec<String> {
    if !full {
        return vec![process.to_owned(), process.chars().take(COMM).collect()];
    }
    vec![
        process.to_owned(),
        format!("/usr/bin/{process}"),
        format!("/usr/local/bin/{process}"),
        format!("/home/user/.local/bin/{process} --config /etc/{process}.conf"),
    ]
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
