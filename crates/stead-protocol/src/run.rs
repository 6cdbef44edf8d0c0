//! Runs on the wire: the ledger row of one execution, and the run methods' parameters.

use serde::{Deserialize, Serialize};

/// Why a run exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// Its job's schedule fired.
    Scheduled,
    /// Someone asked (`stead run`, the API).
    OnDemand,
    /// It resumes an interrupted run.
    Resume,
    /// It makes up for fires missed while stead was down or asleep.
    CatchUp,
    /// It retries a run that genuinely failed (the job's `retries`).
    Retry,
    /// A run of a job this one runs `after` succeeded.
    After,
}

/// Where a run is in its life: `queued → running → succeeded | failed | cancelled |
/// interrupted`, or `skipped` straight away. See docs/ledger.md.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    Interrupted,
    Skipped,
}

impl RunStatus {
    pub const ALL: [RunStatus; 7] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::Cancelled,
        RunStatus::Interrupted,
        RunStatus::Skipped,
    ];

    /// Whether the run has ended and will never change again.
    pub fn is_terminal(self) -> bool {
        !matches!(self, RunStatus::Queued | RunStatus::Running)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Skipped => "skipped",
        }
    }
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Scheduled => "scheduled",
            Trigger::OnDemand => "on_demand",
            Trigger::Resume => "resume",
            Trigger::CatchUp => "catch_up",
            Trigger::Retry => "retry",
            Trigger::After => "after",
        }
    }
}

/// One run, as `stead show RUN --json` prints it. Times are RFC 3339 in UTC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub id: i64,
    pub job: String,
    pub trigger: Trigger,
    pub status: RunStatus,
    /// The exit code, when the command exited by itself.
    pub exit_code: Option<i32>,
    /// The signal number, when the command was killed by a signal.
    pub signal: Option<i32>,
    /// Why the run ended as it did, in words (a skip's overlap, a timeout, a cancel).
    pub reason: Option<String>,
    pub attempt: i64,
    pub parent_id: Option<i64>,
    pub idempotency_key: String,
    pub machine_id: String,
    pub boot_id: String,
    pub monitor_pid: Option<u32>,
    pub scheduled_at: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub log_path: String,
    /// For a resume: the trigger of the run first cut.
    pub original_trigger: Option<Trigger>,
    /// For an interrupted run: how its debt was settled ("resumed as run N", "not
    /// resumed: ...", "landed, proven by receipt"); `null` while it is still owed.
    pub resolution: Option<String>,
    /// How many processes its monitor ended: the command's when the run was stopped
    /// (cancelled, timed out, cut), what it left behind, and descendants that had left
    /// its process group. Absent when it ended none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_processes: Option<u32>,
    /// When retention deleted the run's log file (the row is kept). Absent while the log
    /// is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_pruned_at: Option<String>,
    /// The run's own environment and arguments (`stead run NAME --env K=V -- ARGS`),
    /// kept by its resume and retries. Absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<RunParams>,
    /// The queue whose limit the run waits on (its job's, when it was admitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// For a queued run that waits: what for, in words ("a place in queue q", "its
    /// retry delay, until ..."). Absent once it is handed to its monitor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<String>,
    /// A queued retry does not start before this time (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<String>,
    /// How long the machine slept while the run ran, in milliseconds (a sleep the
    /// server lived through, between the run's start and its end). Absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slept_ms: u64,
    /// The run that carries this one on: its retry (after a genuine failure) or its
    /// resume (after a cut). Absent while there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub followed_by: Option<i64>,
    /// How long the run waited, after it was taken and before its command started, for
    /// what its job needs (the network, mains power), in milliseconds. Absent when it
    /// waited for nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    /// What it waited for and how the wait ended ("waited 4.1s for the network", "went
    /// on without network after 2m", "deferred 12m on battery power").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_note: Option<String>,
    /// For a catch-up run whose fire came due while the machine slept: that sleep, in
    /// words ("missed while the machine slept 02:10-07:45 UTC"). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caught_up: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A run's own environment and arguments, on top of its job's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunParams {
    /// Extra environment variables (over the job's `env`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    /// Arguments appended to the command's argv (a shell job's `$@`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

impl RunParams {
    pub fn is_empty(&self) -> bool {
        self.env.is_empty() && self.args.is_empty()
    }
}

/// Parameters naming one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunId {
    pub id: i64,
}

/// Parameters of `run_now`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunNow {
    pub job: String,
    /// Extra environment for this run only.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    /// Arguments appended to the command for this run only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

/// Parameters of `run_wait`: answered when the run is terminal, or after `timeout_ms`
/// with the run as it is then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunWait {
    pub id: i64,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Parameters of `run_list`; newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunFilter {
    #[serde(default)]
    pub job: Option<String>,
    #[serde(default)]
    pub status: Option<RunStatus>,
    /// At most this many (default 50, at most 10,000).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only runs with an id below this (for paging).
    #[serde(default)]
    pub before_id: Option<i64>,
    /// Leave out `skipped` rows (fires not run, overlaps).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_skipped: bool,
}

/// Parameters of `run_log`: up to `max_bytes` of a run's log as the shared ledger holds
/// it, from byte `offset`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLogParams {
    pub id: i64,
    #[serde(default)]
    pub offset: u64,
    /// At most this many bytes (default and most: [`crate::limits::MAX_RUN_LOG_READ`]).
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// What `run_log` answers: a stretch of a run's log from the shared ledger, and whether
/// more is to come.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunLog {
    pub id: i64,
    /// The run's status when the log was read (read before it).
    pub status: RunStatus,
    /// The offset the bytes start at (the one asked for).
    pub offset: u64,
    /// The bytes, base64 (standard alphabet, padded): a log is bytes, not text.
    pub data: String,
    /// How many bytes of the log the ledger holds: read on from `offset` + the bytes'
    /// length while it is less.
    pub shipped_bytes: u64,
    /// The run has ended and its log is in the ledger whole (up to the run's log cap and
    /// the monitor's notes): nothing more will come.
    pub complete: bool,
    /// The run ended before its host shipped logs to the ledger: its log is only on its
    /// host.
    pub kept_on_host: bool,
    /// The name of the host that ran the run (absent while it is queued for any host).
    pub host: Option<String>,
    /// That host's state, as `hosts` gives it: `serving`, `stopped` or `lost`. A log that
    /// is not complete of a run that ended on a host that does not serve stays
    /// incomplete until its server starts again.
    pub host_state: Option<String>,
}

impl RunLog {
    /// Encodes log bytes as `data` carries them.
    pub fn encode(bytes: &[u8]) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// The bytes `data` carries.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(&self.data)
            .map_err(|e| format!("run {}: the log's bytes are not base64: {e}", self.id))
    }

    /// The offset just past the bytes carried.
    pub fn end(&self) -> u64 {
        // Three bytes per four characters, less the padding.
        let padding = self.data.bytes().rev().take_while(|&b| b == b'=').count();
        self.offset + (self.data.len() / 4 * 3 - padding) as u64
    }
}
