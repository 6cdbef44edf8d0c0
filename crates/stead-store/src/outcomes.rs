//! What follows a run's end, written in the transaction that records the end: the next
//! attempt of a failure with retries left, the runs of jobs chained `after` a success,
//! and the events notifiers are told of. Nothing here can be lost between the end and
//! its consequences: they commit together or not at all.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use stead_core::admission::{self, Verdict};
use stead_core::clock::rfc3339;
use stead_core::records::{NewRun, OutboxEvent, SkippedFire};
use stead_core::runs::{MonitorPlan, default_key};
use stead_protocol::{Notification, NotifierSpec, NotifyEvent, Run, RunStatus, Trigger};

use crate::StoreError;

use crate::backend::{Announce, InFlightOf, Steps};
use crate::rows::plan_json;

/// Follows up a run that has just ended (its row already says how).
pub(crate) fn after_end(tx: &mut impl Steps, run_id: i64) -> Result<(), StoreError> {
    follow_up(tx, run_id, None)
}

/// Follows up a cut run a receipt has just closed as succeeded, at `now` (its end was
/// recorded at the cut).
pub(crate) fn after_landing(
    tx: &mut impl Steps,
    run_id: i64,
    now: Timestamp,
) -> Result<(), StoreError> {
    follow_up(tx, run_id, Some(now))
}

