//! Resuming cut runs: once the server serves and the resume delay has passed, every
//! interrupted run of this machine whose debt is unsettled is settled exactly once.
//!
//! The decision is [`stead_core::resume::decide`]; this module carries it out: ask the
//! job's landed check when it has one, then resume (a new run with trigger `resume`, the
//! parent's idempotency key and original trigger), close the run as landed, or record
//! why it is not resumed. Resuming writes the new row and settles the parent in one
//! transaction, so two servers (or two quick boots) never resume a run twice.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{ErrorCode, Run, Trigger};
use tracing::{error, info, warn};

use crate::request::ledger_calls::blocking;
use crate::runs;
use crate::shared::Shared;
use stead_core::records::{NewRun, RetryBudget, StoredJob};
use stead_core::resume::{self, Decision, Receipt};

/// How long a landed check may take before its answer counts as unknown.
const RECEIPT_TIMEOUT: Duration = Duration::from_secs(60);

/// A pass after the resume delay, then one more (after the delay again) whenever a run
/// is cut while this server serves, until it stops. A resume deferred because another
/// run of its job is in flight (concurrency = forbid) is tried again when a run ends.
pub async fn run(shared: Arc<Shared>) {
    loop {
        tokio::select! {
            () = shared.stop.cancelled() => return,
            () = tokio::time::sleep(shared.world.config.timings.resume_delay) => {}
        }
        let mut ended = shared.run_events.subscribe();
        while pass(&shared).await == Pass::Deferred {
            tokio::select! {
                () = shared.stop.cancelled() => return,
                _ = ended.recv() => {}
                // The end of a service's restart.
                () = shared.wake.runs_cut.notified() => {}
            }
        }
        tokio::select! {
            () = shared.stop.cancelled() => return,
            () = shared.wake.runs_cut.notified() => {}
        }
    }
}

/// Whether a pass left a debt for later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    Done,
    Deferred,
}

async fn pass(shared: &Arc<Shared>) -> Pass {
    let machine = shared.world.machine_id.clone();
    // The leader also settles the debts of lost hosts whose jobs may resume anywhere.
    let leads = shared.leader.borrow().is_some();
    let lease = stead_core::clock::span(shared.world.config.timings.lease);
    let owed = match blocking(shared, move |s| {
        let mut owed = s.world.store.runs_owed(&machine)?;
        if leads && let Some(cluster) = s.world.store.cluster() {
            owed.extend(cluster.runs_owed_by_lost_hosts(lease)?);
        }
        Ok(owed)
    })
    .await
    {
        Ok(owed) => owed,
        Err(e) => {
            error!(cause = %e.message, "failed to read the runs owed after a cut");
            return Pass::Done;
        }
    };
    let count = owed.len();
    let mut outcome = Pass::Done;
    for run in owed {
        if shared.stop.is_cancelled() {
            return Pass::Done;
        }
        if settle(shared, run).await == Pass::Deferred {
            outcome = Pass::Deferred;
        }
    }
    info!(owed = count, "settled the runs owed after a cut");
    outcome
}

#[tracing::instrument(name = "run", skip_all, fields(run = run.id))]
async fn settle(shared: &Arc<Shared>, run: Run) -> Pass {
    let name = run.job.clone();
    let machine = shared.world.machine_id.clone();
    let found = blocking(shared, move |s| {
        let busy = s
            .world
            .store
            .runs_active(&machine)?
            .iter()
            .any(|r| r.job == name);
        let restarting = s.world.store.services_restarting()?;
        Ok((s.world.store.job_get(&name)?, restarting, busy))
    })
    .await;
    let job = match found {
        Ok((job, restarting, busy)) => {
            if busy
                && job
                    .as_ref()
                    .is_some_and(|j| j.spec.concurrency == stead_protocol::Concurrency::Forbid)
            {
                // Checked before the receipt, so a waiting debt does not re-run the job's
                // landed check on every wake.
                info!("resume waits for the job's run in flight to end");
                return Pass::Deferred;
            }
            if let Some(service) = job
                .as_ref()
                .and_then(|j| j.spec.depends_on.iter().find(|d| restarting.contains(d)))
            {
                info!(%service, "resume waits until its service is ready again");
                return Pass::Deferred;
            }
            job
        }
        Err(e) => {
            error!(cause = %e.message, "failed to read a cut run's job");
            return Pass::Done;
        }
    };
    let now = shared.world.clock.now();
    let max_age = SignedDuration::try_from(shared.world.config.timings.resume_max_age)
        .unwrap_or(SignedDuration::MAX);
    // The run is this host's debt, or a lost host's that may resume anywhere.
    let decision = resume::decide(
        &run,
        job.as_ref().map(|j| &j.spec),
        &run.machine_id,
        now,
        max_age,
    );
    let epoch = shared.epoch();
    let (id, at) = (run.id, now);
    match decision {
        Decision::Leave => Pass::Done,
        Decision::Decline(reason) => {
            info!(%reason, "a cut run is not resumed");
            if let Err(e) = blocking(shared, move |s| {
                s.world.store.run_resolve(id, &reason, at, epoch)
            })
            .await
            {
                error!(cause = %e.message, "failed to record why a run is not resumed");
            }
            // Its row changed, and a `not_resumed` event may be waiting to be delivered.
            shared.run_changed(id);
            Pass::Done
        }
        Decision::Resume { check_receipt } => {
            let job = job.expect("a resume decision has a job");
            let note = if check_receipt {
                match check(shared, &run, &job).await {
                    Receipt::Landed => {
                        info!("a cut run landed, proven by its receipt");
                        if let Err(e) =
                            blocking(shared, move |s| s.world.store.run_land(id, at, epoch)).await
                        {
                            error!(cause = %e.message, "failed to close a landed run");
                        }
                        shared.run_changed(id);
                        return Pass::Done;
                    }
                    Receipt::NotLanded => Some("its receipt says the work did not land".into()),
                    Receipt::Unknown(why) => Some(format!(
                        "{why}; resumed anyway: a duplicate is the lesser loss beside a missing run"
                    )),
                }
            } else {
                None
            };
            resume(shared, &run, &job, note).await
        }
    }
}

