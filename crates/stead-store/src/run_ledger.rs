//! The run ledger: one row per run, admitted under its job's concurrency policy, moved
//! through its states by compare-and-set, and settled once. Its transactions are written
//! once here over the backends' [`Steps`].

use jiff::Timestamp;
use stead_core::admission;
use stead_core::plan::Planner;
use stead_core::records::{ActiveRun, Admission, NewRun, QueueLoad, RunCount, WaitingRun};
use stead_core::runs::{MonitorPlan, RunEnd, default_key, resumed_as};
use stead_protocol::{JobSpec, Run, RunFilter, RunStatus};

use crate::Refusal;
use crate::StoreError;
use crate::backend::RunSteps;
use crate::backend::sealed::Backend;
use crate::backend::{Announce, Guard, InFlightOf, Steps};
use crate::outcomes;
use crate::rows::plan_json;

/// The statuses a run has not ended in.
pub const IN_FLIGHT: &[RunStatus] = &[RunStatus::Queued, RunStatus::Running];

/// Runs: every server write is fenced by its `epoch` (admissions by the fence the new
/// run names).
pub trait RunLedger {
    /// Writes a new run row of the job `spec`, applying the job's concurrency policy
    /// against its runs in flight, in one transaction. `planner` makes the monitor plan
    /// once the run's id and idempotency key are known.
    fn run_admit(
        &self,
        new: &NewRun,
        spec: &JobSpec,
        planner: &Planner,
        epoch: i64,
    ) -> Result<Admission, StoreError>;

    /// Writes several new runs (each with its job's spec), all fenced alike, in one
    /// transaction: a burst of fires costs one commit. Each is admitted as
    /// [`RunLedger::run_admit`] would, in order. All or nothing: when one is refused (a
    /// fire recorded already, a fence), none is written.
    fn run_admit_all(
        &self,
        runs: &[(NewRun, JobSpec)],
        planner: &Planner,
        epoch: i64,
    ) -> Result<Vec<Admission>, StoreError>;

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

    /// Queued runs of `machine_id` that wait for their time or a place, oldest first.
    fn runs_waiting(&self, machine_id: &str) -> Result<Vec<WaitingRun>, StoreError>;

    /// Per queue, `machine_id`'s runs in flight: handed to monitors, and waiting.
    fn queue_loads(&self, machine_id: &str) -> Result<Vec<QueueLoad>, StoreError>;

    /// Hands a waiting run to a monitor under `boot_id` (with `plan`, when it is made
    /// only now); false when it no longer waits (cancelled, or handed over already).
    fn run_release(
        &self,
        id: i64,
        boot_id: &str,
        plan: Option<&MonitorPlan>,
        epoch: i64,
    ) -> Result<bool, StoreError>;

    /// Hands a waiting run, with `plan`, to whichever host of a shared ledger claims it
    /// (its job may not run on this host); false when it no longer waits.
    fn run_release_to_any_host(
        &self,
        id: i64,
        plan: &MonitorPlan,
        epoch: i64,
    ) -> Result<bool, StoreError>;

    /// A run's stored plan (`None` when it has none yet).
    fn run_plan(&self, id: i64) -> Result<Option<MonitorPlan>, StoreError>;
}

/// Passes a transition's outcome through, announcing the run when its row changed.
pub(crate) fn announced(tx: &mut impl Steps, id: i64, changed: bool) -> Result<bool, StoreError> {
    if changed {
        tx.announce(Announce::Run(id))?;
    }
    Ok(changed)
}

/// Ends a run that has not ended, from the server's side, with what follows its end.
pub(crate) fn settle(tx: &mut impl Steps, id: i64, end: &RunEnd) -> Result<bool, StoreError> {
    let ended = tx.run_end(id, end, IN_FLIGHT)?;
    if ended {
        outcomes::after_end(tx, id)?;
    }
    announced(tx, id, ended)
}

