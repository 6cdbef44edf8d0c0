//! Line continuations: a backslash before a newline, which the shell removes before it
//! reads anything else (outside single quotes, comments and quoted here-documents), so
//! that `ste\⏎ad` is `stead`. The parser removes them inside words, but not where they
//! split an operator or an expansion (`|\⏎|`, `$\⏎(`), and not in the body of an
//! unquoted here-document, whose lines the shell joins before it looks for the
//! delimiter: `EO\⏎F` ends a here-document `<<EOF`, `x\⏎EOF` does not.
//!
//! So the guard reads its own text (mentions, a loop's `break`) with them removed,
//! reads a here-document's body as the shell does, and refuses unread what the parser
//! would read otherwise: a split operator, a here-document the shell ends elsewhere, and
//! a command that does not parse and holds a continuation (the shell, joining, may read
//! a command that does).
//!
//! Scanning text whose quoting is not known, a backslash before a newline is taken for
//! a continuation unless a backslash escapes it: inside single quotes that finds
//! continuations the shell does not make, which only makes the guard more careful.

use std::borrow::Cow;

use crate::limits::MISREAD;

/// The byte offsets of the continuations in `text` (of their backslash).
fn continuations(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at + 1 < bytes.len() {
            let here = at;
            if bytes[here] == b'\\' {
                // An escaped character, or the newline a continuation removes.
                at += 2;
                if bytes[here + 1] == b'\n' {
                    return Some(here);
                }
            } else {
                at += 1;
            }
        }
        None
    })
}

/// `text` with its continuations removed.
pub(crate) fn joined(text: &str) -> Cow<'_, str> {
    let mut at = continuations(text).peekable();
    if at.peek().is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for backslash in at {
        out.push_str(&text[from..backslash]);
        from = backslash + 2;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// Pairs of characters the shell reads as one operator or expansion, which the parser,
/// split by a continuation, reads as two.
const JOINED: &[&str] = &[
    "&&", "&>", "||", "|&", ";;", ";&", "<<", "<&", "<>", "<(", ">>", ">&", ">|", ">(", "((", "))",
    "$(", "${", "$[",
];

/// Refuses a script where a continuation joins what the parser would read apart
/// (`|\⏎|`, `$\⏎(`, `<<\⏎-`).
pub(crate) fn check_joins(script: &str) -> Result<(), String> {
    let mut removed = 0;
    let whole = joined(script);
    for backslash in continuations(script) {
        // Where it was, in the joined text.
        let at = backslash - removed;
        removed += 2;
        let before = &whole[..at];
        let (Some(a), Some(b)) = (before.chars().next_back(), whole[at..].chars().next()) else {
            continue;
        };
        let pair = format!("{a}{b}");
        let dash = before.ends_with("<<") && b == '-';
        if JOINED.contains(&pair.as_str()) || dash {
            return Err(format!(
                "{MISREAD}: a line continuation joins `{a}` and `{b}`, which the shell reads as one and the guard's parser as two"
            ));
        }
    }
    Ok(())
}

/// What a parse error of `script` means: with a continuation in it, the shell may join
/// lines into a command that does parse, and run it.
pub(crate) fn unparsed(script: &str, error: String) -> String {
    match continuations(script).next() {
        Some(_) => format!(
            "{MISREAD}: it does not parse as the guard reads it ({error}), and the shell, which joins lines continued with a backslash, may read it otherwise"
        ),
        None => error,
    }
}

/// The body of an unquoted here-document as the shell reads it from `raw` (its lines
/// as written, then the delimiter's): lines continued with a backslash joined, and with
/// `<<-` the tabs that begin each joined line removed. `None` when the shell ends it
/// elsewhere than at the last line of `raw`: a joined line is the delimiter earlier, or
/// the last line continues into what follows.
pub(crate) fn here_body(raw: &str, delimiter: &str, strip_tabs: bool) -> Option<String> {
    let mut body = String::new();
    let mut line = String::new();
    let mut read = 0;
    for physical in raw.split_inclusive('\n') {
        read += physical.len();
        let text = physical.strip_suffix('\n').unwrap_or(physical);
        let backslashes = text.len() - text.trim_end_matches('\\').len();
        if backslashes % 2 == 1 && physical.ends_with('\n') {
            line.push_str(&text[..text.len() - 1]);
            continue;
        }
        line.push_str(text);
        let logical = match strip_tabs {
            true => line.trim_start_matches('\t'),
            false => &line,
        };
        if logical == delimiter {
            return (read == raw.len()).then_some(body);
        }
        body.push_str(logical);
        body.push('\n');
        line.clear();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuations_are_removed_unless_escaped() {
        assert_eq!(joined("ste\\\nad"), "stead");
        assert_eq!(joined("a\\\\\nb"), "a\\\\\nb");
        assert_eq!(joined("a\\\\\\\nb"), "a\\\\b");
        assert_eq!(joined("$\\\n\\\n("), "$(");
        assert!(matches!(joined("plain \\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_split_operator_or_expansion_is_refused() {
        for script in [
            "a |\\\n| b",
            "echo $\\\n\\\n(x)",
            "cat <<\\\n-EOF",
            "a &\\\n>f",
        ] {
            assert!(check_joins(script).is_err(), "{script:?}");
        }
        for script in ["a &&\\\n b", "a \\\n| b", "echo \\\\\n(x)", "ls \\\n"] {
            assert!(check_joins(script).is_ok(), "{script:?}");
        }
    }

    #[test]
    fn a_here_document_ends_where_the_shell_ends_it() {
        assert_eq!(
            here_body("a\\\nb\nEOF\n", "EOF", false).as_deref(),
            Some("ab\n")
        );
        assert_eq!(
            here_body("x\\\\\nEOF", "EOF", false).as_deref(),
            Some("x\\\\\n")
        );
        // `EO\` and `F` end it before the line the parser took for its end.
        assert_eq!(here_body("EO\\\nF\nrun\nEOF\n", "EOF", false), None);
        // `x\` and `EOF` make `xEOF`: it goes on past that line.
        assert_eq!(here_body("x\\\nEOF\n", "EOF", false), None);
        // With `<<-`, the tabs that begin a joined line go, not those after a join.
        assert_eq!(
            here_body("\tpkill\\\n\tstead\n\tEOF\n", "EOF", true).as_deref(),
            Some("pkill\tstead\n")
        );
        assert_eq!(here_body("\t\\\n\tEOF\n", "EOF", true).as_deref(), Some(""));
        assert_eq!(
            here_body("EO\\\n\tF\nEOF\n", "EOF", true).as_deref(),
            Some("EO\tF\n")
        );
    }
}
