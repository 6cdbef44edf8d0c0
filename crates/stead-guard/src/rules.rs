//! The commands that restart, stop or kill a service, per kind of declaration: which
//! command line reaches which guarded service.

use super::kill;
use super::opts::{self, Spec};
use super::services::{Guarded, program_word, unit_stem};
use super::stead_cmd;
use super::words::{Arg, basename};

/// What a command does to a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Act {
    Restart,
    Stop,
    Kill,
}

impl Act {
    pub fn verb(self) -> &'static str {
        match self {
            Act::Restart => "restart",
            Act::Stop => "stop",
            Act::Kill => "kill",
        }
    }
}

/// A command reaching a guarded service.
pub(super) struct Hit<'g> {
    pub service: &'g Guarded,
    pub act: Act,
    /// The word the guard could not read, when the hit rests on it (`$UNIT`).
    pub unsure: Option<String>,
}

/// Whether a command's target words name a service.
pub(super) enum Seen {
    No,
    Yes,
    /// Only if this word (an expansion) turns out to name it.
    Unsure(String),
}

impl Seen {
    /// How one word fares under a test that may not know (`None`).
    pub fn of(arg: &Arg, names: Option<bool>) -> Seen {
        match names {
            Some(true) => Seen::Yes,
            Some(false) if !arg.dynamic => Seen::No,
            _ => Seen::Unsure(arg.text.clone()),
        }
    }

    pub fn or(self, other: Seen) -> Seen {
        match (self, other) {
            (Seen::Yes, _) | (_, Seen::Yes) => Seen::Yes,
            (Seen::Unsure(word), _) | (Seen::No, Seen::Unsure(word)) => Seen::Unsure(word),
            (Seen::No, Seen::No) => Seen::No,
        }
    }

    /// Whether any of `args` names the service.
    pub fn any<'a>(
        args: impl IntoIterator<Item = &'a Arg>,
        test: impl Fn(&str) -> Option<bool>,
    ) -> Seen {
        args.into_iter().fold(Seen::No, |seen, arg| {
            seen.or(Seen::of(arg, test(&arg.text)))
        })
    }
}

/// Every guarded service the command (wrappers already looked through) restarts,
/// stops or kills.
pub(super) fn hits<'g>(argv: &[Arg], guarded: &'g [Guarded]) -> Vec<Hit<'g>> {
    let Some(program) = argv.first() else {
        return Vec::new();
    };
    let args = &argv[1..];
    let mut hits = Vec::new();
    for service in guarded {
        let found = match basename(&program.text) {
            "systemctl" => systemctl(args, service),
            "service" => sysv(args, service),
            "launchctl" => launchctl(args, service),
            "kill" => Some((kill::kill(args, service), Act::Kill)),
            "pkill" => Some((kill::pkill(args, service), Act::Kill)),
            "killall" => Some((kill::killall(args, service), Act::Kill)),
            "stead" if service.is_stead() => stead_stop(argv),
            _ => None,
        };
        let (seen, act) = match found {
            Some((Seen::No, _)) | None if restart_string(argv, service) => {
                (Seen::Yes, Act::Restart)
            }
            Some(found) => found,
            None => continue,
        };
        let unsure = match seen {
            Seen::No => continue,
            Seen::Yes => None,
            Seen::Unsure(word) => Some(word),
        };
        hits.push(Hit {
            service,
            act,
            unsure,
        });
    }
    hits
}

const SYSTEMCTL: Spec = Spec {
    short_values: "tpsHMno",
    long_values: &[
        "type",
        "property",
        "signal",
        "host",
        "machine",
        "lines",
        "output",
        "kill-whom",
        "kill-value",
        "job-mode",
        "root",
        "state",
        "what",
    ],
    signals: false,
};

/// `systemctl [--user] restart|stop|kill|… UNIT…`, and `disable|mask --now UNIT…`.
fn systemctl(args: &[Arg], service: &Guarded) -> Option<(Seen, Act)> {
    let scan = opts::scan(args, &SYSTEMCTL);
    let (verb, units) = scan.operands.split_first()?;
    let act = match verb.text.as_str() {
        "restart"
        | "try-restart"
        | "reload-or-restart"
        | "try-reload-or-restart"
        | "condrestart"
        | "force-reload" => Act::Restart,
        "stop" => Act::Stop,
        "kill" => Act::Kill,
        "disable" | "mask" if scan.has("now") => Act::Stop,
        _ => return None,
    };
    let names = |unit: &str| {
        let stem = unit_stem(unit);
        Some(service.units.iter().any(|u| kill::glob(stem, u)))
    };
    Some((Seen::any(units.iter().copied(), names), act))
}

/// `service NAME restart|stop|…`.
fn sysv(args: &[Arg], service: &Guarded) -> Option<(Seen, Act)> {
    let [name, verb, ..] = args else {
        return None;
    };
    let act = match verb.text.as_str() {
        "restart" | "force-reload" | "try-restart" | "condrestart" | "--full-restart" => {
            Act::Restart
        }
        "stop" => Act::Stop,
        _ => return None,
    };
    let names = |n: &str| Some(service.units.iter().any(|u| u == unit_stem(n)));
    Some((Seen::any([name], names), act))
}

/// `launchctl kickstart -k TARGET`, `launchctl bootout|unload|stop|remove|kill … LABEL`.
fn launchctl(args: &[Arg], service: &Guarded) -> Option<(Seen, Act)> {
    let (sub, rest) = args.split_first()?;
    let scan = opts::scan(rest, &Spec::FLAGS);
    let act = match sub.text.as_str() {
        // Without `-k`, kickstart starts a job that is not running and leaves a
        // running one alone.
        "kickstart" if scan.has("k") => Act::Restart,
        "bootout" | "unload" | "stop" | "remove" => Act::Stop,
        "kill" => Act::Kill,
        _ => return None,
    };
    // A target is a label, a domain path ending in one (`gui/501/LABEL`), or a plist.
    let names = |target: &str| {
        let last = basename(target);
        let label = last.strip_suffix(".plist").unwrap_or(last);
        Some(service.has_label(label))
    };
    Some((Seen::any(scan.operands.iter().copied(), names), act))
}

/// `stead stop`, with any flags.
fn stead_stop(argv: &[Arg]) -> Option<(Seen, Act)> {
    matches!(stead_cmd::subcommand(argv), Some(("stop", _))).then_some((Seen::Yes, Act::Stop))
}

/// The service's own restart command, with any arguments after it.
fn restart_string(argv: &[Arg], service: &Guarded) -> bool {
    service.restarts.iter().any(|restart| {
        argv.len() >= restart.len()
            && argv
                .iter()
                .zip(restart)
                .enumerate()
                .all(|(at, (arg, word))| {
                    let text = if at == 0 {
                        program_word(&arg.text)
                    } else {
                        &arg.text
                    };
                    !arg.dynamic && text == word
                })
    })
}
