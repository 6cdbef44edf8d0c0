//! The ledger's plain records: what the store keeps and answers, and what the server
//! hands it, as data with no I/O (the store's traits are in `stead-store`).

use std::path::PathBuf;

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{
    Concurrency, JobSpec, NotifierSpec, QueueSpec, Run, RunParams, RunStatus, ServiceSpec, Trigger,
};

use crate::retry::RetryPlan;
use crate::runs::MonitorPlan;
use stead_sys::identity::StartIdentity;

/// Everything one `apply` changes, in the order the store applies it: services first
/// (jobs may name them), then jobs, then removed services (once no job names them).
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub create_services: Vec<ServiceSpec>,
    pub update_services: Vec<ServiceSpec>,
    pub create_jobs: Vec<JobSpec>,
    /// New spec, and whether its schedule restarts (a schedule change, a re-enable).
    pub update_jobs: Vec<(JobSpec, bool)>,
    pub remove_jobs: Vec<String>,
    pub remove_services: Vec<String>,
    /// Queues created or changed (their limit), and removed.
    pub set_queues: Vec<QueueSpec>,
    pub remove_queues: Vec<String>,
    /// Notifiers created or replaced, and removed.
    pub set_notifiers: Vec<NotifierSpec>,
    pub remove_notifiers: Vec<String>,
}

/// A service as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredService {
    pub spec: ServiceSpec,
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
    /// Paused: fires before this instant are recorded skipped.
    pub paused_until: Option<Timestamp>,
    /// Overdue since then: its expected success (`expect_within`) was due and has not
    /// come. Its next success ends the lapse.
    pub overdue_since: Option<Timestamp>,
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
    /// How long ago it last renewed, by the database's clock (what judges it lost).
    pub silent_for: Option<SignedDuration>,
    /// How far its clock was from the database's at its last renewal (positive: ahead).
    pub clock_offset_ms: Option<i64>,
    /// Its runs queued or running.
    pub in_flight: u64,
}

impl HostRow {
    /// `serving` (its server renewed within the last `lease`), `stopped` (its server
    /// released the lease lately) or `lost` (silent for longer than a lease), judged by
    /// the database's clock as the leader judges it.
    pub fn state(&self, lease: SignedDuration) -> &'static str {
        let silent = self.silent_for.is_none_or(|age| age > lease);
        if silent {
            "lost"
        } else if self.server_id.is_some() {
            "serving"
        } else {
            "stopped"
        }
    }
}

/// A run of this host whose output is still being shipped to a shared ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogShipment {
    pub run_id: i64,
    pub log_path: PathBuf,
    /// Bytes of the log the ledger holds: the next byte to ship is at this offset.
    pub shipped: u64,
    /// Whether the run had ended when this was read: once the rest of its file is
    /// shipped, its log is complete.
    pub ended: bool,
    /// The plan's cap on the log (see [`crate::runs::shipped_log_cap`]).
    pub log_max_bytes: u64,
}

/// A stretch of a run's log as a shared ledger holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShippedLog {
    /// The bytes from the offset asked for (none past what is shipped).
    pub data: Vec<u8>,
    /// How many bytes of the log the ledger holds.
    pub shipped: u64,
    /// The run ended and its log is shipped whole (up to the cap).
    pub complete: bool,
    /// The run ended before its host shipped logs to the ledger: nothing of it ever
    /// will be.
    pub kept_on_host: bool,
}

/// The scheduler's leadership as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderRow {
    pub epoch: i64,
    pub machine_id: Option<String>,
    pub server_id: Option<String>,
    pub expires_at: Timestamp,
    /// Whether the leadership is unexpired, by the database's clock.
    pub live: bool,
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
    /// transaction (refused as already resolved if it was settled already), and a
    /// note for its resolution.
    pub resolves: Option<(i64, Option<String>)>,
    /// Record the run as skipped with this reason (fires a catch-up policy passes over).
    pub skip_reason: Option<String>,
    /// Fires not run, each recorded as its own `skipped` row in the same transaction as
    /// this run (a fire coalesced into this catch-up run names it in its reason).
    pub skipped_fires: Vec<SkippedFire>,
    /// The fires this row (with `skip_reason`) and `skipped_fires` stand for were missed
    /// (outside the catch-up window, or `catch_up = skip`): a `missed` event.
    pub missed: bool,
    /// The run's own environment and arguments.
    pub params: Option<RunParams>,
    /// The retry budget its plan carries.
    pub retry: RetryBudget,
    /// The queue it waits on (its job's).
    pub queue: Option<String>,
    /// Written waiting: a server hands it to a monitor once its queue has room (and its
    /// time has come), not at once.
    pub waiting: bool,
    /// A waiting run does not start before then (a retry's delay).
    pub not_before: Option<Timestamp>,
}

