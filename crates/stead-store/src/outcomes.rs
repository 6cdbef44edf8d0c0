//! What follows a run's end, written in the transaction that records the end: the next
//! attempt of a failure with retries left, the runs of jobs chained `after` a success,
//! and the events notifiers are told of. Nothing here can be lost between the end and
//! its consequences: they commit together or not at all.

use std::path::Path;

use jiff::Timestamp;
use stead_core::admission::{self, Verdict};
use stead_core::clock::rfc3339;
use stead_core::records::{NewRun, OutboxEvent, RetryBudget, SkippedFire};
use stead_core::retry::RetryPlan;
use stead_core::runs::{MonitorPlan, default_key};
use stead_protocol::{Concurrency, Notification, NotifyEvent, Run, RunStatus, Trigger};

use crate::StoreError;
use crate::backend::{Announce, InFlightOf, Steps};
use crate::rows::plan_json;

/// Follows up a run that has just ended (its row already says how).
pub(crate) fn after_end(tx: &mut impl Steps, run_id: i64) -> Result<(), StoreError> {
    let Some(run) = tx.run_get(run_id)? else {
        return Ok(());
    };
    let at = ended_at(&run);
    match run.status {
        RunStatus::Failed => {
            if let Some((plan, epoch)) = retry_of(tx, &run)? {
                schedule_retry(tx, &run, plan, epoch, at)?;
            } else {
                let text = format!(
                    "{} run {} failed{}: {}",
                    run.job,
                    run.id,
                    attempts(&run),
                    run.reason.as_deref().unwrap_or("it failed")
                );
                notify(tx, NotifyEvent::Failed, &run.job, Some(&run), text, at)?;
            }
        }
        RunStatus::Interrupted => {
            let text = format!(
                "{} run {} was cut: {}",
                run.job,
                run.id,
                run.reason.as_deref().unwrap_or("interrupted")
            );
            notify(tx, NotifyEvent::Interrupted, &run.job, Some(&run), text, at)?;
        }
        RunStatus::Succeeded => {
            let job_id = tx.run_job(run.id)?;
            if tx.run_last_outcome_before(job_id, run.id)? == Some(RunStatus::Failed) {
                let text = format!("{} run {} succeeded after a failure", run.job, run.id);
                notify(tx, NotifyEvent::Recovered, &run.job, Some(&run), text, at)?;
            }
            start_after(tx, &run, at)?;
        }
        _ => {}
    }
    Ok(())
}

/// A cut run's debt was dropped without a resume.
pub(crate) fn not_resumed(
    tx: &mut impl Steps,
    run_id: i64,
    now: Timestamp,
) -> Result<(), StoreError> {
    let Some(run) = tx.run_get(run_id)? else {
        return Ok(());
    };
    let text = format!(
        "{} run {} was cut and is {}",
        run.job,
        run.id,
        run.resolution.as_deref().unwrap_or("not resumed")
    );
    notify(tx, NotifyEvent::NotResumed, &run.job, Some(&run), text, now)
}

/// Fires of `new`'s job were missed (outside the catch-up window, or `catch_up =
/// skip`): one event for the lot, naming how many and the latest row.
pub(crate) fn missed(
    tx: &mut impl Steps,
    new: &NewRun,
    row: i64,
    fires: &[SkippedFire],
) -> Result<(), StoreError> {
    let count = fires
        .iter()
        .filter(|f| f.why.iter().any(|(why, _)| why.is_miss()))
        .map(|f| f.count)
        .sum::<usize>()
        + usize::from(new.missed);
    if count == 0 {
        return Ok(());
    }
    let run = tx.run_get(row)?;
    let why = run
        .as_ref()
        .and_then(|r| r.reason.clone())
        .unwrap_or_else(|| "missed".into());
    let text = format!("{}: {count} fire(s) not run ({why})", new.job);
    notify(
        tx,
        NotifyEvent::Missed,
        &new.job,
        run.as_ref(),
        text,
        new.created_at,
    )
}

fn ended_at(run: &Run) -> Timestamp {
    run.ended_at
        .as_deref()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(Timestamp::now)
}

fn attempts(run: &Run) -> String {
    if run.trigger == Trigger::Retry {
        format!(" (attempt {}, the last)", run.attempt)
    } else {
        String::new()
    }
}

/// A failed run's plan (and the epoch its row carries) when it still allows a retry.
fn retry_of(tx: &mut impl Steps, run: &Run) -> Result<Option<(MonitorPlan, i64)>, StoreError> {
    let Some((Some(plan), epoch)) = tx.run_plan(run.id)? else {
        return Ok(None);
    };
    Ok(plan
        .retry
        .is_some_and(|r| r.left > 0)
        .then_some((plan, epoch)))
}

