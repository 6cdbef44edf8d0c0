//! Runs: what a run executes, how it ends, and who records it.
//!
//! The server writes a run's row (`queued`) and starts a per-run monitor process
//! ([`monitor`]), handing it a [`MonitorPlan`] on stdin. The monitor marks the run
//! `running`, starts the command in a process group of its own, copies its output to the
//! run's log, enforces the timeout, and records the [`RunEnd`] itself through a
//! [`RunRecorder`]. Because the monitor, not the server, holds the child and writes its
//! outcome, the server may stop, crash or be replaced while runs go on. The state
//! machine is documented in `docs/ledger.md`.

pub mod monitor;
pub mod resume;

use std::collections::BTreeMap;
use std::path::PathBuf;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use stead_protocol::RunStatus;

use crate::lifecycle::identity::StartIdentity;
use crate::store::StoreError;

/// Everything a monitor needs to run one command; fixed when the run is created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonitorPlan {
    pub run_id: i64,
    /// The ledger the monitor records into.
    pub ledger: crate::store::locator::StoreLocator,
    /// Program and arguments (a shell job is already `["sh", "-c", SCRIPT]`).
    pub argv: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Added to the monitor's own environment, including the `STEAD_*` run variables.
    pub env: BTreeMap<String, String>,
    pub timeout_ms: Option<u64>,
    /// Between SIGTERM and SIGKILL when a run is cancelled or times out.
    pub kill_grace_ms: u64,
    pub log_path: PathBuf,
    /// Output past this many bytes is discarded, with a note in the log.
    pub log_max_bytes: u64,
    /// Argument vectors tried in order after a genuine failure of `argv` (or of the
    /// previous alternative). A cut stops the chain.
    #[serde(default)]
    pub alternatives: Vec<Vec<String>>,
    /// A shell script run with `sh -c` after a genuine failure of the last command, with
    /// the run (as recorded) as JSON on its stdin.
    #[serde(default)]
    pub on_failure: Option<String>,
}

/// The default cap on one run's log.
pub const DEFAULT_LOG_MAX_BYTES: u64 = 32 * 1024 * 1024;
/// The default time between SIGTERM and SIGKILL.
pub const DEFAULT_KILL_GRACE_MS: u64 = 5_000;

/// How a run ended, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunEnd {
    /// A terminal status.
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub reason: Option<String>,
    pub ended_at: Timestamp,
}

impl RunEnd {
    /// The command exited with `code`: succeeded on 0, failed otherwise.
    pub fn exited(code: i32, ended_at: Timestamp) -> Self {
        Self {
            status: if code == 0 {
                RunStatus::Succeeded
            } else {
                RunStatus::Failed
            },
            exit_code: Some(code),
            signal: None,
            reason: (code != 0).then(|| format!("exited with code {code}")),
            ended_at,
        }
    }

    /// Ended with `status` for `reason`, with whatever exit code or signal applies.
    pub fn with_reason(status: RunStatus, reason: impl Into<String>, ended_at: Timestamp) -> Self {
        Self {
            status,
            exit_code: None,
            signal: None,
            reason: Some(reason.into()),
            ended_at,
        }
    }
}

/// Where a monitor records its run. Implemented by the ledger; tests use fakes.
pub trait RunRecorder {
    /// `queued → running`, naming the monitor. Returns false when the run is no longer
    /// queued (it was cancelled or interrupted before it could start): the monitor must
    /// not start the command.
    fn mark_running(
        &self,
        run_id: i64,
        monitor_pid: u32,
        monitor_identity: &StartIdentity,
        started_at: Timestamp,
    ) -> Result<bool, StoreError>;

    /// `running → end.status`, exactly once. Returns false when the run was already
    /// terminal (someone else settled it); the existing outcome stands.
    fn finish(&self, run_id: i64, end: &RunEnd) -> Result<bool, StoreError>;

    /// The run as recorded (for the failure hook's input).
    fn run(&self, run_id: i64) -> Result<Option<stead_protocol::Run>, StoreError>;

    /// A service the run's job depends on that is being restarted now, if any: a failure
    /// then is the restart's doing, and no alternative is dialled into it.
    fn restarting_service(&self, run_id: i64) -> Result<Option<String>, StoreError>;
}
