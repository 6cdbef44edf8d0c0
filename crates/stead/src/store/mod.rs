//! The ledger: durable server state behind the [`Store`] trait.
//!
//! SQLite ([`sqlite::SqliteStore`]) is the embedded default. The trait exists because a
//! PostgreSQL backend for several hosts follows; the lease methods take the time as an
//! argument so the rules can be tested with any clock. The schema is documented in
//! `docs/ledger.md`.

#[cfg(test)]
mod contract;
pub mod locator;
pub mod postgres;
mod rows;
pub mod sqlite;

use std::path::{Path, PathBuf};

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{Concurrency, JobSpec, Run, RunFilter, RunStatus, Trigger};

use crate::lifecycle::identity::StartIdentity;
use crate::lifecycle::lease::{ClaimOutcome, Claimant, HeldLease, LeaseRow, RenewOutcome};
use crate::runs::{MonitorPlan, RunEnd};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "ledger {path} is not a readable SQLite database ({detail}); stead changed nothing. \
         Move it aside (mv {path} {path}.broken) to start a fresh ledger, or restore it from a backup"
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "ledger {path} was written by a newer stead (schema {found}, this build knows up to {known})"
    )]
    TooNew {
        path: PathBuf,
        found: usize,
        known: usize,
    },
    #[error("failed to open ledger {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("failed to migrate ledger {path}: {detail}")]
    Migrate { path: PathBuf, detail: String },
    #[error("ledger query failed: {0}")]
    Query(#[from] rusqlite::Error),
    #[error("this server's lease (epoch {epoch}) has been superseded; it may write nothing more")]
    Fenced { epoch: i64 },
    #[error("a job named {0:?} already exists")]
    JobExists(String),
    #[error("no job named {0:?}")]
    NoSuchJob(String),
    #[error("no run {0}")]
    NoSuchRun(i64),
    #[error("corrupt ledger row: {0}")]
    Row(String),
    #[error("run {0} was already resumed or resolved")]
    AlreadyResolved(i64),
    #[error("run {0} of the same job is in flight (concurrency = forbid)")]
    Overlap(i64),
    #[error("a service named {0:?} already exists")]
    ServiceExists(String),
    #[error("no service named {0:?}")]
    NoSuchService(String),
    #[error("service {service:?} is still named in depends_on by: {}", jobs.join(", "))]
    ServiceInUse { service: String, jobs: Vec<String> },
    #[error("no hold named {0:?}")]
    NoSuchHold(String),
    /// The PostgreSQL ledger cannot be reached (`ledger` is `HOST:PORT/DB`, never the
    /// URL, which may carry a password).
    #[error("the PostgreSQL ledger at {ledger} is unreachable: {detail}")]
    Unavailable { ledger: String, detail: String },
    /// `url` has its password redacted.
    #[error("{url} is not a usable PostgreSQL ledger URL: {detail}")]
    LedgerUrl { url: String, detail: String },
    #[error("ledger query failed: {}", postgres::describe(.0))]
    Postgres(#[from] ::postgres::Error),
}

/// Everything one `apply` changes, in the order the store applies it: services first
/// (jobs may name them), then jobs, then removed services (once no job names them).
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub create_services: Vec<stead_protocol::ServiceSpec>,
    pub update_services: Vec<stead_protocol::ServiceSpec>,
    pub create_jobs: Vec<JobSpec>,
    /// New spec, and whether its schedule restarts (a schedule change, a re-enable).
    pub update_jobs: Vec<(JobSpec, bool)>,
    pub remove_jobs: Vec<String>,
    pub remove_services: Vec<String>,
}

/// A service as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredService {
    pub spec: stead_protocol::ServiceSpec,
    /// A gated restart has been under way since then.
    pub restarting_since: Option<Timestamp>,
}

/// A hold as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHold {
    pub name: String,
    pub service: String,
    pub acquired_at: Timestamp,
    pub expires_at: Timestamp,
}

/// A job as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredJob {
    pub id: i64,
    pub spec: JobSpec,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Interval schedules fire at anchor + k * interval.
    pub anchor: Timestamp,
    /// Fires scheduled at or before this instant have been handled.
    pub fired_through: Option<Timestamp>,
}

/// How many runs of one job share a status and a trigger (for `/metrics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunCount {
    pub job: String,
    pub status: RunStatus,
    pub trigger: Trigger,
    /// For interrupted runs: whether their debt is settled (resumed, landed, given up).
    pub resolved: bool,
    pub count: u64,
}