pub(crate) fn admit(
    tx: &mut impl Steps,
    new: &NewRun,
    spec: &JobSpec,
    planner: &Planner,
    epoch: i64,
) -> Result<Admission, StoreError> {
    tx.lock_job(new.job_id)?;
    let running = tx.runs_in_flight(InFlightOf::Job(new.job_id))?;
    let verdict = admission::admission(new, &running)
        .map_err(|admission::Overlap(id)| StoreError::Refused(Refusal::Overlap(id)))?;
    let id = tx.run_insert(new, &verdict, epoch)?;
    if let Some((parent, note)) = &new.resolves {
        // The parent's debt is settled by this very row, in this transaction: a second
        // server (or boot) that tries the same finds it resolved and its insert undone.
        let resolution = resumed_as(id, note.as_deref());
        if !tx.run_resolve(*parent, &resolution, new.created_at)? {
            return Err(StoreError::Refused(Refusal::AlreadyResolved(*parent)));
        }
        tx.announce(Announce::Run(*parent))?;
    }
    let key = new
        .idempotency_key
        .clone()
        .unwrap_or_else(|| default_key(new, id));
    let log_path = planner.log_path(id);
    let mut monitor_plan =
        (verdict.status == RunStatus::Queued).then(|| planner.plan(spec, new, id, &log_path, &key));
    let run = tx.run_complete(id, &key, &log_path, &plan_json(monitor_plan.as_ref()))?;
    let skipped = record_skipped_fires(tx, new, id, planner, epoch)?;
    let latest_missed = if new.missed {
        Some(id)
    } else {
        skipped.last().copied()
    };
    if let Some(row) = latest_missed {
        outcomes::missed(tx, new, row, &new.skipped_fires)?;
    }
    if let Some(through) = new.fired_through {
        tx.job_mark_fired(new.job_id, through)?;
    }
    let replaced = if admission::replaces(new, &verdict) {
        for other in &running {
            tx.run_request_cancel(other.id, new.created_at)?;
            tx.announce(Announce::Cancel(other.id))?;
        }
        running
    } else {
        Vec::new()
    };
    tx.announce(Announce::Run(id))?;
    if new.machine_id.is_empty() && monitor_plan.is_some() {
        // Queued for any host of a shared ledger: the host that claims it starts it (or,
        // when it waits, keeps it waiting), with the plan kept on the row.
        monitor_plan = None;
        tx.announce(Announce::Queued)?;
    } else if new.waiting {
        // Its plan is on the row: a server hands it to a monitor once its queue has room.
        monitor_plan = None;
    }
    Ok(Admission {
        run,
        plan: monitor_plan,
        replaced,
        skipped,
    })
}

/// Records the fires `new` carries as not run, one `skipped` row each, in the admitting
/// transaction. A fire coalesced into a catch-up run names run `id` in its reason. The
/// rows come bounded ([`stead_core::jobs::timing::MAX_SKIPPED_ROWS`] per gap), and the
/// unique index on (job, scheduled time) refuses a second row for a fire already
/// recorded: the transaction is then undone whole.
fn record_skipped_fires(
    tx: &mut impl Steps,
    new: &NewRun,
    id: i64,
    planner: &Planner,
    epoch: i64,
) -> Result<Vec<i64>, StoreError> {
    let catch_up_run = (new.trigger == stead_protocol::Trigger::CatchUp
        && new.skip_reason.is_none())
    .then_some(id);
    let mut ids = Vec::with_capacity(new.skipped_fires.len());
    for fire in &new.skipped_fires {
        let reason = fire.reason(catch_up_run);
        let row = new.fire_not_run(fire.at, fire.trigger, reason.clone());
        let verdict = admission::Verdict {
            status: RunStatus::Skipped,
            reason: Some(reason),
        };
        let row_id = tx.run_insert(&row, &verdict, epoch)?;
        let key = default_key(&row, row_id);
        tx.run_complete(row_id, &key, &planner.log_path(row_id), &plan_json(None))?;
        tx.announce(Announce::Run(row_id))?;
        ids.push(row_id);
    }
    Ok(ids)
}

/// The fence a new run's admission is written under.
fn guard_of(new: &NewRun, epoch: i64) -> Guard {
    match new.fence {
        stead_core::records::Fence::Host => Guard::Host(epoch),
        stead_core::records::Fence::Leader => Guard::Leader(epoch),
    }
}

impl<B: Backend> RunLedger for B {
    fn runs_waiting(&self, machine_id: &str) -> Result<Vec<WaitingRun>, StoreError> {
        self.read(&mut |tx| tx.runs_waiting(machine_id))
    }

    fn queue_loads(&self, machine_id: &str) -> Result<Vec<QueueLoad>, StoreError> {
        self.read(&mut |tx| tx.queue_loads(machine_id))
    }

    fn run_release(
        &self,
        id: i64,
        boot_id: &str,
        plan: Option<&MonitorPlan>,
        epoch: i64,
    ) -> Result<bool, StoreError> {
        let plan = plan.map(|p| plan_json(Some(p)));
        self.write(Guard::Host(epoch), &mut |tx| {
            let released = tx.run_release(id, boot_id, plan.as_deref(), false)?;
            announced(tx, id, released)
        })
    }

