//! Walking a shell command the way the shell would run it: every simple command, in
//! lists, pipelines, subshells, groups, conditionals, loops, functions, command and
//! process substitutions, and the scripts handed to `sh -c`, with which gates have
//! passed by the time it runs. This file walks the structure; `simple` reads a simple
//! command, its words and redirections.

mod simple;

use brush_parser::ast::{
    self, AndOr, Command, CompoundCommand, ExtendedTestExpr, SeparatorOperator,
};
use brush_parser::{Parser, ParserOptions};

use super::stead_cmd::{self, Gates};
use super::words::Arg;
use super::wrappers;
use simple::argv_of;

/// How deep scripts may nest (`sh -c` in `$( … )` in `bash -c` …) before the guard
/// stops reading and treats the rest as unreadable.
const MAX_DEPTH: usize = 8;

/// What the walk found.
#[derive(Debug)]
pub(super) enum Event {
    /// A simple command that runs, as it finally runs (wrappers looked through).
    Command {
        argv: Vec<Arg>,
        /// As written in the script it is part of.
        text: String,
        gated: Gates,
    },
    /// Something that runs but that the guard cannot read.
    Opaque {
        text: String,
        why: String,
        gated: Gates,
    },
}

/// Every simple command `script` runs; an error when it does not parse.
pub(super) fn events(script: &str) -> Result<Vec<Event>, String> {
    let program = parse(script)?;
    let walk = || {
        let mut walker = Walker { events: Vec::new() };
        let scope = Scope {
            source: script,
            gated: &Gates::new(),
            depth: 0,
        };
        walker.program(&program, scope);
        walker.events
    };
    // Reading words parses them again, and the parser can panic on odd input.
    std::panic::catch_unwind(walk).map_err(|_| PARSER_FAILED.to_owned())
}

/// True when `script` is one `&&` chain, so that `gate && script` gates all of it.
pub(super) fn is_and_chain(script: &str) -> bool {
    let Ok(program) = parse(script) else {
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

/// What a panic of the parser reads as: input it could not read.
const PARSER_FAILED: &str = "the shell parser failed on it";

fn parse(script: &str) -> Result<ast::Program, String> {
    // The parser panics on some malformed input (`${<<EOF`); that is input it cannot
    // read, not a reason to let the command through.
    let parsed = std::panic::catch_unwind(|| {
        Parser::new(script.as_bytes(), &ParserOptions::default()).parse_program()
    });
    match parsed {
        Ok(program) => program.map_err(|e| e.to_string()),
        Err(_) => Err(PARSER_FAILED.to_owned()),
    }
}

/// Where the walk is: the script being read, the gates passed, how deep.
#[derive(Clone, Copy)]
struct Scope<'a> {
    source: &'a str,
    gated: &'a Gates,
    depth: usize,
}

impl<'a> Scope<'a> {
    fn with<'b>(self, gated: &'b Gates) -> Scope<'b>
    where
        'a: 'b,
    {
        Scope { gated, ..self }
    }
}

struct Walker {
    events: Vec<Event>,
}

impl Walker {
    fn opaque(&mut self, text: &str, why: String, scope: Scope<'_>) {
        self.events.push(Event::Opaque {
            text: text.to_owned(),
            why,
            gated: scope.gated.clone(),
        });
    }

    /// A script inside the one being read: a substitution, `sh -c`, a here-document.
    fn nested(&mut self, script: &str, what: &str, scope: Scope<'_>) {
        if scope.depth >= MAX_DEPTH {
            let why = format!("{what} nested more than {MAX_DEPTH} scripts deep");
            return self.opaque(script, why, scope);
        }
        match parse(script) {
            Ok(program) => {
                let inner = Scope {
                    source: script,
                    depth: scope.depth + 1,
                    ..scope
                };
                self.program(&program, inner);
            }
            Err(e) => self.opaque(script, format!("{what}, which does not parse ({e})"), scope),
        }
    }

    fn program(&mut self, program: &ast::Program, scope: Scope<'_>) {
        for list in &program.complete_commands {
            self.list(list, scope);
        }
    }

    /// Walks a list; returns the gates its success proves (those of its last item).
    fn list(&mut self, list: &ast::CompoundList, scope: Scope<'_>) -> Gates {
        let mut proven = Gates::new();
        for ast::CompoundListItem(and_or, _) in &list.0 {
            proven = self.and_or(and_or, scope);
        }
        proven
    }