/// Which lease a write is fenced by: the host's server lease (everything a server does
/// for its own host) or the scheduler's leadership (fires, and settling lost hosts' runs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fence {
    #[default]
    Host,
    Leader,
}

/// A host sharing the ledger, for `stead hosts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRow {
    pub machine_id: String,
    pub name: String,
    /// The serving server, while one holds the host's lease.
    pub server_id: Option<String>,
    pub pid: Option<u32>,
    pub epoch: i64,
    pub renewed_at: Option<Timestamp>,
    pub expires_at: Timestamp,
    /// Its runs queued or running.
    pub in_flight: u64,
}

/// The scheduler's leadership as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderRow {
    pub epoch: i64,
    pub machine_id: Option<String>,
    pub server_id: Option<String>,
    pub expires_at: Timestamp,
}

/// What a shared ledger tells its servers between their own requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A run was queued for any host to claim.
    Queued,
    /// A run's row changed (on any host).
    Run(i64),
    /// A cancel of run N was asked for (on any host): its own host signals its monitor.
    Cancel(i64),
    /// Jobs, services or holds changed (on any host).
    Changed,
    /// The connection was re-established: anything may have been missed.
    Reconnected,
}

/// A run to be admitted to the ledger.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub job_id: i64,
    pub job: String,
    pub trigger: Trigger,
    pub scheduled_at: Option<Timestamp>,
    /// `None`: a fresh key is made from the run's id.
    pub idempotency_key: Option<String>,
    pub parent_id: Option<i64>,
    pub attempt: i64,
    pub machine_id: String,
    pub boot_id: String,
    pub concurrency: Concurrency,
    pub created_at: Timestamp,
    /// For a scheduled fire: advance the job's `fired_through` to this instant in the
    /// same transaction, so a fire is handled exactly once.
    pub fired_through: Option<Timestamp>,
    /// Which lease fences the admission.
    pub fence: Fence,
    /// For a resume: the trigger of the run first cut.
    pub original_trigger: Option<Trigger>,
    /// For a resume: the interrupted run whose debt this run settles, in the same
    /// transaction ([`StoreError::AlreadyResolved`] if it was settled already), and a
    /// note for its resolution.
    pub resolves: Option<(i64, Option<String>)>,
    /// Record the run as skipped with this reason (fires a catch-up policy passes over).
    pub skip_reason: Option<String>,
}

impl NewRun {
    /// A first attempt of `job` for `trigger`, created at `now` on this machine and boot;
    /// callers set the fields that differ (scheduled time, parent, ...).
    pub fn of(
        job: &StoredJob,
        trigger: Trigger,
        machine_id: &str,
        boot_id: &str,
        now: Timestamp,
    ) -> Self {
        Self {
            job_id: job.id,
            job: job.spec.name.clone(),
            trigger,
            scheduled_at: None,
            idempotency_key: None,
            parent_id: None,
            attempt: 1,
            machine_id: machine_id.to_string(),
            boot_id: boot_id.to_string(),
            concurrency: job.spec.concurrency,
            created_at: now,
            fired_through: None,
            fence: Fence::Host,
            original_trigger: None,
            resolves: None,
            skip_reason: None,
        }
    }
}

/// What admitting a run did.
#[derive(Debug, Clone)]
pub struct Admission {
    /// The new row: `queued`, or `skipped` (a forbidden overlap).
    pub run: Run,
    /// What its monitor must run, when it is queued.
    pub plan: Option<MonitorPlan>,
    /// Runs to cancel because the job's concurrency is `replace`.
    pub replaced: Vec<ActiveRun>,
}

/// A run that has not ended, with what is needed to find its monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveRun {
    pub id: i64,
    pub job: String,
    pub status: RunStatus,
    pub machine_id: String,
    pub boot_id: String,
    pub monitor: Option<(u32, StartIdentity)>,
    pub epoch: i64,
    /// A cancel was asked for (its monitor may not have heard it yet).
    pub cancel_requested: bool,
}

/// The host claiming runs: who it is, and how it rewrites a claimed run's plan for
/// itself (its log directory, its state directory).
pub struct ClaimingHost<'a> {
    pub machine_id: &'a str,
    pub name: &'a str,
    pub boot_id: &'a str,
    pub log_dir: &'a Path,
    pub state_dir: &'a Path,
}

