//! What a run's monitor asks of its own host's server on a shared ledger, so that the
//! host's monitors share the server's connection to the database instead of opening
//! one each. These methods are for monitors only; their server records what they say.

use serde::{Deserialize, Serialize};

use crate::RunStatus;

/// `monitor_started`: the monitor is about to start the command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorStarted {
    pub run_id: i64,
    pub pid: u32,
    /// The monitor's start identity (see `stead status`'s `start_identity`).
    pub start_identity: String,
    /// RFC 3339.
    pub at: String,
}

/// `monitor_finished`: how the run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorFinished {
    pub run_id: i64,
    /// A terminal status.
    pub status: RunStatus,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<i32>,
    #[serde(default)]
    pub reason: Option<String>,
    /// RFC 3339.
    pub ended_at: String,
    #[serde(default)]
    pub ended_processes: Option<u32>,
}

/// `monitor_next`: a monitor whose run is recorded, and which has nothing of it left
/// (no process, no failure hook), offers to take another. Asked on a monitor's link
/// only: the server that made the link knows the process at its other end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorNext {
    /// The run the monitor is done with.
    pub after: i64,
    /// How long the monitor waits for a run, in milliseconds (the server may answer
    /// sooner, with none).
    pub wait_ms: u64,
    /// The monitor may be handed a run already recorded running for it (the server marks
    /// it in the commit that admits it, and the monitor marks nothing), and tells a
    /// cancel its server queued with a run's id from any other SIGUSR1.
    #[serde(default)]
    pub takes_marked: bool,
}

/// The answer to `monitor_next`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorNextRun {
    /// The next run's start, as a monitor is started with it (a `MonitorStart`); `None`:
    /// nothing came, and the monitor exits.
    pub start: Option<serde_json::Value>,
}

/// `monitor_check`: whether the run is still this host's, and whether a service it
/// depends on is being restarted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorCheck {
    pub run_id: i64,
    /// Also read whether a service the run's job depends on is being restarted (asked
    /// once, when a command fails, to tell a cut from a failure).
    #[serde(default)]
    pub restarting: bool,
}

/// The answer to `monitor_check`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonitorVerdict {
    /// The ledger says the run has ended (a server that judged this host lost ended it).
    pub ended: bool,
    /// How long ago the server last confirmed with the database what its runs are, in
    /// milliseconds; `None` when it never has since it started.
    pub confirmed_ms_ago: Option<u64>,
    /// With `restarting`: the service being restarted, if any.
    #[serde(default)]
    pub restarting_service: Option<String>,
}
