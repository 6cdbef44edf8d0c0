//! The small abstraction each ledger backend implements, so that every transaction is
//! written once.
//!
//! A backend says how it opens a read and a write transaction (`Backend`) and how each
//! elementary step is done in its SQL ([`Steps`]). The transactions themselves (admitting
//! a run, applying a job file, a monitor's final write...) are composed from the steps in
//! `catalog.rs`, `run_ledger.rs`, `run_writes.rs`, `recorder.rs` and `outcomes.rs`,
//! identically for SQLite and PostgreSQL.
//! What differs between the backends beyond their SQL is said here once: how a write is
//! fenced ([`Guard`]), and whom a change is announced to ([`Announce`]).

use std::path::Path;

use jiff::Timestamp;
use stead_core::admission::Verdict;
use stead_core::records::{
    ActiveRun, NewRun, NotifierStats, OutboxEvent, OutboxRow, QueueLoad, RunCount, StoredHold,
    StoredJob, StoredQueue, StoredService, WaitingRun,
};
use stead_core::runs::{MonitorPlan, RunEnd};
use stead_protocol::{
    Checkpoint, JobSpec, NotifierSpec, QueueSpec, Run, RunFilter, RunStatus, ServiceSpec, Sleep,
    Step,
};
use stead_sys::identity::StartIdentity;

use crate::StoreError;
use crate::retention::{KeepRule, LogState, Prunable};
use crate::sleeps::NewSleep;

/// What a write transaction is fenced by, checked inside it before anything is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Nothing: a monitor's writes about its own run (the status guards keep them
    /// exactly-once whichever server is current), and the lease's own statements.
    Unfenced,
    /// Nothing, and the commit is not waited onto the disk: a monitor's running mark,
    /// on the way from the run's durable row to its command. A power cut may lose it,
    /// and nothing the rules need goes with it: after the boot the run reads as queued
    /// with no monitor, and is cut as it would have been marked (the boot cut it). Any
    /// later durable commit carries it to the disk with its own.
    Mark,
    /// This host's lease must still carry the epoch.
    Host(i64),
    /// The scheduler's leadership must still carry the epoch (on a ledger of one host,
    /// its server's lease epoch is its leader epoch).
    Leader(i64),
    /// A change to jobs or services: fenced as [`Guard::Host`], and serialized with every
    /// other such change, so a check across rows (a service no job names any more) holds
    /// until the commit.
    Catalog(i64),
}

/// A change other servers sharing the ledger must hear of (on a ledger of one host there
/// is nobody to tell, and announcing is nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announce {
    /// Run N's row changed.
    Run(i64),
    /// A cancel of run N was asked for: the host running it signals its monitor.
    Cancel(i64),
    /// A run was queued for any host to claim.
    Queued,
    /// Jobs, services or holds changed.
    Changed,
}

/// Which runs in flight a listing is for.
#[derive(Debug, Clone, Copy)]
pub enum InFlightOf<'a> {
    Machine(&'a str),
    Job(i64),
}

