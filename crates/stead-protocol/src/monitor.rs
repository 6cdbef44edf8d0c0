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
    /// When the run's command started (RFC 3339), which corrects the start its mark
    /// recorded: `Some(Some(_))`, when it started; `Some(None)` (JSON `null`), it never
    /// did (the run ended before); `None` (absent, as a monitor of an earlier release
    /// sends it), the mark stays.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub started_at: Option<Option<String>>,
    /// How long the run waited for what its job needs before its command started, in
    /// milliseconds (see `Run::waited_ms`); absent when it waited for nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    /// What it waited for and how the wait ended (see `Run::wait_note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_note: Option<String>,
}

/// A field that is there, `null` or not: serde reads a `null` as absent otherwise.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(started_at: &str) -> MonitorFinished {
        let text = format!(
            r#"{{"run_id": 1, "status": "succeeded", "ended_at": "2026-12-01T00:00:00Z"{started_at}}}"#
        );
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn a_start_that_is_absent_null_or_a_time_reads_apart_and_back() {
        let at = "2026-12-01T00:00:00Z".to_string();
        for (field, read) in [
            ("", None),
            (r#", "started_at": null"#, Some(None)),
            (r#", "started_at": "2026-12-01T00:00:00Z""#, Some(Some(at))),
        ] {
            let params = finished(field);
            assert_eq!(params.started_at, read, "{field}");
            let again: MonitorFinished =
                serde_json::from_value(serde_json::to_value(&params).unwrap()).unwrap();
            assert_eq!(again, params);
        }
    }
}