/// Where a new run's retry budget comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RetryBudget {
    /// A first attempt: the job's `retries`.
    #[default]
    FromJob,
    /// A resume: the budget of the run it resumes (a resume spends none).
    Kept(Option<RetryPlan>),
}

/// Why a fire was not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRun {
    /// Missed longer ago than the catch-up window (its text, e.g. `6h`).
    History(String),
    /// Coalesced into the pass's one catch-up run (policy `once`).
    Coalesced,
    /// Missed under policy `skip`.
    Skip,
    /// Missed beyond the cap of policy `all` (the cap).
    OverCap(usize),
    /// The job was paused until then (its RFC 3339 text).
    Paused(String),
}

impl NotRun {
    /// Whether the fire was missed (not run because stead was away, not because a person
    /// asked or another run stood in for it): what a `missed` notification reports.
    pub fn is_miss(&self) -> bool {
        matches!(self, NotRun::History(_) | NotRun::Skip)
    }
}

impl NotRun {
    fn words(&self, count: usize, catch_up_run: Option<i64>) -> String {
        let n = if count == 1 {
            String::new()
        } else {
            format!("{count} ")
        };
        match self {
            NotRun::History(window) => {
                format!("{n}missed more than {window} ago: history, not debt")
            }
            NotRun::Coalesced => match catch_up_run {
                Some(id) => format!("{n}coalesced into catch-up run {id} (catch_up = once)"),
                None => format!("{n}coalesced into one catch-up run (catch_up = once)"),
            },
            NotRun::Skip => format!(
                "{n}missed while stead was not running or the machine slept (catch_up = skip)"
            ),
            NotRun::OverCap(cap) => {
                format!("{n}over the catch-up cap of {cap} (catch_up = all)")
            }
            NotRun::Paused(until) => format!("{n}the job is paused until {until}"),
        }
    }
}

/// A fire not run, recorded as one `skipped` row (trigger `trigger`, scheduled at `at`).
/// Normally one row stands for one fire; past the cap on rows per gap, one row at the
/// latest of the oldest fires stands for all of them (`count` > 1, from `earliest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFire {
    pub at: Timestamp,
    pub trigger: Trigger,
    /// How many fires this row stands for.
    pub count: usize,
    /// The earliest of them (`at` when the row stands for one).
    pub earliest: Timestamp,
    /// Why, with how many fires for each reason, oldest reason first.
    pub why: Vec<(NotRun, usize)>,
    /// When the row stands for more than one fire: the cap of rows per gap.
    pub row_cap: usize,
    /// The sleep the fire fell into, in words (`missed while the machine slept
    /// 02:10-07:45 UTC`), when the server noticed one.
    pub slept: Option<String>,
}

impl SkippedFire {
    /// One fire not run, for one reason.
    pub fn one(at: Timestamp, trigger: Trigger, why: NotRun) -> Self {
        Self {
            at,
            trigger,
            count: 1,
            earliest: at,
            why: vec![(why, 1)],
            row_cap: 0,
            slept: None,
        }
    }

    /// The row's reason; `catch_up_run` is the id of the catch-up run a coalesced fire
    /// was folded into.
    pub fn reason(&self, catch_up_run: Option<i64>) -> String {
        let slept = self
            .slept
            .as_ref()
            .map(|words| format!("; {words}"))
            .unwrap_or_default();
        if self.count == 1 {
            let (why, _) = &self.why[0];
            return format!("fire not run: {}{slept}", why.words(1, catch_up_run));
        }
        let whys: Vec<String> = self
            .why
            .iter()
            .map(|(why, n)| {
                // Within a summary every count is spelled out.
                let words = why.words(*n, catch_up_run);
                if *n == 1 { format!("1 {words}") } else { words }
            })
            .collect();
        format!(
            "fires not run: {} fires from {} through {} in this one row (at most {} rows per gap): {}",
            self.count,
            crate::clock::rfc3339(self.earliest),
            crate::clock::rfc3339(self.at),
            self.row_cap,
            whys.join("; ")
        ) + &slept
    }
}

impl NewRun {
    /// The `skipped` row of a fire of this run's job not run (at `at`, for `reason`):
    /// the same job, host, boot, admission time and fence, nothing else of this run's.
    pub fn fire_not_run(&self, at: Timestamp, trigger: Trigger, reason: String) -> Self {
        Self {
            job_id: self.job_id,
            job: self.job.clone(),
            trigger,
            scheduled_at: Some(at),
            idempotency_key: None,
            parent_id: None,
            attempt: 1,
            machine_id: self.machine_id.clone(),
            boot_id: self.boot_id.clone(),
            concurrency: self.concurrency,
            created_at: self.created_at,
            fired_through: None,
            fence: self.fence,
            original_trigger: None,
            resolves: None,
            skip_reason: Some(reason),
            skipped_fires: Vec::new(),
            missed: false,
            params: None,
            retry: RetryBudget::FromJob,
            queue: None,
            waiting: false,
            not_before: None,
        }
    }

