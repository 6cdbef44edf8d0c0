//! A simple command as the shell runs it: its redirections, its assignments, its words
//! expanded, then what it runs: a function or alias the command defined, a builtin
//! that runs code (`eval`, `trap`, `source`), or a program, with whatever that
//! program runs in turn (see `programs`).

use brush_parser::ast::{self, CommandPrefixOrSuffixItem as Item};
use brush_parser::ast::{
    IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, ProcessSubstitutionKind,
};

use std::rc::Rc;

use super::{Event, Scope, Stdin, Walker};
use crate::continuation;
use crate::limits::MISREAD;
use crate::programs::{self, Inner, Via};
use crate::stead_cmd::{self, Gates};
use crate::words::{self, Arg, basename, glob_matches};

/// How many programs deep the guard looks through wrappers (`sudo nice timeout …`).
const MAX_HOPS: usize = 32;

/// The most program names a glob in a program's place is read as.
const MAX_CANDIDATES: usize = 8;

/// Variables whose value is a command another program runs.
const COMMAND_VARIABLES: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EDITOR",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_SEQUENCE_EDITOR",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "LESSOPEN",
    "PROMPT_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_PROXY_COMMAND",
];

/// Variables naming a file a shell sources as it starts.
const SOURCED_VARIABLES: &[&str] = &["BASH_ENV", "ENV"];

/// Prompts, whose substitutions run each time one is shown (`PS4` with `bash -x`).
const PROMPT_VARIABLES: &[&str] = &["PS0", "PS1", "PS2", "PS3", "PS4"];

/// Programs that write to files they are given.
const WRITERS: &[&str] = &[
    "tee", "dd", "cp", "mv", "install", "sponge", "truncate", "rsync",
];

/// Builtins that assign the variables they are given (`export X=1`).
const ASSIGNING: &[&str] = &["export", "declare", "local", "readonly", "typeset"];

/// Builtins that give variables values the guard cannot know.
const READING: &[&str] = &["read", "mapfile", "readarray", "getopts", "let"];

/// The simple command a command line comes from.
pub(super) struct Site {
    text: String,
    /// Where it starts in its script (script id, byte offset).
    at: (usize, usize),
    stdin: Stdin,
}

/// What a command line's environment was given on the way to it, before it or through
/// the wrappers it passed (`X=… cmd`, `env X=… cmd`, `sudo X=… cmd`): what decides
/// whether a gate is aimed at the guard's ledger and run by the real stead.
#[derive(Debug, Clone, Default)]
pub(super) struct Env {
    state_dir: Option<Arg>,
    path: bool,
}

impl Env {
    fn assigned(&mut self, name: &str, value: Option<Arg>) {
        if name == stead_cmd::STATE_DIR_ENV {
            self.state_dir = Some(value.unwrap_or_else(|| Arg::unknown("$STEAD_STATE_DIR")));
        }
        self.path |= name == "PATH";
    }

    /// What a wrapper's own `NAME=value` words add (`env STEAD_STATE_DIR=… stead gate`).
    fn through(mut self, argv: &[Arg]) -> Env {
        for name in [stead_cmd::STATE_DIR_ENV, "PATH"] {
            if let Some(value) = assigned_before(argv, name) {
                self.assigned(name, Some(value));
            }
        }
        self
    }
}

