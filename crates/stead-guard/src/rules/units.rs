//! Service managers: systemd (`systemctl`), SysV and OpenRC (`service`, `invoke-rc.d`,
//! `rc-service`, `/etc/init.d/NAME`), runit (`sv`), s6 (`s6-svc`), supervisord, pm2,
//! containers (`docker`, `podman`, compose), Homebrew services and upstart.

use super::{Act, Found, Seen};
use crate::opts::{self, Spec};
use crate::services::{Guarded, unit_stem};
use crate::words::{Arg, basename, glob_matches};

const SYSTEMCTL: Spec = Spec::values(
    "tpsHMno",
    &[
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
        "image",
        "timestamp",
        "boot-loader-entry",
        "reboot-argument",
        "message",
        "when",
        "drop-in",
    ],
);

/// Targets that, started or isolated, stop every service.
const MASS_TARGETS: &[&str] = &[
    "reboot",
    "poweroff",
    "halt",
    "kexec",
    "soft-reboot",
    "rescue",
    "emergency",
    "shutdown",
    "exit",
    "final",
    "sleep",
];

/// Whether `arg` names one of the service's units: `web`, `web.service`, or a pattern
/// (`'we*'`, `web.*`) that matches one.
fn names_unit(arg: &Arg, service: &Guarded) -> bool {
    let text = &arg.text;
    if arg.glob || text.contains(['*', '?', '[']) {
        return service
            .units
            .iter()
            .any(|u| glob_matches(text, u) || glob_matches(text, &format!("{u}.service")));
    }
    service.units.iter().any(|u| u == unit_stem(text))
}

/// `systemctl [opts] VERB UNIT…`.
pub(super) fn systemctl(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::scan(args, &SYSTEMCTL);
    if scan.asks_help() || scan.has("h") {
        return None;
    }
    let (verb, units) = scan.operands.split_first()?;
    let act = match verb.text.as_str() {
        "restart"
        | "try-restart"
        | "reload-or-restart"
        | "try-reload-or-restart"
        | "reload-or-try-restart"
        | "condrestart"
        | "force-reload" => Act::Restart,
        "stop" | "condstop" | "freeze" => Act::Stop,
        "kill"
            if scan
                .value("s")
                .or(scan.value("signal"))
                .is_some_and(|s| super::kill::harmless(&s.text)) =>
        {
            return None;
        }
        "kill" => Act::Kill,
        "disable" | "mask" if scan.has("now") => Act::Stop,
        "isolate" | "rescue" | "emergency" | "default" | "exit" | "poweroff" | "reboot"
        | "halt" | "kexec" | "soft-reboot" | "switch-root" => {
            return Some(Found::all(
                Act::Stop,
                "it stops every service of its manager",
            ));
        }
        "start" | "enable" if units.iter().any(|u| is_mass_target(u)) => {
            return Some(Found::all(
                Act::Stop,
                "the target it starts stops every service",
            ));
        }
        _ => return None,
    };
    if units.iter().any(|u| is_mass_target(u)) && act == Act::Restart {
        return Some(Found::all(
            Act::Stop,
            "the target it starts stops every service",
        ));
    }
    if units.iter().any(|u| holds_services(&u.text)) {
        return Some(Found::all(
            act,
            "it takes a slice or a service manager, with every unit in it",
        ));
    }
    Some(Found::new(
        Seen::any(units.iter().copied(), |u| Some(names_unit(u, service))),
        act,
    ))
}

/// Units that hold others: a slice, a user's service manager (`user@1000.service`), a
/// session's scope.
fn holds_services(unit: &str) -> bool {
    unit.ends_with(".slice")
        || (unit.starts_with("user@") && unit.ends_with(".service"))
        || unit.ends_with(".scope")
}

fn is_mass_target(unit: &Arg) -> bool {
    unit.text
        .strip_suffix(".target")
        .is_some_and(|t| MASS_TARGETS.contains(&t))
}

/// Verbs of SysV and OpenRC scripts (and BSD's `one`/`force`/`fast`/`quiet` forms).
fn sysv_act(verb: &str) -> Option<Act> {
    let verb = ["one", "force", "fast", "quiet"]
        .iter()
        .find_map(|p| {
            verb.strip_prefix(p)
                .filter(|v| matches!(*v, "restart" | "stop"))
        })
        .unwrap_or(verb);
    match verb {
        "restart" | "force-reload" | "try-restart" | "condrestart" | "--full-restart"
        | "force-restart" => Some(Act::Restart),
        "stop" | "force-stop" | "zap" => Some(Act::Stop),
        _ => None,
    }
}

fn names_service(name: &str, service: &Guarded) -> bool {
    let name = unit_stem(basename(name));
    service.units.iter().any(|u| u == name) || service.processes.iter().any(|p| p == name)
}

