//! The guard's limits, and the guard run inside them: a command too large or nested
//! too deep to read safely is refused, never a crash; the reading runs on a thread of
//! its own with a large stack, and a panic anywhere in it is a refusal. The work is
//! linear in the command's size: nested scripts and expansions draw on budgets
//! proportional to it.

use std::sync::{LazyLock, mpsc};
use std::time::Duration;

use brush_parser::Token;
use regex::Regex;

/// The largest command the guard reads (4 MiB): agents' commands are kilobytes, and a
/// larger one is refused unread.
pub const MAX_COMMAND: usize = 4 << 20;

/// How deeply groups, subshells and compound commands may nest in one script. The
/// parser recurses once per level; no hand-written command comes close.
pub const MAX_NESTING: usize = 200;

/// How many substitutions (`$(`, `${`, backquotes, process substitutions) a command
/// may hold. The tokenizer recurses once per level of them, and since quoting cannot
/// be known before tokenizing, their count is what bounds the deepest; the reader's
/// stack is sized to it.
pub const MAX_SUBSTITUTIONS: usize = 60_000;

/// Substitutions any script may hold, however few its command has: a nested script
/// can be longer than the command (an alias expanded, a variable's value).
pub(crate) const MIN_SUBSTITUTIONS: usize = 1_000;

/// The reader's stack for the structure of a command: [`MAX_NESTING`] levels in each
/// of the nested scripts it follows, in a debug build too (measured: about 32 KiB a
/// level for the parser). Only what is used is ever touched.
const STACK: usize = 64 << 20;

/// The stack for each substitution the tokenizer may nest (measured: about 10 KiB a
/// level in a debug build, 2 KiB in a release build).
const STACK_PER_SUBSTITUTION: usize = 16 << 10;

/// The reader's stack for a command holding `substitutions`.
pub(crate) fn stack(substitutions: usize) -> usize {
    STACK + substitutions.max(MIN_SUBSTITUTIONS) * STACK_PER_SUBSTITUTION
}

/// How a parse refused for depth begins.
pub(crate) const TOO_DEEP: &str = "nested too deep";

/// What a panic of the tokenizer or parser reads as.
pub(crate) const READER_FAILED: &str = "the shell parser failed on it";

/// How a script the parser would read otherwise than the shell begins (see
/// `continuation`).
pub(crate) const MISREAD: &str = "the guard's parser would read it otherwise than the shell";

/// Whether a parse error means the command cannot be read safely at all (and is
/// refused whatever it names), rather than that it is not valid shell.
pub(crate) fn unreadable(error: &str) -> bool {
    [TOO_DEEP, READER_FAILED, MISREAD]
        .iter()
        .any(|prefix| error.starts_with(prefix))
}

/// How many bytes of nested scripts (substitutions, `sh -c`, aliases, functions read
/// again) the guard parses for a command of `len` bytes.
pub(crate) fn parse_budget(len: usize) -> usize {
    16 * len + (1 << 20)
}

/// How many bytes expansions (variables, braces) may produce for a command of `len`.
pub(crate) fn expansion_budget(len: usize) -> usize {
    8 * len + (1 << 20)
}

/// How long the guard reads one command before it refuses it: a backstop, since
/// reading is linear in the command's size and takes milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Runs `read` on a thread of its own with a stack of `stack` bytes, for at most
/// `deadline`; a panic or a reading past the deadline is an error saying so. A reading
/// past its deadline is left to finish on its own.
pub(crate) fn contained<T: Send + 'static>(
    stack: usize,
    deadline: Duration,
    read: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (done, result) = mpsc::channel();
    std::thread::Builder::new()
        .name("stead-guard".to_owned())
        .stack_size(stack)
        .spawn(move || {
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(read));
            let _ = done.send(read);
        })
        .map_err(|e| format!("the guard could not start reading it ({e})"))?;
    match result.recv_timeout(deadline) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(panic)) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_owned());
            Err(format!("the guard failed while reading it ({what})"))
        }
        Err(_) => Err(format!(
            "reading it took longer than {} seconds",
            deadline.as_secs_f64()
        )),
    }
}

/// How many substitutions a script holds (`$(`, `${`, unescaped backquotes, `<(`,
/// `>(`), quoted or not: an upper bound on how deep the tokenizer may recurse.
pub(crate) fn substitutions(script: &str) -> usize {
    let bytes = script.as_bytes();
    let mut count = 0;
    for (at, pair) in bytes.windows(2).enumerate() {
        count += usize::from(matches!(pair, b"$(" | b"${" | b"<(" | b">("));
        count += usize::from(pair[0] == b'`' && (at == 0 || bytes[at - 1] != b'\\'));
    }
    count + usize::from(bytes.last() == Some(&b'`'))
}

/// Refuses a script with more substitutions than the reader's stack was sized for.
pub(crate) fn check_substitutions(script: &str, most: usize) -> Result<(), String> {
    let count = substitutions(script);
    if count > most {
        return Err(format!(
            "{TOO_DEEP}: {count} substitutions in one script, more than the {most} the guard reads"
        ));
    }
    Ok(())
}

