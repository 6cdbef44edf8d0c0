//! Signals: `kill PID…` (with pids traced to `pgrep` and `pidof`), `pkill`, `killall`,
//! `skill`, `fuser -k` and `start-stop-daemon --stop`, including the mass forms
//! (`kill -9 -1`, `pkill -u USER`, `killall -u USER`) that take every process of a
//! user. Signal 0 only asks whether a process exists, and passes.

use super::pattern::{self, Mode};
use super::{Act, Found, Seen};
use crate::opts::{self, Scan, Spec};
use crate::services::Guarded;
use crate::shell;
use crate::words::{Arg, basename};

const PGREP: Spec = Spec {
    short_values: "gGOPstuUFrqd",
    long_values: &[
        "signal",
        "pgroup",
        "group",
        "older",
        "parent",
        "session",
        "terminal",
        "euid",
        "uid",
        "pidfile",
        "runstates",
        "cgroup",
        "ns",
        "nslist",
        "delimiter",
        "queue",
    ],
    long_flags: &[
        "full",
        "exact",
        "ignore-case",
        "inverse",
        "newest",
        "oldest",
        "echo",
        "count",
        "logpidfile",
        "ignore-ancestors",
        "list-name",
        "list-full",
        "lightweight",
        "help",
        "version",
    ],
    signals: true,
    ..Spec::FLAGS
};

const KILLALL: Spec = Spec {
    short_values: "suoyZn",
    long_values: &[
        "signal",
        "user",
        "older-than",
        "younger-than",
        "context",
        "ns",
    ],
    long_flags: &[
        "exact",
        "ignore-case",
        "process-group",
        "interactive",
        "list",
        "quiet",
        "regexp",
        "verbose",
        "version",
        "wait",
        "help",
    ],
    signals: true,
    ..Spec::FLAGS
};

/// The selectors of pgrep and pkill other than a pattern.
const SELECTORS: &[&str] = &[
    "g", "G", "P", "s", "t", "pgroup", "group", "parent", "session", "terminal", "cgroup",
];

const EVERY_PROCESS: &str = "it signals every process of the user";

/// The signal a scan names, as written (`9`, `KILL`, `0`).
fn signal<'a>(scan: &'a Scan<'_>) -> Option<&'a str> {
    scan.options
        .iter()
        .find(|o| matches!(o.name.as_str(), "signal" | "s" | "n"))
        .and_then(|o| o.value.as_ref())
        .map(|v| v.text.as_str())
}

fn harmless_scan(scan: &Scan<'_>) -> bool {
    signal(scan).is_some_and(harmless)
}

/// Signals that end or stop nothing: 0 only asks whether a process exists, and the
/// default action of CONT, CHLD, URG and WINCH is to continue or to ignore.
pub(super) fn harmless(signal: &str) -> bool {
    let name = signal.trim_start_matches("SIG").to_ascii_uppercase();
    matches!(
        name.as_str(),
        "0" | "CONT" | "CHLD" | "CLD" | "URG" | "WINCH"
    )
}

/// `kill [-SIG | -s SIG | -n NUM] [--] PID…`: a pid from `$(pgrep NAME)` or `$(pidof
/// NAME)` is the service's; a pid the guard cannot trace (`$PID`, `$(cat pidfile)`) is
/// unsure; a number or a job (`%1`, `$!`: the shell's own children) is not; `-1` is
/// every process, and `-PID` a process group, as a server's own pid is. `lines` are
/// the command lines of the service's processes, where known.
pub(super) fn kill(args: &[Arg], service: &Guarded, lines: &[String]) -> Option<Found> {
    let mut rest = args;
    let mut signal = None;
    match rest.first().map(|a| a.text.as_str()) {
        Some("-l" | "-L" | "--help" | "--list" | "--table") => return None,
        Some("-s" | "-n") => {
            signal = rest.get(1).map(|a| a.text.clone());
            rest = rest.get(2..).unwrap_or_default();
        }
        Some(first) if first.starts_with('-') && first != "--" && first.len() > 1 => {
            signal = Some(first[1..].to_owned());
            rest = &rest[1..];
        }
        _ => {}
    }
    if rest.first().is_some_and(|a| a.text == "--") {
        rest = &rest[1..];
    }
    if signal.as_deref().is_some_and(harmless) {
        return None;
    }
    let mut seen = Seen::No;
    for pid in rest {
        let number = pid.text.strip_prefix('-').unwrap_or(&pid.text);
        if !pid.dynamic && number.parse::<i64>() == Ok(1) && pid.text.starts_with('-') {
            return Some(Found::all(Act::Kill, EVERY_PROCESS));
        }
        let this = if !pid.subs.is_empty() {
            pid.subs.iter().fold(Seen::No, |s, script| {
                s.or(selected_by(script, service, lines))
            })
        } else if pid.dynamic && pid.text != "$!" {
            Seen::Unsure(pid.text.clone())
        } else {
            Seen::No
        };
        seen = seen.or(this);
    }
    Some(Found::new(seen, Act::Kill))
}