/// Builds a run's monitor plan once its id and log path are known.
pub type PlanFn<'a> = &'a dyn Fn(i64, &Path, &str) -> MonitorPlan;

/// Durable server state.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Claims the lease for `claimant` if it is released or expired at `now`, or, when
    /// `dead_owner` is given, if the row is still exactly that row (its owner has been
    /// proven dead by the caller, so it can write nothing more).
    fn claim_lease(
        &self,
        claimant: &Claimant,
        now: Timestamp,
        ttl: SignedDuration,
        dead_owner: Option<&LeaseRow>,
    ) -> Result<ClaimOutcome, StoreError>;

    /// Re-arms `lease` until `now + ttl` if the row still carries its epoch and identity,
    /// even when it has expired.
    fn renew_lease(
        &self,
        lease: &HeldLease,
        now: Timestamp,
        ttl: SignedDuration,
    ) -> Result<RenewOutcome, StoreError>;

    /// Clears the owner if `lease` still owns the row; returns whether it did.
    fn release_lease(&self, lease: &HeldLease, now: Timestamp) -> Result<bool, StoreError>;

    /// The lease row as stored.
    fn lease_row(&self) -> Result<LeaseRow, StoreError>;

    /// Adds a job; [`StoreError::JobExists`] if the name is taken.
    fn job_insert(
        &self,
        spec: &JobSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError>;

    fn job_get(&self, name: &str) -> Result<Option<StoredJob>, StoreError>;

    /// All jobs, by name.
    fn job_list(&self) -> Result<Vec<StoredJob>, StoreError>;

    /// Replaces a job's spec (same name). A changed schedule restarts its fire count
    /// from `now`, so an edit never fires what the old schedule missed.
    fn job_update(
        &self,
        spec: &JobSpec,
        schedule_changed: bool,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError>;

    /// Removes a job; its runs stay in the ledger.
    fn job_remove(&self, name: &str, epoch: i64) -> Result<StoredJob, StoreError>;

    /// Applies a declarative file's changes in one transaction: all or nothing.
    fn apply(&self, changes: &Changes, now: Timestamp, epoch: i64) -> Result<(), StoreError>;

    /// Writes a new run row, applying the job's concurrency policy against its runs in
    /// flight, in one transaction. `plan` builds the monitor plan from the new id, its
    /// log path and its idempotency key.
    fn run_admit(
        &self,
        new: &NewRun,
        log_dir: &Path,
        plan: PlanFn<'_>,
        epoch: i64,
    ) -> Result<Admission, StoreError>;

    fn run_get(&self, id: i64) -> Result<Option<Run>, StoreError>;

    /// Runs matching `filter`, newest first.
    fn run_list(&self, filter: &RunFilter) -> Result<Vec<Run>, StoreError>;

    /// The ledger's runs counted by job, status, trigger and settled debt.
    fn run_counts(&self) -> Result<Vec<RunCount>, StoreError>;

    /// Runs of `machine_id` that have not ended.
    fn runs_active(&self, machine_id: &str) -> Result<Vec<ActiveRun>, StoreError>;

    /// Ends a queued or running run from the server's side (a cancel before start, a
    /// monitor that died), fenced by `epoch`. Returns false if it had already ended.
    fn run_settle(&self, id: i64, end: &RunEnd, epoch: i64) -> Result<bool, StoreError>;

    /// Ends a run only while it is still `queued` (a cancel before start); returns false
    /// once its monitor has marked it running, which must then be cancelled through it.
    fn run_settle_queued(&self, id: i64, end: &RunEnd, epoch: i64) -> Result<bool, StoreError>;

    /// Ends several runs at once, in one transaction (reconciliation at boot); returns the
    /// ids that were ended here (others had already ended).
    fn run_settle_all(&self, ends: &[(i64, RunEnd)], epoch: i64) -> Result<Vec<i64>, StoreError>;

    /// Notes that a cancel was asked for (the monitor is then signalled).
    fn run_request_cancel(&self, id: i64, now: Timestamp, epoch: i64) -> Result<(), StoreError>;

    /// Interrupted runs of `machine_id` whose debt is not settled, oldest first.
    fn runs_owed(&self, machine_id: &str) -> Result<Vec<Run>, StoreError>;

    /// Settles an interrupted run's debt without a resume ("not resumed: ..."). Returns
    /// false if it was already settled.
    fn run_resolve(
        &self,
        id: i64,
        resolution: &str,
        now: Timestamp,
        epoch: i64,
    ) -> Result<bool, StoreError>;

    /// A receipt proved the interrupted run's work landed: close it as succeeded.
    fn run_land(&self, id: i64, now: Timestamp, epoch: i64) -> Result<bool, StoreError>;

    /// Whether several hosts may share this ledger: only then do servers elect a leader,
    /// claim queued runs and watch for lost hosts.
    fn is_shared(&self) -> bool {
        false
    }

    /// Claims or renews the scheduler's leadership for the server holding `lease`;
    /// returns the leader epoch while it leads. On a ledger of one host its server
    /// always leads, with its own epoch.
    fn lead(
        &self,
        lease: &HeldLease,
        _now: Timestamp,
        _ttl: SignedDuration,
    ) -> Result<Option<i64>, StoreError> {
        Ok(Some(lease.epoch))
    }

    /// Gives the leadership up (a server on its way down).
    fn resign(&self, _lease: &HeldLease, _epoch: i64) -> Result<(), StoreError> {
        Ok(())
    }

    /// The leadership row (`None` on a ledger of one host).
    fn leader(&self) -> Result<Option<LeaderRow>, StoreError> {
        Ok(None)
    }

    /// The hosts sharing the ledger (empty on a ledger of one host).
    fn hosts(&self) -> Result<Vec<HostRow>, StoreError> {
        Ok(Vec::new())
    }

    /// Claims up to `limit` queued runs no host has claimed that `host` may run, for
    /// this host (fenced by its `epoch`), and returns their monitor plans with logs under
    /// `log_dir`. Runs are taken with `FOR UPDATE SKIP LOCKED`: two hosts never claim one.
    fn runs_claim(
        &self,
        _host: &ClaimingHost<'_>,
        _limit: u32,
        _epoch: i64,
    ) -> Result<Vec<MonitorPlan>, StoreError> {
        Ok(Vec::new())
    }

    /// Ends, at `now`, the runs in flight of other hosts whose servers last renewed
    /// their lease before `cutoff` as interrupted (fenced by the leader `epoch`); returns
    /// the ids ended.
    fn settle_lost_hosts(
        &self,
        _cutoff: Timestamp,
        _now: Timestamp,
        _epoch: i64,
    ) -> Result<Vec<i64>, StoreError> {
        Ok(Vec::new())
    }

    /// Interrupted, unsettled runs of hosts silent since before `cutoff` whose jobs may
    /// resume on any host, oldest first.
    fn runs_owed_by_lost_hosts(&self, _cutoff: Timestamp) -> Result<Vec<Run>, StoreError> {
        Ok(Vec::new())
    }

    /// Calls `wake` for every notification a shared ledger sends, from a thread of its
    /// own, reconnecting after a lost connection, until `wake` returns false.
    fn listen(&self, _wake: Box<dyn Fn(Wake) -> bool + Send>) -> Result<(), StoreError> {
        Ok(())
    }

    /// Declared services, by name (the built-in `stead` is not stored).
    fn service_list(&self) -> Result<Vec<StoredService>, StoreError>;

    /// The names of the services a gated restart is under way for.
    fn services_restarting(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .service_list()?
            .into_iter()
            .filter(|svc| svc.restarting_since.is_some())
            .map(|svc| svc.spec.name)
            .collect())
    }

    fn service_insert(
        &self,
        spec: &stead_protocol::ServiceSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredService, StoreError>;

    /// Removes a service; refused while a job names it in `depends_on`.
    fn service_remove(&self, name: &str, epoch: i64) -> Result<StoredService, StoreError>;

    /// Marks a gated restart of the service under way (`Some(since)`) or over (`None`).
    fn service_set_restarting(
        &self,
        name: &str,
        since: Option<Timestamp>,
        epoch: i64,
    ) -> Result<(), StoreError>;

    fn hold_list(&self) -> Result<Vec<StoredHold>, StoreError>;

    /// Acquires a hold, or renews it (same name): a new expiry, the first acquisition kept.
    fn hold_upsert(&self, hold: &StoredHold, epoch: i64) -> Result<StoredHold, StoreError>;

    fn hold_remove(&self, name: &str, epoch: i64) -> Result<StoredHold, StoreError>;
}
