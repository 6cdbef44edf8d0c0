//! Commands that run another command: the guard looks through them to the command they
//! run (`sudo -u root systemctl restart web` is a `systemctl restart`), and into the
//! scripts a shell is handed (`bash -c '…'`, a here-document fed to `sh`).

use super::opts::{self, Spec};
use super::words::{Arg, basename};

/// A command that runs the command after its own options and operands.
struct Wrapper {
    name: &'static str,
    spec: Spec,
    /// `NAME=value` words may come before the command (`env`, `sudo`).
    assignments: bool,
    /// Operands of its own before the command (`timeout`'s duration).
    operands: usize,
}

const fn wrapper(
    name: &'static str,
    short_values: &'static str,
    long_values: &'static [&'static str],
) -> Wrapper {
    Wrapper {
        name,
        spec: Spec {
            short_values,
            long_values,
            signals: false,
        },
        assignments: false,
        operands: 0,
    }
}

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        assignments: true,
        ..wrapper(
            "sudo",
            "ugpChDrtURT",
            &[
                "user",
                "group",
                "prompt",
                "close-from",
                "chdir",
                "host",
                "role",
                "type",
                "other-user",
                "command-timeout",
                "chroot",
            ],
        )
    },
    wrapper("doas", "uC", &[]),
    Wrapper {
        assignments: true,
        ..wrapper("env", "uCS", &["unset", "chdir", "split-string"])
    },
    wrapper("nohup", "", &[]),
    wrapper("exec", "a", &[]),
    wrapper("command", "", &[]),
    wrapper("builtin", "", &[]),
    wrapper("time", "fo", &["format", "output"]),
    wrapper("nice", "n", &["adjustment"]),
    Wrapper {
        operands: 1,
        ..wrapper("timeout", "sk", &["signal", "kill-after"])
    },
    wrapper("setsid", "", &[]),
    wrapper("stdbuf", "ioe", &["input", "output", "error"]),
    wrapper(
        "xargs",
        "aEdILnPs",
        &[
            "arg-file",
            "eof",
            "delimiter",
            "replace",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
    ),
];

/// The command a command line finally runs, looking through wrappers; `None` when it
/// runs none (`command -v pkill`, `env` alone).
pub(super) fn unwrap(mut argv: Vec<Arg>) -> Option<Vec<Arg>> {
    loop {
        let name = basename(&argv.first()?.text).to_owned();
        let Some(wrapper) = WRAPPERS.iter().find(|w| w.name == name) else {
            return Some(argv);
        };
        let scan = opts::leading(&argv[1..], &wrapper.spec);
        if name == "command" && (scan.has("v") || scan.has("V")) {
            return None; // a lookup, not a run
        }
        let mut inner = Vec::new();
        // `env -S 'pkill stead'` splits its value into the command's first words.
        for split in scan
            .options
            .iter()
            .filter(|o| o.name == "S" || o.name == "split-string")
        {
            let value = split.value.as_ref()?;
            match shell_words::split(&value.text) {
                Ok(words) if !value.dynamic => inner.extend(words.iter().map(|w| Arg::literal(w))),
                _ => inner.push(Arg::unknown(&value.text)),
            }
        }
        let mut rest = &argv[1 + scan.rest..];
        while wrapper.assignments && rest.first().is_some_and(|a| a.text.contains('=')) {
            rest = &rest[1..];
        }
        inner.extend(rest.iter().skip(wrapper.operands).cloned());
        if name == "xargs" {
            // The words xargs reads from its input end its command: unknown here.
            inner.push(Arg::unknown("(the input of xargs)"));
        }
        if inner.is_empty() {
            return None;
        }
        argv = inner;
    }
}

/// What a shell is asked to run.
pub(super) enum ShellInput {
    /// `sh -c SCRIPT`, `su -c SCRIPT`.
    Script(Arg),
    /// Its standard input: a here-document, a here-string or a pipe.
    Stdin,
}

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh"];

const SU: Spec = Spec {
    short_values: "csgGw",
    long_values: &["command", "session-command", "shell", "group", "supp-group"],
    signals: false,
};

/// What a shell command line runs, if it is a shell: `None` for anything else and for
/// a script file (the guard reads command lines, not files).
pub(super) fn shell_input(argv: &[Arg]) -> Option<ShellInput> {
    let program = basename(&argv.first()?.text);
    if program == "su" || program == "runuser" {
        // `su [-] [USER] -c SCRIPT` runs the script in that user's shell.
        let scan = opts::scan(&argv[1..], &SU);
        let script = scan
            .options
            .into_iter()
            .find(|o| matches!(o.name.as_str(), "c" | "command" | "session-command"));
        return script.and_then(|o| o.value).map(ShellInput::Script);
    }
    if !SHELLS.contains(&program) {
        return None;
    }
    let (mut command, mut stdin) = (false, false);
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        let text = arg.text.as_str();
        i += 1;
        if text == "--" || text == "-" {
            break;
        }
        if text.starts_with("--") {
            // Long options; two of them take the next word.
            if text == "--rcfile" || text == "--init-file" {
                i += 1;
            }
        } else if let Some(flags) = text.strip_prefix(['-', '+']).filter(|f| !f.is_empty()) {
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
        argv.get(i).cloned().map(ShellInput::Script)
    } else if stdin || i >= argv.len() {
        Some(ShellInput::Stdin)
    } else {
        None
    }
}