/// Jobs: their rows (`jobs.rs` of each backend).
pub trait JobSteps {
    fn job_get(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError>;
    /// All jobs, by name.
    fn job_list(&mut self) -> Result<Vec<StoredJob>, StoreError>;
    /// The enabled jobs that run after `name` (its `after` lists it), by name: what a
    /// success of `name` starts. Read in every run's end, so it reads only those rows.
    fn jobs_after(&mut self, name: &str) -> Result<Vec<StoredJob>, StoreError>;
    /// `None` when the name is taken.
    fn job_insert(
        &mut self,
        spec: &JobSpec,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError>;
    /// `None` when there is no such job. A changed schedule counts its fires from `now`.
    fn job_update(
        &mut self,
        spec: &JobSpec,
        schedule_changed: bool,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError>;
    /// `None` when there is no such job.
    fn job_remove(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError>;
    /// Moves the job's `fired_through` forward to `through` (never back).
    fn job_mark_fired(&mut self, job_id: i64, through: Timestamp) -> Result<(), StoreError>;
    /// Pauses a job until `until`, or unpauses it; `None` when there is no such job.
    fn job_set_paused(
        &mut self,
        name: &str,
        until: Option<Timestamp>,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError>;
    /// When the job's latest successful run (by id) ended.
    fn job_last_success(&mut self, job_id: i64) -> Result<Option<Timestamp>, StoreError>;
    /// Sets when the job's overdue lapse began (`None`: it has none), in one statement;
    /// answers whether that changed it.
    fn job_set_overdue(
        &mut self,
        job_id: i64,
        since: Option<Timestamp>,
    ) -> Result<bool, StoreError>;
}

/// Sleeps the machine woke from, and the runs they fell into (`sleeps.rs`).
pub trait SleepSteps {
    fn sleep_insert(&mut self, sleep: &NewSleep) -> Result<i64, StoreError>;
    /// The newest sleeps first, at most `limit`.
    fn sleep_list(&mut self, limit: u32) -> Result<Vec<Sleep>, StoreError>;
    /// Adds the sleep to every run of its host it fell into: started by its start, and
    /// not ended by then. Answers how many.
    fn runs_add_slept(&mut self, sleep: &NewSleep) -> Result<u64, StoreError>;
    /// Moves the expiry of every hold live when the sleep began on by its length: a
    /// hold's owner slept as long as the machine did. Answers how many.
    fn holds_add_slept(&mut self, sleep: &NewSleep) -> Result<u64, StoreError>;
}

/// Services and holds (`services.rs`).
pub trait ServiceSteps {
    /// All services, by name.
    fn service_list(&mut self) -> Result<Vec<StoredService>, StoreError>;
    /// `None` when the name is taken.
    fn service_insert(
        &mut self,
        spec: &ServiceSpec,
        now: Timestamp,
    ) -> Result<Option<StoredService>, StoreError>;
    /// False when there is no such service.
    fn service_update(&mut self, spec: &ServiceSpec) -> Result<bool, StoreError>;
    /// `None` when there is no such service.
    fn service_remove(&mut self, name: &str) -> Result<Option<StoredService>, StoreError>;
    /// False when there is no such service.
    fn service_set_restarting(
        &mut self,
        name: &str,
        since: Option<Timestamp>,
    ) -> Result<bool, StoreError>;
    /// The services `job_id` depends on that are being restarted now, in its
    /// `depends_on` order. With `lock`, they cannot start or end a restart until the
    /// transaction ends.
    fn services_restarting_for(
        &mut self,
        job_id: i64,
        lock: bool,
    ) -> Result<Vec<String>, StoreError>;
    /// All holds, by name.
    fn hold_list(&mut self) -> Result<Vec<StoredHold>, StoreError>;
    /// Inserts, or renews (a new expiry, the first acquisition kept).
    fn hold_upsert(&mut self, hold: &StoredHold) -> Result<StoredHold, StoreError>;
    /// `None` when there is no such hold.
    fn hold_remove(&mut self, name: &str) -> Result<Option<StoredHold>, StoreError>;
}

/// Runs: their rows, transitions and listings (`runs.rs`).
pub trait RunSteps {
    fn run_get(&mut self, id: i64) -> Result<Option<Run>, StoreError>;
    /// Runs matching `filter`, newest first.
    fn run_list(&mut self, filter: &RunFilter) -> Result<Vec<Run>, StoreError>;
    fn run_counts(&mut self) -> Result<Vec<RunCount>, StoreError>;
    /// Runs queued or running, oldest first.
    fn runs_in_flight(&mut self, of: InFlightOf<'_>) -> Result<Vec<ActiveRun>, StoreError>;
    /// Interrupted runs of `machine_id` whose debt is not settled, oldest first.
    fn runs_owed(&mut self, machine_id: &str) -> Result<Vec<Run>, StoreError>;
    /// The job a run belongs to.
    fn run_job(&mut self, run_id: i64) -> Result<i64, StoreError>;
    /// Writes a new run's row (its key, log path and plan follow once its id is known).
    fn run_insert(
        &mut self,
        new: &NewRun,
        verdict: &Verdict,
        epoch: i64,
    ) -> Result<i64, StoreError>;
    /// Completes a new row: its idempotency key, log path and stored plan (JSON).
    fn run_complete(
        &mut self,
        id: i64,
        key: &str,
        log_path: &Path,
        plan: &str,
    ) -> Result<Run, StoreError>;
    /// Ends a run whose status is one of `from`; false when it was not (someone else
    /// ended it first).
    fn run_end(&mut self, id: i64, end: &RunEnd, from: &[RunStatus]) -> Result<bool, StoreError>;
    /// `queued → running`; false when it was no longer queued.
    fn run_mark_running(
        &mut self,
        id: i64,
        pid: u32,
        identity: &StartIdentity,
        started_at: Timestamp,
    ) -> Result<bool, StoreError>;
    /// Notes that a cancel was asked for (the first time counts).
    fn run_request_cancel(&mut self, id: i64, now: Timestamp) -> Result<(), StoreError>;
    /// Settles an interrupted run's debt; false when it was settled already.
    fn run_resolve(
        &mut self,
        id: i64,
        resolution: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError>;
    /// Closes an interrupted, unsettled run as succeeded (a receipt proved it landed).
    fn run_land(&mut self, id: i64, now: Timestamp) -> Result<bool, StoreError>;
    /// Queued runs of `machine_id` that wait for their time or a place, oldest first.
    fn runs_waiting(&mut self, machine_id: &str) -> Result<Vec<WaitingRun>, StoreError>;
    /// Hands a waiting run to a monitor (with its plan, when made only now), or with
    /// `anywhere` to whichever host of a shared ledger claims it; false when it no longer
    /// waits.
    fn run_release(
        &mut self,
        id: i64,
        boot_id: &str,
        plan: Option<&str>,
        anywhere: bool,
    ) -> Result<bool, StoreError>;
    /// A run's stored plan and the epoch it was written under.
    fn run_plan(&mut self, id: i64) -> Result<Option<(Option<MonitorPlan>, i64)>, StoreError>;
    /// The job's latest own outcome before run `id`, failures a retry followed left out.
    fn run_last_outcome_before(
        &mut self,
        job_id: i64,
        id: i64,
    ) -> Result<Option<RunStatus>, StoreError>;
    /// Per queue, this host's runs in flight: handed to monitors, and waiting.
    fn queue_loads(&mut self, machine_id: &str) -> Result<Vec<QueueLoad>, StoreError>;
}

/// What retention reads and deletes (`retention.rs`).
pub trait RetentionSteps {
    /// Retention: the ids of every job that runs name, removed jobs' included.
    fn run_job_ids(&mut self) -> Result<Vec<i64>, StoreError>;
    /// Retention: the id of the job's `n`-th newest run (1: the newest).
    fn run_nth_newest(&mut self, job_id: i64, n: u32) -> Result<Option<i64>, StoreError>;
    /// Retention: up to `limit` runs of `rule`'s job after id `after` that may go (id
    /// below `below`, or created before the rule's cut-off, and not one of the runs never
    /// pruned), oldest first; and the id to go on after, when `limit` were found.
    fn runs_prunable(
        &mut self,
        rule: &KeepRule,
        below: i64,
        after: i64,
        limit: usize,
    ) -> Result<(Vec<Prunable>, Option<i64>), StoreError>;
    /// Retention: deletes the runs' rows (and the logs a shared ledger holds for them).
    fn runs_delete(&mut self, ids: &[i64]) -> Result<u64, StoreError>;
    /// Retention: what the ledger holds about the runs whose log files a host has.
    fn runs_log_state(&mut self, ids: &[i64]) -> Result<Vec<LogState>, StoreError>;
    /// Retention: records that the runs' logs were deleted (ended and not owed only), and
    /// drops the copies a shared ledger holds; answers the ids marked.
    fn runs_mark_log_pruned(&mut self, ids: &[i64], now: Timestamp)
    -> Result<Vec<i64>, StoreError>;
}

/// Queues, the limits on runs at once (`notify.rs`, beside the notifiers).
pub trait QueueSteps {
    fn queue_list(&mut self) -> Result<Vec<StoredQueue>, StoreError>;
    fn queue_upsert(&mut self, spec: &QueueSpec, now: Timestamp) -> Result<(), StoreError>;
    fn queue_remove(&mut self, name: &str) -> Result<Option<StoredQueue>, StoreError>;
}

/// Notifiers and the outbox of events (`notify.rs`).
pub trait NoticeSteps {
    fn notifier_list(&mut self) -> Result<Vec<NotifierSpec>, StoreError>;
    fn notifier_upsert(&mut self, spec: &NotifierSpec, now: Timestamp) -> Result<(), StoreError>;
    /// Removes a notifier and its undelivered events.
    fn notifier_remove(&mut self, name: &str) -> Result<Option<NotifierSpec>, StoreError>;
    fn notifier_stats(&mut self, name: &str) -> Result<NotifierStats, StoreError>;
    fn outbox_insert(&mut self, event: &OutboxEvent) -> Result<(), StoreError>;
    /// Each notifier's oldest undelivered event, when its next attempt is due by `now`.
    fn outbox_due(&mut self, now: Timestamp) -> Result<Vec<OutboxRow>, StoreError>;
    /// The earliest next attempt of any undelivered event.
    fn outbox_next(&mut self) -> Result<Option<Timestamp>, StoreError>;
    /// Delivered at `Ok(at)`, or failed with `Err((why, next attempt))`.
    fn outbox_attempted(
        &mut self,
        id: i64,
        outcome: &Result<Timestamp, (String, Timestamp)>,
    ) -> Result<(), StoreError>;
    /// Deletes events delivered before `before`.
    fn outbox_prune(&mut self, before: Timestamp) -> Result<u64, StoreError>;
}

/// A run as a checkpoint write sees it: its idempotency key and attempt, and which run
/// holds the key now (its newest attempt not ended; `None` when every attempt ended).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHolder {
    pub key: String,
    pub attempt: i64,
    pub holder: Option<i64>,
}

/// Checkpoints and completed steps, kept by idempotency key (`checkpoints.rs`).
pub trait CheckpointSteps {
    /// Run `run_id`'s key and who holds it; `None` when there is no such run. With
    /// `lock`, the run's row cannot end until the transaction does, so the answer holds
    /// until the commit.
    fn key_holder(&mut self, run_id: i64, lock: bool) -> Result<Option<KeyHolder>, StoreError>;
    fn checkpoint_get(&mut self, key: &str, name: &str) -> Result<Option<Checkpoint>, StoreError>;
    /// The key's checkpoints, by name.
    fn checkpoint_list(&mut self, key: &str) -> Result<Vec<Checkpoint>, StoreError>;
    fn checkpoint_count(&mut self, key: &str) -> Result<u64, StoreError>;
    /// Inserts or replaces `name`'s value, as set by `run_id` at `now`.
    fn checkpoint_put(
        &mut self,
        key: &str,
        name: &str,
        value: &str,
        run_id: i64,
        now: Timestamp,
    ) -> Result<Checkpoint, StoreError>;
    fn step_get(&mut self, key: &str, name: &str) -> Result<Option<Step>, StoreError>;
    /// The key's completed steps, in the order they completed.
    fn step_list(&mut self, key: &str) -> Result<Vec<Step>, StoreError>;
    fn step_count(&mut self, key: &str) -> Result<u64, StoreError>;
    /// Records `name` completed by `run_id` (attempt `attempt`) at `now`; a step
    /// completed already keeps its first completion.
    fn step_put(
        &mut self,
        key: &str,
        name: &str,
        run_id: i64,
        attempt: i64,
        now: Timestamp,
    ) -> Result<Step, StoreError>;
}

/// The elementary steps of the ledger's transactions, each one statement (or two) of the
/// backend's SQL, by concern; each backend implements each concern's trait in the file
/// that holds its SQL. Steps never commit; the backend's `write` commits what they did.
pub trait Steps:
    JobSteps
    + ServiceSteps
    + RunSteps
    + RetentionSteps
    + QueueSteps
    + NoticeSteps
    + SleepSteps
    + CheckpointSteps
{
    /// Makes admissions of one job take turns until the transaction ends, so each sees
    /// the runs the one before admitted.
    fn lock_job(&mut self, job_id: i64) -> Result<(), StoreError>;
    /// Tells the servers sharing the ledger, once the transaction commits.
    fn announce(&mut self, what: Announce) -> Result<(), StoreError>;
}

pub(crate) mod sealed {
    use super::{Guard, Steps};
    use crate::StoreError;

    /// One part of [`Backend::write_each`]: its guard, and what it writes.
    pub type Part<'a, B, T> = (
        Guard,
        &'a mut dyn FnMut(&mut <B as Backend>::Tx<'_>) -> Result<T, StoreError>,
    );

    /// Whether the commit of `parts` need not wait on the disk: all are marks.
    pub fn relaxed<B: Backend, T>(parts: &[Part<'_, B, T>]) -> bool {
        parts.iter().all(|(guard, _)| *guard == Guard::Mark)
    }

    /// How a backend runs the steps: a read outside any write transaction, or one write
    /// transaction fenced by a [`Guard`]. Sealed: the two backends of this crate are
    /// the only ones, and every store trait is implemented for them through it.
    pub trait Backend: Send + Sync + std::fmt::Debug + 'static {
        type Tx<'t>: Steps;

        /// Runs `f` for reading.
        fn read<T>(
            &self,
            f: &mut dyn FnMut(&mut Self::Tx<'_>) -> Result<T, StoreError>,
        ) -> Result<T, StoreError>;

        /// Runs `f` in one write transaction after checking `guard`, and commits.
        /// `f` may be called again when the connection was lost before anything
        /// committed, so it must not keep effects outside the transaction.
        fn write<T>(
            &self,
            guard: Guard,
            f: &mut dyn FnMut(&mut Self::Tx<'_>) -> Result<T, StoreError>,
        ) -> Result<T, StoreError>;

        /// Runs each of `parts` in a savepoint of one write transaction, after checking
        /// its own guard, and commits them together: one wait for the disk for the lot,
        /// and a part that fails (refused, fenced) is undone alone, its error in its
        /// place of the answer. The commit is not waited onto the disk when every part
        /// is a [`Guard::Mark`]. `Err` when the transaction itself failed (begun,
        /// committed, or a savepoint could not be undone): then none of it was written.
        /// Parts may be called again when the connection was lost before anything
        /// committed, as [`Backend::write`]'s `f` may.
        fn write_each<T>(
            &self,
            parts: &mut [Part<'_, Self, T>],
        ) -> Result<Vec<Result<T, StoreError>>, StoreError>
        where
            Self: Sized;

        /// Gives the space of deleted rows back to the file system, at most `pages`
        /// pages at a time (see `docs/ledger.md`, "Keeping the ledger compact").
        fn reclaim_space(&self, _pages: u32) -> Result<(), StoreError> {
            Ok(())
        }
    }
}