#[tracing::instrument(name = "run", skip_all, fields(run = run.id))]
async fn resume(shared: &Arc<Shared>, run: &Run, job: &StoredJob, note: Option<String>) -> Pass {
    let scheduled_at = run
        .scheduled_at
        .as_deref()
        .and_then(|s| s.parse::<Timestamp>().ok());
    // A lost host's run resumes on whichever host claims it first.
    let machine = if run.machine_id == shared.world.machine_id {
        shared.world.machine_id.as_str()
    } else {
        ""
    };
    // The resume keeps what the cut run was given: its parameters and its retry budget.
    let id = run.id;
    let kept = match blocking(shared, move |s| s.world.store.run_plan(id)).await {
        Ok(plan) => plan.and_then(|p| p.retry),
        Err(e) => {
            error!(cause = %e.message, "failed to read a cut run's plan");
            return Pass::Done;
        }
    };
    let new = NewRun {
        params: run.params.clone(),
        retry: RetryBudget::Kept(kept),
        scheduled_at,
        idempotency_key: Some(run.idempotency_key.clone()),
        parent_id: Some(run.id),
        attempt: run.attempt + 1,
        original_trigger: Some(run.trigger),
        resolves: Some((run.id, note)),
        ..NewRun::of(
            job,
            Trigger::Resume,
            machine,
            &shared.me.boot_id,
            shared.world.clock.now(),
        )
    };
    let outcome = match runs::start(shared, job, new).await {
        Ok(resumed) => {
            info!(resumed = resumed.id, "resumed a cut run");
            Pass::Done
        }
        // Another server resumed it first, or a run of the job got in between the check
        // and the admission: either way the next pass looks again (a settled debt is no
        // longer owed then).
        Err(e) if e.code == ErrorCode::Conflict => {
            info!(cause = %e.message, "resume deferred");
            Pass::Deferred
        }
        Err(e) => {
            error!(cause = %e.message, "failed to resume a cut run");
            Pass::Done
        }
    };
    if outcome == Pass::Done {
        // Not for a deferral: the resumer waits on these events and must not wake itself.
        shared.run_changed(run.id);
    }
    outcome
}

/// Runs the job's landed check for the cut run, its output appended to that run's log.
async fn check(shared: &Arc<Shared>, run: &Run, job: &StoredJob) -> Receipt {
    let script = job.spec.landed_check.as_deref().unwrap_or_default();
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(script)
        .envs(&job.spec.env)
        .env("STEAD_RUN_ID", run.id.to_string())
        .env("STEAD_JOB", &run.job)
        .env("STEAD_TRIGGER", run.trigger.as_str())
        .env(
            "STEAD_SCHEDULED_AT",
            run.scheduled_at.as_deref().unwrap_or(""),
        )
        .env("STEAD_IDEMPOTENCY_KEY", &run.idempotency_key)
        .env("STEAD_ATTEMPT", run.attempt.to_string())
        .env("STEAD_STATE_DIR", shared.world.paths.dir())
        .stdin(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &job.spec.cwd {
        command.current_dir(cwd);
    }
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&run.log_path);
    match &log {
        Ok(file) => {
            let (out, err) = (file.try_clone(), file.try_clone());
            if let (Ok(out), Ok(err)) = (out, err) {
                command.stdout(out).stderr(err);
            }
        }
        Err(_) => {
            command.stdout(Stdio::null()).stderr(Stdio::null());
        }
    }
    if let Ok(mut file) = log {
        // One short line: not worth a blocking-pool hop.
        let _ = std::io::Write::write_all(
            &mut file,
            b"\n[stead: checking the receipt before resuming]\n",
        );
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Receipt::Unknown(format!("the landed check could not start: {e}")),
    };
    let pgid = child.id();
    match tokio::time::timeout(RECEIPT_TIMEOUT, child.wait()).await {
        Ok(Ok(status)) => Receipt::from_exit(status.code(), &status.to_string()),
        Ok(Err(e)) => Receipt::Unknown(format!("the landed check failed: {e}")),
        Err(_) => {
            if let Some(pgid) = pgid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
                let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
            }
            warn!("the landed check timed out");
            Receipt::from_exit(None, "timed out after 1m")
        }
    }
}
