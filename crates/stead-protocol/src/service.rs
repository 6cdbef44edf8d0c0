//! Services, holds and readiness on the wire: what a restart of a service would cut,
//! and the declarations ("I am mid-work on S") that make it wait.

use serde::{Deserialize, Serialize};

/// The built-in service: stead itself.
pub const STEAD_SERVICE: &str = "stead";

/// The program stead's server, monitors and spawner run as (the daemon program installed
/// beside `stead`): a process name of the built-in service.
pub const STEAD_DAEMON: &str = "steadd";

/// A service runs depend on, as declared by a person.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// Unique; `stead` is reserved for stead itself.
    pub name: String,
    /// A shell command that restarts it (used by `stead restart --service`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<String>,
    /// How to tell it is ready: an `http://` URL that must answer 2xx, or a shell command
    /// that must exit 0 (for https, a command such as `curl -fsS URL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
    /// Its systemd unit, for the guard (`systemctl [--user] restart|stop|kill UNIT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub systemd_unit: Option<String>,
    /// Its launchd label, for the guard (`launchctl kickstart -k|bootout|unload|stop|remove`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launchd_label: Option<String>,
    /// Its process name, for the guard (`kill`/`pkill`/`killall` of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
}

/// A service as stored, with what the server knows about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Service {
    #[serde(flatten)]
    pub spec: ServiceSpec,
    /// True for the built-in `stead` service.
    pub builtin: bool,
    /// A gated restart of it is under way (dependent fires wait).
    pub restarting: bool,
    /// Jobs that name it in `depends_on`.
    pub dependents: Vec<String>,
}

/// Parameters naming one service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceName {
    pub name: String,
}

/// Parameters of `hold_acquire`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldSpec {
    /// Unique among live holds; acquiring an existing name renews it.
    pub name: String,
    pub service: String,
    /// How long the hold lasts unless renewed (`"90s"`, `"10m"`).
    pub ttl: String,
}

/// A hold: a client's "I am mid-work on this service".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    pub name: String,
    pub service: String,
    pub acquired_at: String,
    pub expires_at: String,
    /// Past its TTL: reported, but it blocks nothing.
    pub wedged: bool,
}

/// Parameters of `hold_release`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldName {
    pub name: String,
}

/// Parameters of `readiness`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadinessParams {
    /// Default `stead`.
    #[serde(default)]
    pub service: Option<String>,
    /// How far ahead a due fire counts (default `"90s"`).
    #[serde(default)]
    pub window: Option<String>,
    /// Answer only once the answer differs from `unless` (or after `wait_ms`): a gate
    /// waits on the server, not on a poll.
    #[serde(default)]
    pub wait_ms: Option<u64>,
    #[serde(default)]
    pub unless: Option<Readiness>,
}

/// What a restart of a service would cut now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Readiness {
    pub service: String,
    pub window: String,
    /// True when nothing would be cut.
    pub ready: bool,
    pub blockers: Vec<Blocker>,
    /// Holds past their TTL: listed, blocking nothing.
    pub wedged_holds: Vec<Hold>,
    /// Things worth knowing that do not block (for `stead`: runs its monitors carry
    /// through a restart).
    pub notes: Vec<String>,
}

/// One thing a restart would cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Blocker {
    /// A run of a job that depends on the service is in flight.
    Run {
        id: i64,
        job: String,
        started_at: Option<String>,
    },
    /// A fire of a dependent job is due within the window.
    Fire { job: String, at: String },
    /// A live hold.
    Hold { name: String, expires_at: String },
}

impl Blocker {
    /// A short phrase naming it, for a waiting line.
    pub fn describe(&self) -> String {
        match self {
            Blocker::Run { id, job, .. } => format!("run {id} of {job}"),
            Blocker::Fire { job, at } => format!("{job} fires at {at}"),
            Blocker::Hold { name, .. } => format!("hold {name}"),
        }
    }
}

/// Parameters of `restart_begin` / `restart_end`: the server marks a gated restart of a
/// service under way (dependent fires wait; a dependent run failing meanwhile is
/// interrupted, not failed), and its end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestartMark {
    pub service: String,
    /// With `restart_begin`: cut the dependent runs in flight (a forced restart).
    #[serde(default)]
    pub cut_runs: bool,
}