    /// Walks `a && b || c`; returns the gates its success proves. A gate proves itself
    /// to what follows only through `&&`: after `||`, `;` or a pipe the next command
    /// runs whether or not the gate passed.
    fn and_or(&mut self, list: &ast::AndOrList, scope: Scope<'_>) -> Gates {
        self.pipeline(&list.first, scope);
        let mut proven = gates_of(&list.first);
        for next in &list.additional {
            match next {
                AndOr::And(pipeline) => {
                    let gated = scope.gated.union(&proven).cloned().collect();
                    self.pipeline(pipeline, scope.with(&gated));
                    proven.extend(gates_of(pipeline));
                }
                AndOr::Or(pipeline) => {
                    self.pipeline(pipeline, scope);
                    proven.clear();
                }
            }
        }
        proven
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, scope: Scope<'_>) {
        for (at, command) in pipeline.seq.iter().enumerate() {
            self.command(command, scope, at > 0);
        }
    }

    fn command(&mut self, command: &Command, scope: Scope<'_>, piped: bool) {
        match command {
            Command::Simple(simple) => self.simple(simple, scope, piped),
            Command::Compound(compound, redirects) => {
                self.compound(compound, scope);
                self.redirects(redirects.as_ref(), scope);
            }
            Command::Function(function) => {
                self.compound(&function.body.0, scope);
                self.redirects(function.body.1.as_ref(), scope);
            }
            Command::ExtendedTest(test, redirects) => {
                self.test(&test.expr, scope);
                self.redirects(redirects.as_ref(), scope);
            }
        }
    }

    fn compound(&mut self, compound: &CompoundCommand, scope: Scope<'_>) {
        match compound {
            CompoundCommand::BraceGroup(group) => {
                self.list(&group.list, scope);
            }
            CompoundCommand::Subshell(subshell) => {
                self.list(&subshell.list, scope);
            }
            CompoundCommand::IfClause(clause) => {
                // `if stead gate; then …` runs its branch only once the gate passed.
                self.branch(Some(&clause.condition), &clause.then, scope);
                for other in clause.elses.iter().flatten() {
                    self.branch(other.condition.as_ref(), &other.body, scope);
                }
            }
            CompoundCommand::WhileClause(clause) => {
                self.branch(Some(&clause.0), &clause.1.list, scope);
            }
            CompoundCommand::UntilClause(clause) => {
                self.list(&clause.0, scope);
                self.list(&clause.1.list, scope);
            }
            CompoundCommand::ForClause(clause) => {
                for value in clause.values.iter().flatten() {
                    self.word(&value.value, scope);
                }
                self.list(&clause.body.list, scope);
            }
            CompoundCommand::ArithmeticForClause(clause) => {
                let parts = [&clause.initializer, &clause.condition, &clause.updater];
                for expr in parts.into_iter().flatten() {
                    self.word(&expr.value, scope);
                }
                self.list(&clause.body.list, scope);
            }
            CompoundCommand::CaseClause(clause) => {
                self.word(&clause.value.value, scope);
                for case in &clause.cases {
                    for pattern in &case.patterns {
                        self.word(&pattern.value, scope);
                    }
                    if let Some(body) = &case.cmd {
                        self.list(body, scope);
                    }
                }
            }
            CompoundCommand::Arithmetic(arithmetic) => self.word(&arithmetic.expr.value, scope),
            CompoundCommand::Coprocess(coprocess) => self.command(&coprocess.body, scope, false),
        }
    }

    /// A condition and the body it guards: the body is gated by what the condition's
    /// success proves.
    fn branch(
        &mut self,
        condition: Option<&ast::CompoundList>,
        body: &ast::CompoundList,
        scope: Scope<'_>,
    ) {
        let proven = condition.map(|c| self.list(c, scope)).unwrap_or_default();
        let gated = scope.gated.union(&proven).cloned().collect();
        self.list(body, scope.with(&gated));
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
            ExtendedTestExpr::UnaryTest(_, word) => self.word(&word.value, scope),
            ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.word(&a.value, scope);
                self.word(&b.value, scope);
            }
        }
    }
}

/// The gates a pipeline's success proves: those of a lone `stead gate`.
fn gates_of(pipeline: &ast::Pipeline) -> Gates {
    match pipeline.seq.as_slice() {
        [Command::Simple(simple)] if !pipeline.bang => wrappers::unwrap(argv_of(simple))
            .map(|argv| stead_cmd::gated_services(&argv))
            .unwrap_or_default(),
        _ => Gates::new(),
    }
}
