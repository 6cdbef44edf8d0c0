//! pkill's patterns: extended regular expressions, matched against a process's name,
//! or with `-f` against its whole command line. The command line of a service is not
//! known here, so with `-f` a pattern counts when it matches the likely command lines
//! of its process (`stead serve`, `/usr/local/bin/web-server`) or names the process as
//! a word of its own.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::ast::{self, Ast};

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
    let regex = compiled(&pattern.text, mode)?;
    let hit = service.processes.iter().any(|process| {
        candidates(process, service.is_stead(), mode.full)
            .iter()
            .any(|line| regex.is_match(line.as_bytes()))
            || (mode.full && names_word(&pattern.text, process, mode.fold))
    });
    Some(hit)
}

/// The longest repetition the guard compiles: longer than any line it compares a
/// pattern with, so a longer one matches exactly the same lines, and the engine does
/// not reject `\w{1,1000}` (which pkill accepts, and which matches every process).
const MAX_REPEAT: u32 = 256;

/// How many compiled patterns one reading keeps.
const CACHED: usize = 256;

thread_local! {
    /// Patterns compiled so far: a command may name one pattern for every service.
    static COMPILED: RefCell<HashMap<(String, bool, bool), Option<Regex>>> =
        RefCell::new(HashMap::new());
}

/// A pkill pattern compiled as pkill reads it (extended, on bytes; anchored with
/// `-x`, folded with `-i`), with its repetitions capped.
fn compiled(pattern: &str, mode: Mode) -> Option<Regex> {
    let key = (pattern.to_owned(), mode.exact, mode.fold);
    if let Some(known) = COMPILED.with(|c| c.borrow().get(&key).cloned()) {
        return known;
    }
    let source = match mode.exact {
        true => format!("^(?:{pattern})$"),
        false => pattern.to_owned(),
    };
    let regex = capped(&source).and_then(|source| {
        RegexBuilder::new(&source)
            .case_insensitive(mode.fold)
            .unicode(false)
            .size_limit(SIZE_LIMIT)
            .build()
            .ok()
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

/// The pattern with every counted repetition capped at [`MAX_REPEAT`].
fn capped(pattern: &str) -> Option<String> {
    let mut parsed = ast::parse::Parser::new().parse(pattern).ok()?;
    cap(&mut parsed);
    let mut out = String::new();
    ast::print::Printer::new().print(&parsed, &mut out).ok()?;
    Some(out)
}

fn cap(node: &mut Ast) {
    match node {
        Ast::Repetition(repetition) => {
            if let ast::RepetitionKind::Range(range) = &mut repetition.op.kind {
                match range {
                    ast::RepetitionRange::Exactly(n) | ast::RepetitionRange::AtLeast(n) => {
                        *n = (*n).min(MAX_REPEAT);
                    }
                    ast::RepetitionRange::Bounded(m, n) => {
                        *m = (*m).min(MAX_REPEAT);
                        *n = (*n).min(MAX_REPEAT);
                    }
                }
            }
            cap(&mut repetition.ast);
        }
        Ast::Group(group) => cap(&mut group.ast),
        Ast::Alternation(alternation) => alternation.asts.iter_mut().for_each(cap),
        Ast::Concat(concat) => concat.asts.iter_mut().for_each(cap),
        _ => {}
    }
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
