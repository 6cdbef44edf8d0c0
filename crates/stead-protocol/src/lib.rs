//! The stead wire protocol: the types a client and a server exchange, the protocol
//! version, and the exit codes every `stead` command documents.
//!
//! The transport is newline-delimited JSON over a unix socket. On every connection the
//! server writes one [`Hello`] line first; after that the client writes
//! [`RequestEnvelope`] lines and the server answers each with one [`ResponseEnvelope`]
//! line carrying the same `id`. See `docs/protocol.md` for the full contract.
//!
//! This crate holds data only (serde, no I/O), so any program can speak to stead by
//! depending on it alone.

pub mod exit;
mod job;
mod message;
mod run;
mod service;
mod status;

pub use job::{
    ApplyParams, ApplyResult, CatchUp, Concurrency, Job, JobChange, JobName, JobSpec, ResumeOn,
    ServiceChanges, SetEnabled,
};
pub use message::{
    ErrorBody, ErrorCode, Hello, HelloLine, Outcome, RequestEnvelope, ResponseEnvelope,
};
pub use run::{Run, RunFilter, RunId, RunNow, RunStatus, RunWait, Trigger};
pub use service::{
    Blocker, Hold, HoldName, HoldSpec, Readiness, ReadinessParams, RestartMark, STEAD_SERVICE,
    Service, ServiceName, ServiceSpec,
};
pub use status::{
    HostInfo, HostsResult, HttpEndpoint, HttpParams, StatusResult, StopParams, StopResult,
};

/// The protocol identifier carried in every hello line. A client refuses a server whose
/// identifier differs, rather than guessing at a shape it does not know.
pub const PROTOCOL: &str = "stead/1";

/// The longest line either side accepts, in bytes (without the newline). A longer line
/// is answered with [`ErrorCode::LineTooLong`] and skipped; the connection stays usable.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// The method names a server answers. Kept as constants so client and server cannot drift.
pub mod method {
    /// Server identity, lease and paths: [`crate::StatusResult`].
    pub const STATUS: &str = "status";
    /// Graceful stop: [`crate::StopParams`] in, [`crate::StopResult`] out.
    pub const STOP: &str = "stop";
    /// Add a job: [`crate::JobSpec`] in, [`crate::Job`] out.
    pub const JOB_ADD: &str = "job_add";
    /// All jobs: `{}` in, `[Job]` out.
    pub const JOB_LIST: &str = "job_list";
    /// One job: [`crate::JobName`] in, [`crate::Job`] out.
    pub const JOB_GET: &str = "job_get";
    /// Remove a job: [`crate::JobName`] in, the removed [`crate::Job`] out.
    pub const JOB_REMOVE: &str = "job_remove";
    /// Enable or disable: [`crate::SetEnabled`] in, [`crate::Job`] out.
    pub const JOB_SET_ENABLED: &str = "job_set_enabled";
    /// Declarative jobs: [`crate::ApplyParams`] in, [`crate::ApplyResult`] out.
    pub const APPLY: &str = "apply";
    /// Start a run now: [`crate::RunNow`] in, the new [`crate::Run`] out.
    pub const RUN_NOW: &str = "run_now";
    /// Runs, newest first: [`crate::RunFilter`] in, `[Run]` out.
    pub const RUN_LIST: &str = "run_list";
    /// One run: [`crate::RunId`] in, [`crate::Run`] out.
    pub const RUN_GET: &str = "run_get";
    /// Wait for a run to end: [`crate::RunWait`] in, [`crate::Run`] out.
    pub const RUN_WAIT: &str = "run_wait";
    /// Cancel a run: [`crate::RunId`] in, [`crate::Run`] out.
    pub const RUN_CANCEL: &str = "run_cancel";
    /// Add a service: [`crate::ServiceSpec`] in, [`crate::Service`] out.
    pub const SERVICE_ADD: &str = "service_add";
    /// All services, `stead` first: `{}` in, `[Service]` out.
    pub const SERVICE_LIST: &str = "service_list";
    /// Remove a service: [`crate::ServiceName`] in, the removed [`crate::Service`] out.
    pub const SERVICE_REMOVE: &str = "service_remove";
    /// Acquire or renew a hold: [`crate::HoldSpec`] in, [`crate::Hold`] out.
    pub const HOLD_ACQUIRE: &str = "hold_acquire";
    /// Release a hold: [`crate::HoldName`] in, the released [`crate::Hold`] out.
    pub const HOLD_RELEASE: &str = "hold_release";
    /// All holds, live and wedged: `{}` in, `[Hold]` out.
    pub const HOLD_LIST: &str = "hold_list";
    /// What a restart would cut: [`crate::ReadinessParams`] in, [`crate::Readiness`] out.
    pub const READINESS: &str = "readiness";
    /// A gated restart begins: [`crate::RestartMark`] in, `{}` out.
    pub const RESTART_BEGIN: &str = "restart_begin";
    /// A gated restart ended (the service is ready): [`crate::RestartMark`] in, `{}` out.
    pub const RESTART_END: &str = "restart_end";
    /// The HTTP API's address and token: [`crate::HttpParams`] in, [`crate::HttpEndpoint`] out.
    pub const HTTP: &str = "http";
    /// The hosts sharing the ledger: `{}` in, [`crate::HostsResult`] out.
    pub const HOSTS: &str = "hosts";
}
