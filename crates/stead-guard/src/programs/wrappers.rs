//! Commands that run the command after their own options and operands (`sudo -u root
//! systemctl restart web` runs `systemctl restart web`), with how each reads its
//! options and whether its exit status is that of the command it runs.

use super::{Inner, Via};
use crate::opts::{self, Spec};
use crate::words::Arg;

/// A command that runs the command after its own options and operands.
struct Wrapper {
    names: &'static [&'static str],
    spec: Spec,
    /// `NAME=value` words may come before the command (`env`, `sudo`).
    assignments: bool,
    /// Operands of its own before the command (`timeout`'s duration).
    operands: usize,
    /// Options whose value is a shell script it runs (`flock -c`).
    scripts: &'static [&'static str],
    /// Options with which it runs no command at all (`chrt -p PID`, `command -v`).
    no_command: &'static [&'static str],
    via: Via,
}

const fn wrapper(names: &'static [&'static str], spec: Spec) -> Wrapper {
    Wrapper {
        names,
        spec,
        assignments: false,
        operands: 0,
        scripts: &[],
        no_command: &[],
        via: Via::Always,
    }
}

const FLAGS: Spec = Spec::FLAGS;
const HELP: &[&str] = &["help", "version"];

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        assignments: true,
        no_command: &[
            "l",
            "list",
            "v",
            "validate",
            "K",
            "remove-timestamp",
            "e",
            "edit",
            "V",
            "version",
            "h",
            "help",
        ],
        ..wrapper(
            &["sudo"],
            Spec::values(
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
            ),
        )
    },
    wrapper(&["doas"], Spec::values("uC", &[])),
    Wrapper {
        assignments: true,
        ..wrapper(
            &["env"],
            Spec::values(
                "uCSP",
                &["unset", "chdir", "split-string", "default-signal"],
            ),
        )
    },
    wrapper(
        &[
            "nohup",
            "builtin",
            "eatmydata",
            "catchsegv",
            "torsocks",
            "unbuffer",
        ],
        FLAGS,
    ),
    wrapper(&["exec"], Spec::values("a", &[])),
    Wrapper {
        no_command: &["v", "V"],
        ..wrapper(&["command"], FLAGS)
    },
    wrapper(&["time"], Spec::values("fo", &["format", "output"])),
    wrapper(&["nice"], Spec::values("n", &["adjustment"])),
    Wrapper {
        operands: 1,
        ..wrapper(&["timeout"], Spec::values("sk", &["signal", "kill-after"]))
    },
    wrapper(
        &["stdbuf"],
        Spec::values("ioe", &["input", "output", "error"]),
    ),
    Wrapper {
        operands: 1,
        no_command: &["p", "pid", "m", "max"],
        ..wrapper(
            &["chrt"],
            Spec::values("TPD", &["sched-runtime", "sched-period", "sched-deadline"]),
        )
    },
    Wrapper {
        operands: 1,
        no_command: &["p", "pid"],
        ..wrapper(&["taskset"], FLAGS)
    },
    Wrapper {
        no_command: &["p", "P", "u", "pid", "pgid", "uid"],
        ..wrapper(&["ionice"], Spec::values("cnpPu", &["class", "classdata"]))
    },
    wrapper(&["pkexec"], Spec::values("", &["user"])),
    wrapper(
        &["run0"],
        Spec::values(
            "ugD",
            &[
                "user",
                "group",
                "unit",
                "property",
                "description",
                "slice",
                "nice",
                "chdir",
                "setenv",
                "background",
                "machine",
            ],
        ),
    ),
    wrapper(
        &["setpriv"],
        Spec::values(
            "",
            &[
                "reuid",
                "regid",
                "ruid",
                "euid",
                "rgid",
                "egid",
                "groups",
                "inh-caps",
                "ambient-caps",
                "bounding-set",
                "securebits",
                "pdeathsig",
                "selinux-label",
                "apparmor-profile",
                "landlock-access",
                "landlock-rule",
            ],
        ),
    ),
    wrapper(&["firejail"], FLAGS),
    wrapper(
        &["bwrap"],
        Spec {
            long_values: &[
                "args",
                "argv0",
                "uid",
                "gid",
                "hostname",
                "chdir",
                "unsetenv",
                "lock-file",
                "sync-fd",
                "remount-ro",
                "dir",
                "tmpfs",
                "proc",
                "dev",
                "mqueue",
                "exec-label",
                "file-label",
                "seccomp",
                "add-seccomp-fd",
                "cap-add",
                "cap-drop",
                "perms",
                "size",
                "userns",
                "userns2",
                "pidns",
                "info-fd",
                "json-status-fd",
                "block-fd",
                "userns-block-fd",
            ],
            long_pairs: &[
                "bind",
                "bind-try",
                "dev-bind",
                "dev-bind-try",
                "ro-bind",
                "ro-bind-try",
                "symlink",
                "file",
                "bind-data",
                "ro-bind-data",
                "setenv",
                "chmod",
                "overlay-src",
            ],
            ..FLAGS
        },
    ),
    wrapper(
        &["unshare"],
        Spec::values(
            "SGRw",
            &[
                "map-user",
                "map-group",
                "map-users",
                "map-groups",
                "setgroups",
                "propagation",
                "root",
                "wd",
                "setuid",
                "setgid",
            ],
        ),
    ),
    wrapper(
        &["nsenter"],
        Spec::values("tSG", &["target", "setuid", "setgid"]),
    ),
    Wrapper {
        operands: 1,
        ..wrapper(&["chroot"], Spec::values("", &["userspec", "groups"]))
    },
    Wrapper {
        no_command: &["p", "attach"],
        ..wrapper(
            &["strace"],
            Spec::values("abeEIoOpPsSuX", &["output", "attach", "user", "env"]),
        )
    },
    Wrapper {
        no_command: &["p"],
        ..wrapper(&["ltrace"], Spec::values("aADeFlnopsuwx", &["output"]))
    },
    wrapper(&["valgrind"], FLAGS),
    Wrapper {
        operands: 1,
        no_command: &["p", "pid", "t", "tid", "a", "all-cpus"],
        ..wrapper(
            &["perf"],
            Spec::values(
                "eoptCGcFmIr",
                &[
                    "event",
                    "output",
                    "pid",
                    "tid",
                    "cpu",
                    "cgroup",
                    "repeat",
                    "count",
                    "freq",
                    "mmap-pages",
                    "interval-print",
                ],
            ),
        )
    },
    wrapper(&["busybox", "toybox"], FLAGS),
    wrapper(&["caffeinate"], Spec::values("tw", &[])),
    wrapper(&["arch"], FLAGS),
    wrapper(&["sandbox-exec"], Spec::values("fpnD", &[])),
    wrapper(&["numactl"], Spec::values("CNmipP", &[])),
    Wrapper {
        no_command: &["p", "pid"],
        ..wrapper(&["prlimit"], Spec::values("p", &["pid", "output"]))
    },
    Wrapper {
        operands: 1,
        ..wrapper(
            &["setarch", "faketime", "s6-setuidgid", "setuidgid", "envdir"],
            FLAGS,
        )
    },
    wrapper(&["fakeroot"], Spec::values("lsi", &["lib", "faked"])),
    wrapper(&["proxychains", "proxychains4"], Spec::values("f", &[])),
    wrapper(
        &["dbus-run-session"],
        Spec::values("", &["config-file", "dbus-daemon"]),
    ),
    wrapper(
        &["xvfb-run"],
        Spec::values("nsefwp", &["server-num", "server-args"]),
    ),
    wrapper(&["chpst"], Spec::values("uUbe/nlLmdopfc", &[])),
    wrapper(&["softlimit"], Spec::values("amdosplfcrt", &[])),
    wrapper(&["sshpass"], Spec::values("pfde", &[])),
    // Its exit status is its own: 0 at once unless told to wait (-w).
    Wrapper {
        via: Via::Maybe,
        ..wrapper(&["setsid"], FLAGS)
    },
    Wrapper {
        operands: 1,
        scripts: &["c", "command"],
        via: Via::Maybe,
        ..wrapper(
            &["flock"],
            Spec::values("wEc", &["timeout", "conflict-exit-code", "command"]),
        )
    },
    Wrapper {
        via: Via::Maybe,
        ..wrapper(
            &["systemd-run"],
            Spec::values(
                "upEMH",
                &[
                    "unit",
                    "property",
                    "setenv",
                    "machine",
                    "host",
                    "description",
                    "slice",
                    "uid",
                    "gid",
                    "nice",
                    "working-directory",
                    "on-active",
                    "on-boot",
                    "on-startup",
                    "on-unit-active",
                    "on-unit-inactive",
                    "on-calendar",
                    "timer-property",
                    "path-property",
                    "socket-property",
                    "service-type",
                ],
            ),
        )
    },
    Wrapper {
        via: Via::Maybe,
        ..wrapper(
            &["xargs"],
            Spec::values(
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
        )
    },
    Wrapper {
        via: Via::Maybe,
        ..wrapper(&["daemonize", "nq"], Spec::values("acEeilopuv", &[]))
    },
];