/// Writes the next attempt of a failed run: `queued`, waiting out its delay, with the
/// failed run's plan (its command, parameters and budget less one), key and queue.
fn schedule_retry(
    tx: &mut impl Steps,
    run: &Run,
    mut plan: MonitorPlan,
    epoch: i64,
    at: Timestamp,
) -> Result<(), StoreError> {
    let retry: RetryPlan = plan.retry.expect("a plan that allows a retry has a budget");
    let next = retry.next().expect("a retry is left");
    let not_before = at
        .checked_add(jiff::SignedDuration::try_from(retry.delay(run.id)).unwrap_or_default())
        .unwrap_or(at);
    let new = NewRun {
        job_id: tx.run_job(run.id)?,
        job: run.job.clone(),
        trigger: Trigger::Retry,
        scheduled_at: run.scheduled_at.as_deref().and_then(|t| t.parse().ok()),
        idempotency_key: Some(run.idempotency_key.clone()),
        parent_id: Some(run.id),
        attempt: run.attempt + 1,
        machine_id: run.machine_id.clone(),
        boot_id: run.boot_id.clone(),
        concurrency: Concurrency::Allow,
        created_at: at,
        fired_through: None,
        fence: stead_core::records::Fence::Host,
        original_trigger: None,
        resolves: None,
        skip_reason: None,
        skipped_fires: Vec::new(),
        missed: false,
        params: run.params.clone(),
        retry: RetryBudget::Kept(Some(next)),
        queue: run.queue.clone(),
        waiting: true,
        not_before: Some(not_before),
    };
    let queued = Verdict {
        status: RunStatus::Queued,
        reason: None,
    };
    let id = tx.run_insert(&new, &queued, epoch)?;
    let log_path = Path::new(&run.log_path).with_file_name(format!("{id}.log"));
    plan.run_id = id;
    plan.log_path = log_path.clone();
    plan.retry = Some(next);
    plan.env.insert("STEAD_RUN_ID".into(), id.to_string());
    plan.env
        .insert("STEAD_TRIGGER".into(), Trigger::Retry.as_str().into());
    plan.env
        .insert("STEAD_ATTEMPT".into(), new.attempt.to_string());
    tx.run_complete(id, &run.idempotency_key, &log_path, &plan_json(Some(&plan)))?;
    tx.announce(Announce::Run(id))?;
    Ok(())
}

/// Writes a run of every enabled job chained `after` the run's job, waiting: its plan is
/// made when a server hands it to a monitor. The downstream job's concurrency policy
/// applies as to any run (`forbid` records it skipped while one of its runs is in
/// flight; `replace` asks those runs to stop).
fn start_after(tx: &mut impl Steps, run: &Run, at: Timestamp) -> Result<(), StoreError> {
    let downstream: Vec<_> = tx
        .job_list()?
        .into_iter()
        .filter(|j| j.spec.enabled && j.spec.after.contains(&run.job))
        .collect();
    for job in downstream {
        let new = NewRun {
            parent_id: Some(run.id),
            waiting: true,
            ..NewRun::of(&job, Trigger::After, &run.machine_id, &run.boot_id, at)
        };
        tx.lock_job(job.id)?;
        let running = tx.runs_in_flight(InFlightOf::Job(job.id))?;
        // Only a resume can meet an overlap it must wait out; this is a new run.
        let verdict = admission::admission(&new, &running).unwrap_or(Verdict {
            status: RunStatus::Skipped,
            reason: Some("overlap (concurrency = forbid)".into()),
        });
        let epoch = run_epoch(tx, run)?;
        let id = tx.run_insert(&new, &verdict, epoch)?;
        let key = default_key(&new, id);
        let log_path = Path::new(&run.log_path).with_file_name(format!("{id}.log"));
        tx.run_complete(id, &key, &log_path, &plan_json(None))?;
        if admission::replaces(&new, &verdict) {
            for other in &running {
                tx.run_request_cancel(other.id, at)?;
                tx.announce(Announce::Cancel(other.id))?;
            }
        }
        tx.announce(Announce::Run(id))?;
    }
    Ok(())
}

fn run_epoch(tx: &mut impl Steps, run: &Run) -> Result<i64, StoreError> {
    Ok(tx.run_plan(run.id)?.map_or(0, |(_, epoch)| epoch))
}

/// Writes `event` to the outbox of every notifier that asks for it about `job`.
pub(crate) fn notify(
    tx: &mut impl Steps,
    event: NotifyEvent,
    job: &str,
    run: Option<&Run>,
    text: String,
    at: Timestamp,
) -> Result<(), StoreError> {
    let notifiers = tx.notifier_list()?;
    for notifier in notifiers {
        let wanted = if notifier.events.is_empty() {
            NotifyEvent::DEFAULT.contains(&event)
        } else {
            notifier.events.contains(&event)
        };
        if !wanted || !(notifier.jobs.is_empty() || notifier.jobs.iter().any(|j| j == job)) {
            continue;
        }
        let event_id = uuid::Uuid::now_v7().to_string();
        let body = Notification {
            id: event_id.clone(),
            event,
            job: job.to_string(),
            at: rfc3339(at),
            text: format!("stead: {text}"),
            run: run.cloned(),
        };
        tx.outbox_insert(&OutboxEvent {
            event_id,
            notifier: notifier.name.clone(),
            event,
            run_id: run.map(|r| r.id),
            payload: serde_json::to_string(&body).expect("a notification serializes"),
            created_at: at,
        })?;
        tx.announce(Announce::Changed)?;
    }
    Ok(())
}
