//! Walking a shell command the way the shell would run it: every simple command, in
//! lists, pipelines, subshells, groups, conditionals, loops, functions (read where
//! they are called, with the arguments and gates of the call), command and process
//! substitutions, traps, aliases, and the scripts handed to other shells, with which
//! gates have passed by the time each runs and what is known of the variables.
//!
//! This file walks the structure; `simple` reads a simple command and what it runs,
//! `defs` keeps the functions and aliases the command defines, and `source` the text
//! of the script being read.

mod defs;
mod simple;
mod source;

use std::collections::HashSet;
use std::rc::Rc;

use brush_parser::ParserOptions;
use brush_parser::ast::{
    self, AndOr, Command, CompoundCommand, ExtendedTestExpr, SeparatorOperator,
};

use crate::stead_cmd::{Gates, Protected};
use crate::words::{self, Arg, Vars};
use crate::{continuation, limits};
use defs::Defs;
use source::Source;

/// How deep scripts may nest (`sh -c` in `$( … )` in `bash -c` …) before the guard
/// stops reading and treats the rest as unreadable.
const MAX_DEPTH: usize = 8;

/// What the walk found.
#[derive(Debug)]
pub(crate) enum Event {
    /// A command line that runs, as it runs.
    Command {
        argv: Vec<Arg>,
        /// The simple command it comes from, as written in its script.
        text: String,
        gated: Gates,
        /// It is only a guess that it runs (an argument of an unknown program): it
        /// counts only where certain.
        lenient: bool,
    },
    /// Something that runs but that the guard cannot read.
    Opaque {
        text: String,
        why: String,
        gated: Gates,
    },
    /// Code in another language.
    Code {
        language: String,
        code: String,
        text: String,
        gated: Gates,
    },
}

/// What the walk needs to know besides the command.
pub(crate) struct Context<'a> {
    pub dirs: &'a Protected,
    /// Program names of the declared restart commands, which a guess about an unknown
    /// program looks for among its arguments.
    pub restart_programs: Vec<String>,
    /// The command defines `stead` as a function or an alias somewhere: only a gate
    /// that runs first of all is still stead's.
    pub stead_redefined: bool,
    /// How many substitutions a script may hold: what the reader's stack is sized for.
    pub max_substitutions: usize,
}

impl<'a> Context<'a> {
    /// A context that knows only the ledger: no restart programs, no redefinition.
    pub fn bare(dirs: &'a Protected, max_substitutions: usize) -> Self {
        Context {
            dirs,
            restart_programs: Vec::new(),
            stead_redefined: false,
            max_substitutions,
        }
    }
}

/// Everything the walk found.
pub(crate) struct Walk {
    pub events: Vec<Event>,
    /// The text of each of stead's own gates and restarts, which do not count as
    /// mentions of what they gate.
    pub own: Vec<String>,
    /// A limit the command went past.
    pub limit: Option<String>,
    /// How many bytes were handed to the parsers, the command's own included: the
    /// measure of the guard's work, which the tests hold to linear in the size.
    #[cfg(test)]
    pub work: usize,
}

/// Walks `script`; an error when it does not parse.
pub(crate) fn walk(script: &str, ctx: &Context<'_>) -> Result<Walk, String> {
    let program = parse(script, ctx.max_substitutions)?;
    let mut walker = Walker {
        ctx,
        events: Vec::new(),
        vars: Vars::new(limits::expansion_budget(script.len())),
        defs: Defs::default(),
        own: Vec::new(),
        own_seen: HashSet::new(),
        sources: 0,
        parse_budget: limits::parse_budget(script.len()),
        limit: None,
        established: Gates::new(),
        negated: Gates::new(),
        read_docs: HashSet::new(),
    };
    let source = walker.source(script.to_owned());
    let gated = Gates::new();
    let stdin = Stdin::default();
    let scope = Scope {
        source: &source,
        gated: &gated,
        depth: 0,
        certain: true,
        lenient: false,
        guessed: false,
        at_start: true,
        stdin: &stdin,
        calls: 0,
    };
    walker.program(&program, scope);
    walker.uncalled(scope);
    Ok(Walk {
        #[cfg(test)]
        work: script.len() + limits::parse_budget(script.len()) - walker.parse_budget
            + walker.vars.parsed(),
        events: walker.events,
        own: walker.own,
        limit: walker.limit,
    })
}