/// `pkill` (and `pgrep`, which selects the same processes).
pub(super) fn pkill(args: &[Arg], service: &Guarded, lines: &[String]) -> Option<Found> {
    let scan = opts::scan(args, &PGREP);
    if scan.asks_help() || scan.has("V") || harmless_scan(&scan) {
        return None;
    }
    let user = ["u", "U", "euid", "uid"].iter().any(|o| scan.has(o));
    // The children of pid 1 are every daemon, services among them.
    let orphans = scan
        .value("P")
        .or(scan.value("parent"))
        .is_some_and(|p| p.text.split(',').any(|pid| pid.trim() == "1"));
    if scan.operands.is_empty() && (user || orphans) {
        return Some(Found::all(Act::Kill, EVERY_PROCESS));
    }
    // pkill takes no `-v`: only pgrep's inverts.
    let inverse = scan.has("inverse");
    Some(Found::new(
        selects(&scan, service, lines, inverse)?,
        Act::Kill,
    ))
}

fn selects(scan: &Scan<'_>, service: &Guarded, lines: &[String], inverse: bool) -> Option<Seen> {
    if scan.operands.is_empty() {
        if ["u", "U", "euid", "uid"].iter().any(|o| scan.has(o)) {
            return Some(Seen::Yes);
        }
        if let Some(file) = scan.value("F").or(scan.value("pidfile")) {
            return Some(Seen::Unsure(file.text.clone()));
        }
        let selector = SELECTORS.iter().find_map(|o| scan.value(o));
        return selector.map(|v| Seen::Unsure(v.text.clone()));
    }
    let mode = Mode {
        full: scan.has("f") || scan.has("full"),
        exact: scan.has("x") || scan.has("exact"),
        fold: scan.has("i") || scan.has("ignore-case"),
        inverse,
    };
    Some(Seen::any(scan.operands.iter().copied(), |p| {
        pattern::selects(p, service, lines, mode)
    }))
}

/// `killall NAME…` (exact names, or with `-r` patterns), and `killall -u USER` alone.
pub(super) fn killall(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::scan(args, &KILLALL);
    if scan.has("l")
        || scan.has("list")
        || scan.has("V")
        || scan.asks_help()
        || harmless_scan(&scan)
    {
        return None;
    }
    if scan.operands.is_empty() {
        let user = scan.has("u") || scan.has("user");
        return user.then(|| Found::all(Act::Kill, EVERY_PROCESS));
    }
    let mode = Mode {
        full: false,
        exact: false,
        fold: scan.has("I") || scan.has("ignore-case"),
        inverse: false,
    };
    let regex = scan.has("r") || scan.has("regexp");
    let names = |name: &Arg| match regex {
        true => pattern::selects(name, service, &[], mode),
        false => Some(
            service
                .processes
                .iter()
                .any(|p| same_process(basename(&name.text), p, mode.fold)),
        ),
    };
    Some(Found::new(
        Seen::any(scan.operands.iter().copied(), names),
        Act::Kill,
    ))
}

/// killall compares names, and the kernel keeps only the first 15 bytes of one.
fn same_process(name: &str, process: &str, fold: bool) -> bool {
    let short: String = process.chars().take(15).collect();
    let eq = |a: &str, b: &str| match fold {
        true => a.eq_ignore_ascii_case(b),
        false => a == b,
    };
    eq(name, process) || eq(name, &short)
}

