//! Tools that take commands as arguments: `find -exec`, `watch`, `parallel`, `ssh`,
//! `tmux`, `screen`, `at`, `script`, `entr`, `gdb`, and git's aliases, hooks-like
//! settings and `rebase --exec`. Where a tool's own options are too many to list
//! (tmux, screen), the words it is given are read as a command line: an option value
//! read as a program name is a program the guard does not know, whose arguments are
//! then looked through like any other.

use std::sync::LazyLock;

use regex::Regex;

use super::{Inner, Via, joined, script_file};
use crate::opts::{self, Spec};
use crate::words::Arg;

/// GNU parallel's replacement strings.
static REPLACEMENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{[0-9]*[./#%^]*\}").expect("a valid pattern"));

pub(super) const NAMES: &[&str] = &[
    "crontab", "make", "tar", "zip", "find", "watch", "parallel", "ssh", "mosh", "tmux", "screen",
    "at", "batch", "script", "entr", "git", "gdb",
];

pub(super) fn is_tool(name: &str) -> bool {
    NAMES.contains(&name)
}

pub(super) fn input(name: &str, argv: &[Arg]) -> Option<Vec<Inner>> {
    let args = &argv[1..];
    Some(match name {
        "find" => find(args),
        "watch" => watch(args),
        "parallel" => parallel(args),
        "ssh" => ssh(args),
        "mosh" => mosh(args),
        "tmux" => tmux(args),
        "screen" => screen(args),
        "at" | "batch" => at(args),
        "script" => script(args),
        "entr" => entr(args),
        "git" => git(args),
        "gdb" => gdb(args),
        "crontab" => crontab(args),
        "make" => make(args),
        "tar" => tar(args),
        "zip" => zip(args),
        _ => return None,
    })
}

fn shell(code: Arg, via: Via, what: &str) -> Inner {
    Inner::Script {
        code,
        via,
        what: what.to_owned(),
        posix: true,
    }
}

/// `find … -exec CMD {} ;` (also `-execdir`, `-ok`, `-okdir`, and `+`).
fn find(args: &[Arg]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if matches!(
            args[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = i + 1;
            let end = (start..args.len())
                .find(|&j| matches!(args[j].text.as_str(), ";" | "+"))
                .unwrap_or(args.len());
            let command: Vec<Arg> = args[start..end]
                .iter()
                .map(|a| match a.text.contains("{}") {
                    true => Arg::unknown(&a.text),
                    false => a.clone(),
                })
                .collect();
            if !command.is_empty() {
                out.push(Inner::Argv {
                    argv: command,
                    via: Via::Maybe,
                });
            }
            i = end;
        }
        i += 1;
    }
    out
}

const WATCH: Spec = Spec::values("nqd", &["interval", "equexit"]);

/// `watch [-x] CMD…`: without `-x`, the words are joined and run by `sh -c`.
fn watch(args: &[Arg]) -> Vec<Inner> {
    let scan = opts::leading(args, &WATCH);
    let command = &args[scan.rest..];
    if command.is_empty() || scan.asks_help() {
        return Vec::new();
    }
    if scan.has("x") || scan.has("exec") {
        return vec![Inner::Argv {
            argv: command.to_vec(),
            via: Via::Maybe,
        }];
    }
    vec![shell(
        joined(command),
        Via::Maybe,
        "the command `watch` runs",
    )]
}

/// `parallel [OPTIONS] COMMAND ::: ARGS`: the command is run by a shell; without one,
/// the commands come from its input.
fn parallel(args: &[Arg]) -> Vec<Inner> {
    let end = args
        .iter()
        .position(|a| a.text.starts_with(":::"))
        .unwrap_or(args.len());
    let words: Vec<Arg> = args[..end]
        .iter()
        .filter(|a| !a.text.starts_with('-'))
        .cloned()
        .collect();
    if words.is_empty() {
        return vec![Inner::Opaque("the commands `parallel` reads".to_owned())];
    }
    // Its replacement strings (`{}`, `{.}`, `{1}`) stand for its arguments: unknown
    // to the script, which reads them as a variable.
    // Without one, they are appended to the command.
    let mut code = joined(&words);
    code.text = match REPLACEMENT.is_match(&code.text) {
        true => REPLACEMENT
            .replace_all(&code.text, regex::NoExpand("\"$PARALLEL_ARG\""))
            .into_owned(),
        false => format!("{} \"$PARALLEL_ARG\"", code.text),
    };
    vec![shell(code, Via::Maybe, "the command `parallel` runs")]
}

const SSH: Spec = Spec::values("BbcDEeFIiJLlmOoPpQRSWw", &[]);

/// `ssh [OPTIONS] HOST [COMMAND…]`: the command runs in the remote user's shell (which
/// may be this machine's), as do `-o RemoteCommand=…` and `-o LocalCommand=…`; with no
/// command, the remote shell reads ssh's standard input.
fn ssh(args: &[Arg]) -> Vec<Inner> {
    let scan = opts::leading(args, &SSH);
    let mut out = Vec::new();
    for option in scan.options.iter().filter(|o| o.name == "o") {
        let Some(value) = &option.value else { continue };
        let (key, command) = value.text.split_once(['=', ' ']).unwrap_or(("", ""));
        if ["remotecommand", "localcommand", "proxycommand"]
            .contains(&key.to_ascii_lowercase().as_str())
        {
            let code = Arg {
                text: command.to_owned(),
                dynamic: value.dynamic,
                ..Arg::default()
            };
            out.push(shell(code, Via::Maybe, "a command of ssh's options"));
        }
    }
    let command = args.get(scan.rest + 1..).unwrap_or_default();
    if !command.is_empty() {
        out.push(shell(joined(command), Via::Maybe, "the command `ssh` runs"));
    } else if scan.rest < args.len() && !scan.has("N") {
        out.push(Inner::ShellStdin {
            via: Via::Maybe,
            what: "what the shell `ssh` starts reads on its standard input".to_owned(),
        });
    }
    out
}

/// `mosh [OPTIONS] HOST -- COMMAND…`.
fn mosh(args: &[Arg]) -> Vec<Inner> {
    match args.iter().position(|a| a.text == "--") {
        Some(at) if at + 1 < args.len() => vec![Inner::Argv {
            argv: args[at + 1..].to_vec(),
            via: Via::Maybe,
        }],
        _ => Vec::new(),
    }
}

/// tmux: the shell commands of `new-session`, `new-window`, `split-window`,
/// `respawn-pane`, `run-shell`, `if-shell`, `display-popup`, each argument read on its
/// own (and as a tmux command, which `if-shell` takes), and the keys `send-keys` types
/// into a pane's shell, read together.
fn tmux(args: &[Arg]) -> Vec<Inner> {
    let words: Vec<Arg> = args
        .iter()
        .filter(|a| !a.text.starts_with('-'))
        .map(|a| match a.text.as_str() {
            "Enter" | "C-m" | "KPEnter" | "C-j" => Arg::literal(";"),
            _ => a.clone(),
        })
        .collect();
    let Some((_, rest)) = words.split_first() else {
        return Vec::new();
    };
    let mut out = vec![shell(joined(rest), Via::Maybe, "the command `tmux` runs")];
    for word in rest.iter().filter(|w| w.text.contains(' ')) {
        out.push(shell(word.clone(), Via::Maybe, "a command `tmux` runs"));
        if let Ok(split) = shell_words::split(&word.text) {
            let mut nested = vec![Arg::literal("tmux")];
            nested.extend(split.iter().map(|w| Arg {
                text: w.clone(),
                dynamic: word.dynamic,
                ..Arg::default()
            }));
            out.push(Inner::Argv {
                argv: nested,
                via: Via::Maybe,
            });
        }
    }
    out
}

/// screen: the command it starts (after its own options), and what `-X stuff` types
/// into a window (`\n`, `\r`, `\015`, `^M` are the Enter key).
fn screen(args: &[Arg]) -> Vec<Inner> {
    if let Some(at) = args.iter().position(|a| a.text == "stuff")
        && let Some(typed) = args.get(at + 1)
    {
        let mut text = typed.text.clone();
        for enter in ["\\n", "\\r", "\\015", "\\012", "^M", "^J", "\r"] {
            text = text.replace(enter, "\n");
        }
        let code = Arg {
            text,
            ..typed.clone()
        };
        return vec![shell(code, Via::Maybe, "what `screen` types into a window")];
    }
    let scan = opts::leading(args, &SCREEN);
    let command = &args[scan.rest..];
    if command.is_empty() || scan.has("X") || scan.has("r") || scan.has("x") || scan.has("ls") {
        return Vec::new();
    }
    vec![Inner::Argv {
        argv: command.to_vec(),
        via: Via::Maybe,
    }]
}

/// `at TIME` and `batch` run the script on their standard input, or in `-f FILE`.
fn at(args: &[Arg]) -> Vec<Inner> {
    let scan = opts::scan(args, &Spec::values("fqtm", &[]));
    if ["l", "d", "r", "c"].iter().any(|o| scan.has(o)) {
        return Vec::new();
    }
    let stdin = Inner::ShellStdin {
        via: Via::Maybe,
        what: "the script `at` is given".to_owned(),
    };
    match scan.value("f") {
        Some(file) => script_file(file, stdin, "`at`".to_owned())
            .into_iter()
            .collect(),
        None => vec![stdin],
    }
}

const SCREEN: Spec = Spec::values("cehpStTsXRrx", &["ls", "list"]);

const SCRIPT: Spec = Spec::values(
    "cEIOBT",
    &[
        "command",
        "echo",
        "log-in",
        "log-out",
        "log-io",
        "log-timing",
    ],
);

/// `script -c COMMAND [FILE]`; without `-c` it starts a shell reading its standard
/// input.
fn script(args: &[Arg]) -> Vec<Inner> {
    let scan = opts::scan(args, &SCRIPT);
    match scan.value("c").or_else(|| scan.value("command")) {
        Some(code) => vec![shell(code.clone(), Via::Maybe, "the command `script` runs")],
        None => vec![Inner::ShellStdin {
            via: Via::Maybe,
            what: "what the shell `script` starts reads on its standard input".to_owned(),
        }],
    }
}

/// `crontab [-] | crontab FILE`: installs commands that run later; each line of what it
/// is given is a schedule and a shell command. A file is not read.
fn crontab(args: &[Arg]) -> Vec<Inner> {
    let scan = opts::scan(args, &Spec::values("u", &[]));
    if ["l", "r", "e", "i", "V"].iter().any(|o| scan.has(o)) {
        return Vec::new();
    }
    let stdin = Inner::ShellStdin {
        via: Via::Maybe,
        what: "the commands given to `crontab`".to_owned(),
    };
    match scan.operands.first() {
        Some(file) => script_file(file, stdin, "`crontab`".to_owned())
            .into_iter()
            .collect(),
        None => vec![stdin],
    }
}

/// `make -f FILE`: a makefile's recipes are shell commands; one on standard input, or
/// in an expansion, is read as code.
fn make(args: &[Arg]) -> Vec<Inner> {
    let scan = opts::scan(
        args,
        &Spec::values(
            "fCIjlo",
            &[
                "file",
                "makefile",
                "directory",
                "include-dir",
                "jobs",
                "eval",
            ],
        ),
    );
    let stdin = || Inner::CodeStdin {
        language: "make".to_owned(),
    };
    let mut out: Vec<Inner> = ["f", "file", "makefile"]
        .iter()
        .filter_map(|o| scan.value(o))
        .filter_map(|f| script_file(f, stdin(), "`make`".to_owned()))
        .collect();
    out.extend(scan.value("eval").map(|code| Inner::Code {
        language: "make".to_owned(),
        code: code.clone(),
    }));
    out
}

/// tar's commands: `--checkpoint-action=exec=…`, `--to-command`, `--use-compress-program`
/// (`-I`), `--info-script` and `--new-volume-script` (`-F`).
fn tar(args: &[Arg]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        let (option, inline) = match text.split_once('=') {
            Some((option, value)) => (option, Some(value)),
            None => (text, None),
        };
        let takes = matches!(
            option,
            "--checkpoint-action"
                | "--to-command"
                | "--use-compress-program"
                | "--info-script"
                | "--new-volume-script"
                | "-I"
                | "-F"
        );
        if takes {
            let value = match inline {
                Some(value) => Some(value.to_owned()),
                None => {
                    i += 1;
                    args.get(i).map(|a| a.text.clone())
                }
            };
            if let Some(value) = value {
                let code = value.strip_prefix("exec=").unwrap_or(&value);
                let code = Arg {
                    text: code.to_owned(),
                    dynamic: args[i.min(args.len() - 1)].dynamic,
                    ..Arg::default()
                };
                out.push(shell(code, Via::Maybe, "a command `tar` runs"));
            }
        }
        i += 1;
    }
    out
}

/// `zip -TT COMMAND` (`--unzip-command`): the command it tests the archive with.
fn zip(args: &[Arg]) -> Vec<Inner> {
    let mut out = Vec::new();
    for (at, arg) in args.iter().enumerate() {
        let code = match arg.text.as_str() {
            "-TT" | "--unzip-command" => args.get(at + 1).cloned(),
            text => text.strip_prefix("--unzip-command=").map(|code| Arg {
                text: code.to_owned(),
                ..arg.clone()
            }),
        };
        out.extend(code.map(|code| shell(code, Via::Maybe, "the command `zip` tests with")));
    }
    out
}

/// `entr [-s] COMMAND…`: with `-s` the command is run by a shell.
fn entr(args: &[Arg]) -> Vec<Inner> {
    let scan = opts::leading(args, &Spec::FLAGS);
    let command = &args[scan.rest..];
    if command.is_empty() {
        return Vec::new();
    }
    if scan.options.iter().any(|o| o.name == "s") {
        return vec![shell(
            command[0].clone(),
            Via::Maybe,
            "the script `entr` runs",
        )];
    }
    vec![Inner::Argv {
        argv: command.to_vec(),
        via: Via::Maybe,
    }]
}

/// Git settings whose value is a command git runs.
fn runs_command(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "core.pager",
        "core.editor",
        "core.sshcommand",
        "core.fsmonitor",
        "sequence.editor",
        "diff.external",
        "gpg.program",
        "credential.helper",
        "core.askpass",
        "core.alternaterefscommand",
        "uploadpack.packobjectshook",
    ]
    .contains(&key.as_str())
        || [
            ".command",
            ".cmd",
            ".driver",
            ".clean",
            ".smudge",
            ".process",
            ".textconv",
            ".tool",
        ]
        .iter()
        .any(|suffix| key.ends_with(suffix))
}

