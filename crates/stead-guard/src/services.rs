//! What the guard protects: stead itself and each declared service, as the names a
//! command could reach it by (a systemd unit, a launchd label, a process name, its own
//! restart command).

use stead_protocol::{STEAD_SERVICE, ServiceSpec};

use super::shell::{self, Event};
use super::words::basename;

/// Commands in a restart string that restart nothing by themselves: `cd /srv &&
/// ./restart` restarts with `./restart`, and `cd /srv` alone must stay allowed.
const NO_OPS: &[&str] = &[
    "cd", "pushd", "popd", "export", "set", "true", ":", "echo", "printf", "sleep", "test", "[",
    "wait",
];

/// One guarded service.
#[derive(Debug)]
pub(super) struct Guarded {
    pub name: String,
    /// systemd units without `.service`, and `service NAME` names: its unit and its name.
    pub units: Vec<String>,
    /// launchd labels.
    pub labels: Vec<String>,
    /// Process names: its declared process and its name.
    pub processes: Vec<String>,
    /// Each command of its restart string, as words (navigation and no-ops left out).
    pub restarts: Vec<Vec<String>>,
}

impl Guarded {
    /// stead itself, then each declared service; a declaration of `stead` adds to it.
    pub fn all(specs: &[ServiceSpec]) -> Vec<Guarded> {
        let mut all = vec![Guarded::named(STEAD_SERVICE)];
        for spec in specs {
            match all.iter_mut().find(|g| g.name == spec.name) {
                Some(known) => known.declare(spec),
                None => {
                    let mut guarded = Guarded::named(&spec.name);
                    guarded.declare(spec);
                    all.push(guarded);
                }
            }
        }
        all
    }

    fn named(name: &str) -> Guarded {
        Guarded {
            name: name.to_owned(),
            units: vec![name.to_owned()],
            labels: Vec::new(),
            processes: vec![name.to_owned()],
            restarts: Vec::new(),
        }
    }

    fn declare(&mut self, spec: &ServiceSpec) {
        if let Some(unit) = &spec.systemd_unit {
            self.units.push(unit_stem(unit).to_owned());
        }
        self.labels.extend(spec.launchd_label.clone());
        self.processes.extend(spec.process.clone());
        if let Some(restart) = &spec.restart {
            self.restarts.extend(restart_commands(restart));
        }
    }

    pub fn is_stead(&self) -> bool {
        self.name == STEAD_SERVICE
    }

    /// A launchd label of this service. stead's own label is whatever its installer
    /// chose, so any label whose last dotted part is `stead` counts (`dev.stead`).
    pub fn has_label(&self, label: &str) -> bool {
        let stead = self.is_stead() && label.rsplit('.').next() == Some(STEAD_SERVICE);
        stead || self.labels.iter().any(|l| l == label)
    }

    /// Whether `plain` (a command with its quotes removed) names this service in any
    /// of its forms: what decides whether something unreadable is refused.
    pub fn mentioned_in(&self, plain: &str) -> bool {
        let names = [&self.name]
            .into_iter()
            .chain(&self.units)
            .chain(&self.labels);
        names
            .chain(&self.processes)
            .any(|n| !n.is_empty() && plain.contains(n.as_str()))
    }
}

/// A command with its quotes and backslashes removed: `st'ea'd` names stead.
pub(super) fn plain(command: &str) -> String {
    command
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect()
}

/// A unit name without its `.service` suffix.
pub(super) fn unit_stem(unit: &str) -> &str {
    unit.strip_suffix(".service").unwrap_or(unit)
}

/// The program word as compared with a restart string: `./restart.sh` is
/// `restart.sh` run from here.
pub(super) fn program_word(word: &str) -> &str {
    word.strip_prefix("./").unwrap_or(word)
}

/// The commands of a restart string worth guarding, as literal words.
fn restart_commands(restart: &str) -> Vec<Vec<String>> {
    let Ok(events) = shell::events(restart) else {
        return Vec::new();
    };
    let mut commands = Vec::new();
    for event in events {
        let Event::Command { argv, .. } = event else {
            continue;
        };
        if argv.iter().any(|a| a.dynamic) || NO_OPS.contains(&basename(&argv[0].text)) {
            continue;
        }
        let mut words: Vec<String> = argv.into_iter().map(|a| a.text).collect();
        words[0] = program_word(&words[0]).to_owned();
        commands.push(words);
    }
    commands
}
