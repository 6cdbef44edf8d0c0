//! Brace expansion: `{stead,stop}` is two words, `web{,.service}` two more. The shell
//! expands braces before anything else, so an unquoted brace can assemble a command.

use brush_parser::ParserOptions;
use brush_parser::word::{self, BraceExpressionMember, BraceExpressionOrText};

use super::Vars;

/// The most words one word may expand into before the guard stops counting.
const MAX_WORDS: usize = 64;

/// The longest word the guard expands braces in.
const MAX_LEN: usize = 64 * 1024;

/// The most braces in a word the guard expands.
const MAX_BRACES: usize = 256;

pub(super) enum Braces {
    /// Nothing to expand.
    None,
    /// The words, still quoted as written.
    Words(Vec<String>),
    /// More words than the guard reads.
    TooMany,
}

pub(super) fn alternatives(raw: &str, vars: &Vars) -> Braces {
    if !raw.contains('{') || !(raw.contains(',') || raw.contains("..")) {
        return Braces::None;
    }
    // The parser recurses once per nested brace.
    if raw.len() > MAX_LEN || raw.bytes().filter(|b| *b == b'{').count() > MAX_BRACES {
        return Braces::TooMany;
    }
    // The parser panics on a sequence bound that does not fit an i64.
    let parsed =
        std::panic::catch_unwind(|| word::parse_brace_expansions(raw, &ParserOptions::default()));
    let pieces = match parsed {
        Ok(Ok(Some(pieces))) => pieces,
        Ok(Ok(None)) | Ok(Err(_)) => return Braces::None,
        Err(_) => return Braces::TooMany,
    };
    if !pieces
        .iter()
        .any(|p| matches!(p, BraceExpressionOrText::Expr(_)))
    {
        return Braces::None;
    }
    match expand(&pieces) {
        Some(words) if vars.spend(words.iter().map(String::len).sum()) => Braces::Words(words),
        _ => Braces::TooMany,
    }
}

/// Every word the pieces stand for, in order; `None` past [`MAX_WORDS`].
fn expand(pieces: &[BraceExpressionOrText]) -> Option<Vec<String>> {
    let mut words = vec![String::new()];
    for piece in pieces {
        let options = match piece {
            BraceExpressionOrText::Text(text) => vec![text.clone()],
            BraceExpressionOrText::Expr(members) => {
                let mut all = Vec::new();
                for member in members {
                    all.extend(member_words(member)?);
                    if all.len() > MAX_WORDS {
                        return None;
                    }
                }
                all
            }
        };
        if words.len() * options.len() > MAX_WORDS {
            return None;
        }
        words = words
            .iter()
            .flat_map(|w| options.iter().map(move |o| format!("{w}{o}")))
            .collect();
    }
    Some(words)
}

fn member_words(member: &BraceExpressionMember) -> Option<Vec<String>> {
    match member {
        BraceExpressionMember::Child(pieces) => expand(pieces),
        BraceExpressionMember::NumberSequence {
            start,
            end,
            increment,
        } => sequence(*start, *end, *increment, |n| Some(n.to_string())),
        BraceExpressionMember::CharSequence {
            start,
            end,
            increment,
        } => sequence(*start as i64, *end as i64, *increment, |n| {
            u32::try_from(n)
                .ok()
                .and_then(char::from_u32)
                .map(String::from)
        }),
    }
}

fn sequence(
    start: i64,
    end: i64,
    increment: i64,
    show: impl Fn(i64) -> Option<String>,
) -> Option<Vec<String>> {
    let step = increment.checked_abs()?.max(1);
    let count = start.abs_diff(end) / step.unsigned_abs() + 1;
    if count > MAX_WORDS as u64 {
        return None;
    }
    let up = end >= start;
    (0..count as i64)
        .map(|i| {
            show(if up {
                start + i * step
            } else {
                start - i * step
            })
        })
        .collect()
}