/// `service NAME VERB`, `invoke-rc.d NAME VERB`, `rc-service NAME VERB`.
pub(super) fn sysv(args: &[Arg], service: &Guarded) -> Option<Found> {
    // Options come before the name; the verb is the word after it, whatever it looks
    // like (`service web --full-restart`), and `--full-restart` may come first too.
    let at = args.iter().position(|a| !a.text.starts_with('-'))?;
    let name = &args[at];
    let act = match args.get(at + 1) {
        Some(verb) => sysv_act(&verb.text)?,
        None if args[..at].iter().any(|a| a.text == "--full-restart") => Act::Restart,
        None => return None,
    };
    Some(Found::new(
        Seen::any([name], |n| Some(names_service(&n.text, service))),
        act,
    ))
}

/// A SysV or BSD init script run by its path.
pub(crate) fn is_init_script(program: &str) -> bool {
    program.contains("/init.d/") || program.contains("/rc.d/")
}

/// `/etc/init.d/NAME VERB`.
pub(super) fn init_script(program: &Arg, args: &[Arg], service: &Guarded) -> Option<Found> {
    let act = sysv_act(&args.first()?.text)?;
    Some(Found::new(
        Seen::of(program, Some(names_service(&program.text, service))),
        act,
    ))
}

/// runit: `sv [-v] [-w SEC] VERB SERVICE…` (verbs may be given by their first letter).
pub(super) fn runit(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::scan(args, &Spec::values("w", &[]));
    let (verb, services) = scan.operands.split_first()?;
    let act = match verb.text.as_str() {
        "restart" | "force-restart" | "force-reload" | "try-restart" | "t" | "term" => Act::Restart,
        "down" | "d" | "stop" | "shutdown" | "force-stop" | "force-shutdown" | "exit" | "e"
        | "x" | "pause" | "p" => Act::Stop,
        "kill" | "k" | "quit" | "q" | "interrupt" | "i" | "alarm" | "a" => Act::Kill,
        _ => return None,
    };
    Some(Found::new(
        Seen::any(services.iter().copied(), |s| {
            Some(names_service(&s.text, service))
        }),
        act,
    ))
}

/// s6: `s6-svc -r|-d|-k|-t|… DIR`.
pub(super) fn s6(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::scan(args, &Spec::values("Ts", &[]));
    let letters: String = scan.options.iter().map(|o| o.name.as_str()).collect();
    let act = if letters.contains(['r', 't']) {
        Act::Restart
    } else if letters.contains(['d', 'D', 'x', 'X', 'p', 'O']) {
        Act::Stop
    } else if letters.contains(['k', 'q']) {
        Act::Kill
    } else {
        return None;
    };
    Some(Found::new(
        Seen::any(scan.operands.iter().copied(), |d| {
            Some(names_service(d.text.trim_end_matches('/'), service))
        }),
        act,
    ))
}

/// supervisord: `supervisorctl restart|stop|signal SIG NAME…` (`all`, `group:*`,
/// `group:name`), and `reload`/`shutdown`, which restart or stop every program.
pub(super) fn supervisor(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::scan(
        args,
        &Spec::values(
            "csupr",
            &[
                "configuration",
                "serverurl",
                "username",
                "password",
                "history-file",
            ],
        ),
    );
    let (verb, names) = scan.operands.split_first()?;
    let (act, names) = match verb.text.as_str() {
        "restart" => (Act::Restart, names),
        "stop" | "remove" => (Act::Stop, names),
        "signal" => (Act::Kill, names.get(1..).unwrap_or_default()),
        "reload" | "shutdown" => {
            return Some(Found::all(
                Act::Stop,
                "it restarts or stops every program of supervisord",
            ));
        }
        _ => return None,
    };
    let names_it = |name: &Arg| {
        let text = name.text.as_str();
        let (group, program) = text.split_once(':').unwrap_or((text, text));
        Some(
            text == "all"
                || names_service(group, service)
                || (program != "*" && names_service(program, service)),
        )
    };
    Some(Found::new(Seen::any(names.iter().copied(), names_it), act))
}

/// pm2: `pm2 restart|reload|stop|delete NAME|ID|all`, and `pm2 kill`, which ends every
/// process it manages.
pub(super) fn pm2(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::scan(args, &Spec::FLAGS);
    let (verb, names) = scan.operands.split_first()?;
    let act = match verb.text.as_str() {
        "restart" | "reload" | "gracefulReload" => Act::Restart,
        "stop" | "delete" | "del" => Act::Stop,
        "kill" => {
            return Some(Found::all(
                Act::Kill,
                "it ends pm2 and every process it manages",
            ));
        }
        _ => return None,
    };
    let names_it = |name: &Arg| match name.text.as_str() {
        "all" => Some(true),
        id if id.chars().all(|c| c.is_ascii_digit()) => None,
        other => Some(names_service(other, service)),
    };
    Some(Found::new(Seen::any(names.iter().copied(), names_it), act))
}

const DOCKER: Spec = Spec::values(
    "Hc",
    &[
        "host",
        "context",
        "config",
        "log-level",
        "tlscacert",
        "tlscert",
        "tlskey",
    ],
);

