//! The steps of every ledger transaction in PostgreSQL's SQL (see `backend.rs`): the same
//! on a connection (reads) and in a READ COMMITTED transaction (writes).

use std::path::Path;

use jiff::Timestamp;
use stead_core::admission::Verdict;
use stead_core::identity::StartIdentity;
use stead_core::records::{
    ActiveRun, NewRun, NotifierStats, OutboxEvent, OutboxRow, QueueLoad, RunCount, StoredHold,
    StoredJob, StoredQueue, StoredService, WaitingRun,
};
use stead_core::runs::{MonitorPlan, RunEnd};
use stead_protocol::{JobSpec, NotifierSpec, QueueSpec, Run, RunFilter, RunStatus, ServiceSpec};

use super::{Sql, cluster, jobs, notify, retention, runs, services};
use crate::StoreError;
use crate::backend::{Announce, InFlightOf, Steps};
use crate::retention::{KeepRule, LogState, Prunable};

/// A connection or a transaction the steps run on.
pub struct PgTx<'t>(pub &'t mut dyn Sql);

impl Steps for PgTx<'_> {
    fn job_get(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        jobs::get(&mut *self.0, name)
    }

    fn job_list(&mut self) -> Result<Vec<StoredJob>, StoreError> {
        jobs::list(&mut *self.0)
    }

    fn jobs_after(&mut self, name: &str) -> Result<Vec<StoredJob>, StoreError> {
        jobs::after(&mut *self.0, name)
    }

    fn job_insert(
        &mut self,
        spec: &JobSpec,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        jobs::insert(&mut *self.0, spec, now)
    }

    fn job_update(
        &mut self,
        spec: &JobSpec,
        schedule_changed: bool,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        jobs::update(&mut *self.0, spec, schedule_changed, now)
    }

    fn job_remove(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        jobs::remove(&mut *self.0, name)
    }

    fn job_mark_fired(&mut self, job_id: i64, through: Timestamp) -> Result<(), StoreError> {
        jobs::mark_fired(&mut *self.0, job_id, through)
    }

    fn service_list(&mut self) -> Result<Vec<StoredService>, StoreError> {
        services::list(&mut *self.0)
    }

    fn service_insert(
        &mut self,
        spec: &ServiceSpec,
        now: Timestamp,
    ) -> Result<Option<StoredService>, StoreError> {
        services::insert(&mut *self.0, spec, now)
    }

    fn service_update(&mut self, spec: &ServiceSpec) -> Result<bool, StoreError> {
        services::update(&mut *self.0, spec)
    }

    fn service_remove(&mut self, name: &str) -> Result<Option<StoredService>, StoreError> {
        services::remove(&mut *self.0, name)
    }

    fn service_set_restarting(
        &mut self,
        name: &str,
        since: Option<Timestamp>,
    ) -> Result<bool, StoreError> {
        services::set_restarting(&mut *self.0, name, since)
    }

    fn services_restarting_for(
        &mut self,
        job_id: i64,
        lock: bool,
    ) -> Result<Vec<String>, StoreError> {
        services::restarting_dependencies(&mut *self.0, job_id, lock)
    }

    fn hold_list(&mut self) -> Result<Vec<StoredHold>, StoreError> {
        services::holds(&mut *self.0)
    }

    fn hold_upsert(&mut self, hold: &StoredHold) -> Result<StoredHold, StoreError> {
        services::hold_upsert(&mut *self.0, hold)
    }

    fn hold_remove(&mut self, name: &str) -> Result<Option<StoredHold>, StoreError> {
        services::hold_remove(&mut *self.0, name)
    }

    fn run_get(&mut self, id: i64) -> Result<Option<Run>, StoreError> {
        runs::get(&mut *self.0, id)
    }

    fn run_list(&mut self, filter: &RunFilter) -> Result<Vec<Run>, StoreError> {
        runs::list(&mut *self.0, filter)
    }

    fn run_counts(&mut self) -> Result<Vec<RunCount>, StoreError> {
        runs::counts(&mut *self.0)
    }

    fn runs_in_flight(&mut self, of: InFlightOf<'_>) -> Result<Vec<ActiveRun>, StoreError> {
        runs::in_flight(&mut *self.0, of)
    }

    fn runs_owed(&mut self, machine_id: &str) -> Result<Vec<Run>, StoreError> {
        runs::owed(&mut *self.0, machine_id)
    }

    fn run_job(&mut self, run_id: i64) -> Result<i64, StoreError> {
        runs::job_of(&mut *self.0, run_id)
    }

    fn lock_job(&mut self, job_id: i64) -> Result<(), StoreError> {
        runs::lock_job(&mut *self.0, job_id)
    }

    fn run_insert(
        &mut self,
        new: &NewRun,
        verdict: &Verdict,
        epoch: i64,
    ) -> Result<i64, StoreError> {
        runs::insert(&mut *self.0, new, verdict, epoch)
    }

    fn run_complete(
        &mut self,
        id: i64,
        key: &str,
        log_path: &Path,
        plan: &str,
    ) -> Result<Run, StoreError> {
        runs::complete(&mut *self.0, id, key, log_path, plan)
    }

    fn run_end(&mut self, id: i64, end: &RunEnd, from: &[RunStatus]) -> Result<bool, StoreError> {
        runs::end_run(&mut *self.0, id, end, from)
    }

    fn run_mark_running(
        &mut self,
        id: i64,
        pid: u32,
        identity: &StartIdentity,
        started_at: Timestamp,
    ) -> Result<bool, StoreError> {
        runs::mark_running(&mut *self.0, id, pid, identity, started_at)
    }

    fn run_request_cancel(&mut self, id: i64, now: Timestamp) -> Result<(), StoreError> {
        runs::request_cancel(&mut *self.0, id, now)
    }

    fn run_resolve(
        &mut self,
        id: i64,
        resolution: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        runs::resolve(&mut *self.0, id, resolution, now)
    }

    fn run_land(&mut self, id: i64, now: Timestamp) -> Result<bool, StoreError> {
        runs::land(&mut *self.0, id, now)
    }

    /// `NOTIFY`, delivered to every listening server once the transaction commits.
    fn announce(&mut self, what: Announce) -> Result<(), StoreError> {
        cluster::notify(&mut *self.0, what)
    }

    fn run_job_ids(&mut self) -> Result<Vec<i64>, StoreError> {
        retention::job_ids(&mut *self.0)
    }

    fn run_nth_newest(&mut self, job_id: i64, n: u32) -> Result<Option<i64>, StoreError> {
        retention::nth_newest(&mut *self.0, job_id, n)
    }

    fn runs_prunable(
        &mut self,
        rule: &KeepRule,
        below: i64,
        after: i64,
        limit: usize,
    ) -> Result<(Vec<Prunable>, Option<i64>), StoreError> {
        retention::prunable(&mut *self.0, rule, below, after, limit)
    }

    fn runs_delete(&mut self, ids: &[i64]) -> Result<u64, StoreError> {
        retention::delete(&mut *self.0, ids)
    }

    fn runs_log_state(&mut self, ids: &[i64]) -> Result<Vec<LogState>, StoreError> {
        retention::log_states(&mut *self.0, ids)
    }

    fn runs_mark_log_pruned(
        &mut self,
        ids: &[i64],
        now: Timestamp,
    ) -> Result<Vec<i64>, StoreError> {
        retention::mark_log_pruned(&mut *self.0, ids, now)
    }
    fn job_set_paused(
        &mut self,
        name: &str,
        until: Option<Timestamp>,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        jobs::set_paused(&mut *self.0, name, until, now)
    }

    fn runs_waiting(&mut self, machine_id: &str) -> Result<Vec<WaitingRun>, StoreError> {
        runs::waiting(&mut *self.0, machine_id)
    }

    fn run_release(
        &mut self,
        id: i64,
        boot_id: &str,
        plan: Option<&str>,
        anywhere: bool,
    ) -> Result<bool, StoreError> {
        runs::release(&mut *self.0, id, boot_id, plan, anywhere)
    }

    fn run_plan(&mut self, id: i64) -> Result<Option<(Option<MonitorPlan>, i64)>, StoreError> {
        runs::plan(&mut *self.0, id)
    }

    fn run_last_outcome_before(
        &mut self,
        job_id: i64,
        id: i64,
    ) -> Result<Option<RunStatus>, StoreError> {
        runs::last_outcome_before(&mut *self.0, job_id, id)
    }

    fn queue_loads(&mut self, machine_id: &str) -> Result<Vec<QueueLoad>, StoreError> {
        runs::queue_loads(&mut *self.0, machine_id)
    }

    fn queue_list(&mut self) -> Result<Vec<StoredQueue>, StoreError> {
        notify::queue_list(&mut *self.0)
    }

    fn queue_upsert(&mut self, spec: &QueueSpec, now: Timestamp) -> Result<(), StoreError> {
        notify::queue_upsert(&mut *self.0, spec, now)
    }

    fn queue_remove(&mut self, name: &str) -> Result<Option<StoredQueue>, StoreError> {
        notify::queue_remove(&mut *self.0, name)
    }

    fn notifier_list(&mut self) -> Result<Vec<NotifierSpec>, StoreError> {
        notify::notifier_list(&mut *self.0)
    }

    fn notifier_upsert(&mut self, spec: &NotifierSpec, now: Timestamp) -> Result<(), StoreError> {
        notify::notifier_upsert(&mut *self.0, spec, now)
    }

    fn notifier_remove(&mut self, name: &str) -> Result<Option<NotifierSpec>, StoreError> {
        notify::notifier_remove(&mut *self.0, name)
    }

    fn notifier_stats(&mut self, name: &str) -> Result<NotifierStats, StoreError> {
        notify::notifier_stats(&mut *self.0, name)
    }

    fn outbox_insert(&mut self, event: &OutboxEvent) -> Result<(), StoreError> {
        notify::outbox_insert(&mut *self.0, event)
    }

    fn outbox_due(&mut self, now: Timestamp) -> Result<Vec<OutboxRow>, StoreError> {
        notify::outbox_due(&mut *self.0, now)
    }

    fn outbox_next(&mut self) -> Result<Option<Timestamp>, StoreError> {
        notify::outbox_next(&mut *self.0)
    }

    fn outbox_attempted(
        &mut self,
        id: i64,
        outcome: &Result<Timestamp, (String, Timestamp)>,
    ) -> Result<(), StoreError> {
        notify::outbox_attempted(&mut *self.0, id, outcome)
    }

    fn outbox_prune(&mut self, before: Timestamp) -> Result<u64, StoreError> {
        notify::outbox_prune(&mut *self.0, before)
    }
}