fn follow_up(tx: &mut impl Steps, run_id: i64, at: Option<Timestamp>) -> Result<(), StoreError> {
    let Some(run) = tx.run_get(run_id)? else {
        return Ok(());
    };
    let at = at.unwrap_or_else(|| ended_at(&run));
    match run.status {
        RunStatus::Failed => match tx.run_plan(run.id)? {
            Some((Some(plan), epoch)) if plan.retry_follows().is_some() => {
                schedule_retry(tx, &run, plan, epoch, at)?;
            }
            _ => {
                let text = format!(
                    "{} run {} failed{}: {}",
                    run.job,
                    run.id,
                    attempts(&run),
                    run.reason.as_deref().unwrap_or("it failed")
                );
                tell(tx, NotifyEvent::Failed, &run.job, Some(&run), text, at)?;
            }
        },
        RunStatus::Interrupted => {
            let text = format!(
                "{} run {} was cut: {}",
                run.job,
                run.id,
                run.reason.as_deref().unwrap_or("interrupted")
            );
            tell(tx, NotifyEvent::Interrupted, &run.job, Some(&run), text, at)?;
        }
        RunStatus::Succeeded => {
            let job_id = tx.run_job(run.id)?;
            // A success ends the job's overdue lapse, if it was in one.
            let lapsed = tx.job_set_overdue(job_id, None)?;
            // The look back is only worth a read when someone wants to hear of it.
            let listeners = listeners(tx, NotifyEvent::Recovered, &run.job)?;
            let after = if lapsed {
                Some("an overdue lapse")
            } else if !listeners.is_empty()
                && tx.run_last_outcome_before(job_id, run.id)? == Some(RunStatus::Failed)
            {
                Some("a failure")
            } else {
                None
            };
            if let Some(after) = after.filter(|_| !listeners.is_empty()) {
                let text = format!("{} run {} succeeded after {after}", run.job, run.id);
                notify(
                    tx,
                    &listeners,
                    NotifyEvent::Recovered,
                    &run.job,
                    Some(&run),
                    text,
                    at,
                )?;
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
    tell(tx, NotifyEvent::NotResumed, &run.job, Some(&run), text, now)
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
    let listeners = listeners(tx, NotifyEvent::Missed, &new.job)?;
    if listeners.is_empty() {
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
        &listeners,
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

/// The log of run `id`, beside the log of `run` it follows from.
fn log_beside(run: &Run, id: i64) -> PathBuf {
    Path::new(&run.log_path).with_file_name(format!("{id}.log"))
}

/// Writes the next attempt of a failed run: `queued`, waiting out its delay, with the
/// failed run's plan (its command, parameters and budget less one), key and queue.
fn schedule_retry(
    tx: &mut impl Steps,
    run: &Run,
    plan: MonitorPlan,
    epoch: i64,
    at: Timestamp,
) -> Result<(), StoreError> {
    let retry = plan.retry_follows().expect("a retry follows this failure");
    let next = retry.next().expect("a retry is left");
    let not_before = at
        .checked_add(jiff::SignedDuration::try_from(retry.delay(run.id)).unwrap_or_default())
        .unwrap_or(at);
    let new = NewRun::retry_of(run, tx.run_job(run.id)?, next, at, not_before);
    let queued = Verdict {
        status: RunStatus::Queued,
        reason: None,
    };
    let id = tx.run_insert(&new, &queued, epoch)?;
    let log_path = log_beside(run, id);
    let plan = plan.for_attempt(
        id,
        log_path.clone(),
        Trigger::Retry,
        new.attempt,
        Some(next),
    );
    tx.run_complete(id, &run.idempotency_key, &log_path, &plan_json(Some(&plan)))?;
    tx.announce(Announce::Run(id))?;
    Ok(())
}

/// Writes a run of every enabled job chained `after` the run's job, waiting: its plan is
/// made when a server hands it to a monitor. The downstream job's concurrency policy
/// applies as to any run (`forbid` records it skipped while one of its runs is in
/// flight; `replace` asks those runs to stop), and a paused one records it skipped.
fn start_after(tx: &mut impl Steps, run: &Run, at: Timestamp) -> Result<(), StoreError> {
    let downstream = tx.jobs_after(&run.job)?;
    if downstream.is_empty() {
        return Ok(());
    }
    let epoch = tx.run_plan(run.id)?.map_or(0, |(_, epoch)| epoch);
    for job in downstream {
        let new = NewRun {
            parent_id: Some(run.id),
            waiting: true,
            ..NewRun::of(&job, Trigger::After, &run.machine_id, &run.boot_id, at)
        };
        tx.lock_job(job.id)?;
        let running = tx.runs_in_flight(InFlightOf::Job(job.id))?;
        // A paused job's chained runs are passed over like its fires, saying why.
        let verdict = match job.paused_until.filter(|until| *until > at) {
            Some(until) => Verdict {
                status: RunStatus::Skipped,
                reason: Some(format!(
                    "not run after run {} of {}: the job is paused until {}",
                    run.id,
                    run.job,
                    rfc3339(until)
                )),
            },
            None => admission::admission(&new, &running)
                .expect("only a resume waits out an overlap, and this run resumes nothing"),
        };
        let id = tx.run_insert(&new, &verdict, epoch)?;
        let key = default_key(&new, id);
        tx.run_complete(id, &key, &log_beside(run, id), &plan_json(None))?;
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

/// The notifiers that ask for `event` about `job`.
fn listeners(
    tx: &mut impl Steps,
    event: NotifyEvent,
    job: &str,
) -> Result<Vec<NotifierSpec>, StoreError> {
    Ok(tx
        .notifier_list()?
        .into_iter()
        .filter(|n| {
            let wanted = if n.events.is_empty() {
                NotifyEvent::DEFAULT.contains(&event)
            } else {
                n.events.contains(&event)
            };
            wanted && (n.jobs.is_empty() || n.jobs.iter().any(|j| j == job))
        })
        .collect())
}

/// Writes `event` about `job` (and `run`) to the outbox of every notifier that asks for
/// it.
pub(crate) fn tell(
    tx: &mut impl Steps,
    event: NotifyEvent,
    job: &str,
    run: Option<&Run>,
    text: String,
    at: Timestamp,
) -> Result<(), StoreError> {
    let listeners = listeners(tx, event, job)?;
    notify(tx, &listeners, event, job, run, text, at)
}

/// Writes `event` to the outbox of each of `listeners`. The outcome's own row change is
/// announced already, which is what wakes the server that delivers.
fn notify(
    tx: &mut impl Steps,
    listeners: &[NotifierSpec],
    event: NotifyEvent,
    job: &str,
    run: Option<&Run>,
    text: String,
    at: Timestamp,
) -> Result<(), StoreError> {
    for notifier in listeners {
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
    }
    Ok(())
}