/// `docker|podman|nerdctl [container] restart|stop|kill|pause|rm -f NAME…`, and
/// `docker compose …`.
pub(super) fn container(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::leading(args, &DOCKER);
    let mut rest = &args[scan.rest..];
    match rest.first().map(|a| a.text.as_str()) {
        Some("container") => rest = &rest[1..],
        Some("compose") => return compose(&rest[1..], service),
        _ => {}
    }
    let (verb, rest) = rest.split_first()?;
    let scan = opts::scan(rest, &Spec::values("ts", &["time", "signal", "timeout"]));
    let act = match verb.text.as_str() {
        "restart" => Act::Restart,
        "stop" | "pause" => Act::Stop,
        "kill" => Act::Kill,
        "rm" if scan.has("f") || scan.has("force") => Act::Kill,
        _ => return None,
    };
    Some(Found::new(
        Seen::any(scan.operands.iter().copied(), |n| {
            Some(names_service(&n.text, service))
        }),
        act,
    ))
}

/// `docker compose restart|stop|kill|down|rm [SERVICE…]`: with no service named, every
/// service of the project.
pub(super) fn compose(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::leading(
        args,
        &Spec::values(
            "fp",
            &[
                "file",
                "project-name",
                "profile",
                "env-file",
                "project-directory",
            ],
        ),
    );
    let (verb, rest) = args[scan.rest..].split_first()?;
    let scan = opts::scan(rest, &Spec::values("ts", &["timeout", "signal"]));
    let act = match verb.text.as_str() {
        "restart" => Act::Restart,
        "up" if scan.has("force-recreate") => Act::Restart,
        "stop" | "down" | "pause" => Act::Stop,
        "kill" | "rm" => Act::Kill,
        _ => return None,
    };
    if scan.operands.is_empty() {
        return Some(Found::new(
            Seen::Unsure("every service of the compose project".to_owned()),
            act,
        ));
    }
    Some(Found::new(
        Seen::any(scan.operands.iter().copied(), |n| {
            Some(names_service(&n.text, service))
        }),
        act,
    ))
}

/// `brew services restart|stop|kill NAME|--all`.
pub(super) fn brew(args: &[Arg], service: &Guarded) -> Option<Found> {
    let [sub, verb, rest @ ..] = args else {
        return None;
    };
    if sub.text != "services" {
        return None;
    }
    let act = match verb.text.as_str() {
        "restart" => Act::Restart,
        "stop" => Act::Stop,
        "kill" => Act::Kill,
        _ => return None,
    };
    if rest.iter().any(|a| a.text == "--all") {
        return Some(Found::new(
            Seen::Unsure("every Homebrew service".to_owned()),
            act,
        ));
    }
    let names = rest.iter().filter(|a| !a.text.starts_with('-'));
    Some(Found::new(
        Seen::any(names, |n| {
            Some(
                names_service(&n.text, service)
                    || service.has_label(&format!("homebrew.mxcl.{}", n.text)),
            )
        }),
        act,
    ))
}

/// upstart: `initctl restart|stop JOB`.
pub(super) fn upstart(args: &[Arg], service: &Guarded) -> Option<Found> {
    let scan = opts::scan(args, &Spec::FLAGS);
    let (verb, jobs) = scan.operands.split_first()?;
    let act = match verb.text.as_str() {
        "restart" => Act::Restart,
        "stop" => Act::Stop,
        _ => return None,
    };
    Some(Found::new(
        Seen::any(jobs.iter().copied(), |j| {
            Some(names_service(&j.text, service))
        }),
        act,
    ))
}

/// The manager's methods over D-Bus (`busctl call`, `gdbus call`, `dbus-send`):
/// `RestartUnit`, `StopUnit`, `KillUnit`, … with the unit among the arguments, and the
/// manager's own `Reboot`, `PowerOff`, `Halt`, `KExec`, `Exit`.
pub(super) fn dbus(args: &[Arg], service: &Guarded) -> Option<Found> {
    let method = args.iter().find_map(|a| {
        let name = a.text.rsplit('.').next()?;
        dbus_act(name).map(|act| (name, act))
    });
    let (name, act) = method?;
    if matches!(
        name,
        "Reboot" | "PowerOff" | "Halt" | "KExec" | "Exit" | "SoftReboot"
    ) {
        return Some(Found::all(
            Act::Stop,
            "it asks the service manager to stop everything",
        ));
    }
    let units = args.iter().map(|a| {
        let text = a.text.strip_prefix("string:").unwrap_or(&a.text);
        Arg {
            text: text.to_owned(),
            ..a.clone()
        }
    });
    let units: Vec<Arg> = units.collect();
    Some(Found::new(
        Seen::any(units.iter().filter(|u| u.text.contains('.')), |u| {
            Some(names_unit(u, service) || holds_services(&u.text))
        }),
        act,
    ))
}

fn dbus_act(method: &str) -> Option<Act> {
    match method {
        "RestartUnit" | "TryRestartUnit" | "ReloadOrRestartUnit" | "ReloadOrTryRestartUnit" => {
            Some(Act::Restart)
        }
        "StopUnit" | "FreezeUnit" => Some(Act::Stop),
        "KillUnit" => Some(Act::Kill),
        "Reboot" | "PowerOff" | "Halt" | "KExec" | "Exit" | "SoftReboot" => Some(Act::Stop),
        _ => None,
    }
}
