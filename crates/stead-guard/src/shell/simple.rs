//! A simple command as the shell runs it: its words read, the substitutions and
//! redirections in them walked, wrappers looked through, and what it hands a shell
//! (`sh -c SCRIPT`, a here-document, `eval`) read as a script of its own.

use brush_parser::ast::{self, CommandPrefixOrSuffixItem as Item};
use brush_parser::ast::{IoFileRedirectTarget, IoRedirect, SourceLocation};

use super::{Event, Scope, Walker};
use crate::words::{self, Arg, basename};
use crate::wrappers::{self, ShellInput};

impl Walker {
    pub(super) fn simple(&mut self, simple: &ast::SimpleCommand, scope: Scope<'_>, piped: bool) {
        let mut stdin = Vec::new();
        let prefix = simple.prefix.iter().flat_map(|p| &p.0);
        for item in prefix.chain(simple.suffix.iter().flat_map(|s| &s.0)) {
            match item {
                Item::IoRedirect(redirect) => stdin.extend(self.redirect(redirect, scope)),
                Item::ProcessSubstitution(_, subshell) => {
                    self.list(&subshell.list, scope);
                }
                Item::Word(word) | Item::AssignmentWord(_, word) => self.word(&word.value, scope),
            }
        }
        if let Some(name) = &simple.word_or_name {
            self.word(&name.value, scope);
        }
        let Some(argv) = wrappers::unwrap(argv_of(simple)) else {
            return;
        };
        let text = text_of(simple, scope.source);
        match wrappers::shell_input(&argv) {
            Some(ShellInput::Script(script)) => match script.dynamic {
                false => self.nested(&script.text, "the script of a shell", scope),
                true => self.opaque(&text, format!("the script `{}`", script.text), scope),
            },
            Some(ShellInput::Stdin) => {
                for body in &stdin {
                    self.nested(body, "the script fed to a shell", scope);
                }
                if piped {
                    self.opaque(&text, "what is piped into a shell".to_owned(), scope);
                }
            }
            None if basename(&argv[0].text) == "eval" => self.eval(&argv[1..], &text, scope),
            None => {}
        }
        self.events.push(Event::Command {
            argv,
            text,
            gated: scope.gated.clone(),
        });
    }

    fn eval(&mut self, args: &[Arg], text: &str, scope: Scope<'_>) {
        if args.iter().any(|a| a.dynamic) {
            return self.opaque(text, "what `eval` is given".to_owned(), scope);
        }
        let script: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        self.nested(&script.join(" "), "the script of `eval`", scope);
    }

    pub(super) fn redirects(&mut self, redirects: Option<&ast::RedirectList>, scope: Scope<'_>) {
        for redirect in redirects.iter().flat_map(|r| &r.0) {
            self.redirect(redirect, scope);
        }
    }

    /// Walks a redirection; returns what it feeds to standard input as text, for a
    /// shell that would run it.
    fn redirect(&mut self, redirect: &IoRedirect, scope: Scope<'_>) -> Option<String> {
        match redirect {
            IoRedirect::File(_, _, target) => match target {
                IoFileRedirectTarget::Filename(word) | IoFileRedirectTarget::Duplicate(word) => {
                    self.word(&word.value, scope);
                }
                IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                    self.list(&subshell.list, scope);
                }
                IoFileRedirectTarget::Fd(_) => {}
            },
            IoRedirect::HereDocument(_, doc) => {
                // A quoted delimiter (`<<'EOF'`) makes the body plain data.
                if doc.requires_expansion {
                    match words::heredoc_subs(&doc.doc.value) {
                        Ok(subs) => self.subs(&subs, scope),
                        Err(e) => {
                            self.opaque(&doc.doc.value, format!("a here-document ({e})"), scope)
                        }
                    }
                }
                return Some(doc.doc.value.clone());
            }
            IoRedirect::HereString(_, word) => {
                self.word(&word.value, scope);
                return Some(read_arg(&word.value).text);
            }
            IoRedirect::OutputAndError(word, _) => self.word(&word.value, scope),
        }
        None
    }

    /// Walks the command substitutions of a word.
    pub(super) fn word(&mut self, raw: &str, scope: Scope<'_>) {
        match Arg::read(raw) {
            Ok(arg) => self.subs(&arg.subs, scope),
            Err(e) => self.opaque(raw, format!("the word `{raw}` ({e})"), scope),
        }
    }

    fn subs(&mut self, subs: &[String], scope: Scope<'_>) {
        for script in subs {
            self.nested(script, "a command substitution", scope);
        }
    }
}

/// The words a simple command runs: its name and arguments, without assignments before
/// it or redirections.
pub(super) fn argv_of(simple: &ast::SimpleCommand) -> Vec<Arg> {
    let suffix = simple
        .suffix
        .iter()
        .flat_map(|s| &s.0)
        .filter_map(|item| match item {
            Item::Word(word) | Item::AssignmentWord(_, word) => Some(word),
            _ => None,
        });
    simple
        .word_or_name
        .iter()
        .chain(suffix)
        .map(|w| read_arg(&w.value))
        .collect()
}

fn read_arg(raw: &str) -> Arg {
    Arg::read(raw).unwrap_or_else(|_| Arg::unknown(raw))
}

/// A simple command as written in `source`.
fn text_of(simple: &ast::SimpleCommand, source: &str) -> String {
    let items = simple.prefix.iter().flat_map(|p| &p.0);
    let items = items.chain(simple.suffix.iter().flat_map(|s| &s.0));
    let spans = items.filter_map(SourceLocation::location);
    let spans = spans.chain(
        simple
            .word_or_name
            .as_ref()
            .and_then(SourceLocation::location),
    );
    let (start, end) = spans.fold((usize::MAX, 0), |(start, end), span| {
        (start.min(span.start.index), end.max(span.end.index))
    });
    if start >= end {
        return simple.to_string();
    }
    // Source positions count characters, not bytes.
    source.chars().skip(start).take(end - start).collect()
}
