//! Which command lines restart, stop or kill which guarded service, by family: service
//! managers (`units`), launchd, the machine and the login (`power`), signals (`kill`,
//! with pkill's regular expressions in `pattern`, read as glibc reads them in `ere` and
//! compared with the command lines of stead's processes in `command_lines`), stead's own stop (`stead`), and each
//! service's declared restart command (`restart`).

mod command_lines;
mod ere;
mod kill;
mod launchd;
mod pattern;
mod power;
mod restart;
mod stead;
mod units;

use crate::services::Guarded;
use crate::stead_cmd::Protected;
use crate::words::{Arg, basename};

pub(crate) use restart::Restart;

/// What a command does to a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Act {
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

/// Whether a command's targets name a service.
#[derive(Debug)]
pub(crate) enum Seen {
    No,
    Yes,
    /// Only if this word (an expansion, a pattern too rich to read) turns out to.
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
        test: impl Fn(&Arg) -> Option<bool>,
    ) -> Seen {
        args.into_iter()
            .fold(Seen::No, |seen, arg| seen.or(Seen::of(arg, test(arg))))
    }
}

/// What one rule found for one service.
pub(crate) struct Found {
    pub seen: Seen,
    pub act: Act,
    /// How it reaches the service, when that is not plain from the words (a reboot,
    /// a kill of every process of the user).
    pub because: Option<&'static str>,
}

impl Found {
    pub fn new(seen: Seen, act: Act) -> Self {
        Self {
            seen,
            act,
            because: None,
        }
    }

    /// Every service at once.
    pub fn all(act: Act, because: &'static str) -> Self {
        Self {
            seen: Seen::Yes,
            act,
            because: Some(because),
        }
    }
}

/// A command reaching a guarded service.
pub(crate) struct Hit<'g> {
    pub service: &'g Guarded,
    pub act: Act,
    /// The word the guard could not read, when the hit rests on it (`$UNIT`).
    pub unsure: Option<String>,
    pub because: Option<&'static str>,
}

/// The programs the rules know by name.
pub(crate) const PROGRAMS: &[&str] = &[
    "systemctl",
    "service",
    "invoke-rc.d",
    "rc-service",
    "sv",
    "s6-svc",
    "supervisorctl",
    "pm2",
    "docker",
    "podman",
    "nerdctl",
    "docker-compose",
    "podman-compose",
    "brew",
    "initctl",
    "busctl",
    "gdbus",
    "dbus-send",
    "qdbus",
    "launchctl",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "init",
    "telinit",
    "kexec",
    "loginctl",
    "killall5",
    "kill",
    "pkill",
    "killall",
    "skill",
    "fuser",
    "start-stop-daemon",
    "stead",
    "socat",
    "nc",
    "ncat",
    "netcat",
    "websocat",
    "curl",
];

/// What the rules know of the stead being guarded.
pub(crate) struct Own {
    /// The socket of its server, which only stead may talk to.
    socket: Option<String>,
    /// The command lines its processes show.
    command_lines: Vec<String>,
}

impl Own {
    pub fn of(dirs: &Protected) -> Own {
        let socket = dirs
            .socket
            .clone()
            .or_else(|| dirs.state_dir.as_ref().map(|d| d.join("stead.sock")));
        Own {
            socket: socket.map(|s| s.to_string_lossy().into_owned()),
            command_lines: command_lines::of(dirs),
        }
    }
}

/// Whether a rule reads this program's command lines.
pub(crate) fn is_rule_program(program: &Arg) -> bool {
    PROGRAMS.contains(&basename(&program.text)) || units::is_init_script(&program.text)
}

/// Every guarded service the command line (wrappers already looked through)
/// restarts, stops or kills.
pub(crate) fn hits<'g>(argv: &[Arg], guarded: &'g [Guarded], own: &Own) -> Vec<Hit<'g>> {
    let Some(program) = argv.first() else {
        return Vec::new();
    };
    let args = &argv[1..];
    let name = basename(&program.text);
    let mut hits = Vec::new();
    for service in guarded {
        let lines = match service.is_stead() {
            true => own.command_lines.as_slice(),
            false => &[],
        };
        let found = match name {
            "systemctl" => units::systemctl(args, service),
            "service" | "invoke-rc.d" | "rc-service" => units::sysv(args, service),
            "sv" => units::runit(args, service),
            "s6-svc" => units::s6(args, service),
            "supervisorctl" => units::supervisor(args, service),
            "pm2" => units::pm2(args, service),
            "docker" | "podman" | "nerdctl" => units::container(args, service),
            "docker-compose" | "podman-compose" => units::compose(args, service),
            "brew" => units::brew(args, service),
            "busctl" | "gdbus" | "dbus-send" | "qdbus" => units::dbus(args, service),
            "initctl" => units::upstart(args, service),
            "launchctl" => launchd::launchctl(args, service),
            "shutdown" | "reboot" | "halt" | "poweroff" | "init" | "telinit" | "kexec"
            | "loginctl" | "killall5" => power::power(name, args),
            "kill" => kill::kill(args, service, lines),
            "pkill" => kill::pkill(args, service, lines),
            "killall" => kill::killall(args, service),
            "skill" => kill::skill(args, service),
            "fuser" => kill::fuser(args),
            "start-stop-daemon" => kill::start_stop_daemon(args, service),
            "stead" => stead::command(argv, service),
            "socat" | "nc" | "ncat" | "netcat" | "websocat" | "curl" if service.is_stead() => {
                stead::socket(args, own.socket.as_deref())
            }
            _ if units::is_init_script(&program.text) => units::init_script(program, args, service),
            _ => None,
        };
        let found = match found {
            Some(Found { seen: Seen::No, .. }) | None if restart::matches(argv, service) => {
                Found::new(Seen::Yes, Act::Restart)
            }
            Some(found) => found,
            None => continue,
        };
        let unsure = match found.seen {
            Seen::No => continue,
            Seen::Yes => None,
            Seen::Unsure(word) => Some(word),
        };
        hits.push(Hit {
            service,
            act: found.act,
            unsure,
            because: found.because,
        });
    }
    hits
}
