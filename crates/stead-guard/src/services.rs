//! What the guard protects: stead itself and each declared service, as the names a
//! command could reach it by (a systemd unit, a launchd label, a process name, its own
//! restart command), and whether a command mentions it.

use stead_protocol::{STEAD_DAEMON, STEAD_SERVICE, ServiceSpec};

use crate::continuation;
use crate::programs;
use crate::rules::Restart;
use crate::words::Arg;

/// One guarded service.
#[derive(Debug, Clone)]
pub(crate) struct Guarded {
    pub name: String,
    /// systemd units without `.service`, and `service NAME` names: its unit and its name.
    pub units: Vec<String>,
    /// launchd labels.
    pub labels: Vec<String>,
    /// Process names: its declared process and its name.
    pub processes: Vec<String>,
    /// The commands of its restart string.
    pub restarts: Vec<Restart>,
}

impl Guarded {
    /// stead itself, then each declared service; a declaration of `stead` adds to it.
    pub fn all(specs: &[ServiceSpec]) -> Vec<Guarded> {
        let mut stead = Guarded::named(STEAD_SERVICE);
        stead.processes.push(STEAD_DAEMON.to_owned());
        let mut all = vec![stead];
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
            self.restarts.extend(Restart::commands(restart));
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

    /// Every name a command could mention it by: its name, units, labels, processes,
    /// and the programs of its restart commands that are its own (not `docker` or
    /// `systemctl`, which many services share).
    fn names(&self) -> impl Iterator<Item = &str> {
        let own_programs = self
            .restarts
            .iter()
            .map(Restart::program)
            .filter(|p| !programs::is_known(&Arg::literal(p)));
        [self.name.as_str()]
            .into_iter()
            .chain(self.units.iter().map(String::as_str))
            .chain(self.labels.iter().map(String::as_str))
            .chain(self.processes.iter().map(String::as_str))
            .chain(own_programs)
            .filter(|n| !n.is_empty())
    }

    /// How many times `plain` (text with its quotes removed) names this service as a
    /// word of its own: `web` in `web.service` or `web-server`, not in `webpack`.
    pub fn mentions(&self, plain: &str) -> usize {
        self.names().map(|name| count_word(plain, name)).sum()
    }
}

/// Occurrences of `needle` in `hay` not inside a longer word (letters, digits, `_`), in
/// any case: `STEAD` can be folded back to `stead` as the command runs.
fn count_word(hay: &str, needle: &str) -> usize {
    if needle.is_empty() || needle.len() > hay.len() {
        return 0;
    }
    let word =
        |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80);
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    (0..=hay.len() - needle.len())
        .filter(|&at| {
            hay[at..at + needle.len()].eq_ignore_ascii_case(needle)
                && !word(at.checked_sub(1).and_then(|b| hay.get(b)))
                && !word(hay.get(at + needle.len()))
        })
        .count()
}

/// Text with its line continuations, quotes and backslashes removed: `st'ea'd` and
/// `ste\⏎ad` name stead.
pub(crate) fn plain(text: &str) -> String {
    continuation::joined(text)
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect()
}

/// A unit name without its `.service` suffix.
pub(crate) fn unit_stem(unit: &str) -> &str {
    unit.strip_suffix(".service").unwrap_or(unit)
}