/// The simple commands of a script as written, without variables: for reading a
/// declared restart command or a `$(pgrep …)`. `None` when it does not parse.
pub(crate) fn commands(script: &str) -> Option<Vec<Vec<Arg>>> {
    let dirs = Protected::default();
    let walk = walk(script, &Context::bare(&dirs, limits::MIN_SUBSTITUTIONS)).ok()?;
    let commands = walk.events.into_iter().filter_map(|e| match e {
        Event::Command {
            argv,
            lenient: false,
            ..
        } => Some(argv),
        _ => None,
    });
    Some(commands.collect())
}

/// True when `script` is one `&&` chain, so that `gate && script` gates all of it.
pub(crate) fn is_and_chain(script: &str) -> bool {
    let Ok(program) = parse(script, limits::MIN_SUBSTITUTIONS) else {
        return false;
    };
    match program.complete_commands.as_slice() {
        [ast::CompoundList(items)] => match items.as_slice() {
            [ast::CompoundListItem(list, SeparatorOperator::Sequence)] => list
                .additional
                .iter()
                .all(|next| matches!(next, AndOr::And(_))),
            _ => false,
        },
        _ => false,
    }
}

/// Parses a script that holds at most `max_substitutions` substitutions.
pub(crate) fn parse(script: &str, max_substitutions: usize) -> Result<ast::Program, String> {
    continuation::check_joins(script)?;
    limits::check_substitutions(script, max_substitutions)?;
    let options = ParserOptions::default();
    // The tokenizer and parser panic on some malformed input (`${<<EOF`); that is
    // input they cannot read, not a reason to let the command through.
    let tokens = std::panic::catch_unwind(|| {
        brush_parser::uncached_tokenize_str(script, &options.tokenizer_options())
    })
    .map_err(|_| limits::READER_FAILED.to_owned())?
    .map_err(|e| continuation::unparsed(script, e.to_string()))?;
    limits::nesting(&tokens)?;
    limits::word_nesting(&tokens)?;
    match std::panic::catch_unwind(|| brush_parser::parse_tokens(&tokens, &options)) {
        Ok(Ok(program)) => Ok(program),
        // brush reads no `select`; it is a `for` loop as far as the guard cares.
        Ok(Err(e)) => match limits::select_as_for(script) {
            Some(script) => parse(&script, max_substitutions).map_err(|again| {
                match limits::unreadable(&again) {
                    true => again,
                    false => e.to_string(),
                }
            }),
            None => Err(continuation::unparsed(script, e.to_string())),
        },
        Err(_) => Err(limits::READER_FAILED.to_owned()),
    }
}

/// What a command reads on standard input.
#[derive(Debug, Default, Clone)]
pub(super) struct Stdin {
    /// Here-documents and here-strings, as the shell feeds them: shared, since every
    /// command inside a redirected group inherits them.
    pub docs: Vec<Rc<str>>,
    /// Something else: a pipe, a file, a process substitution, another descriptor.
    pub unknown: bool,
    /// The command piping into it, when that is one simple command (`pgrep -u me |
    /// xargs kill`).
    pub from: Option<String>,
}

/// Where the walk is.
#[derive(Clone, Copy)]
struct Scope<'a> {
    source: &'a Rc<Source>,
    gated: &'a Gates,
    /// How many scripts deep.
    depth: usize,
    /// It runs once, in this shell, whenever the command runs: an assignment here
    /// holds for what follows.
    certain: bool,
    /// Only a guess that it runs.
    lenient: bool,
    /// The command line is itself a guess (an argument of a program the guard does not
    /// know): no further guess is made from its arguments. A script that a program it
    /// names surely runs is shell code, read as any (`uv run sh -c 'uv run pkill
    /// stead'`): its command lines are guessed at again. A script that is only a guess
    /// itself (`mytool --note 'Fix: pkill stead on exit'`) is not: prose is no code.
    guessed: bool,
    /// The very first command of the whole command line.
    at_start: bool,
    /// What it reads on standard input.
    stdin: &'a Stdin,
    /// How many function calls deep.
    calls: usize,
}