/// Every wrapper's name.
pub(super) fn names() -> impl Iterator<Item = &'static str> {
    WRAPPERS.iter().flat_map(|w| w.names.iter().copied())
}

pub(super) fn is_wrapper(name: &str) -> bool {
    names().any(|n| n == name)
}

/// What a wrapper runs; `None` when `name` is not a wrapper. `from` is the command
/// piping into it, whose output `xargs` turns into words.
pub(super) fn through(name: &str, argv: &[Arg], from: Option<&str>) -> Option<Vec<Inner>> {
    let wrapper = WRAPPERS.iter().find(|w| w.names.contains(&name))?;
    let scan = opts::leading(&argv[1..], &wrapper.spec);
    if wrapper.no_command.iter().chain(HELP).any(|o| scan.has(o)) {
        return Some(Vec::new());
    }
    let via = match name {
        "setsid" if scan.has("w") || scan.has("wait") => Via::Always,
        "systemd-run"
            if ["wait", "scope", "pty", "pipe", "t", "P"]
                .iter()
                .any(|o| scan.has(o)) =>
        {
            Via::Always
        }
        // In the background, its exit status is 0 at once.
        "sudo" if scan.has("b") || scan.has("background") => Via::Maybe,
        _ => wrapper.via,
    };
    let mut out = Vec::new();
    // `sudo -s`, `sudo -i` and `doas -s` with no command start a shell on stdin.
    let shell = match name {
        "sudo" => ["s", "shell", "i", "login"].iter().any(|o| scan.has(o)),
        "doas" => scan.has("s"),
        _ => false,
    };
    if shell && argv.len() <= 1 + scan.rest {
        return Some(vec![Inner::ShellStdin {
            via,
            what: format!("what the shell of `{name}` reads on its standard input"),
        }]);
    }
    for script in wrapper.scripts {
        if let Some(code) = scan.value(script) {
            out.push(Inner::Script {
                code: code.clone(),
                via,
                what: format!("the script `{name}` runs"),
                posix: true,
            });
        }
    }
    let mut command = Vec::new();
    // `env -S 'pkill stead'` splits its value into the command's first words.
    if name == "env" {
        for split in scan
            .options
            .iter()
            .filter(|o| o.name == "S" || o.name == "split-string")
        {
            let Some(value) = &split.value else { continue };
            match shell_words::split(&value.text) {
                Ok(words) if !value.dynamic => {
                    command.extend(words.iter().map(|w| Arg::literal(w)))
                }
                _ => command.push(Arg::unknown(&value.text)),
            }
        }
    }
    let mut rest = &argv[1 + scan.rest..];
    while wrapper.assignments && rest.first().is_some_and(|a| is_assignment(&a.text)) {
        rest = &rest[1..];
    }
    let mut rest = rest.get(wrapper.operands..).unwrap_or_default();
    // flock takes `-c COMMAND` after its file too.
    if name == "flock"
        && let [option, code, ..] = rest
        && matches!(option.text.as_str(), "-c" | "--command")
    {
        out.push(Inner::Script {
            code: code.clone(),
            via,
            what: "the script `flock` runs".to_owned(),
            posix: true,
        });
        rest = &[];
    }
    command.extend(rest.iter().cloned());
    if name == "xargs" {
        // With `-I R`, each `R` in the command is a word read from its input.
        let replace = scan
            .value("I")
            .or(scan.value("replace"))
            .map(|r| r.text.clone());
        if let Some(replace) = replace.filter(|r| !r.is_empty()) {
            for word in command.iter_mut().filter(|w| w.text.contains(&replace)) {
                word.dynamic = true;
            }
        }
        if command.is_empty() {
            command.push(Arg::literal("echo"));
        }
        // The words xargs reads from its input end its command: unknown here, but
        // traceable to the command piping them (`pgrep -u me | xargs kill`).
        let mut input = Arg::unknown("(the input of xargs)");
        input.subs.extend(from.map(str::to_owned));
        command.push(input);
    }
    if !command.is_empty() {
        out.push(Inner::Argv { argv: command, via });
    }
    Some(out)
}

/// `NAME=value`, as `env` and `sudo` read it before the command.
pub(crate) fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}
