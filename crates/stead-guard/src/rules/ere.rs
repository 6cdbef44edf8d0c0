//! POSIX extended regular expressions as pkill, pgrep and killall read them (glibc's
//! `regcomp` with `REG_EXTENDED`), written in the regex crate's syntax. The two differ
//! where it matters to a pattern: glibc reads an escaped letter as the letter (`\d` is
//! `d`, `\t` is `t`), a backslash in brackets as a backslash (`[\d]` is `\` or `d`),
//! `{,n}` as `{0,n}`, a `)` with no `(` as itself, and knows back-references (`\1`);
//! it rejects `(?i)`, and an operator with nothing before it (`*a`, `(+a)`).
//!
//! A back-reference is written as the group it refers to, again: that matches at least
//! what it does, and the translation says it is inexact. A counted repetition is
//! capped at [`MAX_REPEAT`], longer than the lines a pattern is compared with.

use regex_syntax::escape_into;

/// The longest repetition written: longer than any line a pattern is compared with, so
/// a longer one matches the same lines, and the engine does not reject `\w{1,1000}`
/// (which pkill accepts, and which matches every process).
const MAX_REPEAT: u32 = 256;

/// The most a count may be (glibc's `RE_DUP_MAX`).
const DUP_MAX: u32 = 0x7fff;

/// How deeply groups and repetitions of repetitions may nest: the regex crate's own
/// limit, which also keeps the reading's recursion and the rewriting of stacked
/// operators (`a****`) bounded.
const MAX_NESTING: usize = 250;

/// The names glibc knows in `[[:NAME:]]`.
const CLASSES: &[&str] = &[
    "alpha", "upper", "lower", "digit", "xdigit", "space", "print", "punct", "graph", "cntrl",
    "blank", "alnum",
];

/// A pattern in the regex crate's syntax.
pub(super) struct Translated {
    pub source: String,
    /// It matches exactly what the pattern does; else at least that (a back-reference).
    pub exact: bool,
}

/// `pattern` in the regex crate's syntax; `None` when glibc rejects it.
pub(super) fn translated(pattern: &str) -> Option<Translated> {
    let mut reader = Reader {
        chars: pattern.chars().collect(),
        at: 0,
        groups: Vec::new(),
        exact: true,
    };
    let source = reader.alternation(0)?;
    match reader.at == reader.chars.len() {
        true => Some(Translated {
            source,
            exact: reader.exact,
        }),
        false => None,
    }
}

struct Reader {
    chars: Vec<char>,
    at: usize,
    /// What each closed group was written as, by number (`None` while open).
    groups: Vec<Option<String>>,
    exact: bool,
}

/// One piece of a branch: what it was written as, and what it may be repeated as.
struct Piece {
    source: String,
    kind: Kind,
    /// How many times it was grouped to be repeated again.
    wrapped: usize,
}

impl Piece {
    fn new(source: String, kind: Kind) -> Piece {
        Piece {
            source,
            kind,
            wrapped: 0,
        }
    }
}

#[derive(PartialEq)]
enum Kind {
    /// A character, a class, a group: one operator may follow.
    Atom,
    /// Repeated already: another operator repeats the whole (`a**`, `a{2}*`).
    Repeated,
    /// `^`, `$`, or an assertion (`\b`, `\<`): glibc takes no operator after it.
    Anchor,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    /// Branches separated by `|`, up to the `)` that closes the group at `depth`.
    fn alternation(&mut self, depth: usize) -> Option<String> {
        let mut branches = vec![self.branch(depth)?];
        while self.peek() == Some('|') {
            self.at += 1;
            branches.push(self.branch(depth)?);
        }
        Some(branches.join("|"))
    }

