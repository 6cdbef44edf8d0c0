//! Parameter expansions that transform a value (`${x%pat}`, `${x#pat}`, `${x/a/b}`,
//! `${x:1:3}`, `${x,,}`, `${#x}`), applied to a value the guard knows, so that
//! `x=webx; systemctl restart ${x%x}` reads as a restart of `web`.

use brush_parser::word::{ParameterExpr, SubstringMatchKind};

use super::arith;
use super::glob_matches;

/// The longest value the guard transforms: matching patterns against every prefix or
/// suffix is quadratic in it.
const MAX_VALUE: usize = 1024;

/// The result of `expr` on `value`, given how to read a pattern word as literal text;
/// `None` when the guard cannot tell.
pub(super) fn apply(
    expr: &ParameterExpr,
    value: &str,
    pattern: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if value.len() > MAX_VALUE {
        return None;
    }
    let chars: Vec<char> = value.chars().collect();
    let text = |range: &[char]| range.iter().collect::<String>();
    let matches = |p: &str, part: &[char]| glob_matches(p, &text(part));
    let n = chars.len();
    match expr {
        ParameterExpr::ParameterLength { .. } => Some(n.to_string()),
        ParameterExpr::IndicateErrorIfNullOrUnset { .. } => Some(value.to_owned()),
        ParameterExpr::RemoveSmallestSuffixPattern { pattern: p, .. } => {
            let p = pattern(p.as_deref().unwrap_or(""))?;
            let at = (0..=n).rev().find(|&i| matches(&p, &chars[i..]))?;
            Some(text(&chars[..at]))
        }
        ParameterExpr::RemoveLargestSuffixPattern { pattern: p, .. } => {
            let p = pattern(p.as_deref().unwrap_or(""))?;
            let at = (0..=n).find(|&i| matches(&p, &chars[i..])).unwrap_or(n);
            Some(text(&chars[..at]))
        }
        ParameterExpr::RemoveSmallestPrefixPattern { pattern: p, .. } => {
            let p = pattern(p.as_deref().unwrap_or(""))?;
            let at = (0..=n).find(|&i| matches(&p, &chars[..i])).unwrap_or(0);
            Some(text(&chars[at..]))
        }
        ParameterExpr::RemoveLargestPrefixPattern { pattern: p, .. } => {
            let p = pattern(p.as_deref().unwrap_or(""))?;
            let at = (0..=n)
                .rev()
                .find(|&i| matches(&p, &chars[..i]))
                .unwrap_or(0);
            Some(text(&chars[at..]))
        }
        ParameterExpr::Substring { offset, length, .. } => {
            let offset = arith::eval(&offset.value)?;
            let start = if offset < 0 {
                n.checked_sub(usize::try_from(offset.unsigned_abs()).ok()?)?
            } else {
                usize::try_from(offset).ok()?.min(n)
            };
            let end = match length {
                None => n,
                Some(length) => {
                    let length = arith::eval(&length.value)?;
                    if length < 0 {
                        n.checked_sub(usize::try_from(length.unsigned_abs()).ok()?)?
                    } else {
                        start.saturating_add(usize::try_from(length).ok()?).min(n)
                    }
                }
            };
            Some(text(&chars[start..end.max(start)]))
        }
        ParameterExpr::UppercaseFirstChar { pattern: p, .. } => {
            case(&chars, p.as_deref(), pattern, true, true)
        }
        ParameterExpr::UppercasePattern { pattern: p, .. } => {
            case(&chars, p.as_deref(), pattern, true, false)
        }
        ParameterExpr::LowercaseFirstChar { pattern: p, .. } => {
            case(&chars, p.as_deref(), pattern, false, true)
        }
        ParameterExpr::LowercasePattern { pattern: p, .. } => {
            case(&chars, p.as_deref(), pattern, false, false)
        }
        ParameterExpr::ReplaceSubstring {
            pattern: p,
            replacement,
            match_kind,
            ..
        } => {
            let p = pattern(p)?;
            let with = pattern(replacement.as_deref().unwrap_or(""))?;
            replace(&chars, &p, &with, match_kind)
        }
        _ => None,
    }
}

/// `${x^}`, `${x^^}`, `${x,}`, `${x,,}`, with an optional pattern each character must
/// match.
fn case(
    chars: &[char],
    p: Option<&str>,
    pattern: &dyn Fn(&str) -> Option<String>,
    upper: bool,
    first_only: bool,
) -> Option<String> {
    // No pattern, or an empty one, selects every character.
    let p = match p.filter(|p| !p.is_empty()) {
        Some(p) => Some(pattern(p)?),
        None => None,
    };
    let mut out = String::new();
    for (at, c) in chars.iter().enumerate() {
        let selected = (!first_only || at == 0)
            && p.as_deref().is_none_or(|p| glob_matches(p, &c.to_string()));
        match (selected, upper) {
            (true, true) => out.extend(c.to_uppercase()),
            (true, false) => out.extend(c.to_lowercase()),
            (false, _) => out.push(*c),
        }
    }
    Some(out)
}

/// The longest value a pattern with wildcards is replaced in: each place is tried
/// against each length.
const MAX_GLOB_REPLACE: usize = 64;

/// `${x/p/r}`, `${x//p/r}`, `${x/#p/r}`, `${x/%p/r}`: the longest match at each place.
fn replace(chars: &[char], p: &str, with: &str, kind: &SubstringMatchKind) -> Option<String> {
    let n = chars.len();
    let literal = !p.contains(['*', '?', '[']);
    if literal && !p.is_empty() {
        let value: String = chars.iter().collect();
        return Some(match kind {
            SubstringMatchKind::Prefix => match value.strip_prefix(p) {
                Some(rest) => format!("{with}{rest}"),
                None => value,
            },
            SubstringMatchKind::Suffix => match value.strip_suffix(p) {
                Some(rest) => format!("{rest}{with}"),
                None => value,
            },
            SubstringMatchKind::FirstOccurrence => value.replacen(p, with, 1),
            SubstringMatchKind::Anywhere => value.replace(p, with),
        });
    }
    if n > MAX_GLOB_REPLACE {
        return None;
    }
    let text = |range: &[char]| range.iter().collect::<String>();
    let longest_from = |i: usize| {
        (i..=n)
            .rev()
            .find(|&j| glob_matches(p, &text(&chars[i..j])))
    };
    Some(match kind {
        SubstringMatchKind::Prefix => match longest_from(0) {
            Some(j) => format!("{with}{}", text(&chars[j..])),
            None => text(chars),
        },
        SubstringMatchKind::Suffix => {
            match (0..=n).find(|&i| glob_matches(p, &text(&chars[i..]))) {
                Some(i) => format!("{}{with}", text(&chars[..i])),
                None => text(chars),
            }
        }
        SubstringMatchKind::FirstOccurrence | SubstringMatchKind::Anywhere => {
            let all = matches!(kind, SubstringMatchKind::Anywhere);
            let mut out = String::new();
            let mut i = 0;
            let mut replaced = false;
            while i < n {
                match longest_from(i).filter(|&j| j > i && (all || !replaced)) {
                    Some(j) => {
                        out.push_str(with);
                        replaced = true;
                        i = j;
                    }
                    None => {
                        out.push(chars[i]);
                        i += 1;
                    }
                }
            }
            out
        }
    })
}