/// How deeply substitutions and quotes may nest inside one word (`"$(… ${x:-$(…)} …)"`):
/// the word parser's work grows faster than the word with the depth.
pub const MAX_WORD_NESTING: usize = 32;

/// Refuses a word whose substitutions nest deeper than [`MAX_WORD_NESTING`].
pub(crate) fn word_nesting(tokens: &[Token]) -> Result<(), String> {
    for token in tokens {
        if let Token::Word(word, _) = token
            && word_depth(word.as_bytes()) > MAX_WORD_NESTING
        {
            return Err(format!(
                "{TOO_DEEP}: substitutions nested more than {MAX_WORD_NESTING} deep in one word"
            ));
        }
    }
    Ok(())
}

/// Where in a word the scan is.
enum Within {
    /// Shell code: the word itself, or a `$( … )` with its own open parentheses.
    Code(usize),
    /// `${ … }`.
    Parameter,
    /// `" … "`.
    Quoted,
    /// `` ` … ` ``.
    Backquoted,
}

/// How deeply a word's substitutions and quotes nest.
fn word_depth(word: &[u8]) -> usize {
    let mut stack = vec![Within::Code(0)];
    let mut deepest = 0;
    let mut i = 0;
    while i < word.len() {
        let c = word[i];
        let next = word.get(i + 1).copied();
        let top = stack.last_mut().expect("the word's own level stays");
        match (top, c) {
            (_, b'\\') => i += 1,
            (Within::Code(_) | Within::Parameter, b'\'') => {
                i = find(word, i + 1, b'\'');
            }
            (Within::Code(_) | Within::Parameter | Within::Quoted, b'$') if next == Some(b'(') => {
                stack.push(Within::Code(0));
                i += 1;
            }
            (Within::Code(_) | Within::Parameter | Within::Quoted, b'$') if next == Some(b'{') => {
                stack.push(Within::Parameter);
                i += 1;
            }
            (Within::Code(_) | Within::Parameter, b'"') => stack.push(Within::Quoted),
            (Within::Code(_) | Within::Parameter | Within::Quoted, b'`') => {
                stack.push(Within::Backquoted);
            }
            (Within::Quoted, b'"') | (Within::Backquoted, b'`') | (Within::Parameter, b'}') => {
                stack.pop();
            }
            (Within::Code(open), b'(') => *open += 1,
            (Within::Code(0), b')') => {
                stack.pop();
            }
            (Within::Code(open), b')') => *open -= 1,
            _ => {}
        }
        if stack.is_empty() {
            stack.push(Within::Code(0));
        }
        deepest = deepest.max(stack.len() - 1);
        i += 1;
    }
    deepest
}

/// The index of the next `c` from `from`, or the end.
fn find(s: &[u8], from: usize, c: u8) -> usize {
    s.get(from..)
        .and_then(|rest| rest.iter().position(|b| *b == c))
        .map_or(s.len(), |at| from + at)
}

/// Refuses tokens nested deeper than [`MAX_NESTING`]: groups, subshells and compound
/// commands, counted on the tokens the parser reads (so quotes and here-documents
/// are already what the shell makes of them). A closing word counts only where the
/// shell reads it as one (`echo }` closes nothing; neither does a `case` pattern's
/// `)`), so the count is never lower than the parser's nesting.
pub(crate) fn nesting(tokens: &[Token]) -> Result<(), String> {
    if Depth::of(tokens) > MAX_NESTING {
        return Err(format!(
            "{TOO_DEEP}: more than {MAX_NESTING} levels of groups, subshells or compound commands"
        ));
    }
    Ok(())
}

/// Where in a `case` the tokens are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    Subject,
    In,
    Pattern,
    Body,
}

struct Depth {
    depth: usize,
    deepest: usize,
}

