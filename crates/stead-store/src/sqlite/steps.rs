//! The steps of every ledger transaction in SQLite's SQL (see `backend.rs`): the same
//! for reads and writes, on a connection or inside its `BEGIN IMMEDIATE` transaction.

use std::path::Path;

use jiff::Timestamp;
use rusqlite::Connection;
use stead_core::admission::Verdict;
use stead_core::identity::StartIdentity;
use stead_core::records::{
    ActiveRun, NewRun, NotifierStats, OutboxEvent, OutboxRow, QueueLoad, RunCount, StoredHold,
    StoredJob, StoredQueue, StoredService, WaitingRun,
};
use stead_core::runs::{MonitorPlan, RunEnd};
use stead_protocol::{JobSpec, NotifierSpec, QueueSpec, Run, RunFilter, RunStatus, ServiceSpec};

use super::{jobs, notify, retention, runs, services};
use crate::StoreError;
use crate::backend::{Announce, InFlightOf, Steps};
use crate::retention::{KeepRule, LogState, Prunable};

/// A connection the steps run on (a write transaction derefs to it).
pub struct SqliteTx<'t>(pub &'t Connection);

impl Steps for SqliteTx<'_> {
    fn job_get(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        jobs::get(self.0, name)
    }

    fn job_list(&mut self) -> Result<Vec<StoredJob>, StoreError> {
        jobs::list(self.0)
    }

    fn jobs_after(&mut self, name: &str) -> Result<Vec<StoredJob>, StoreError> {
        jobs::after(self.0, name)
    }

    fn job_insert(
        &mut self,
        spec: &JobSpec,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        jobs::insert(self.0, spec, now)
    }

    fn job_update(
        &mut self,
        spec: &JobSpec,
        schedule_changed: bool,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        jobs::update(self.0, spec, schedule_changed, now)
    }

    fn job_remove(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        jobs::remove(self.0, name)
    }

    fn job_mark_fired(&mut self, job_id: i64, through: Timestamp) -> Result<(), StoreError> {
        jobs::mark_fired(self.0, job_id, through)
    }

    fn service_list(&mut self) -> Result<Vec<StoredService>, StoreError> {
        services::list(self.0)
    }

    fn service_insert(
        &mut self,
        spec: &ServiceSpec,
        now: Timestamp,
    ) -> Result<Option<StoredService>, StoreError> {
        services::insert(self.0, spec, now)
    }

    fn service_update(&mut self, spec: &ServiceSpec) -> Result<bool, StoreError> {
        services::update(self.0, spec)
    }

    fn service_remove(&mut self, name: &str) -> Result<Option<StoredService>, StoreError> {
        services::remove(self.0, name)
    }

    fn service_set_restarting(
        &mut self,
        name: &str,
        since: Option<Timestamp>,
    ) -> Result<bool, StoreError> {
        services::set_restarting(self.0, name, since)
    }

    fn services_restarting_for(
        &mut self,
        job_id: i64,
        _lock: bool,
    ) -> Result<Vec<String>, StoreError> {
        services::restarting_dependencies(self.0, job_id)
    }

    fn hold_list(&mut self) -> Result<Vec<StoredHold>, StoreError> {
        services::holds(self.0)
    }

    fn hold_upsert(&mut self, hold: &StoredHold) -> Result<StoredHold, StoreError> {
        services::hold_upsert(self.0, hold)
    }

    fn hold_remove(&mut self, name: &str) -> Result<Option<StoredHold>, StoreError> {
        services::hold_remove(self.0, name)
    }

    fn run_get(&mut self, id: i64) -> Result<Option<Run>, StoreError> {
        runs::get(self.0, id)
    }

    fn run_list(&mut self, filter: &RunFilter) -> Result<Vec<Run>, StoreError> {
        runs::list(self.0, filter)
    }

    fn run_counts(&mut self) -> Result<Vec<RunCount>, StoreError> {
        runs::counts(self.0)
    }

    fn runs_in_flight(&mut self, of: InFlightOf<'_>) -> Result<Vec<ActiveRun>, StoreError> {
        runs::in_flight(self.0, of)
    }

    fn runs_owed(&mut self, machine_id: &str) -> Result<Vec<Run>, StoreError> {
        runs::owed(self.0, machine_id)
    }

    fn run_job(&mut self, run_id: i64) -> Result<i64, StoreError> {
        runs::job_of(self.0, run_id)
    }

    /// `BEGIN IMMEDIATE` already holds the whole database until the commit.
    fn lock_job(&mut self, _job_id: i64) -> Result<(), StoreError> {
        Ok(())
    }

    fn run_insert(
        &mut self,
        new: &NewRun,
        verdict: &Verdict,
        epoch: i64,
    ) -> Result<i64, StoreError> {
        runs::insert(self.0, new, verdict, epoch)
    }

    fn run_complete(
        &mut self,
        id: i64,
        key: &str,
        log_path: &Path,
        plan: &str,
    ) -> Result<Run, StoreError> {
        runs::complete(self.0, id, key, log_path, plan)
    }

    fn run_end(&mut self, id: i64, end: &RunEnd, from: &[RunStatus]) -> Result<bool, StoreError> {
        runs::end_run(self.0, id, end, from)
    }

    fn run_mark_running(
        &mut self,
        id: i64,
        pid: u32,
        identity: &StartIdentity,
        started_at: Timestamp,
    ) -> Result<bool, StoreError> {
        runs::mark_running(self.0, id, pid, identity, started_at)
    }

    fn run_request_cancel(&mut self, id: i64, now: Timestamp) -> Result<(), StoreError> {
        runs::request_cancel(self.0, id, now)
    }

    fn run_resolve(
        &mut self,
        id: i64,
        resolution: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        runs::resolve(self.0, id, resolution, now)
    }

    fn run_land(&mut self, id: i64, now: Timestamp) -> Result<bool, StoreError> {
        runs::land(self.0, id, now)
    }

    /// One host: nobody else to tell.
    fn announce(&mut self, _what: Announce) -> Result<(), StoreError> {
        Ok(())
    }

    fn run_job_ids(&mut self) -> Result<Vec<i64>, StoreError> {
        retention::job_ids(self.0)
    }

    fn run_nth_newest(&mut self, job_id: i64, n: u32) -> Result<Option<i64>, StoreError> {
        retention::nth_newest(self.0, job_id, n)
    }

    fn runs_prunable(
        &mut self,
        rule: &KeepRule,
        below: i64,
        after: i64,
        limit: usize,
    ) -> Result<(Vec<Prunable>, Option<i64>), StoreError> {
        retention::prunable(self.0, rule, below, after, limit)
    }

    fn runs_delete(&mut self, ids: &[i64]) -> Result<u64, StoreError> {
        retention::delete(self.0, ids)
    }

    fn runs_log_state(&mut self, ids: &[i64]) -> Result<Vec<LogState>, StoreError> {
        retention::log_states(self.0, ids)
    }

    fn runs_mark_log_pruned(
        &mut self,
        ids: &[i64],
        now: Timestamp,
    ) -> Result<Vec<i64>, StoreError> {
        retention::mark_log_pruned(self.0, ids, now)
    }

    fn job_set_paused(
        &mut self,
        name: &str,
        until: Option<Timestamp>,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        jobs::set_paused(self.0, name, until, now)
    }

    fn runs_waiting(&mut self, machine_id: &str) -> Result<Vec<WaitingRun>, StoreError> {
        runs::waiting(self.0, machine_id)
    }

    fn run_release(
        &mut self,
        id: i64,
        boot_id: &str,
        plan: Option<&str>,
        anywhere: bool,
    ) -> Result<bool, StoreError> {
        runs::release(self.0, id, boot_id, plan, anywhere)
    }

    fn run_plan(&mut self, id: i64) -> Result<Option<(Option<MonitorPlan>, i64)>, StoreError> {
        runs::plan(self.0, id)
    }

    fn run_last_outcome_before(
        &mut self,
        job_id: i64,
        id: i64,
    ) -> Result<Option<RunStatus>, StoreError> {
        runs::last_outcome_before(self.0, job_id, id)
    }

    fn queue_loads(&mut self, machine_id: &str) -> Result<Vec<QueueLoad>, StoreError> {
        runs::queue_loads(self.0, machine_id)
    }

    fn queue_list(&mut self) -> Result<Vec<StoredQueue>, StoreError> {
        notify::queue_list(self.0)
    }

    fn queue_upsert(&mut self, spec: &QueueSpec, now: Timestamp) -> Result<(), StoreError> {
        notify::queue_upsert(self.0, spec, now)
    }

    fn queue_remove(&mut self, name: &str) -> Result<Option<StoredQueue>, StoreError> {
        notify::queue_remove(self.0, name)
    }

    fn notifier_list(&mut self) -> Result<Vec<NotifierSpec>, StoreError> {
        notify::notifier_list(self.0)
    }

    fn notifier_upsert(&mut self, spec: &NotifierSpec, now: Timestamp) -> Result<(), StoreError> {
        notify::notifier_upsert(self.0, spec, now)
    }

    fn notifier_remove(&mut self, name: &str) -> Result<Option<NotifierSpec>, StoreError> {
        notify::notifier_remove(self.0, name)
    }

    fn notifier_stats(&mut self, name: &str) -> Result<NotifierStats, StoreError> {
        notify::notifier_stats(self.0, name)
    }

    fn outbox_insert(&mut self, event: &OutboxEvent) -> Result<(), StoreError> {
        notify::outbox_insert(self.0, event)
    }

    fn outbox_due(&mut self, now: Timestamp) -> Result<Vec<OutboxRow>, StoreError> {
        notify::outbox_due(self.0, now)
    }

    fn outbox_next(&mut self) -> Result<Option<Timestamp>, StoreError> {
        notify::outbox_next(self.0)
    }

    fn outbox_attempted(
        &mut self,
        id: i64,
        outcome: &Result<Timestamp, (String, Timestamp)>,
    ) -> Result<(), StoreError> {
        notify::outbox_attempted(self.0, id, outcome)
    }

    fn outbox_prune(&mut self, before: Timestamp) -> Result<u64, StoreError> {
        notify::outbox_prune(self.0, before)
    }
}