impl<'a> Scope<'a> {
    fn with<'b>(self, gated: &'b Gates) -> Scope<'b>
    where
        'a: 'b,
    {
        Scope { gated, ..self }
    }

    /// With this standard input.
    fn fed<'b>(self, stdin: &'b Stdin) -> Scope<'b>
    where
        'a: 'b,
    {
        Scope { stdin, ..self }
    }

    /// Somewhere that may not run, or not in this shell.
    fn unsure(self) -> Self {
        Scope {
            certain: false,
            at_start: false,
            ..self
        }
    }

    fn later(self) -> Self {
        Scope {
            at_start: false,
            ..self
        }
    }
}

struct Walker<'c> {
    ctx: &'c Context<'c>,
    events: Vec<Event>,
    vars: Vars,
    defs: Defs,
    own: Vec<String>,
    /// Where each of `own` was found (script, offset), so a command read twice is
    /// counted once.
    own_seen: HashSet<(usize, usize)>,
    /// How many scripts have been read.
    sources: usize,
    /// How many more bytes of nested scripts may be parsed.
    parse_budget: usize,
    limit: Option<String>,
    /// What the statement just walked establishes for everything after it in its list
    /// (`stead gate || exit`, `until stead gate; do …; done`), whatever its status.
    established: Gates,
    /// The gates of a negated lone command just walked (`! stead gate`): what its
    /// failure proves.
    negated: Gates,
    /// Here-documents already read as scripts (where, with which gates).
    read_docs: HashSet<(usize, Gates)>,
}