/// A git setting's value, when it is a command: an alias starting with `!` is a shell
/// command, and so are the settings in [`runs_command`].
fn git_setting(key: &str, value: &Arg) -> Option<Inner> {
    let key_lower = key.to_ascii_lowercase();
    let code = if key_lower.starts_with("alias.") {
        value.text.strip_prefix('!')?
    } else if runs_command(key) {
        value.text.strip_prefix('!').unwrap_or(&value.text)
    } else {
        return None;
    };
    let code = Arg {
        text: code.to_owned(),
        dynamic: value.dynamic,
        ..Arg::default()
    };
    Some(shell(code, Via::Maybe, "a command in git's settings"))
}

const GIT: Spec = Spec::values(
    "Cc",
    &[
        "exec-path",
        "git-dir",
        "work-tree",
        "namespace",
        "config-env",
    ],
);

/// git: `-c KEY=VALUE` and `git config KEY VALUE` for settings that are commands,
/// `rebase --exec`, `bisect run`, `submodule foreach`, `filter-branch --*-filter`,
/// `difftool --extcmd`.
fn git(args: &[Arg]) -> Vec<Inner> {
    let scan = opts::leading(args, &GIT);
    let mut out = Vec::new();
    for option in scan.options.iter().filter(|o| o.name == "c") {
        let Some(value) = &option.value else { continue };
        if let Some((key, setting)) = value.text.split_once('=') {
            let setting = Arg {
                text: setting.to_owned(),
                dynamic: value.dynamic,
                ..Arg::default()
            };
            out.extend(git_setting(key, &setting));
        }
    }
    let rest = &args[scan.rest..];
    // A remote of the `ext::` transport is a command git runs: its words split on
    // spaces, `% ` a space within a word, `%%` a percent sign.
    for remote in rest.iter().filter(|a| a.text.starts_with("ext::")) {
        let argv = ext_words(&remote.text["ext::".len()..])
            .into_iter()
            .map(|word| Arg {
                text: word,
                dynamic: remote.dynamic,
                ..Arg::default()
            })
            .collect::<Vec<_>>();
        if !argv.is_empty() {
            out.push(Inner::Argv {
                argv,
                via: Via::Maybe,
            });
        }
    }
    let Some((sub, rest)) = rest.split_first() else {
        return out;
    };
    match sub.text.as_str() {
        "config" => {
            let words: Vec<&Arg> = rest.iter().filter(|a| !a.text.starts_with('-')).collect();
            if let [key, value, ..] = words.as_slice() {
                out.extend(git_setting(&key.text, value));
            }
        }
        "rebase" => {
            let scan = opts::scan(
                rest,
                &Spec::values("xsX", &["exec", "onto", "strategy", "strategy-option"]),
            );
            for code in ["x", "exec"].iter().filter_map(|o| scan.value(o)) {
                out.push(shell(
                    code.clone(),
                    Via::Maybe,
                    "the command `git rebase` runs",
                ));
            }
        }
        "bisect" if rest.first().is_some_and(|a| a.text == "run") && rest.len() > 1 => {
            out.push(Inner::Argv {
                argv: rest[1..].to_vec(),
                via: Via::Maybe,
            });
        }
        "submodule" if rest.iter().any(|a| a.text == "foreach") => {
            if let Some(code) = rest.last() {
                out.push(shell(
                    code.clone(),
                    Via::Maybe,
                    "the command `git submodule foreach` runs",
                ));
            }
        }
        "filter-branch" | "difftool" | "mergetool" => {
            for (at, arg) in rest.iter().enumerate() {
                let is_command =
                    arg.text.ends_with("-filter") || matches!(arg.text.as_str(), "-x" | "--extcmd");
                if is_command && let Some(code) = rest.get(at + 1) {
                    out.push(shell(code.clone(), Via::Maybe, "a command `git` runs"));
                }
                if let Some(code) = arg.text.strip_prefix("--extcmd=") {
                    out.push(shell(
                        Arg {
                            text: code.to_owned(),
                            ..arg.clone()
                        },
                        Via::Maybe,
                        "a command `git` runs",
                    ));
                }
            }
        }
        _ => {}
    }
    out
}

/// The words of an `ext::` remote's command.
fn ext_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' => match chars.next() {
                Some(' ') => word.push(' '),
                Some('%') => word.push('%'),
                Some(other) => {
                    word.push('%');
                    word.push(other);
                }
                None => word.push('%'),
            },
            ' ' => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// gdb: the commands of `-ex` (which can run shell commands) and the program of
/// `--args`.
fn gdb(args: &[Arg]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let text = args[i].text.as_str();
        if text == "--args" {
            if i + 1 < args.len() {
                out.push(Inner::Argv {
                    argv: args[i + 1..].to_vec(),
                    via: Via::Maybe,
                });
            }
            break;
        }
        let command = match text {
            "-ex" | "-iex" | "--eval-command" | "--init-eval-command" => args.get(i + 1).cloned(),
            _ => text
                .strip_prefix("--eval-command=")
                .or_else(|| text.strip_prefix("--init-eval-command="))
                .map(|c| Arg {
                    text: c.to_owned(),
                    ..args[i].clone()
                }),
        };
        if let Some(code) = command {
            out.push(Inner::Code {
                language: "gdb".to_owned(),
                code,
            });
        }
        i += 1;
    }
    out
}
