//! What the command has said of its variables so far: a value assigned earlier in it,
//! the arguments of the function being read, or nothing known (the environment's).

use std::cell::Cell;
use std::collections::HashMap;

use brush_parser::word::{Parameter, SpecialParameter};

/// The longest value the guard keeps for a variable; a longer one is unknown.
const MAX_VALUE: usize = 64 * 1024;

/// What an expansion stands for.
pub(crate) enum Lookup<'a> {
    Known(&'a str),
    /// The positional parameters: `$@` and `$*`.
    Many(&'a [String]),
    Unknown,
}

/// The variables of the shell being read.
pub(crate) struct Vars {
    values: HashMap<String, Option<String>>,
    /// The arguments of the function calls being read, innermost last (`None`: not known).
    frames: Vec<Option<Vec<String>>>,
    /// How many more bytes expansions may produce: a variable used a million times
    /// must not make the guard's work quadratic.
    budget: Cell<usize>,
    /// How many bytes of words have been handed to the word parser: the guard's work.
    parsed: Cell<usize>,
}

impl Vars {
    pub fn new(budget: usize) -> Self {
        Self {
            values: HashMap::new(),
            frames: Vec::new(),
            budget: Cell::new(budget),
            parsed: Cell::new(0),
        }
    }

    /// Counts `bytes` of a word about to be parsed.
    pub fn parsing(&self, bytes: usize) {
        self.parsed.set(self.parsed.get() + bytes);
    }

    /// How many bytes of words have been parsed.
    #[cfg(test)]
    pub fn parsed(&self) -> usize {
        self.parsed.get()
    }

    /// Takes `bytes` from the budget; false when it is spent.
    pub fn spend(&self, bytes: usize) -> bool {
        let left = self.budget.get();
        self.budget.set(left.saturating_sub(bytes));
        left >= bytes
    }

    pub fn get(&self, name: &str) -> Lookup<'_> {
        match self.values.get(name) {
            Some(Some(value)) => Lookup::Known(value),
            Some(None) => Lookup::Unknown,
            // bash sets IFS itself at start, whatever the environment says.
            None if name == "IFS" => Lookup::Known(" \t\n"),
            None => Lookup::Unknown,
        }
    }

    pub fn parameter(&self, parameter: &Parameter) -> Lookup<'_> {
        let frame = self.frames.last().and_then(Option::as_ref);
        match parameter {
            Parameter::Named(name) => self.get(name),
            Parameter::Positional(0) => Lookup::Unknown,
            Parameter::Positional(n) => match frame {
                Some(args) => Lookup::Known(args.get(*n as usize - 1).map_or("", String::as_str)),
                None => Lookup::Unknown,
            },
            Parameter::Special(SpecialParameter::AllPositionalParameters { .. }) => match frame {
                Some(args) => Lookup::Many(args),
                None => Lookup::Unknown,
            },
            _ => Lookup::Unknown,
        }
    }

    /// Whether the command assigned `name` anywhere so far.
    pub fn is_assigned(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// Records `name=value` (`None`: a value the guard cannot know). An assignment that
    /// may or may not run (in a branch, a loop, a pipeline) leaves the variable known
    /// only if it had that value already.
    pub fn assign(&mut self, name: &str, value: Option<String>, certain: bool) {
        let value = value.filter(|v| v.len() <= MAX_VALUE && self.spend(v.len()));
        let known = match self.values.get(name) {
            _ if certain => value,
            Some(Some(before)) if value.as_deref() == Some(before.as_str()) => value,
            None if name == "IFS" && value.as_deref() == Some(" \t\n") => value,
            _ => None,
        };
        self.values.insert(name.to_owned(), known);
    }

    /// `unset NAME`: empty from now on, except `IFS`, which goes back to splitting on
    /// blanks.
    pub fn unset(&mut self, name: &str) {
        match name {
            "IFS" => {
                self.values.remove(name);
            }
            _ => self.assign(name, Some(String::new()), true),
        }
    }

    /// Enters a function call with these arguments.
    pub fn enter(&mut self, args: Option<Vec<String>>) {
        self.frames.push(args);
    }

    pub fn leave(&mut self) {
        self.frames.pop();
    }
}