impl Walker<'_> {
    fn source(&mut self, text: String) -> Rc<Source> {
        self.sources += 1;
        Rc::new(Source::new(text, self.sources))
    }

    fn opaque(&mut self, text: &str, why: String, scope: Scope<'_>) {
        if scope.lenient {
            return;
        }
        self.events.push(Event::Opaque {
            text: text.to_owned(),
            why,
            gated: scope.gated.clone(),
        });
    }

    /// A script inside the one being read: a substitution, `sh -c`, a here-document.
    /// Returns the gates its success proves.
    fn nested(&mut self, script: &str, what: &str, scope: Scope<'_>, posix: bool) -> Gates {
        if scope.depth >= MAX_DEPTH {
            let why = format!("{what} nested more than {MAX_DEPTH} scripts deep");
            self.opaque(script, why, scope);
            return Gates::new();
        }
        if script.len() > self.parse_budget {
            self.limit = Some(
                "the scripts nested in it (substitutions, shells' scripts, aliases, functions read again) add up to more than 16 times its own size"
                    .to_owned(),
            );
            return Gates::new();
        }
        self.parse_budget -= script.len();
        match parse(script, self.ctx.max_substitutions) {
            Ok(program) => {
                let source = self.source(script.to_owned());
                let inner = Scope {
                    source: &source,
                    depth: scope.depth + 1,
                    ..scope
                };
                self.program(&program, inner)
            }
            Err(_) if scope.lenient => Gates::new(),
            Err(e) if limits::unreadable(&e) => {
                self.limit = Some(format!("{what}: {e}"));
                Gates::new()
            }
            Err(_) if !posix => {
                self.events.push(Event::Code {
                    language: what.to_owned(),
                    code: script.to_owned(),
                    text: script.to_owned(),
                    gated: scope.gated.clone(),
                });
                Gates::new()
            }
            Err(e) => {
                self.opaque(script, format!("{what}, which does not parse ({e})"), scope);
                Gates::new()
            }
        }
    }

    /// Walks a script, line by line: what one line establishes holds for the next.
    fn program(&mut self, program: &ast::Program, scope: Scope<'_>) -> Gates {
        let mut proven = Gates::new();
        let mut established = Gates::new();
        for (at, list) in program.complete_commands.iter().enumerate() {
            let gated: Gates = scope.gated.union(&established).cloned().collect();
            let line = Scope {
                at_start: scope.at_start && at == 0,
                ..scope.with(&gated)
            };
            proven = self.list(list, line);
            established.extend(std::mem::take(&mut self.established));
        }
        self.established = established;
        proven
    }

    /// Walks a list; returns the gates its success proves (those of its last item). A
    /// statement that can only complete once a gate passed (`stead gate || exit`)
    /// gates everything after it, and the list as a whole establishes that.
    fn list(&mut self, list: &ast::CompoundList, scope: Scope<'_>) -> Gates {
        let mut proven = Gates::new();
        let mut established = Gates::new();
        let mut negated = Gates::new();
        for (at, ast::CompoundListItem(and_or, separator)) in list.0.iter().enumerate() {
            let gated: Gates = scope.gated.union(&established).cloned().collect();
            let mut item = Scope {
                at_start: scope.at_start && at == 0,
                ..scope.with(&gated)
            };
            let background = matches!(separator, SeparatorOperator::Async);
            if background {
                item = item.unsure();
            }
            proven = self.and_or(and_or, item);
            negated = std::mem::take(&mut self.negated);
            let holds = std::mem::take(&mut self.established);
            // In the background, nothing waits for it.
            if background {
                proven.clear();
                negated.clear();
            } else {
                established.extend(holds);
            }
        }
        self.established = established;
        self.negated = negated;
        proven
    }

    /// Walks `a && b || c`; returns the gates its success proves. A gate proves itself
    /// to what follows only through `&&`: after `||`, `;` or a pipe the next command
    /// runs whether or not the gate passed, unless what follows `||` ends the shell
    /// (`stead gate || exit 1`), and then the gate holds for the rest.
    fn and_or(&mut self, list: &ast::AndOrList, scope: Scope<'_>) -> Gates {
        let mut proven = self.pipeline(&list.first, scope);
        let mut established = std::mem::take(&mut self.established);
        let mut negated = std::mem::take(&mut self.negated);
        for next in &list.additional {
            negated.clear();
            match next {
                AndOr::And(pipeline) => {
                    let gated: Gates = scope.gated.union(&proven).cloned().collect();
                    let gated = gated.union(&established).cloned().collect();
                    let more = self.pipeline(pipeline, scope.with(&gated).unsure());
                    proven.extend(more);
                }
                AndOr::Or(pipeline) => {
                    let gated = scope.gated.union(&established).cloned().collect();
                    self.pipeline(pipeline, scope.with(&gated).unsure());
                    if ends_shell(pipeline) {
                        established.extend(proven.iter().cloned());
                    } else {
                        proven.clear();
                    }
                }
            }
            self.established.clear();
            self.negated.clear();
        }
        self.established = established;
        self.negated = negated;
        proven
    }

    /// Walks a pipeline; a lone command that is not negated proves its gates, and a
    /// negated one records them as what its failure proves.
    fn pipeline(&mut self, pipeline: &ast::Pipeline, scope: Scope<'_>) -> Gates {
        if let [command] = pipeline.seq.as_slice() {
            let proven = self.command(command, scope);
            if pipeline.bang {
                self.established.clear();
                self.negated = proven;
                return Gates::new();
            }
            self.negated.clear();
            return proven;
        }
        let mut from = None;
        for (at, command) in pipeline.seq.iter().enumerate() {
            let piped = Stdin {
                unknown: true,
                from: from.take(),
                ..Stdin::default()
            };
            let part = Scope {
                at_start: scope.at_start && at == 0,
                ..scope.unsure()
            };
            let part = if at == 0 { part } else { part.fed(&piped) };
            self.command(command, part);
            if let Command::Simple(simple) = command {
                from = Some(part.source.simple(simple).0);
            }
        }
        self.established.clear();
        self.negated.clear();
        Gates::new()
    }

    fn command(&mut self, command: &Command, scope: Scope<'_>) -> Gates {
        self.established.clear();
        self.negated.clear();
        match command {
            Command::Simple(simple) => {
                let proven = self.simple(simple, scope);
                self.established.clear();
                self.negated.clear();
                proven
            }
            Command::Compound(compound, redirects) => {
                let stdin = self.redirects(redirects.as_ref(), scope);
                self.compound(compound, scope.fed(&stdin))
            }
            Command::Function(function) => {
                self.define(function, scope);
                Gates::new()
            }
            Command::ExtendedTest(test, redirects) => {
                self.redirects(redirects.as_ref(), scope);
                self.test(&test.expr, scope);
                self.established.clear();
                self.negated.clear();
                Gates::new()
            }
        }
    }

    /// Walks a compound command; a group or subshell proves what its last command
    /// does (`(stead gate) && …`). A loop that can only end once a gate passed
    /// (`until stead gate; do sleep 5; done`, `while ! stead gate; do …; done`, with
    /// no `break`) and a conditional that exits unless it passed (`if ! stead gate;
    /// then exit 1; fi`) establish the gate for what follows.
    fn compound(&mut self, compound: &CompoundCommand, scope: Scope<'_>) -> Gates {
        let mut established = Gates::new();
        let proven = match compound {
            CompoundCommand::BraceGroup(group) => {
                let proven = self.list(&group.list, scope);
                established = std::mem::take(&mut self.established);
                proven
            }
            CompoundCommand::Subshell(subshell) => {
                let inner = Scope {
                    certain: false,
                    ..scope
                };
                // `exit` in a subshell ends only the subshell.
                self.list(&subshell.list, inner)
            }
            CompoundCommand::IfClause(clause) => {
                // `if stead gate; then …` runs its branch only once the gate passed;
                // `if ! stead gate; then …; else …` runs the `else` only then.
                let (passed, failed) = self.condition(&clause.condition, scope.later());
                let gated: Gates = scope.gated.union(&passed).cloned().collect();
                self.list(&clause.then, scope.with(&gated).unsure());
                let elses: Vec<&ast::ElseClause> = clause.elses.iter().flatten().collect();
                let mut otherwise = failed.clone();
                for other in &elses {
                    let gated: Gates = scope.gated.union(&otherwise).cloned().collect();
                    let here = scope.with(&gated).unsure();
                    match &other.condition {
                        Some(condition) => {
                            let (passed, _) = self.condition(condition, here);
                            let gated: Gates = gated.union(&passed).cloned().collect();
                            self.list(&other.body, here.with(&gated));
                            otherwise.clear();
                        }
                        None => {
                            self.list(&other.body, here);
                        }
                    }
                }
                // `if ! stead gate; then exit 1; fi`, `if stead gate; then …; else exit 1; fi`.
                match elses.as_slice() {
                    [] if ends_shell_list(&clause.then) => established = failed,
                    [other] if other.condition.is_none() && ends_shell_list(&other.body) => {
                        established = passed;
                    }
                    _ => {}
                }
                Gates::new()
            }
            CompoundCommand::WhileClause(clause) => {
                let (passed, failed) = self.condition(&clause.0, scope.later());
                let gated: Gates = scope.gated.union(&passed).cloned().collect();
                self.list(&clause.1.list, scope.with(&gated).unsure());
                if !breaks(scope.source, &clause.2) {
                    established = failed;
                }
                Gates::new()
            }
            CompoundCommand::UntilClause(clause) => {
                let (passed, _) = self.condition(&clause.0, scope.unsure());
                self.list(&clause.1.list, scope.unsure());
                if !breaks(scope.source, &clause.2) {
                    established = passed;
                }
                Gates::new()
            }
            CompoundCommand::ForClause(clause) => {
                let mut values = Vec::new();
                for value in clause.values.iter().flatten() {
                    values.extend(self.expand(&value.value, scope));
                }
                let only = match values.as_slice() {
                    [one] if one.is_exact() => Some(one.text.clone()),
                    _ => None,
                };
                self.vars.assign(
                    &clause.variable_name,
                    only,
                    scope.certain && !values.is_empty(),
                );
                self.list(&clause.body.list, scope.unsure());
                Gates::new()
            }
            CompoundCommand::ArithmeticForClause(clause) => {
                let parts = [&clause.initializer, &clause.condition, &clause.updater];
                for expr in parts.into_iter().flatten() {
                    self.arithmetic(&expr.value, scope);
                }
                self.list(&clause.body.list, scope.unsure());
                Gates::new()
            }
            CompoundCommand::CaseClause(clause) => {
                self.expand(&clause.value.value, scope);
                for case in &clause.cases {
                    for pattern in &case.patterns {
                        self.expand(&pattern.value, scope);
                    }
                    if let Some(body) = &case.cmd {
                        self.list(body, scope.unsure());
                    }
                }
                Gates::new()
            }
            CompoundCommand::Arithmetic(arithmetic) => {
                // brush reads `( (cmd) )`, a subshell in a subshell, as `((cmd))`; the
                // shell tells them apart by the space.
                let start = scope.source.byte(arithmetic.loc.start.index);
                match scope
                    .source
                    .text
                    .get(start..)
                    .is_some_and(|s| s.starts_with("(("))
                {
                    true => {
                        self.arithmetic(&arithmetic.expr.value, scope);
                        // dash and POSIX sh have no `((`: to them it is a subshell in a
                        // subshell, and what it holds runs.
                        let guess = Scope {
                            lenient: true,
                            ..scope.unsure()
                        };
                        self.nested(&arithmetic.expr.value, "a subshell to sh", guess, true);
                        Gates::new()
                    }
                    false => {
                        let inner = Scope {
                            certain: false,
                            ..scope
                        };
                        self.nested(&arithmetic.expr.value, "a subshell", inner, true)
                    }
                }
            }
            CompoundCommand::Coprocess(coprocess) => {
                self.command(&coprocess.body, scope.unsure());
                Gates::new()
            }
        };
        self.established = established;
        self.negated.clear();
        proven
    }

    /// Walks a condition; returns what its success proves and what its failure proves
    /// (`! stead gate` fails only once the gate passed).
    fn condition(&mut self, condition: &ast::CompoundList, scope: Scope<'_>) -> (Gates, Gates) {
        let passed = self.list(condition, scope);
        let failed = std::mem::take(&mut self.negated);
        self.established.clear();
        (passed, failed)
    }

    fn test(&mut self, expr: &ExtendedTestExpr, scope: Scope<'_>) {
        match expr {
            ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
                self.test(a, scope);
                self.test(b, scope);
            }
            ExtendedTestExpr::Not(inner) | ExtendedTestExpr::Parenthesized(inner) => {
                self.test(inner, scope);
            }
            ExtendedTestExpr::UnaryTest(_, word) => {
                self.expand(&word.value, scope);
            }
            ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.expand(&a.value, scope);
                self.expand(&b.value, scope);
            }
        }
    }

    /// An arithmetic expression: only its substitutions run.
    fn arithmetic(&mut self, expr: &str, scope: Scope<'_>) {
        let subs = match words::scalar(expr, &self.vars) {
            Ok(arg) => arg.subs,
            Err(e) => return self.unreadable_word(expr, e, scope),
        };
        self.subs(&subs, scope);
    }

    /// The words `raw` stands for, with the substitutions in it walked.
    fn expand(&mut self, raw: &str, scope: Scope<'_>) -> Vec<Arg> {
        match words::expand(raw, &self.vars) {
            Ok(fields) => {
                for field in &fields {
                    self.subs(&field.subs, scope);
                }
                fields
            }
            Err(e) => {
                self.unreadable_word(raw, e, scope);
                vec![Arg::unknown(raw)]
            }
        }
    }

    /// A word the guard cannot read: past a limit, or where the shell may join its
    /// lines into a word that reads, the whole command is refused.
    fn unreadable_word(&mut self, raw: &str, error: String, scope: Scope<'_>) {
        let error = continuation::unparsed(raw, error);
        if limits::unreadable(&error) {
            self.limit = Some(error);
        } else {
            self.opaque(raw, format!("the word `{raw}` ({error})"), scope);
        }
    }

    fn subs(&mut self, subs: &[String], scope: Scope<'_>) {
        for script in subs {
            self.nested(script, "a command substitution", scope.unsure(), true);
        }
    }
}