    fn run_release_to_any_host(
        &self,
        id: i64,
        plan: &MonitorPlan,
        epoch: i64,
    ) -> Result<bool, StoreError> {
        let plan = plan_json(Some(plan));
        self.write(Guard::Host(epoch), &mut |tx| {
            let released = tx.run_release(id, "", Some(&plan), true)?;
            if released {
                tx.announce(Announce::Queued)?;
            }
            announced(tx, id, released)
        })
    }

    fn run_plan(&self, id: i64) -> Result<Option<MonitorPlan>, StoreError> {
        Ok(self
            .read(&mut |tx| tx.run_plan(id))?
            .and_then(|(plan, _)| plan))
    }

    fn run_admit(
        &self,
        new: &NewRun,
        spec: &JobSpec,
        planner: &Planner,
        epoch: i64,
    ) -> Result<Admission, StoreError> {
        self.write(guard_of(new, epoch), &mut |tx| {
            admit(tx, new, spec, planner, epoch)
        })
    }

    fn run_admit_all(
        &self,
        runs: &[(NewRun, JobSpec)],
        planner: &Planner,
        epoch: i64,
    ) -> Result<Vec<Admission>, StoreError> {
        let Some((first, _)) = runs.first() else {
            return Ok(Vec::new());
        };
        debug_assert!(runs.iter().all(|(n, _)| n.fence == first.fence));
        self.write(guard_of(first, epoch), &mut |tx| {
            runs.iter()
                .map(|(new, spec)| admit(tx, new, spec, planner, epoch))
                .collect()
        })
    }

    fn run_get(&self, id: i64) -> Result<Option<Run>, StoreError> {
        self.read(&mut |tx| tx.run_get(id))
    }

    fn run_list(&self, filter: &RunFilter) -> Result<Vec<Run>, StoreError> {
        self.read(&mut |tx| tx.run_list(filter))
    }

    fn run_counts(&self) -> Result<Vec<RunCount>, StoreError> {
        self.read(&mut |tx| tx.run_counts())
    }

    fn runs_active(&self, machine_id: &str) -> Result<Vec<ActiveRun>, StoreError> {
        self.read(&mut |tx| tx.runs_in_flight(InFlightOf::Machine(machine_id)))
    }

    fn run_settle(&self, id: i64, end: &RunEnd, epoch: i64) -> Result<bool, StoreError> {
        self.write(Guard::Host(epoch), &mut |tx| settle(tx, id, end))
    }

    fn run_settle_queued(&self, id: i64, end: &RunEnd, epoch: i64) -> Result<bool, StoreError> {
        self.write(Guard::Host(epoch), &mut |tx| {
            let ended = tx.run_end(id, end, &[RunStatus::Queued])?;
            announced(tx, id, ended)
        })
    }

    fn run_settle_all(&self, ends: &[(i64, RunEnd)], epoch: i64) -> Result<Vec<i64>, StoreError> {
        self.write(Guard::Host(epoch), &mut |tx| {
            let mut settled = Vec::new();
            for (id, end) in ends {
                if settle(tx, *id, end)? {
                    settled.push(*id);
                }
            }
            Ok(settled)
        })
    }

    fn run_request_cancel(&self, id: i64, now: Timestamp, epoch: i64) -> Result<(), StoreError> {
        self.write(Guard::Host(epoch), &mut |tx| {
            tx.run_request_cancel(id, now)?;
            // The run may be on another host: its server hears this and signals the
            // monitor.
            tx.announce(Announce::Cancel(id))
        })
    }

    fn runs_owed(&self, machine_id: &str) -> Result<Vec<Run>, StoreError> {
        self.read(&mut |tx| tx.runs_owed(machine_id))
    }

    fn run_resolve(
        &self,
        id: i64,
        resolution: &str,
        now: Timestamp,
        epoch: i64,
    ) -> Result<bool, StoreError> {
        self.write(Guard::Host(epoch), &mut |tx| {
            let resolved = tx.run_resolve(id, resolution, now)?;
            if resolved {
                outcomes::not_resumed(tx, id, now)?;
            }
            announced(tx, id, resolved)
        })
    }

    fn run_land(&self, id: i64, now: Timestamp, epoch: i64) -> Result<bool, StoreError> {
        self.write(Guard::Host(epoch), &mut |tx| {
            let landed = tx.run_land(id, now)?;
            if landed {
                // A landed run succeeded: what follows a success follows it too.
                outcomes::after_landing(tx, id, now)?;
            }
            announced(tx, id, landed)
        })
    }
}