impl Depth {
    fn of(tokens: &[Token]) -> usize {
        let mut d = Depth {
            depth: 0,
            deepest: 0,
        };
        let mut at_command = true;
        let mut skip = 0;
        let mut cases: Vec<Case> = Vec::new();
        for token in tokens {
            let phase = cases.last().copied();
            match token {
                Token::Operator(op, _) => {
                    let op = op.as_str();
                    match op {
                        "(" | "((" if phase == Some(Case::Pattern) => {}
                        "(" => d.open(),
                        "((" => {
                            d.open();
                            d.open();
                        }
                        ")" if phase == Some(Case::Pattern) => {
                            if let Some(case) = cases.last_mut() {
                                *case = Case::Body;
                            }
                        }
                        ")" => d.close(),
                        "))" => {
                            d.close();
                            d.close();
                        }
                        ";;" | ";&" | ";;&" if phase == Some(Case::Body) => {
                            if let Some(case) = cases.last_mut() {
                                *case = Case::Pattern;
                            }
                        }
                        "<<" | "<<-" => skip = 3,
                        "<" | ">" | ">>" | "<>" | ">|" | "<&" | ">&" | "&>" | "&>>" | "<<<" => {
                            skip = 1;
                        }
                        _ => {}
                    }
                    at_command = !op.starts_with(['<', '>']);
                }
                Token::Word(word, _) => {
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    let word = word.as_str();
                    match phase {
                        Some(Case::Subject) => {
                            if let Some(case) = cases.last_mut() {
                                *case = Case::In;
                            }
                            continue;
                        }
                        Some(Case::In) => {
                            if let Some(case) = cases.last_mut() {
                                *case = Case::Pattern;
                            }
                            continue;
                        }
                        Some(Case::Pattern) => {
                            if word == "esac" {
                                d.close();
                                cases.pop();
                                at_command = false;
                            }
                            continue;
                        }
                        _ => {}
                    }
                    if !at_command {
                        continue;
                    }
                    match word {
                        "{" | "if" | "while" | "until" => d.open(),
                        "for" | "select" => {
                            d.open();
                            at_command = false;
                            continue;
                        }
                        "case" => {
                            d.open();
                            cases.push(Case::Subject);
                        }
                        "}" | "fi" | "done" => d.close(),
                        "esac" => {
                            d.close();
                            cases.pop();
                        }
                        _ => {}
                    }
                    at_command = matches!(
                        word,
                        "{" | "if"
                            | "while"
                            | "until"
                            | "then"
                            | "do"
                            | "else"
                            | "elif"
                            | "!"
                            | "time"
                    );
                }
            }
        }
        d.deepest
    }

    fn open(&mut self) {
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
    }

    fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

static SELECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(^|[\s;&|(){}!])select(\s+[A-Za-z_][A-Za-z0-9_]*\s*(in\b|;|\n|do\b))")
        .expect("a valid pattern")
});

/// The script with each `select NAME …` loop written as a `for` loop, which brush's
/// parser reads (it has no `select`); the same length, so positions still match.
/// `None` when there is none.
pub(crate) fn select_as_for(script: &str) -> Option<String> {
    if !SELECT.is_match(script) {
        return None;
    }
    Some(
        SELECT
            .replace_all(script, |c: &regex::Captures<'_>| {
                format!("{}for   {}", &c[1], &c[2])
            })
            .into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(script: &str) -> usize {
        Depth::of(&brush_parser::tokenize_str(script).unwrap())
    }

    #[test]
    fn nesting_is_counted_on_tokens() {
        assert_eq!(depth("{ { ls; }; }"), 2);
        assert_eq!(depth("( ( ls ) )"), 2);
        assert_eq!(depth("if true; then if true; then ls; fi; fi"), 2);
        assert_eq!(depth("echo '((((' \"{{{{\" if if"), 0);
        assert_eq!(depth("cat <<fi\nfi\nfi\n( ls )"), 1);
        // A case pattern's `)` and an argument `}` close nothing.
        assert_eq!(depth("( case x in a) ( ls ) ;; (b) ls ;; esac )"), 3);
        assert_eq!(depth("{ echo } ; { echo } ; ls; }; }"), 2);
        let deep = "{ ".repeat(MAX_NESTING + 1) + "ls" + &"; }".repeat(MAX_NESTING + 1);
        assert!(nesting(&brush_parser::tokenize_str(&deep).unwrap()).is_err());
        assert_eq!(substitutions(&"$(ls) ${x} `y` <(z)".repeat(100)), 500);
        assert!(check_substitutions(&"$(".repeat(11), 10).is_err());
    }

    #[test]
    fn word_nesting_is_counted_inside_words() {
        assert_eq!(word_depth(b"plain"), 0);
        assert_eq!(word_depth(b"$(a)"), 1);
        assert_eq!(word_depth(b"\"$(echo ${x:-$(b)})\""), 4);
        assert_eq!(word_depth(b"'$($($('"), 0);
        assert_eq!(word_depth(b"$( (a) (b) )"), 1);
        let deep = "$(".repeat(40) + &")".repeat(40);
        assert!(word_nesting(&brush_parser::tokenize_str(&deep).unwrap()).is_err());
    }

    #[test]
    fn select_reads_as_for() {
        assert_eq!(
            select_as_for("select x in a b; do echo $x; done").as_deref(),
            Some("for    x in a b; do echo $x; done")
        );
        assert_eq!(select_as_for("echo selected"), None);
    }

    #[test]
    fn a_panic_is_an_error() {
        let out = contained(stack(0), DEADLINE, || -> u8 { panic!("boom") });
        assert!(out.unwrap_err().contains("boom"));
        assert_eq!(contained(stack(0), DEADLINE, || 7), Ok(7));
        let slow = contained(stack(0), Duration::from_millis(10), || {
            loop {
                std::thread::park();
            }
        });
        assert!(slow.unwrap_err().contains("longer than"));
    }
}
