//! Admitting a run: its row first (the job's concurrency policy decides queued or
//! skipped), then its monitor.

use std::sync::Arc;

use stead_core::records::{Admission, Fence, NewRun, OnDemand, StoredJob};
use stead_protocol::{ErrorBody, Run, RunParams, RunStatus};
use stead_store::StoreError;
use tracing::info;

use super::cancel::signal_cancel;
use super::reuse::Reserved;
use super::spawn::{hand_marked, launch};
use crate::request::group_commit::{Group, Unwritten};
use crate::request::ledger_calls::{blocking, store_error};
use crate::shared::Shared;
use stead_store::Refusal;

/// Admits a run of `job` and, when it is queued, starts its monitor. Runs replaced by it
/// (concurrency = replace) are cancelled. A run that shares a limit on runs at once (its
/// job's queue, or the host's `[queues] default_parallel`) is written waiting instead:
/// the starter, the one task that hands such runs to monitors, starts it once the limit
/// allows, in order.
pub async fn start(shared: &Arc<Shared>, job: &StoredJob, new: NewRun) -> Result<Run, ErrorBody> {
    let new = new.limited(shared.default_limit());
    let spec = job.spec.clone();
    let epoch = epoch_of(shared, &new);
    let admission = blocking(shared, move |s| {
        s.world.store.run_admit(&new, &spec, &s.runs.planner, epoch)
    })
    .await?;
    let id = admission.run.id;
    follow_admission(shared, admission, None).await;
    blocking(shared, move |s| s.world.store.run_get(id))
        .await?
        .ok_or_else(|| store_error(StoreError::Refused(Refusal::NoSuchRun(id))))
}

/// An on-demand run of the job named `name`: found and admitted in one trip to the
/// ledger, in the commit it shares with the other writes about runs pending (see
/// `group_commit`), and answered as admitted the moment its row is committed. Its monitor
/// starts after the answer (a stopping server lets it: `Shared::launches`): the row is
/// durable before the command starts either way, and a server that dies in between
/// leaves a row of its own that the next one cuts and resumes, as it would a run whose
/// monitor it had started.
///
/// A monitor waiting for a run is reserved first, and the admission marks the run
/// running for it in the same commit (`runs::reuse`): the run then costs one commit, and
/// its monitor starts the command without a mark of its own.
pub async fn start_now(
    shared: &Arc<Shared>,
    name: String,
    params: RunParams,
) -> Result<Run, ErrorBody> {
    let reserved = shared.runs.monitors.reserve();
    let taker = reserved.as_ref().map(|r| {
        let (pid, identity) = r.taker();
        (pid, identity.clone())
    });
    let admission = match Group::admit(shared, name, params, taker).await {
        Ok(admission) => admission,
        // A refused admission (no such job, bad parameters) wrote nothing: the reserved
        // monitor waits again.
        Err(Unwritten::Refused(e)) => {
            if let Some(reserved) = reserved {
                release(shared, reserved);
            }
            return Err(e);
        }
        // A failed commit may have marked the run for the reserved monitor all the same,
        // and it must then take no other: let go (dropped), it exits.
        Err(Unwritten::Failed(e)) => return Err(e),
    };
    let run = admission.run.clone();
    let following = shared.clone();
    shared
        .runs
        .launches
        .spawn(async move { follow_admission(&following, *admission, reserved).await });
    Ok(run)
}

/// How this host admits an on-demand run with `params`, now.
pub fn on_demand<'a>(shared: &'a Shared, params: &'a RunParams) -> OnDemand<'a> {
    OnDemand {
        params,
        machine_id: shared.queue_host(),
        boot_id: &shared.me.boot_id,
        now: shared.world.clock.now(),
        default_limit: shared.default_limit(),
    }
}

/// A fire of the scheduler's: the job and its row.
pub struct Fire {
    pub job: StoredJob,
    pub new: NewRun,
}

/// Admits fires (all fenced alike) in one transaction, one commit for the lot, then
/// starts them as [`start`] does (a fire admitted ahead of its time waits for it in its
/// monitor: see `MonitorPlan::not_before`). Answers
/// the rows as admitted. All or nothing: when one is refused, none is written, and the
/// caller admits them one by one to learn which.
pub async fn start_fires(shared: &Arc<Shared>, fires: Vec<Fire>) -> Result<Vec<Run>, ErrorBody> {
    let Some(first) = fires.first() else {
        return Ok(Vec::new());
    };
    let epoch = epoch_of(shared, &first.new);
    let default_limit = shared.default_limit();
    let runs: Vec<(NewRun, _)> = fires
        .iter()
        .map(|f| (f.new.clone().limited(default_limit), f.job.spec.clone()))
        .collect();
    let admissions = blocking(shared, move |s| {
        s.world.store.run_admit_all(&runs, &s.runs.planner, epoch)
    })
    .await?;
    let mut runs = Vec::with_capacity(admissions.len());
    for admission in admissions {
        runs.push(admission.run.clone());
        follow_admission(shared, admission, None).await;
    }
    Ok(runs)
}

fn epoch_of(shared: &Shared, new: &NewRun) -> i64 {
    match new.fence {
        Fence::Host => shared.epoch(),
        // A server that no longer leads offers an epoch no row carries: fenced.
        Fence::Leader => shared.leader.borrow().unwrap_or(-1),
    }
}

/// Lets a reserved monitor wait for a run again, unless this server is stopping.
fn release(shared: &Shared, reserved: Reserved) {
    shared
        .runs
        .monitors
        .release(reserved, shared.stop.is_cancelled());
}

/// What follows a run's admission: its watchers told, the runs it replaces cancelled,
/// and its monitor started (or the starter, or the claimers, woken). `reserved`: the
/// monitor reserved for it, which takes it when the admission marked it running for
/// that monitor, and else waits for a run again.
async fn follow_admission(shared: &Arc<Shared>, admission: Admission, reserved: Option<Reserved>) {
    let reserved = match reserved {
        Some(reserved) if admission.run.status != RunStatus::Running => {
            release(shared, reserved);
            None
        }
        reserved => reserved,
    };
    // The one run an admission may write waiting is its own, and then the starter is
    // woken below.
    for id in &admission.skipped {
        shared.run_changed_quietly(*id);
    }
    shared.run_changed_quietly(admission.run.id);
    for old in &admission.replaced {
        info!(
            run = old.id,
            by = admission.run.id,
            "cancelling a run replaced by a newer one"
        );
        signal_cancel(shared, old);
    }
    if let (Some(plan), Some(reserved)) = (&admission.plan, reserved) {
        hand_marked(shared, plan, reserved).await;
    } else if let Some(plan) = admission.plan {
        launch(shared, &plan).await;
    } else if admission.run.waiting.is_some() {
        shared.wake.waiting_changed.notify_one();
    } else if admission.run.status == RunStatus::Queued {
        // Queued for any host of a shared ledger: this one may claim it too.
        shared.wake.claim_now.notify_one();
    }
}
