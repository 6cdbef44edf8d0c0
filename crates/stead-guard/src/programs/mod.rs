//! What a command line runs besides itself: the command a wrapper runs (`sudo`,
//! `nice`, `flock`…), the script a shell is handed, code in another language, the
//! commands tools take as arguments (`find -exec`, `watch`, `ssh`, `tmux`…), and for a
//! program the guard does not know, a guess: an argument that is itself a command
//! the guard knows (`uv run systemctl restart web`) or a whole command line
//! (`mytool --run 'pkill stead'`) is taken to run.

mod code;
mod data;
mod shells;
mod tools;
mod wrappers;

use crate::rules;
use crate::words::{Arg, basename};

pub(crate) use code::is_interpreter;
pub(crate) use shells::is_shell;

/// How surely a command runs what it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// Whenever it runs, and its exit status is the inner command's: a gate behind it
    /// is a gate (`sudo`, `nice`, `timeout`).
    Always,
    /// Perhaps, later or elsewhere, or with an exit status of its own (`xargs`,
    /// `find -exec`, `watch`, `ssh`).
    Maybe,
    /// Only a guess, for a program the guard does not know: what it finds counts when
    /// it is certain, and nothing it cannot read counts against the command.
    Guess,
}

/// Something a command line runs.
#[derive(Debug)]
pub(crate) enum Inner {
    /// Another command line.
    Argv { argv: Vec<Arg>, via: Via },
    /// Shell code (`sh -c`, `watch '…'`, `ssh host '…'`); `posix` is false for a shell
    /// whose language only resembles sh (fish, csh, nu).
    Script {
        code: Arg,
        via: Via,
        what: String,
        posix: bool,
    },
    /// A shell that runs what it reads on standard input.
    ShellStdin { via: Via, what: String },
    /// Code in another language (`python3 -c`, `perl -e`, `awk 'BEGIN{system(…)}'`).
    Code { language: String, code: Arg },
    /// An interpreter reading its code from standard input.
    CodeStdin { language: String },
    /// Something it runs that the guard cannot read (a sourced file, the commands
    /// `parallel` reads).
    Opaque(String),
}

/// The most guesses made for one command line of an unknown program.
const MAX_GUESSES: usize = 16;

/// What `argv` runs besides itself. `guessed` is set when the command line is itself a
/// guess, and then no further guessing is done from it; `also_known` names more programs a
/// guess looks for (the declared restart commands).
/// `from` is the command piping into it, if any.
pub(crate) fn inner(
    argv: &[Arg],
    guessed: bool,
    also_known: &dyn Fn(&Arg) -> bool,
    from: Option<&str>,
) -> Vec<Inner> {
    let Some(program) = argv.first() else {
        return Vec::new();
    };
    let name = basename(&program.text);
    if let Some(inner) = wrappers::through(name, argv, from) {
        return inner;
    }
    if let Some(inner) = shells::input(name, argv) {
        return inner;
    }
    if let Some(inner) = code::input(name, argv) {
        return inner;
    }
    if let Some(inner) = tools::input(name, argv) {
        return inner;
    }
    // stead's own arguments (a job's command) run later, under stead.
    if guessed || data::is_data(name) || name == "stead" {
        return Vec::new();
    }
    guesses(argv, also_known)
}

/// A command the guard knows: a guarded verb's program, a wrapper, a shell, an
/// interpreter, a tool that runs commands, or stead.
pub(crate) fn is_known(arg: &Arg) -> bool {
    let name = basename(&arg.text);
    rules::is_rule_program(arg)
        || wrappers::is_wrapper(name)
        || is_shell(name)
        || is_interpreter(name)
        || tools::is_tool(name)
}

/// Every program name the guard knows, for a glob in a program's place (`systemct?`).
pub(crate) fn known_names() -> impl Iterator<Item = &'static str> {
    let named = rules::PROGRAMS
        .iter()
        .chain(shells::NAMES)
        .chain(code::NAMES)
        .chain(tools::NAMES)
        .copied();
    named.chain(wrappers::names())
}

/// For a program the guard does not know: the arguments that are commands the guard
/// knows, with what follows them, and the arguments that read as whole command lines.
fn guesses(argv: &[Arg], also_known: &dyn Fn(&Arg) -> bool) -> Vec<Inner> {
    let mut out = Vec::new();
    for (at, arg) in argv.iter().enumerate().skip(1) {
        if out.len() >= MAX_GUESSES {
            out.push(Inner::Opaque(format!(
                "more than {MAX_GUESSES} commands in the arguments of `{}`",
                argv[0].text
            )));
            break;
        }
        if arg.is_exact() && (is_known(arg) || also_known(arg)) {
            out.push(Inner::Argv {
                argv: argv[at..].to_vec(),
                via: Via::Guess,
            });
        } else if !arg.dynamic && arg.text.trim().contains(char::is_whitespace) {
            out.push(Inner::Script {
                code: arg.clone(),
                via: Via::Guess,
                what: format!("an argument of `{}`", argv[0].text),
                posix: true,
            });
        }
    }
    out
}

/// Whether a path names standard input, or another descriptor the shell may have fed
/// a here-document to (`/dev/stdin`, `/dev/fd/3`, `/proc/self/fd/0`, `-`).
pub(crate) fn is_stdin_path(path: &str) -> bool {
    let fd = |rest: &str| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit());
    path == "-"
        || path == "/dev/stdin"
        || path.strip_prefix("/dev/fd/").is_some_and(fd)
        || path.strip_prefix("/proc/self/fd/").is_some_and(fd)
}

/// What reading a script or code file means: the file itself is not read, but one that
/// is standard input in disguise, or an expansion (`<(echo …)`), is.
pub(crate) fn script_file(file: &Arg, stdin: Inner, what: String) -> Option<Inner> {
    if file.dynamic {
        return Some(Inner::Opaque(format!(
            "the script `{}` that {what} runs",
            file.text
        )));
    }
    is_stdin_path(&file.text).then_some(stdin)
}

/// Words joined with spaces, as a command line: unknown if any word is.
pub(crate) fn joined(words: &[Arg]) -> Arg {
    let text: Vec<&str> = words.iter().map(|a| a.text.as_str()).collect();
    Arg {
        text: text.join(" "),
        dynamic: words.iter().any(|a| a.dynamic),
        ..Arg::default()
    }
}
