//! The stead wire protocol: the types a client and a server exchange, the protocol
//! version, and the exit codes every `stead` command documents.
//!
//! The transport is newline-delimited JSON over a unix socket. On every connection the
//! server writes one [`Hello`] line first; after that the client writes
//! [`RequestEnvelope`] lines and the server answers each with one [`ResponseEnvelope`]
//! line carrying the same `id`. See `docs/protocol.md` for the full contract.
//!
//! - the methods, declared once ([`Method`], [`method`], [`Request`], [`MethodId`]);
//! - the envelopes and error codes (`message.rs`), and each family's parameter and result
//!   types (`job.rs`, `run.rs`, `service.rs`, `status.rs`, and `monitor.rs` for what a
//!   run's monitor tells its server);
//! - [`limits`] both sides know, the [`exit`] codes, [`redact_url`], how a ledger's
//!   URL travels without its password, [`units`], how durations and sizes are written, and
//!   [`run_env`], the variables stead gives a run's command.
//!
//! This crate holds data only (serde, no I/O), so any program can speak to stead by
//! depending on it alone.

pub mod checkpoint;
mod disk;
pub mod exit;
mod job;
pub mod limits;
mod message;
mod methods;
mod monitor;
mod notify;
mod prune;
mod queue;
mod redact;
mod run;
pub mod run_env;
mod service;
mod sleep;
mod status;
pub mod units;

pub use checkpoint::{
    Checkpoint, CheckpointGet, CheckpointSet, Checkpoints, Step, StepParams, StepState,
};
pub use disk::{DiskSpace, KeepFree};
pub use job::{
    ApplyParams, ApplyResult, CatchUp, Concurrency, Job, JobChange, JobName, JobSpec, NameChanges,
    OnBattery, PauseParams, ResumeOn, SetEnabled, secret_binding, valid_secret_name,
    valid_variable_name,
};
pub use message::{
    ErrorBody, ErrorCode, Hello, HelloLine, Outcome, RequestEnvelope, ResponseEnvelope,
};
pub use methods::{Empty, Method, MethodId, Request, method};
pub use monitor::{
    MonitorCheck, MonitorFinished, MonitorNext, MonitorNextRun, MonitorStarted, MonitorVerdict,
};
pub use notify::{
    Notification, Notifier, NotifierName, NotifierSpec, NotifyEvent, NotifyTestResult,
};
pub use prune::{PruneParams, PruneResult, PrunedJob};
pub use queue::{Queue, QueueName, QueueSpec};
pub use redact::{redact_notifier_url, redact_url};
pub use run::{
    Run, RunFilter, RunId, RunLog, RunLogParams, RunNow, RunParams, RunStatus, RunWait, Trigger,
};
pub use service::{
    Blocker, Hold, HoldName, HoldSpec, Readiness, ReadinessParams, RestartMark, STEAD_DAEMON,
    STEAD_SERVICE, Service, ServiceName, ServiceSpec,
};
pub use sleep::{Sleep, SleepFilter};
pub use status::{
    HostInfo, HostsResult, HttpEndpoint, HttpParams, Overdue, StatusResult, StopParams, StopResult,
};

/// The protocol identifier carried in every hello line. A client refuses a server whose
/// identifier differs, rather than guessing at a shape it does not know.
pub const PROTOCOL: &str = "stead/1";

/// The longest line either side accepts, in bytes (without the newline). A longer line
/// is answered with [`ErrorCode::LineTooLong`] and skipped; the connection stays usable.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;