    fn branch(&mut self, depth: usize) -> Option<String> {
        let mut pieces: Vec<Piece> = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                '|' => break,
                ')' if depth > 0 => break,
                '*' | '+' | '?' | '{' => {
                    self.at += 1;
                    let op = match c {
                        '{' => self.interval()?,
                        _ => c.to_string(),
                    };
                    let last = pieces.last_mut().filter(|p| p.kind != Kind::Anchor)?;
                    if last.kind == Kind::Repeated {
                        last.wrapped += 1;
                        (last.wrapped + depth <= MAX_NESTING).then_some(())?;
                        last.source = format!("(?:{})", last.source);
                    }
                    last.source.push_str(&op);
                    last.kind = Kind::Repeated;
                }
                _ => pieces.push(self.atom(depth)?),
            }
        }
        Some(pieces.into_iter().map(|p| p.source).collect())
    }

    fn atom(&mut self, depth: usize) -> Option<Piece> {
        let c = self.next()?;
        let atom = |source: String| Some(Piece::new(source, Kind::Atom));
        match c {
            '(' if depth >= MAX_NESTING => None,
            '(' => {
                let number = self.groups.len();
                self.groups.push(None);
                let inner = self.alternation(depth + 1)?;
                (self.next()? == ')').then_some(())?;
                let source = format!("({inner})");
                self.groups[number] = Some(source.clone());
                atom(source)
            }
            '[' => atom(self.bracket()?),
            '.' => atom("(?s:.)".to_owned()),
            '^' | '$' => Some(Piece::new(c.to_string(), Kind::Anchor)),
            '\\' => self.escape(),
            c => atom(literal(c)),
        }
    }

    /// After a backslash.
    fn escape(&mut self) -> Option<Piece> {
        let c = self.next()?;
        let (source, kind) = match c {
            'w' | 'W' | 's' | 'S' => (format!("\\{c}"), Kind::Atom),
            'b' | 'B' | '<' | '>' => (format!("\\{c}"), Kind::Anchor),
            '`' => ("\\A".to_owned(), Kind::Anchor),
            '\'' => ("\\z".to_owned(), Kind::Anchor),
            '1'..='9' => {
                let number = c.to_digit(10)? as usize - 1;
                let group = self.groups.get(number)?.clone()?;
                self.exact = false;
                (format!("(?:{group})"), Kind::Atom)
            }
            c => (literal(c), Kind::Atom),
        };
        Some(Piece::new(source, kind))
    }

    /// After `{`: `{m}`, `{m,}`, `{m,n}`, `{,n}`, as the regex crate's `{m,n}`.
    fn interval(&mut self) -> Option<String> {
        let low = self.number();
        let high = match self.peek() == Some(',') {
            true => {
                self.at += 1;
                self.number()
            }
            // `{}` and `{x}` count nothing.
            false => Some(low?),
        };
        (self.next()? == '}').then_some(())?;
        let low = low.unwrap_or(0);
        if low > DUP_MAX || high.is_some_and(|h| h > DUP_MAX || h < low) {
            return None;
        }
        let low = low.min(MAX_REPEAT);
        Some(match high {
            Some(high) => format!("{{{low},{}}}", high.min(MAX_REPEAT)),
            None => format!("{{{low},}}"),
        })
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let digits: String = self.chars[start..self.at].iter().collect();
        match digits.is_empty() {
            true => None,
            // More digits than a u32 holds are more than `DUP_MAX`.
            false => Some(digits.parse().unwrap_or(u32::MAX)),
        }
    }

    /// After `[`: a bracket expression, whose backslash is a plain character.
    fn bracket(&mut self) -> Option<String> {
        let mut source = String::from("[");
        if self.peek() == Some('^') {
            self.at += 1;
            source.push('^');
        }
        let mut first = true;
        loop {
            let c = self.next()?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let start = match (c, self.peek()) {
                ('[', Some(':')) => {
                    self.at += 1;
                    let name = self.until(':')?;
                    CLASSES.contains(&name.as_str()).then_some(())?;
                    source.push_str(&format!("[:{name}:]"));
                    continue;
                }
                ('[', Some(kind @ ('=' | '.'))) => {
                    self.at += 1;
                    self.element(kind)?
                }
                (c, _) => c,
            };
            let ranged = self.peek() == Some('-') && self.chars.get(self.at + 1) != Some(&']');
            if !ranged {
                source.push_str(&literal(start));
                continue;
            }
            self.at += 1;
            // A collating element may end a range; a class or an equivalence may not.
            let end = match (self.next()?, self.peek()) {
                ('[', Some('.')) => {
                    self.at += 1;
                    self.element('.')?
                }
                ('[', Some(':' | '=')) => return None,
                (end, _) => end,
            };
            if end < start {
                return None;
            }
            source.push_str(&format!("{}-{}", literal(start), literal(end)));
        }
        source.push(']');
        Some(source)
    }

    /// After `[=` or `[.`: the one character it names (glibc knows no longer names).
    fn element(&mut self, kind: char) -> Option<char> {
        let name = self.until(kind)?;
        let mut chars = name.chars();
        let only = chars.next()?;
        chars.next().is_none().then_some(only)
    }

    /// The text up to `kind` followed by `]` (the end of `[:…:]`, `[=…=]`, `[.….]`).
    fn until(&mut self, kind: char) -> Option<String> {
        let start = self.at;
        while !(self.peek()? == kind && self.chars.get(self.at + 1) == Some(&']')) {
            self.at += 1;
        }
        let name = self.chars[start..self.at].iter().collect();
        self.at += 2;
        Some(name)
    }
}

