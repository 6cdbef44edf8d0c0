//! Runs as data: what a run executes ([`MonitorPlan`]), how it ends ([`RunEnd`]), and
//! the words the ledger writes about them.
//!
//! The server writes a run's row (`queued`) and starts a per-run monitor process
//! (`stead-monitor`), handing it a [`MonitorPlan`] on stdin. The monitor marks the run
//! `running`, starts the command in a process group of its own, copies its output to the
//! run's log, enforces the timeout, and records the [`RunEnd`] itself. Because the
//! monitor, not the server, holds the child and writes its outcome, the server may stop,
//! crash or be replaced while runs go on. The state machine is documented in
//! `docs/ledger.md`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use stead_protocol::RunStatus;

use crate::clock::rfc3339;
use crate::records::NewRun;

/// Everything a monitor needs to run one command; fixed when the run is created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonitorPlan {
    pub run_id: i64,
    /// The ledger the run belongs to, by identity (the monitor is told how to reach it
    /// by its server, see [`MonitorStart`]).
    pub ledger: crate::locator::LedgerRef,
    /// Program and arguments (a shell job is already `["sh", "-c", SCRIPT]`).
    pub argv: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Added to the monitor's own environment, including the `STEAD_*` run variables.
    pub env: BTreeMap<String, String>,
    /// The secrets the command gets, by variable: the secret's name, never its value
    /// (plans are kept in the ledger). The monitor reads the values from its host's
    /// secret store ([`MonitorStart::secret_store`]) when it starts the command.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: BTreeMap<String, String>,
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
    /// The job may resume on any host (`--resume-on any`): on a shared ledger, a copy
    /// whose host is cut off from the database stops once its host could be judged lost,
    /// so that the work never runs on two hosts for longer than a bound.
    #[serde(default)]
    pub resume_anywhere: bool,
    /// The run's retry budget: after a genuine failure with retries left, the ledger
    /// writes the next attempt and the failure hook waits for the last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<crate::retry::RetryPlan>,
    /// A scheduled fire's instant: its command never starts before it. A fire is
    /// admitted, and its monitor readied, a little ahead of its time, so that the
    /// command starts on the instant; the run is marked running then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<Millis>,
    /// What the run needs of the machine before its command starts (the network, mains
    /// power) and whether it keeps the machine awake while it runs.
    #[serde(
        default,
        skip_serializing_if = "crate::conditions::Conditions::is_empty"
    )]
    pub conditions: crate::conditions::Conditions,
}

impl MonitorPlan {
    /// The budget of the retry the ledger writes when this run genuinely fails; `None`
    /// when this is the last attempt (the failure hook's turn).
    pub fn retry_follows(&self) -> Option<crate::retry::RetryPlan> {
        self.retry.filter(|r| r.left > 0)
    }

    /// This plan for another attempt of the same work: run `id` logging to `log_path`,
    /// with `trigger`, `attempt` and `retry`, and the run variables to match.
    pub fn for_attempt(
        mut self,
        id: i64,
        log_path: PathBuf,
        trigger: stead_protocol::Trigger,
        attempt: i64,
        retry: Option<crate::retry::RetryPlan>,
    ) -> Self {
        self.run_id = id;
        self.log_path = log_path;
        self.retry = retry;
        // Another attempt starts when it is handed over, not at the fire's instant.
        self.not_before = None;
        self.env.insert("STEAD_RUN_ID".into(), id.to_string());
        self.env
            .insert("STEAD_TRIGGER".into(), trigger.as_str().into());
        self.env.insert("STEAD_ATTEMPT".into(), attempt.to_string());
        // Each attempt proves itself with its own token: a cut attempt still alive
        // somewhere cannot write as its successor.
        self.env.insert(
            crate::run_token::RUN_TOKEN_VAR.into(),
            crate::run_token::new_run_token(),
        );
        self
    }
}

/// What a server writes to a monitor's stdin: the run's plan, and how this host reaches
/// the ledger. The locator travels only over that pipe (a URL may carry a password), so
/// every host's monitors use their own host's URL.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MonitorStart {
    pub plan: MonitorPlan,
    pub store: crate::locator::StoreLocator,
    /// The server to record through: one writer for all of a host's runs, instead of a
    /// connection (a SQLite file's lock, a database connection) held by each monitor. A
    /// monitor whose server does not answer writes itself.
    #[serde(default)]
    pub server: Option<ServerLink>,
    /// The free space kept on the file system holding the log (this host's
    /// `[logs] keep_free`): output stops being written below it.
    #[serde(default)]
    pub log_keep_free: stead_protocol::KeepFree,
    /// The run is recorded running for the monitor it is handed to already, in the
    /// commit that admitted it: the monitor starts the command without a mark of its own.
    /// Only ever handed to a monitor that offered to take such runs (`monitor_next`'s
    /// `takes_marked`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub marked: bool,
    /// This host's secret store (`DIR/secrets.json`), from which the monitor reads the
    /// values of the plan's `secrets`. Per host, like `store`: on a shared ledger each
    /// host's runs get that host's secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_store: Option<PathBuf>,
}