/// `skill [-SIG] [-u USER] [-c COMMAND] …`.
pub(super) fn skill(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::scan(
        args,
        &Spec {
            signals: true,
            ..Spec::values("uctp", &["user", "command", "tty", "pid"])
        },
    );
    if scan.has("u") || scan.has("user") {
        return Some(Found::all(Act::Kill, EVERY_PROCESS));
    }
    let names = scan
        .options
        .iter()
        .filter(|o| o.name == "c" || o.name == "command")
        .filter_map(|o| o.value.as_ref())
        .chain(scan.operands.iter().copied());
    Some(Found::new(
        Seen::any(names, |n| {
            Some(
                service
                    .processes
                    .iter()
                    .any(|p| same_process(&n.text, p, false)),
            )
        }),
        Act::Kill,
    ))
}

/// `fuser -k FILE|PORT`: kills whatever uses it, which the guard cannot know.
pub(super) fn fuser(args: &[Arg]) -> Option<Found> {
    let scan = opts::scan(args, &Spec::values("sn", &["namespace", "signal"]));
    let kills = scan
        .options
        .iter()
        .any(|o| o.name == "k" || o.name == "kill");
    kills.then(|| {
        let what = scan.operands.first().map_or("", |a| a.text.as_str());
        Found::new(
            Seen::Unsure(format!("the processes using {what}")),
            Act::Kill,
        )
    })
}

/// `start-stop-daemon --stop --name NAME|--exec PATH|--pidfile FILE|--user USER`.
pub(super) fn start_stop_daemon(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::scan(
        args,
        &Spec::values(
            "nxpuagcrdsRNPIk",
            &[
                "name",
                "exec",
                "pidfile",
                "user",
                "startas",
                "group",
                "chuid",
                "chroot",
                "chdir",
                "signal",
                "retry",
                "nicelevel",
                "procsched",
                "iosched",
                "umask",
                "ppid",
            ],
        ),
    );
    if !(scan.has("K") || scan.has("stop")) {
        return None;
    }
    let names = ["n", "name", "x", "exec"]
        .iter()
        .flat_map(|name| scan.options.iter().filter(move |o| o.name == *name))
        .filter_map(|o| o.value.as_ref());
    let mut seen = Seen::any(names, |n| {
        Some(service.processes.iter().any(|p| p == basename(&n.text)))
    });
    if let Some(file) = scan.value("p").or(scan.value("pidfile")) {
        seen = seen.or(Seen::Unsure(file.text.clone()));
    }
    let selected = ["n", "name", "x", "exec", "p", "pidfile"]
        .iter()
        .any(|o| scan.has(o));
    if !selected && (scan.has("u") || scan.has("user")) {
        return Some(Found::all(Act::Stop, EVERY_PROCESS));
    }
    Some(Found::new(seen, Act::Stop))
}

/// `pidof NAME…`.
fn pidof(args: &[Arg], service: &Guarded) -> Seen {
    let scan = opts::scan(args, &Spec::values("o", &[]));
    Seen::any(scan.operands.iter().copied(), |n| {
        Some(service.processes.iter().any(|p| basename(&n.text) == p))
    })
}

/// Whether the pids a substitution prints are the service's.
fn selected_by(script: &str, service: &Guarded, lines: &[String]) -> Seen {
    let unsure = || Seen::Unsure(format!("$({script})"));
    let Some(commands) = shell::commands(script) else {
        return unsure();
    };
    let mut seen = None;
    for argv in &commands {
        let this = match basename(&argv[0].text) {
            "pgrep" => {
                let scan = opts::scan(&argv[1..], &PGREP);
                let inverse = scan.has("v") || scan.has("inverse");
                selects(&scan, service, lines, inverse).unwrap_or(Seen::No)
            }
            "pidof" => pidof(&argv[1..], service),
            _ => continue,
        };
        seen = Some(seen.unwrap_or(Seen::No).or(this));
    }
    // Pids from anything else (a pid file, lsof) cannot be traced to a service.
    seen.unwrap_or_else(unsure)
}