/// One character, matching only itself.
fn literal(c: char) -> String {
    let mut out = String::new();
    escape_into(c.encode_utf8(&mut [0; 4]), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust(pattern: &str) -> Option<String> {
        translated(pattern).map(|t| t.source)
    }

    #[test]
    fn escaped_letters_are_letters_and_brackets_hold_backslashes() {
        assert_eq!(rust(r"stea\d").as_deref(), Some("stead"));
        assert_eq!(rust(r"s\tead").as_deref(), Some("stead"));
        assert_eq!(rust(r"stea[\d]").as_deref(), Some(r"stea[\\d]"));
        assert_eq!(rust(r"\w\<\.").as_deref(), Some(r"\w\<\."));
        assert_eq!(rust("a{,3}").as_deref(), Some("a{0,3}"));
        assert_eq!(rust("a**").as_deref(), Some("(?:a*)*"));
        assert_eq!(rust("serve)").as_deref(), Some(r"serve\)"));
        assert_eq!(
            rust("[]a-c[:digit:]-]").as_deref(),
            Some(r"[\]a-c[:digit:]\-]")
        );
        assert_eq!(rust("[[.-.]x]").as_deref(), Some(r"[\-x]"));
        assert_eq!(rust(r"\w{1,1000}").as_deref(), Some(r"\w{1,256}"));
    }

    #[test]
    fn a_back_reference_is_its_group_again_and_inexact() {
        let t = translated(r"(e)rv\1").unwrap();
        assert_eq!(t.source, "(e)rv(?:(e))");
        assert!(!t.exact);
        assert!(translated("(e)rv").unwrap().exact);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "(".repeat(100_000) + &")".repeat(100_000);
        assert!(rust(&deep).is_none());
        assert!(rust(&("a".to_owned() + &"*".repeat(100_000))).is_none());
        let fine = "(".repeat(200) + "a" + &")".repeat(200) + &"*".repeat(40);
        assert!(rust(&fine).is_some());
    }

    #[test]
    fn what_glibc_rejects_is_rejected() {
        for pattern in [
            "(?i)x",
            "*a",
            "+a",
            "{1}s",
            "^*a",
            "a|*b",
            "(a",
            "a{",
            "a{1,",
            "a{x}",
            "a{3,1}",
            "a{40000}",
            r"a\",
            r"(e)\2",
            "[a",
            "[[:foo:]]",
            "[z-a]",
            "[[.space.]]",
            "[a-[:alpha:]]",
            "a{}",
        ] {
            assert!(rust(pattern).is_none(), "{pattern}");
        }
    }
}