/// An instant on the wire, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Millis(pub i64);

impl From<jiff::Timestamp> for Millis {
    fn from(t: jiff::Timestamp) -> Self {
        Self(t.as_millisecond())
    }
}

impl Millis {
    pub fn timestamp(self) -> jiff::Timestamp {
        crate::clock::from_ms(self.0)
    }
}

/// How a monitor reaches its own host's server, and the host's timings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerLink {
    /// The server's unix socket.
    pub socket: PathBuf,
    /// The host's lease: a run that may resume on any host is stopped once its ownership
    /// went unconfirmed this long, since the others judge the host lost after as long.
    pub lease_ms: u64,
    /// The host's heartbeat: how often the monitor asks whether its run is still its own.
    pub heartbeat_ms: u64,
    /// Whether the monitor asks, every heartbeat, whether its run is still its host's:
    /// on a shared ledger, where another host may judge this one lost. On the ledger of
    /// one host nobody else can take a run.
    #[serde(default)]
    pub confirm_ownership: bool,
    /// Whether the monitor's stdout is a socket to the server that started it, on which
    /// its writes go without connecting: the first way to its server, the socket path
    /// the second (when that server is gone or frozen, for its successor).
    #[serde(default)]
    pub linked: bool,
}

/// The default cap on one run's log.
pub const DEFAULT_LOG_MAX_BYTES: u64 = 32 * 1024 * 1024;

/// Room past a log's cap for the monitor's own `[stead: ...]` notes (the truncation
/// note, the failure hook's, the end's), which it writes whatever the cap.
pub const LOG_NOTES_ROOM: u64 = 64 * 1024;

/// The most of a run's log a host ships to a shared ledger: the first bytes of its file,
/// up to the plan's cap and room for the monitor's notes past it. Offsets in the shipped
/// copy are offsets in the file.
pub fn shipped_log_cap(log_max_bytes: u64) -> u64 {
    log_max_bytes.saturating_add(LOG_NOTES_ROOM)
}
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
    /// How many processes the monitor ended: the command's group when it stopped the run
    /// (a cancel, a timeout, a cut), what the command left behind, and descendants that
    /// had left its group. `None` when it ended none.
    pub ended_processes: Option<u32>,
    /// When the run's command started, as whoever records the end knows it.
    pub started: CommandStart,
    /// What the run waited for before its command started, and how long.
    pub waited: Option<Waited>,
}

/// A run's wait for what its job needs (the network, mains power) before its command
/// started, as the ledger records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waited {
    pub ms: u64,
    /// What for, and how it ended: "waited 4.1s for the network", "went on without
    /// network after 2m".
    pub note: String,
}

/// When a run's command started, as its end records it. A monitor marks its run running
/// before the command starts (a fire taken ahead of its instant is marked with its
/// instant; a run admitted marked for a waiting monitor, with the admission's), so the
/// mark is when the run was taken, and only the monitor, which spawns the command, knows
/// when it started: its end corrects the mark.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CommandStart {
    /// Unknown to whoever records the end (a server settling a run whose monitor is
    /// gone, a monitor of an earlier release): the mark stays, put back to the end
    /// should it be later (a run never ends before it started).
    #[default]
    AsMarked,
    /// The monitor spawned the command (the first of the run's chain) at this instant.
    At(Timestamp),
    /// The run ended before its command started (cancelled or stopped while it waited
    /// for its instant, or its log could not be opened): it has no start.
    Never,
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
            ended_processes: None,
            started: CommandStart::AsMarked,
            waited: None,
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
            ended_processes: None,
            started: CommandStart::AsMarked,
            waited: None,
        }
    }
}

/// The reason and resolution of an interrupted run a receipt proved landed.
pub const LANDED: &str = "landed, proven by receipt";

/// The resolution written on a parent that run `id` resumes.
pub fn resumed_as(id: i64, note: Option<&str>) -> String {
    match note {
        Some(note) => format!("resumed as run {id} ({note})"),
        None => format!("resumed as run {id}"),
    }
}

/// A key that names the work, not the attempt: a scheduled fire's key is its job and
/// scheduled time, so any run for that fire (a resume, a catch-up) carries the same key.
pub fn default_key(new: &NewRun, id: i64) -> String {
    match new.scheduled_at {
        Some(at) => format!("{}@{}", new.job, rfc3339(at)),
        None => format!("{}#{id}", new.job),
    }
}

/// The end a monitor records: a dependent run that fails while `restarting` (the first
/// of its services being restarted) is being restarted was cut by the restart, so it is
/// owed (interrupted), not failed.
pub fn monitor_end(end: &RunEnd, restarting: Option<&str>) -> RunEnd {
    match restarting {
        Some(service) if end.status == RunStatus::Failed => RunEnd {
            status: RunStatus::Interrupted,
            reason: Some(format!(
                "interrupted: its service {service} was being restarted ({})",
                end.reason.as_deref().unwrap_or("it failed")
            )),
            ..end.clone()
        },
        _ => end.clone(),
    }
}