/// Whether running a pipeline ends the shell: `exit`, `return`, or a group ending in
/// one (`{ echo deferred; exit 75; }`).
fn ends_shell(pipeline: &ast::Pipeline) -> bool {
    match pipeline.seq.as_slice() {
        [Command::Simple(simple)] if !pipeline.bang => simple
            .word_or_name
            .as_ref()
            .is_some_and(|w| matches!(w.value.as_str(), "exit" | "return")),
        [Command::Compound(CompoundCommand::BraceGroup(group), _)] if !pipeline.bang => {
            ends_shell_list(&group.list)
        }
        _ => false,
    }
}

/// Whether running a list ends the shell: its last item always runs and ends it.
fn ends_shell_list(list: &ast::CompoundList) -> bool {
    list.0
        .last()
        .is_some_and(|ast::CompoundListItem(and_or, separator)| {
            matches!(separator, SeparatorOperator::Sequence)
                && and_or.additional.is_empty()
                && ends_shell(&and_or.first)
        })
}

/// Whether a loop may end through `break` (its text holds the word, once lines
/// continued with a backslash are joined: `bre\⏎ak` is `break`).
fn breaks(source: &Source, span: &brush_parser::SourceSpan) -> bool {
    let text = continuation::joined(source.slice(span).unwrap_or(&source.text));
    text.match_indices("break").any(|(at, _)| {
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(text[..at].chars().next_back()) && !word(text[at + 5..].chars().next())
    })
}
