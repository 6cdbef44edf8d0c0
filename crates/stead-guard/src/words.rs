//! Shell words as the guard reads them: the text a word stands for once its quotes are
//! removed, whether an expansion makes that text unknowable before the shell runs, and
//! the command substitutions it would run along the way.

use brush_parser::ParserOptions;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};

/// One word of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Arg {
    /// The word with quotes removed; an expansion stays as written (`$UNIT`), since its
    /// value is only known when the shell runs.
    pub text: String,
    /// Some of `text` is an expansion the guard cannot know.
    pub dynamic: bool,
    /// The scripts of the command substitutions in it: they run too.
    pub subs: Vec<String>,
}

impl Arg {
    /// A word whose text is known.
    pub fn literal(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            dynamic: false,
            subs: Vec::new(),
        }
    }

    /// A word whose text is not known (what `xargs` reads from its input).
    pub fn unknown(text: &str) -> Self {
        Self {
            dynamic: true,
            ..Self::literal(text)
        }
    }

    /// Reads a word as the shell would split its pieces.
    pub fn read(raw: &str) -> Result<Self, String> {
        let pieces = word::parse(raw, &ParserOptions::default()).map_err(|e| e.to_string())?;
        let mut arg = Self::literal("");
        arg.take(raw, &pieces)?;
        Ok(arg)
    }

    fn take(&mut self, raw: &str, pieces: &[WordPieceWithSource]) -> Result<(), String> {
        for piece in pieces {
            let source = raw.get(piece.start_index..piece.end_index).unwrap_or("");
            match &piece.piece {
                WordPiece::Text(text) | WordPiece::SingleQuotedText(text) => {
                    self.text.push_str(text);
                }
                WordPiece::AnsiCQuotedText(text) => {
                    // `$'\x70kill'` is `pkill`, but decoding every escape is not worth it:
                    // a word with escapes counts as unknown instead.
                    self.text.push_str(text);
                    self.dynamic |= text.contains('\\');
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => self.take(raw, inner)?,
                WordPiece::TildeExpansion(_) => self.text.push_str(source),
                WordPiece::EscapeSequence(escape) => {
                    // A backslash before a newline joins lines; before anything else it
                    // stands for that character.
                    let escaped = escape.strip_prefix('\\').unwrap_or(escape);
                    if escaped != "\n" {
                        self.text.push_str(escaped);
                    }
                }
                WordPiece::CommandSubstitution(script)
                | WordPiece::BackquotedCommandSubstitution(script) => {
                    self.expansion(source);
                    self.subs.push(script.clone());
                }
                WordPiece::ParameterExpansion(_) => {
                    self.expansion(source);
                    // `${x:-$(pkill stead)}` runs its default's substitution.
                    let inner = source.strip_prefix("${").and_then(|s| s.strip_suffix('}'));
                    if let Some(inner) = inner {
                        self.subs.extend(subs_in(inner)?);
                    }
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.expansion(source);
                    self.subs.extend(subs_in(&expr.value)?);
                }
            }
        }
        Ok(())
    }

    fn expansion(&mut self, source: &str) {
        self.text.push_str(source);
        self.dynamic = true;
    }
}

/// The command substitutions in a piece of text read as a word.
pub(super) fn subs_in(text: &str) -> Result<Vec<String>, String> {
    Ok(Arg::read(text)?.subs)
}

/// The command substitutions in the body of a here-document whose delimiter is not
/// quoted (quotes in its body are plain characters).
pub(super) fn heredoc_subs(body: &str) -> Result<Vec<String>, String> {
    let pieces = word::parse_heredoc(body, &ParserOptions::default()).map_err(|e| e.to_string())?;
    let mut arg = Arg::literal("");
    arg.take(body, &pieces)?;
    Ok(arg.subs)
}

/// The last part of a path: `/usr/bin/pkill` runs `pkill`.
pub(super) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