    /// The next attempt of `failed` (a run of job `job_id`) after a genuine failure at
    /// `at`: trigger `retry`, its key, parameters, host and queue, the next `attempt`,
    /// waiting until `not_before` with what is left of the budget.
    pub fn retry_of(
        failed: &Run,
        job_id: i64,
        budget: RetryPlan,
        at: Timestamp,
        not_before: Timestamp,
    ) -> Self {
        Self {
            job_id,
            job: failed.job.clone(),
            trigger: Trigger::Retry,
            scheduled_at: failed.scheduled_at.as_deref().and_then(|t| t.parse().ok()),
            idempotency_key: Some(failed.idempotency_key.clone()),
            parent_id: Some(failed.id),
            attempt: failed.attempt + 1,
            machine_id: failed.machine_id.clone(),
            boot_id: failed.boot_id.clone(),
            // The failed attempt has ended: there is nothing in flight to weigh it against.
            concurrency: Concurrency::Allow,
            created_at: at,
            fired_through: None,
            fence: Fence::Host,
            original_trigger: None,
            resolves: None,
            skip_reason: None,
            skipped_fires: Vec::new(),
            missed: false,
            params: failed.params.clone(),
            retry: RetryBudget::Kept(Some(budget)),
            queue: failed.queue.clone(),
            waiting: true,
            not_before: Some(not_before),
        }
    }

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
            skipped_fires: Vec::new(),
            missed: false,
            params: None,
            retry: RetryBudget::FromJob,
            queue: job.spec.queue.clone(),
            waiting: false,
            not_before: None,
        }
    }
}

impl NewRun {
    /// The row written waiting when the run shares a limit on runs at once: its job's
    /// queue, or, with `default_limit`, the host's `[queues] default_parallel`. The
    /// starter hands such runs to monitors once the limit allows, in order.
    pub fn limited(mut self, default_limit: bool) -> Self {
        self.waiting |= self.queue.is_some() || default_limit;
        self
    }
}

/// How a host admits an on-demand run of a job read in the admitting transaction: what
/// the row takes of the request and of the host, as plain values.
#[derive(Debug, Clone, Copy)]
pub struct OnDemand<'a> {
    /// The run's own environment and arguments.
    pub params: &'a RunParams,
    /// The machine it runs on; empty on a shared ledger, where the first eligible host to
    /// claim it runs it.
    pub machine_id: &'a str,
    pub boot_id: &'a str,
    pub now: Timestamp,
    /// The host limits the runs of jobs that name no queue (`[queues] default_parallel`).
    pub default_limit: bool,
}

impl OnDemand<'_> {
    /// The row of an on-demand run of `job`.
    pub fn run_of(&self, job: &StoredJob) -> NewRun {
        NewRun {
            params: (!self.params.is_empty()).then(|| self.params.clone()),
            ..NewRun::of(
                job,
                Trigger::OnDemand,
                self.machine_id,
                self.boot_id,
                self.now,
            )
        }
        .limited(self.default_limit)
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
    /// The `skipped` rows recorded with it for its fires not run.
    pub skipped: Vec<i64>,
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
    /// It waits for its time or a place in its queue: no monitor was handed it.
    pub waiting: bool,
    /// The queue it counts against.
    pub queue: Option<String>,
    /// The instant of a fire admitted ahead of it (its row written before its
    /// scheduled time): until then its monitor may be alive and waiting without having
    /// marked it.
    pub staged_for: Option<Timestamp>,
}

/// A queued run that waits, as the server that hands it to a monitor reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingRun {
    pub id: i64,
    pub job: String,
    pub queue: Option<String>,
    pub not_before: Option<Timestamp>,
    /// Its stored plan; `None` for a run whose plan is made when it starts (`after`).
    pub plan: Option<MonitorPlan>,
}

/// How loaded one queue is on a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueLoad {
    /// `None`: runs of jobs that name no queue.
    pub queue: Option<String>,
    /// Runs in flight handed to their monitors.
    pub running: u64,
    /// Runs waiting for a place (or their time).
    pub waiting: u64,
}

/// A queue as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredQueue {
    pub name: String,
    pub parallel: u32,
}

/// An event to write to the outbox, in the transaction of the outcome that causes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEvent {
    /// Unique and stable: the receiver de-duplicates on it.
    pub event_id: String,
    pub notifier: String,
    pub event: stead_protocol::NotifyEvent,
    pub run_id: Option<i64>,
    /// The body to POST (a [`stead_protocol::Notification`] as JSON).
    pub payload: String,
    pub created_at: Timestamp,
}

/// An undelivered event whose next attempt is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub id: i64,
    pub event_id: String,
    pub notifier: String,
    pub payload: String,
    pub attempts: u32,
}

/// How one notifier's deliveries stand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotifierStats {
    pub pending: u64,
    pub delivered: u64,
    pub last_delivered_at: Option<Timestamp>,
    pub last_error: Option<String>,
}
