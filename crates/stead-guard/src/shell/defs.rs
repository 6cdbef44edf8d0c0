//! The functions and aliases a command defines, read where they are used: a function's
//! body with the gates and arguments of each call (`f() { systemctl restart web; };
//! stead gate --service web && f` is gated), an alias's text in place of its name.
//! A function never called is read once at the end, ungated, since something the
//! guard cannot read may still call it.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use brush_parser::ast;

use super::source::Source;
use super::{Scope, Walker};
use crate::stead_cmd::Gates;
use crate::words::Arg;

/// How many function calls deep the guard follows.
const MAX_CALLS: usize = 16;

/// How many times one function is read with different arguments before the rest of
/// its calls are read once with arguments unknown.
const MAX_READS: usize = 16;

struct Function {
    /// Which definition this is: a redefinition is read on its own.
    id: usize,
    body: Rc<ast::FunctionBody>,
    source: Rc<Source>,
    /// Defined in a script that is only a guess.
    lenient: bool,
    /// The gates passed where it was defined: what an unseen call is assumed to have.
    gated: Gates,
    called: bool,
    reads: usize,
}

/// One reading of a function: its definition, the gates around the call, its arguments
/// (`None`: not known).
type Reading = (usize, Gates, Option<Vec<String>>);

#[derive(Default)]
pub(super) struct Defs {
    functions: HashMap<String, Function>,
    /// Definition order (a name again for each redefinition), for reading the
    /// uncalled ones in order.
    order: Vec<String>,
    aliases: HashMap<String, String>,
    /// Aliases being expanded: an alias does not expand itself.
    expanding: HashSet<String>,
    readings: HashMap<Reading, Gates>,
}

impl Walker<'_> {
    pub(super) fn define(&mut self, function: &ast::FunctionDefinition, scope: Scope<'_>) {
        let name = function.fname.value.clone();
        // A redefinition is a function of its own, to be read even if the first was.
        self.defs.order.push(name.clone());
        let id = self.defs.order.len();
        self.defs.functions.insert(
            name,
            Function {
                id,
                body: Rc::new(function.body.clone()),
                source: Rc::clone(scope.source),
                lenient: scope.lenient,
                gated: scope.gated.clone(),
                called: false,
                reads: 0,
            },
        );
    }

    pub(super) fn is_function(&self, name: &str) -> bool {
        self.defs.functions.contains_key(name)
    }

    /// Reads a call of a function; returns the gates its success proves.
    pub(super) fn call(&mut self, name: &str, args: &[Arg], text: &str, scope: Scope<'_>) -> Gates {
        if scope.calls >= MAX_CALLS {
            let why = format!("function calls nested more than {MAX_CALLS} deep");
            self.opaque(text, why, scope);
            return Gates::new();
        }
        let Some(function) = self.defs.functions.get_mut(name) else {
            return Gates::new();
        };
        function.called = true;
        let known = args
            .iter()
            .all(Arg::is_exact)
            .then(|| args.iter().map(|a| a.text.clone()).collect::<Vec<_>>())
            .filter(|_| function.reads < MAX_READS);
        let reading = (function.id, scope.gated.clone(), known.clone());
        if let Some(proven) = self.defs.readings.get(&reading) {
            return proven.clone();
        }
        function.reads += 1;
        let body = Rc::clone(&function.body);
        let source = Rc::clone(&function.source);
        let lenient = scope.lenient || function.lenient;
        // A call of itself while being read is already being read.
        self.defs.readings.insert(reading.clone(), Gates::new());
        self.vars.enter(known);
        let inner = Scope {
            source: &source,
            calls: scope.calls + 1,
            lenient,
            ..scope.unsure()
        };
        let stdin = self.redirects(body.1.as_ref(), inner);
        let proven = self.compound(&body.0, inner.fed(&stdin));
        self.vars.leave();
        self.defs.readings.insert(reading, proven.clone());
        proven
    }

    /// Reads the functions nothing called.
    pub(super) fn uncalled(&mut self, scope: Scope<'_>) {
        let mut at = 0;
        // Reading one may define more.
        while let Some(name) = self.defs.order.get(at).cloned() {
            at += 1;
            let Some(function) = self.defs.functions.get(&name).filter(|f| !f.called) else {
                continue;
            };
            let gated = function.gated.clone();
            let unknown = [Arg::unknown("\"$@\"")];
            self.call(&name, &unknown, &name, scope.with(&gated).unsure());
        }
    }

    pub(super) fn define_alias(&mut self, name: &str, value: &str) {
        self.defs.aliases.insert(name.to_owned(), value.to_owned());
    }

    pub(super) fn forget_alias(&mut self, name: &str) {
        self.defs.aliases.remove(name);
    }

    /// The text an alias stands for, unless it is being expanded already.
    pub(super) fn alias(&self, name: &str) -> Option<String> {
        if self.defs.expanding.contains(name) {
            return None;
        }
        self.defs.aliases.get(name).cloned()
    }

    /// Reads a command whose first word is an alias: its text, then the rest.
    pub(super) fn expand_alias(
        &mut self,
        name: &str,
        value: &str,
        rest: &[Arg],
        scope: Scope<'_>,
    ) -> Gates {
        let mut script = value.to_owned();
        for arg in rest {
            script.push(' ');
            // A word the guard knows is passed as it is; one it does not stays an
            // expansion, to be read as one.
            match arg.dynamic {
                true => script.push_str(&arg.text),
                false => script.push_str(&shell_words::quote(&arg.text)),
            }
        }
        self.defs.expanding.insert(name.to_owned());
        let what = format!("the alias `{name}`");
        let proven = self.nested(&script, &what, scope, true);
        self.defs.expanding.remove(name);
        proven
    }
}
