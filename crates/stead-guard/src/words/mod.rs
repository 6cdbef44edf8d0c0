//! Shell words as the guard reads them: what a word stands for once the shell has
//! expanded it. Braces are expanded (`{stead,stop}` is two words), quotes and escapes
//! removed (`$'\x70kill'` is `pkill`), variables assigned earlier in the command
//! substituted and split on `$IFS` (`stead${IFS}stop` is two words), and what cannot be
//! known before the shell runs (a command substitution, a variable from the
//! environment) is marked so, together with the substitutions that will run.

mod ansi;
pub(crate) mod arith;
mod brace;
mod ops;
mod vars;

use brush_parser::ParserOptions;
use brush_parser::word::{
    self, Parameter, ParameterExpr, ParameterTestType, SpecialParameter, WordPiece,
    WordPieceWithSource,
};

pub(crate) use vars::{Lookup, Vars};

/// One word of a command line, as the shell hands it to the program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Arg {
    /// The word after expansion; an expansion the guard cannot know stays as written
    /// (`$UNIT`).
    pub text: String,
    /// Some of `text` is an expansion the guard cannot know.
    pub dynamic: bool,
    /// It holds an unquoted `*`, `?` or `[`: a pattern the shell matches against file
    /// names before the program sees it.
    pub glob: bool,
    /// It was written with quotes or escapes, which keeps the shell from reading it as
    /// an alias.
    pub quoted: bool,
    /// The scripts of the command substitutions in it: they run too.
    pub subs: Vec<String>,
}

impl Arg {
    /// A word whose text is known.
    pub fn literal(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            ..Self::default()
        }
    }

    /// A word whose text is not known (what `xargs` reads from its input).
    pub fn unknown(text: &str) -> Self {
        Self {
            dynamic: true,
            ..Self::literal(text)
        }
    }

    /// Whether the shell or the program could read it as something other than `text`.
    pub fn is_exact(&self) -> bool {
        !self.dynamic && !self.glob
    }
}

/// The words `raw` stands for, read with what is known of the variables: none (an
/// unquoted empty variable), one, or several (braces, splitting).
pub(crate) fn expand(raw: &str, vars: &Vars) -> Result<Vec<Arg>, String> {
    let mut fields = Fields::new(vars);
    match brace::alternatives(raw, vars) {
        brace::Braces::None => fields.word(raw, false)?,
        brace::Braces::Words(words) => {
            for word in &words {
                fields.word(word, false)?;
                fields.split();
            }
        }
        brace::Braces::TooMany => {
            // Still run its substitutions; the words themselves are past reading.
            fields.word(raw, false)?;
            fields.cur.dynamic = true;
        }
    }
    Ok(fields.finish())
}

/// The text `raw` stands for as one word, as in an assignment or a here-string, where
/// the shell neither expands braces nor splits.
pub(crate) fn scalar(raw: &str, vars: &Vars) -> Result<Arg, String> {
    let mut fields = Fields::new(vars);
    fields.word(raw, true)?;
    fields.cur.quoted = false;
    let mut all = fields.finish();
    Ok(match all.len() {
        0 => Arg::literal(""),
        1 => all.remove(0),
        _ => {
            let mut joined = all.remove(0);
            for more in all {
                joined.text.push(' ');
                joined.text.push_str(&more.text);
                joined.dynamic |= more.dynamic;
                joined.subs.extend(more.subs);
            }
            joined
        }
    })
}

/// The command substitutions in the body of a here-document whose delimiter is not
/// quoted (quotes in its body are plain characters), and the body as the shell would
/// feed it.
pub(crate) fn heredoc(body: &str, vars: &Vars) -> Result<Arg, String> {
    vars.parsing(body.len());
    let pieces = word::parse_heredoc(body, &ParserOptions::default()).map_err(|e| e.to_string())?;
    let mut fields = Fields::new(vars);
    fields.pieces(body, &pieces, true)?;
    Ok(fields.finish().into_iter().next().unwrap_or_default())
}

