//! A service's declared restart command, in every spelling: `cd /srv/db &&
//! ./bin/restart-db --graceful` is reached by `./bin/restart-db`, by
//! `/srv/db/bin/restart-db`, by `bin/restart-db --fast`, by `sh ./bin/restart-db`.
//!
//! Each command of the declaration is kept as its program and the words after it
//! that are not options. A command line reaches it when its program is the same
//! program (for a script given by a path: a program with the same file name, wherever
//! it is run from) and those words appear among its arguments, in order.

use crate::programs::{is_interpreter, is_shell};
use crate::services::Guarded;
use crate::words::{Arg, basename};

/// Commands in a restart string that restart nothing by themselves: `cd /srv &&
/// ./restart` restarts with `./restart`, and `cd /srv` alone must stay allowed.
const NO_OPS: &[&str] = &[
    "cd", "pushd", "popd", "export", "set", "true", ":", "echo", "printf", "sleep", "test", "[",
    "wait", "source", ".", "exec", "sudo", "env", "nohup",
];

/// One command of a declared restart string.
#[derive(Debug, Clone)]
pub(crate) struct Restart {
    /// The program's file name.
    program: String,
    /// The words after it that are not options, in order.
    words: Vec<String>,
}

impl Restart {
    /// The commands of a restart string worth guarding.
    pub fn commands(restart: &str) -> Vec<Restart> {
        let Some(commands) = crate::shell::commands(restart) else {
            return Vec::new();
        };
        commands
            .into_iter()
            .filter(|argv| argv.iter().all(Arg::is_exact))
            .filter_map(|argv| {
                let argv = script_of(&argv).unwrap_or(&argv);
                let program = basename(&argv[0].text);
                if NO_OPS.contains(&program) || program.is_empty() {
                    return None;
                }
                Some(Restart {
                    program: program.to_owned(),
                    words: operands(&argv[1..]),
                })
            })
            .collect()
    }

    /// The program's file name, which a guess about an unknown program looks for.
    pub fn program(&self) -> &str {
        &self.program
    }

    fn matched_by(&self, argv: &[Arg]) -> bool {
        if argv
            .first()
            .is_none_or(|p| basename(&p.text) != self.program)
        {
            return false;
        }
        let mut given = operands(&argv[1..]).into_iter();
        self.words.iter().all(|w| given.any(|g| &g == w))
    }
}

/// The operands of a command line, without its options.
fn operands(args: &[Arg]) -> Vec<String> {
    args.iter()
        .filter(|a| !a.text.starts_with('-'))
        .map(|a| a.text.clone())
        .collect()
}

/// For `sh ./restart.sh` or `python3 manage.py restart`: the script and its arguments.
fn script_of(argv: &[Arg]) -> Option<&[Arg]> {
    let program = basename(&argv.first()?.text);
    if !is_shell(program) && !is_interpreter(program) {
        return None;
    }
    let at = argv.iter().skip(1).position(|a| !a.text.starts_with('-'))? + 1;
    Some(&argv[at..])
}

/// Whether a command line runs one of the service's restart commands.
pub(super) fn matches(argv: &[Arg], service: &Guarded) -> bool {
    let script = script_of(argv);
    service
        .restarts
        .iter()
        .any(|r| r.matched_by(argv) || script.is_some_and(|s| r.matched_by(s)))
}
