//! Shells: what one is asked to run (`sh -c SCRIPT`, a script on its standard input),
//! whatever it is called. Any program whose name ends in `sh` and reads like a shell's
//! name counts, as do fish, csh, nu, xonsh and elvish, whose languages only resemble
//! sh's; and `su`, `runuser`, `sg` and `capsh`, which hand a command to one.

use super::{Inner, Via, joined, script_file};
use crate::opts::{self, Spec};
use crate::words::Arg;

/// Shells that read sh's language.
const POSIX: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "oksh", "loksh",
    "pdksh", "lksh", "bosh", "hush", "ksh93",
];

/// Shells of another language.
const OTHER: &[&str] = &["fish", "tcsh", "csh", "nu", "xonsh", "elvish"];

/// Names that end in `sh` but are no shell.
const NOT_SHELLS: &[&str] = &[
    "ssh", "mosh", "push", "flush", "fresh", "refresh", "publish", "finish", "pwsh",
];

pub(super) const NAMES: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "oksh", "loksh",
    "pdksh", "lksh", "bosh", "hush", "ksh93", "fish", "tcsh", "csh", "nu", "xonsh", "elvish", "su",
    "runuser", "sg", "capsh",
];

pub(crate) fn is_shell(name: &str) -> bool {
    POSIX.contains(&name)
        || OTHER.contains(&name)
        || (name.len() <= 6
            && name.ends_with("sh")
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && !NOT_SHELLS.contains(&name))
}

const SU: Spec = Spec::values(
    "csgGwu",
    &[
        "command",
        "session-command",
        "shell",
        "group",
        "supp-group",
        "user",
        "whitelist-environment",
    ],
);

/// What a shell command line runs; `None` when `name` is no shell.
pub(super) fn input(name: &str, argv: &[Arg]) -> Option<Vec<Inner>> {
    match name {
        "su" | "runuser" => return Some(su(argv)),
        "sg" => return Some(sg(argv)),
        "capsh" => return Some(capsh(argv)),
        _ if !is_shell(name) => return None,
        _ => {}
    }
    let posix = !OTHER.contains(&name);
    let mut out = Vec::new();
    let (mut command, mut stdin) = (false, false);
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        let text = arg.text.as_str();
        i += 1;
        if text == "--" || text == "-" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (long, value) = match long.split_once('=') {
                Some((long, value)) => (long, Some(Arg::literal(value))),
                None => (long, None),
            };
            match long {
                "command" | "init-command" | "commands" => {
                    let code = value.or_else(|| {
                        i += 1;
                        argv.get(i - 1).cloned()
                    });
                    if let Some(code) = code {
                        out.push(script(code, name, posix));
                    }
                }
                "rcfile" | "init-file" => {
                    let file = value.or_else(|| {
                        i += 1;
                        argv.get(i - 1).cloned()
                    });
                    if let Some(file) = file {
                        out.extend(script_file(&file, stdin_of(name), format!("`{name}`")));
                    }
                }
                _ => {}
            }
        } else if let Some(flags) = text.strip_prefix(['-', '+']).filter(|f| !f.is_empty()) {
            if text.starts_with('-') && flags.contains('C') && name == "fish" {
                i += 1;
                if let Some(code) = argv.get(i - 1) {
                    out.push(script(code.clone(), name, posix));
                }
            }
            command |= text.starts_with('-') && flags.contains('c');
            stdin |= flags.contains('s');
            if flags.contains(['o', 'O']) {
                i += 1; // `-o pipefail`
            }
        } else {
            i -= 1;
            break;
        }
    }
    if command {
        out.extend(argv.get(i).map(|code| script(code.clone(), name, posix)));
    } else if stdin || i >= argv.len() {
        out.push(stdin_of(name));
    } else {
        // A script file, which the guard does not read, unless it is standard input in
        // disguise or an expansion.
        out.extend(script_file(&argv[i], stdin_of(name), format!("`{name}`")));
    }
    Some(out)
}

fn stdin_of(name: &str) -> Inner {
    Inner::ShellStdin {
        via: Via::Always,
        what: format!("what `{name}` reads on its standard input"),
    }
}

fn script(code: Arg, name: &str, posix: bool) -> Inner {
    Inner::Script {
        code,
        via: Via::Always,
        what: format!("the script of `{name}`"),
        posix,
    }
}

/// `su [-] [USER] -c SCRIPT`, `runuser -u USER -- COMMAND…`, or an interactive shell.
fn su(argv: &[Arg]) -> Vec<Inner> {
    let name = &argv[0].text;
    let scan = opts::scan(&argv[1..], &SU);
    let code = ["c", "command", "session-command"]
        .iter()
        .find_map(|o| scan.value(o));
    if let Some(code) = code {
        return vec![script(code.clone(), name, true)];
    }
    if scan.has("u") || scan.has("user") {
        // `runuser -u USER [--] COMMAND…` runs the command itself.
        let command: Vec<Arg> = scan.operands.iter().map(|a| (*a).clone()).collect();
        if !command.is_empty() {
            return vec![Inner::Argv {
                argv: command,
                via: Via::Always,
            }];
        }
    }
    vec![Inner::ShellStdin {
        via: Via::Always,
        what: format!("what `{name}`'s shell reads on its standard input"),
    }]
}

/// `sg GROUP [-c] COMMAND`: the command is handed to `/bin/sh -c`.
fn sg(argv: &[Arg]) -> Vec<Inner> {
    let mut rest = argv.get(2..).unwrap_or_default();
    if rest.first().is_some_and(|a| a.text == "-c") {
        rest = &rest[1..];
    }
    if rest.is_empty() {
        return Vec::new();
    }
    vec![script(joined(rest), "sg", true)]
}

/// `capsh [OPTIONS] -- ARGS…`: the arguments after `--` go to bash.
fn capsh(argv: &[Arg]) -> Vec<Inner> {
    let Some(at) = argv.iter().position(|a| a.text == "--") else {
        return Vec::new();
    };
    let mut bash = vec![Arg::literal("bash")];
    bash.extend(argv[at + 1..].iter().cloned());
    vec![Inner::Argv {
        argv: bash,
        via: Via::Always,
    }]
}