/// A backquoted script as the shell runs it: inside backquotes a backslash escapes only
/// `$`, `` ` `` and `\`, and in double quotes `"` (the parser has unescaped `` \` ``
/// already, and keeps the others). Quoted here also means in a here-document, where
/// `\"` stays: read as `"`, which only makes the guard more careful.
fn backquoted(script: &str, quoted: bool) -> String {
    let mut out = String::with_capacity(script.len());
    let mut chars = script.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(e @ ('$' | '\\')) => out.push(e),
            Some('"') if quoted => out.push('"'),
            Some(e) => {
                out.push('\\');
                out.push(e);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The last part of a path: `/usr/bin/pkill` runs `pkill`.
pub(crate) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether a program name is a glob pattern that matches `name`: `/usr/bin/pk?ll`
/// runs `pkill` if it is there.
pub(crate) fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = name.chars().collect();
    glob_chars(&pattern, &text)
}

/// Shell-style match of `*`, `?` and `[…]`, in time linear in the text for each star
/// (the classic backtracking on the last star only).
fn glob_chars(pattern: &[char], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() {
            match pattern[p] {
                '*' => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                '?' => {
                    p += 1;
                    t += 1;
                    continue;
                }
                '[' => {
                    if let Some((matched, len)) = class(&pattern[p..], text[t]) {
                        if matched {
                            p += len;
                            t += 1;
                            continue;
                        }
                    } else if text[t] == '[' {
                        p += 1;
                        t += 1;
                        continue;
                    }
                }
                c if c == text[t] => {
                    p += 1;
                    t += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                p = sp + 1;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// A bracket expression at the start of `pattern`: whether it matches `c`, and its
/// length; `None` when it is not closed (then `[` is a plain character).
fn class(pattern: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negated = matches!(pattern.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while let Some(&ch) = pattern.get(i) {
        if ch == ']' && !first {
            return Some((matched != negated, i + 1));
        }
        first = false;
        if pattern.get(i + 1) == Some(&'-') && pattern.get(i + 2).is_some_and(|e| *e != ']') {
            let end = pattern[i + 2];
            matched |= (ch..=end).contains(&c);
            i += 3;
        } else {
            matched |= ch == c;
            i += 1;
        }
    }
    None
}

/// How deeply expansions may nest inside one word (`${a:-${b:-…}}`): each level is
/// read again from its text, so the depth must be bounded for the work to stay linear.
const MAX_EXPANSION_DEPTH: usize = 16;

/// Builds the fields of one word, piece by piece.
struct Fields<'v> {
    vars: &'v Vars,
    /// How many expansions deep.
    depth: usize,
    done: Vec<Arg>,
    cur: Arg,
    /// The current field exists even if empty (`""` makes a field; an empty `$X`
    /// does not).
    open: bool,
}

impl<'v> Fields<'v> {
    fn new(vars: &'v Vars) -> Self {
        Self {
            vars,
            depth: 0,
            done: Vec::new(),
            cur: Arg::default(),
            open: false,
        }
    }

    fn finish(mut self) -> Vec<Arg> {
        self.split();
        self.done
    }

    /// Ends the current field.
    fn split(&mut self) {
        if self.open || !self.cur.text.is_empty() || self.cur.dynamic {
            self.done.push(std::mem::take(&mut self.cur));
        }
        self.open = false;
    }

    fn word(&mut self, raw: &str, quoted: bool) -> Result<(), String> {
        self.vars.parsing(raw.len());
        let pieces = word::parse(raw, &ParserOptions::default()).map_err(|e| e.to_string())?;
        self.pieces(raw, &pieces, quoted)
    }

    fn text(&mut self, text: &str, quoted: bool) {
        // `[` opens a pattern only with a `]` after it: a lone `[` is the test command.
        let class = text.find('[').is_some_and(|at| text[at..].contains(']'));
        if !quoted && (text.contains(['*', '?']) || class) {
            self.cur.glob = true;
        }
        self.cur.text.push_str(text);
        self.open = true;
    }

    fn unknown(&mut self, source: &str) {
        self.cur.text.push_str(source);
        self.cur.dynamic = true;
        self.open = true;
    }

    /// The value of an expansion: split on `$IFS` unless quoted.
    fn value(&mut self, value: &str, quoted: bool, source: &str) {
        if !self.vars.spend(value.len()) {
            return self.unknown(source);
        }
        if quoted {
            self.cur.text.push_str(value);
            self.open = true;
            return;
        }
        let Lookup::Known(ifs) = self.vars.get("IFS") else {
            return self.unknown(source);
        };
        let ifs = ifs.to_owned();
        for c in value.chars() {
            if !ifs.contains(c) {
                if matches!(c, '*' | '?' | '[') {
                    self.cur.glob = true;
                }
                self.cur.text.push(c);
                self.open = true;
            } else if c.is_whitespace() {
                if self.open || !self.cur.text.is_empty() {
                    self.split();
                }
            } else {
                // A non-blank separator ends a field even when it is empty.
                self.open = true;
                self.split();
            }
        }
    }

    fn pieces(
        &mut self,
        raw: &str,
        pieces: &[WordPieceWithSource],
        quoted: bool,
    ) -> Result<(), String> {
        for piece in pieces {
            let source = raw.get(piece.start_index..piece.end_index).unwrap_or("");
            match &piece.piece {
                WordPiece::Text(text) => self.text(text, quoted),
                WordPiece::SingleQuotedText(text) => {
                    self.cur.quoted = true;
                    self.text(text, true);
                }
                WordPiece::AnsiCQuotedText(text) => {
                    self.cur.quoted = true;
                    // A NUL ends the string, as bash's own strings end there.
                    let decoded = ansi::decode(text);
                    self.text(decoded.split('\0').next().unwrap_or(""), true);
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.cur.quoted = true;
                    self.open = true;
                    self.pieces(raw, inner, true)?;
                }
                WordPiece::TildeExpansion(_) => self.text(source, true),
                WordPiece::EscapeSequence(escape) => {
                    // A backslash before a newline joins lines; before anything else it
                    // stands for that character.
                    let escaped = escape.strip_prefix('\\').unwrap_or(escape);
                    self.cur.quoted = true;
                    if escaped != "\n" {
                        self.text(escaped, true);
                    }
                }
                WordPiece::CommandSubstitution(script) => {
                    self.unknown(source);
                    self.cur.subs.push(script.clone());
                }
                WordPiece::BackquotedCommandSubstitution(script) => {
                    self.unknown(source);
                    self.cur.subs.push(backquoted(script, quoted));
                }
                WordPiece::ParameterExpansion(expr) => self.parameter(expr, source, quoted)?,
                WordPiece::ArithmeticExpression(expr) => match arith::eval(&expr.value) {
                    Some(number) => self.value(&number.to_string(), quoted, source),
                    None => {
                        self.unknown(source);
                        self.subs_in(&expr.value)?;
                    }
                },
            }
        }
        Ok(())
    }

    /// Runs the substitutions inside text the guard does not otherwise read
    /// (`${x#$(cmd)}`, `$(( $(cmd) + 1 ))`).
    fn subs_in(&mut self, text: &str) -> Result<(), String> {
        let mut inner = Fields::new(self.vars);
        inner.depth = self.deeper()?;
        inner.word(text, true)?;
        let subs = inner.finish().into_iter().flat_map(|a| a.subs);
        self.cur.subs.extend(subs);
        Ok(())
    }

    fn parameter(
        &mut self,
        expr: &ParameterExpr,
        source: &str,
        quoted: bool,
    ) -> Result<(), String> {
        let inner = source
            .strip_prefix("${")
            .and_then(|s| s.strip_suffix('}'))
            .unwrap_or("");
        match expr {
            ParameterExpr::Parameter {
                parameter,
                indirect: false,
            } => self.lookup(parameter, source, quoted),
            ParameterExpr::UseDefaultValues {
                parameter,
                indirect: false,
                test_type,
                default_value,
            }
            | ParameterExpr::AssignDefaultValues {
                parameter,
                indirect: false,
                test_type,
                default_value,
            } => match self.set(parameter, test_type) {
                Some(true) => self.lookup(parameter, source, quoted),
                Some(false) => self.word_in(default_value.as_deref().unwrap_or(""), quoted)?,
                None => {
                    self.unknown(source);
                    self.subs_in(inner)?;
                }
            },
            ParameterExpr::UseAlternativeValue {
                parameter,
                indirect: false,
                test_type,
                alternative_value,
            } => match self.set(parameter, test_type) {
                Some(true) => self.word_in(alternative_value.as_deref().unwrap_or(""), quoted)?,
                Some(false) => self.open |= quoted,
                None => {
                    self.unknown(source);
                    self.subs_in(inner)?;
                }
            },
            other => {
                let known = match parameter_of(other) {
                    Some(parameter) => match self.vars.parameter(parameter) {
                        Lookup::Known(value) => {
                            let (vars, depth) = (self.vars, self.depth + 1);
                            let literal = move |raw: &str| literal(vars, depth, raw);
                            ops::apply(other, value, &literal)
                        }
                        _ => None,
                    },
                    None => None,
                };
                match known {
                    Some(value) => self.value(&value, quoted, source),
                    None => {
                        self.unknown(source);
                        self.subs_in(inner)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A word inside an expansion (`${X:-word}`), read in the quoting around it.
    fn word_in(&mut self, raw: &str, quoted: bool) -> Result<(), String> {
        if quoted {
            self.open = true;
        }
        self.vars.parsing(raw.len());
        let pieces = word::parse(raw, &ParserOptions::default()).map_err(|e| e.to_string())?;
        let outer = self.depth;
        self.depth = self.deeper()?;
        let read = self.pieces(raw, &pieces, quoted);
        self.depth = outer;
        read
    }

    /// One level deeper into nested expansions, within the limit.
    fn deeper(&self) -> Result<usize, String> {
        if self.depth >= MAX_EXPANSION_DEPTH {
            return Err(format!(
                "{}: expansions nested more than {MAX_EXPANSION_DEPTH} deep in one word",
                crate::limits::TOO_DEEP
            ));
        }
        Ok(self.depth + 1)
    }

    /// Whether a parameter counts as set for `${X:-…}` (set and, for `:-`, not empty);
    /// `None` when that is not known.
    fn set(&self, parameter: &Parameter, test: &ParameterTestType) -> Option<bool> {
        match self.vars.parameter(parameter) {
            Lookup::Known(value) => Some(match test {
                ParameterTestType::UnsetOrNull => !value.is_empty(),
                ParameterTestType::Unset => true,
            }),
            Lookup::Many(values) => Some(!values.is_empty()),
            Lookup::Unknown => None,
        }
    }

    fn lookup(&mut self, parameter: &Parameter, source: &str, quoted: bool) {
        match self.vars.parameter(parameter) {
            Lookup::Known(value) => {
                let value = value.to_owned();
                self.value(&value, quoted, source);
            }
            Lookup::Many(values) => {
                let values = values.to_vec();
                let all = matches!(
                    parameter,
                    Parameter::Special(SpecialParameter::AllPositionalParameters {
                        concatenate: false
                    })
                );
                if quoted && all {
                    // "$@": each parameter its own word.
                    for (at, value) in values.iter().enumerate() {
                        if at > 0 {
                            self.split();
                            self.open = true;
                        }
                        self.value(value, true, source);
                    }
                } else {
                    self.value(&values.join(" "), quoted, source);
                }
            }
            Lookup::Unknown => self.unknown(source),
        }
    }
}

/// The parameter a transforming expansion reads, unless it is read indirectly.
fn parameter_of(expr: &ParameterExpr) -> Option<&Parameter> {
    match expr {
        ParameterExpr::ParameterLength {
            parameter,
            indirect: false,
        }
        | ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::Substring {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::UppercaseFirstChar {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::UppercasePattern {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::LowercasePattern {
            parameter,
            indirect: false,
            ..
        }
        | ParameterExpr::ReplaceSubstring {
            parameter,
            indirect: false,
            ..
        } => Some(parameter),
        _ => None,
    }
}

/// A word inside an expansion (a pattern, a replacement) as literal text; `None` when
/// some of it is not known.
fn literal(vars: &Vars, depth: usize, raw: &str) -> Option<String> {
    let mut fields = Fields::new(vars);
    fields.depth = depth;
    fields.word(raw, true).ok()?;
    let arg = fields.finish().into_iter().next().unwrap_or_default();
    (!arg.dynamic && arg.subs.is_empty()).then_some(arg.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(raw: &str, vars: &Vars) -> Vec<String> {
        expand(raw, vars)
            .unwrap()
            .into_iter()
            .map(|a| a.text)
            .collect()
    }

    #[test]
    fn braces_quotes_and_escapes() {
        let vars = Vars::new(1 << 20);
        assert_eq!(words("{stead,stop}", &vars), ["stead", "stop"]);
        assert_eq!(words("web{,.service}", &vars), ["web", "web.service"]);
        assert_eq!(words("'{a,b}'", &vars), ["{a,b}"]);
        assert_eq!(words("$'\\x70kill'", &vars), ["pkill"]);
        assert_eq!(words("pk\\\nill", &vars), ["pkill"]);
        assert_eq!(words("a{1..3}", &vars), ["a1", "a2", "a3"]);
        assert!(expand("{1..100000}", &vars).unwrap()[0].dynamic);
    }

    #[test]
    fn variables_and_ifs() {
        let mut vars = Vars::new(1 << 20);
        assert_eq!(words("stead${IFS}stop", &vars), ["stead", "stop"]);
        vars.assign("S", Some("systemctl restart".into()), true);
        assert_eq!(words("$S", &vars), ["systemctl", "restart"]);
        assert_eq!(words("\"$S\"", &vars), ["systemctl restart"]);
        vars.assign("E", Some(String::new()), true);
        assert_eq!(words("$E", &vars), Vec::<String>::new());
        assert_eq!(words("\"$E\"", &vars), [""]);
        assert_eq!(words("${E:-stead}", &vars), ["stead"]);
        assert!(expand("$HOME", &vars).unwrap()[0].dynamic);
        vars.assign("IFS", Some(",".into()), true);
        vars.assign("L", Some("a,,b".into()), true);
        assert_eq!(words("$L", &vars), ["a", "", "b"]);
        vars.unset("IFS");
        assert_eq!(words("$S", &vars), ["systemctl", "restart"]);
    }

    #[test]
    fn operations_on_known_values() {
        let mut vars = Vars::new(1 << 20);
        vars.assign("x", Some("webx".into()), true);
        assert_eq!(words("${x%x}", &vars), ["web"]);
        assert_eq!(words("${x%?}", &vars), ["web"]);
        assert_eq!(words("${x/x/y}", &vars), ["weby"]);
        assert_eq!(words("${x:0:3}", &vars), ["web"]);
        assert_eq!(words("${x: -1}", &vars), ["x"]);
        assert_eq!(words("${x^^}", &vars), ["WEBX"]);
        assert_eq!(words("${#x}", &vars), ["4"]);
        assert_eq!(words("${x#w}", &vars), ["ebx"]);
        assert_eq!(words("${x##*e}", &vars), ["bx"]);
        assert_eq!(words("$((1 + 2))", &vars), ["3"]);
        assert_eq!(words("$'st\\0x'ead", &vars), ["stead"]);
        assert!(expand("${x/$y/z}", &vars).unwrap()[0].dynamic);
    }

    #[test]
    fn globs_are_marked_only_unquoted() {
        let vars = Vars::new(1 << 20);
        assert!(expand("systemct?", &vars).unwrap()[0].glob);
        assert!(!expand("'web*'", &vars).unwrap()[0].glob);
        assert!(glob_matches("pk?ll", "pkill"));
        assert!(glob_matches("s*", "systemctl"));
        assert!(glob_matches("[a-z]kill", "pkill"));
        assert!(!glob_matches("p[!k]ill", "pkill"));
    }
}