impl Walker<'_> {
    pub(super) fn simple(&mut self, simple: &ast::SimpleCommand, scope: Scope<'_>) -> Gates {
        let (text, offset) = scope.source.simple(simple);
        let mut stdin = scope.stdin.clone();
        let mut assignments = Vec::new();
        for item in simple.prefix.iter().flat_map(|p| &p.0) {
            match item {
                Item::AssignmentWord(assignment, _) => {
                    assignments.push(self.assignment(assignment, scope));
                }
                other => self.item(other, scope, &mut stdin, &mut Vec::new()),
            }
        }
        let mut argv = Vec::new();
        if let Some(name) = &simple.word_or_name {
            argv.extend(self.expand(&name.value, scope));
        }
        for item in simple.suffix.iter().flat_map(|s| &s.0) {
            self.item(item, scope, &mut stdin, &mut argv);
        }
        if simple.word_or_name.is_none() || argv.is_empty() {
            // Assignments alone set the shell's variables.
            for (name, value) in assignments {
                if let Some(value) = &value {
                    self.variable(&name, value, &text, &stdin, scope);
                }
                self.vars.assign(
                    &name,
                    value.filter(|v| v.is_exact()).map(|v| v.text),
                    scope.certain,
                );
            }
            return Gates::new();
        }
        let mut env = Env::default();
        for (name, value) in &assignments {
            if let Some(value) = value {
                self.variable(name, value, &text, &stdin, scope);
            }
            env.assigned(name, value.clone());
        }
        let site = Site {
            text,
            at: (scope.source.id, offset),
            stdin,
        };
        self.run(argv, &site, env, scope, 0)
    }

    /// An assignment word: its name and value (`None` for an array), with the
    /// substitutions in it walked.
    fn assignment(
        &mut self,
        assignment: &ast::Assignment,
        scope: Scope<'_>,
    ) -> (String, Option<Arg>) {
        let name = match &assignment.name {
            ast::AssignmentName::VariableName(name) => name.clone(),
            ast::AssignmentName::ArrayElementName(name, _) => name.clone(),
        };
        let value = match &assignment.value {
            ast::AssignmentValue::Scalar(word) => match words::scalar(&word.value, &self.vars) {
                Ok(value) => {
                    self.subs(&value.subs, scope);
                    Some(value)
                }
                Err(e) => {
                    self.unreadable_word(&word.value, e, scope);
                    None
                }
            },
            ast::AssignmentValue::Array(elements) => {
                for (key, value) in elements {
                    for word in key.iter().chain([value]) {
                        self.expand(&word.value, scope);
                    }
                }
                None
            }
        };
        let value = match (assignment.append, &value) {
            (true, Some(more)) => match self.vars.get(&name) {
                words::Lookup::Known(before) => Some(Arg {
                    text: format!("{before}{}", more.text),
                    ..more.clone()
                }),
                _ => None,
            },
            _ => value,
        };
        (name, value)
    }

    /// A word, redirection or process substitution of a simple command.
    fn item(&mut self, item: &Item, scope: Scope<'_>, stdin: &mut Stdin, argv: &mut Vec<Arg>) {
        match item {
            Item::IoRedirect(redirect) => self.redirect(redirect, scope, stdin),
            Item::ProcessSubstitution(kind, subshell) => {
                self.substitution(kind, subshell, scope);
                argv.push(Arg::unknown("(a process substitution)"));
            }
            Item::Word(word) | Item::AssignmentWord(_, word) => {
                argv.extend(self.expand(&word.value, scope));
            }
        }
    }

    /// A process substitution: `>( … )` reads what is written to it.
    fn substitution(
        &mut self,
        kind: &ProcessSubstitutionKind,
        subshell: &ast::SubshellCommand,
        scope: Scope<'_>,
    ) {
        let fed = Stdin {
            unknown: true,
            ..Stdin::default()
        };
        let inner = match kind {
            ProcessSubstitutionKind::Write => scope.fed(&fed),
            ProcessSubstitutionKind::Read => scope,
        };
        self.list(&subshell.list, inner.unsure());
    }

    /// The redirections of a compound command or a function's body; returns what its
    /// commands read on standard input.
    pub(super) fn redirects(
        &mut self,
        redirects: Option<&ast::RedirectList>,
        scope: Scope<'_>,
    ) -> Stdin {
        let mut stdin = scope.stdin.clone();
        for redirect in redirects.iter().flat_map(|r| &r.0) {
            self.redirect(redirect, scope, &mut stdin);
        }
        stdin
    }

    /// Walks a redirection, and adds what it feeds to `stdin`. Here-documents and
    /// here-strings on any descriptor count: `/dev/fd/3` and `<&3` read them too.
    fn redirect(&mut self, redirect: &IoRedirect, scope: Scope<'_>, stdin: &mut Stdin) {
        match redirect {
            IoRedirect::File(fd, kind, target) => {
                let input = matches!(
                    kind,
                    IoFileRedirectKind::Read
                        | IoFileRedirectKind::ReadAndWrite
                        | IoFileRedirectKind::DuplicateInput
                );
                stdin.unknown |= input && fd.is_none_or(|fd| fd == 0);
                match target {
                    IoFileRedirectTarget::Filename(word)
                    | IoFileRedirectTarget::Duplicate(word) => {
                        let targets = self.expand(&word.value, scope);
                        if !input {
                            for target in &targets {
                                self.written(&target.text, scope);
                            }
                        }
                    }
                    IoFileRedirectTarget::ProcessSubstitution(kind, subshell) => {
                        self.substitution(kind, subshell, scope);
                    }
                    IoFileRedirectTarget::Fd(_) => {}
                }
            }
            IoRedirect::HereDocument(_, doc) => {
                // A quoted delimiter (`<<'EOF'`) makes the body plain data.
                let body = match doc.requires_expansion {
                    true => match words::heredoc(&self.here_body(doc, scope), &self.vars) {
                        Ok(body) => {
                            self.subs(&body.subs, scope);
                            body.text
                        }
                        Err(e) => {
                            self.unreadable_word(&doc.doc.value, e, scope);
                            doc.doc.value.clone()
                        }
                    },
                    false => doc.doc.value.clone(),
                };
                stdin.docs.push(body.into());
            }
            IoRedirect::HereString(_, word) => match words::scalar(&word.value, &self.vars) {
                Ok(value) => {
                    self.subs(&value.subs, scope);
                    stdin.unknown |= value.dynamic;
                    stdin.docs.push(value.text.into());
                }
                Err(e) => {
                    self.unreadable_word(&word.value, e, scope);
                    stdin.unknown = true;
                }
            },
            IoRedirect::OutputAndError(word, _) => {
                for target in self.expand(&word.value, scope) {
                    self.written(&target.text, scope);
                }
            }
        }
    }

    /// The body of an unquoted here-document as the shell reads it, its continued
    /// lines joined (the parser's keeps them); where the shell ends it elsewhere than
    /// the parser did, the command cannot be read.
    fn here_body(&mut self, doc: &ast::IoHereDocument, scope: Scope<'_>) -> String {
        let raw = doc
            .doc
            .loc
            .as_ref()
            .and_then(|span| scope.source.slice(span));
        let body =
            raw.and_then(|raw| continuation::here_body(raw, &doc.here_end.value, doc.remove_tabs));
        match body {
            Some(body) => body,
            None => {
                if !scope.lenient {
                    self.limit = Some(format!(
                        "{MISREAD}: the shell joins the lines of a here-document continued with a backslash before it looks for its delimiter `{}`, and so ends it elsewhere",
                        doc.here_end.value
                    ));
                }
                doc.doc.value.clone()
            }
        }
    }

    /// A variable whose value something else runs: a command (`GIT_SSH_COMMAND`), a
    /// file a shell sources (`BASH_ENV=/dev/stdin`), a prompt's substitutions (`PS4`),
    /// perl's options (`PERL5OPT`, which can load code).
    fn variable(&mut self, name: &str, value: &Arg, text: &str, stdin: &Stdin, scope: Scope<'_>) {
        let scope = scope.unsure();
        if COMMAND_VARIABLES.contains(&name) {
            self.script(value, &format!("the command in `{name}`"), text, scope);
        } else if SOURCED_VARIABLES.contains(&name) {
            if value.dynamic {
                let why = format!("the file `{name}` names (`{}`)", value.text);
                self.opaque(text, why, scope);
            } else if programs::is_stdin_path(&value.text) {
                for doc in &stdin.docs {
                    self.nested(doc, &format!("the file `{name}` names"), scope, true);
                }
            }
        } else if PROMPT_VARIABLES.contains(&name) {
            let subs = words::scalar(&value.text, &self.vars).map(|v| v.subs);
            self.subs(&subs.unwrap_or_default(), scope);
        } else if name == "PERL5OPT" && !scope.lenient {
            self.events.push(Event::Code {
                language: "perl".to_owned(),
                code: value.text.clone(),
                text: text.to_owned(),
                gated: scope.gated.clone(),
            });
        }
    }

    /// A file written to: the kernel's magic SysRq (which can reboot the machine or
    /// kill every process) and a cgroup's kill switch act like commands.
    fn written(&mut self, path: &str, scope: Scope<'_>) {
        let command: Vec<&str> = if path.ends_with("/proc/sysrq-trigger") {
            vec!["reboot"]
        } else if path.ends_with("/cgroup.kill") || path.ends_with("/cgroup.freeze") {
            let unit = path.split('/').rfind(|part| part.ends_with(".service"));
            match unit {
                Some(unit) => vec!["systemctl", "kill", unit],
                None => {
                    let why = format!("which processes writing to `{path}` ends");
                    return self.opaque(path, why, scope);
                }
            }
        } else {
            return;
        };
        self.events.push(Event::Command {
            argv: command.into_iter().map(Arg::literal).collect(),
            text: format!("> {path}"),
            gated: scope.gated.clone(),
            lenient: scope.lenient,
        });
    }

    /// Shell code a command runs.
    fn script(&mut self, code: &Arg, what: &str, text: &str, scope: Scope<'_>) -> Gates {
        if code.dynamic {
            let why = format!("{what} (`{}`)", code.text);
            self.opaque(text, why, scope);
            return Gates::new();
        }
        self.nested(&code.text, what, scope, true)
    }

    /// Reads a command line that runs, and what it runs; returns the gates its
    /// success proves.
    /// `env` is what its environment was given on the way.
    pub(super) fn run(
        &mut self,
        argv: Vec<Arg>,
        site: &Site,
        env: Env,
        scope: Scope<'_>,
        hops: usize,
    ) -> Gates {
        if hops > MAX_HOPS {
            let why = format!("commands wrapped more than {MAX_HOPS} deep");
            self.opaque(&site.text, why, scope);
            return Gates::new();
        }
        let program = &argv[0];
        if !program.is_exact() {
            return self.unknown_program(&argv, site, scope, hops);
        }
        let env = env.through(&argv);
        let name = basename(&program.text).to_owned();
        if !program.quoted
            && let Some(value) = self.alias(&name)
        {
            let proven = self.expand_alias(&name, &value, &argv[1..], scope);
            if hops == 0 {
                return proven;
            }
            // Behind a wrapper, a word is an alias only after an alias ending in a
            // blank (`alias sudo='sudo '`); it may be, so both readings count.
        }
        if hops == 0 && self.is_function(&name) {
            return self.call(&name, &argv[1..], &site.text, scope.fed(&site.stdin));
        }
        if let Some(proven) = self.builtin(&name, &argv, site, scope) {
            return proven;
        }
        if WRITERS.contains(&name.as_str()) {
            // `echo b | sudo tee /proc/sysrq-trigger` writes as `>` does.
            for arg in &argv[1..] {
                let path = arg.text.strip_prefix("of=").unwrap_or(&arg.text);
                self.written(path, scope);
            }
        }
        let mut proven = self.gate(&argv, site, &env, scope);
        self.events.push(Event::Command {
            argv: argv.clone(),
            text: site.text.clone(),
            gated: scope.gated.clone(),
            lenient: scope.lenient,
        });
        let extra = &self.ctx.restart_programs;
        let is_restart = |arg: &Arg| extra.iter().any(|p| p == basename(&arg.text));
        let from = site.stdin.from.as_deref();
        for inner in programs::inner(&argv, scope.guessed, &is_restart, from) {
            proven.extend(self.inner(inner, site, env.clone(), scope, hops));
        }
        proven
    }

    /// What a command runs in turn; returns the gates it proves to the command's
    /// success (only through wrappers that always run it).
    fn inner(
        &mut self,
        inner: Inner,
        site: &Site,
        env: Env,
        scope: Scope<'_>,
        hops: usize,
    ) -> Gates {
        // What it runs reads the command's own standard input.
        let scope = scope.fed(&site.stdin);
        let via = |via: Via| match via {
            Via::Always => scope,
            Via::Maybe => scope.unsure(),
            Via::Guess => Scope {
                lenient: true,
                guessed: true,
                ..scope.unsure()
            },
        };
        let proven = |via: Via, gates: Gates| match via {
            Via::Always if !scope.lenient => gates,
            _ => Gates::new(),
        };
        match inner {
            Inner::Argv { argv, via: how } => {
                let gates = self.run(argv, site, env, via(how), hops + 1);
                proven(how, gates)
            }
            Inner::Script {
                code,
                via: how,
                what,
                posix,
            } => {
                // Run for sure by what runs it (a shell a guess found): shell code, its
                // own command lines guessed at again.
                let reading = match how {
                    Via::Guess => via(how),
                    Via::Always | Via::Maybe => Scope {
                        guessed: false,
                        ..via(how)
                    },
                };
                let gates = match code.dynamic {
                    true => self.script(&code, &what, &site.text, reading),
                    false => self.nested(&code.text, &what, reading, posix),
                };
                proven(how, gates)
            }
            Inner::ShellStdin { via: how, what } => {
                let mut gates = Gates::new();
                for doc in &site.stdin.docs {
                    // Every shell in a group fed one here-document reads the same
                    // script: read it once for each set of gates.
                    let reading = (Rc::as_ptr(doc) as *const u8 as usize, scope.gated.clone());
                    if self.read_docs.insert(reading) {
                        gates = self.nested(doc, &what, via(how), true);
                    }
                }
                if site.stdin.unknown {
                    self.opaque(&site.text, what, via(how));
                }
                proven(how, gates)
            }
            Inner::Code { language, code } => {
                if code.dynamic {
                    let why = format!("the {language} code `{}`", code.text);
                    self.opaque(&site.text, why, scope);
                } else {
                    self.code(&language, &code.text, site, scope);
                }
                Gates::new()
            }
            Inner::CodeStdin { language } => {
                for doc in &site.stdin.docs {
                    self.code(&language, doc, site, scope);
                }
                if site.stdin.unknown {
                    let why = format!("the {language} code on its standard input");
                    self.opaque(&site.text, why, scope);
                }
                Gates::new()
            }
            Inner::Opaque(why) => {
                self.opaque(&site.text, why, scope);
                Gates::new()
            }
        }
    }

    fn code(&mut self, language: &str, code: &str, site: &Site, scope: Scope<'_>) {
        if scope.lenient {
            return;
        }
        self.events.push(Event::Code {
            language: language.to_owned(),
            code: code.to_owned(),
            text: site.text.clone(),
            gated: scope.gated.clone(),
        });
    }

    /// A program the guard cannot name (`$S`, `$(which systemctl)`, `systemct?`): it
    /// cannot be read, and a glob is also read as each program the guard knows that it
    /// matches.
    fn unknown_program(
        &mut self,
        argv: &[Arg],
        site: &Site,
        scope: Scope<'_>,
        hops: usize,
    ) -> Gates {
        let program = &argv[0];
        let why = format!("the program `{}`", program.text);
        self.opaque(&site.text, why, scope);
        if program.glob && !program.dynamic {
            let pattern = basename(&program.text).to_owned();
            let candidates: Vec<&str> = programs::known_names()
                .filter(|name| glob_matches(&pattern, name))
                .take(MAX_CANDIDATES)
                .collect();
            for candidate in candidates {
                let mut argv = argv.to_vec();
                argv[0] = Arg::literal(candidate);
                self.run(argv, site, Env::default(), scope, hops + 1);
            }
        }
        Gates::new()
    }

    /// The gates a command line proves: those of a real, waiting `stead gate` aimed at
    /// the guard's ledger. It also marks stead's own commands, whose words are no
    /// mention of what they gate.
    fn gate(&mut self, argv: &[Arg], site: &Site, env: &Env, scope: Scope<'_>) -> Gates {
        let own = matches!(stead_cmd::subcommand(argv), Some(("gate" | "restart", _)));
        if own && self.own_seen.insert(site.at) {
            self.own.push(site.text.clone());
        }
        if scope.lenient || (self.ctx.stead_redefined && !scope.at_start) {
            return Gates::new();
        }
        // With `PATH` changed, a bare `stead` may be another program.
        let path_changed = self.vars.is_assigned("PATH") || env.path;
        if path_changed && argv.first().is_some_and(|p| p.text == "stead") {
            return Gates::new();
        }
        // An earlier `export STEAD_STATE_DIR=…` in the command counts too.
        let env_dir =
            env.state_dir
                .clone()
                .or_else(|| match self.vars.get(stead_cmd::STATE_DIR_ENV) {
                    words::Lookup::Known(dir) => Some(Arg::literal(dir)),
                    _ if self.vars.is_assigned(stead_cmd::STATE_DIR_ENV) => {
                        Some(Arg::unknown("$STEAD_STATE_DIR"))
                    }
                    _ => None,
                });
        stead_cmd::gate(argv, env_dir.as_ref(), self.ctx.dirs)
    }

    /// Builtins that define, assign or run code; `None` for anything else.
    fn builtin(
        &mut self,
        name: &str,
        argv: &[Arg],
        site: &Site,
        scope: Scope<'_>,
    ) -> Option<Gates> {
        let args = &argv[1..];
        match name {
            _ if ASSIGNING.contains(&name) => {
                // `declare -n r=x` makes `r` a reference to `x`: not its value.
                let reference = args
                    .iter()
                    .any(|a| a.text.starts_with('-') && a.text.contains('n'));
                for arg in args.iter().filter(|a| !a.text.starts_with('-')) {
                    if let Some((var, value)) = arg.text.split_once('=') {
                        let value_arg = Arg {
                            text: value.to_owned(),
                            ..arg.clone()
                        };
                        self.variable(var, &value_arg, &site.text, &site.stdin, scope);
                        let value = (arg.is_exact() && !reference).then(|| value.to_owned());
                        self.vars.assign(var, value, scope.certain);
                    }
                }
            }
            _ if READING.contains(&name) => {
                for arg in args.iter().filter(|a| !a.text.starts_with('-')) {
                    let var = arg
                        .text
                        .split_once('=')
                        .map_or(arg.text.as_str(), |(v, _)| v);
                    self.vars.assign(var, None, false);
                }
            }
            "printf" => {
                let at = args.iter().position(|a| a.text == "-v")?;
                if let Some(var) = args.get(at + 1) {
                    self.vars.assign(&var.text, None, false);
                }
                return None;
            }
            "unset" => {
                for arg in args.iter().filter(|a| !a.text.starts_with('-')) {
                    match scope.certain {
                        true => self.vars.unset(&arg.text),
                        false => self.vars.assign(&arg.text, None, false),
                    }
                }
            }
            "alias" => {
                for arg in args {
                    if let Some((alias, value)) = arg.text.split_once('=') {
                        self.define_alias(alias, value);
                    }
                }
            }
            "unalias" => {
                for arg in args {
                    self.forget_alias(&arg.text);
                }
            }
            "eval" => {
                let code = programs::joined(args);
                return Some(self.script(&code, "the script of `eval`", &site.text, scope));
            }
            "trap" => {
                let args: Vec<&Arg> = args.iter().filter(|a| a.text != "--").collect();
                let listing = args
                    .first()
                    .is_none_or(|a| matches!(a.text.as_str(), "-p" | "-l" | "-P" | "-"));
                if !listing && args.len() >= 2 {
                    self.script(
                        args[0],
                        "the command `trap` runs",
                        &site.text,
                        scope.unsure(),
                    );
                }
            }
            "source" | "." => {
                let file = args.first().map_or("", |a| a.text.as_str());
                if matches!(file, "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0") {
                    let docs = site.stdin.docs.clone();
                    for doc in &docs {
                        self.nested(doc, "the script it sources", scope, true);
                    }
                    if !site.stdin.unknown {
                        return Some(Gates::new());
                    }
                }
                let why = format!("the file `{file}` it runs in this shell");
                self.opaque(&site.text, why, scope);
            }
            _ => return None,
        }
        self.events.push(Event::Command {
            argv: argv.to_vec(),
            text: site.text.clone(),
            gated: scope.gated.clone(),
            lenient: scope.lenient,
        });
        Some(Gates::new())
    }
}

/// `NAME=value` among a command line's words before the program that reads it
/// (`env STEAD_STATE_DIR=/x stead gate`, `sudo STEAD_STATE_DIR=/x stead gate`).
fn assigned_before(argv: &[Arg], name: &str) -> Option<Arg> {
    let end = argv.iter().position(|a| basename(&a.text) == "stead")?;
    argv[..end].iter().rev().find_map(|a| {
        let value = a.text.strip_prefix(name)?.strip_prefix('=')?;
        Some(Arg {
            text: value.to_owned(),
            ..a.clone()
        })
    })
}
