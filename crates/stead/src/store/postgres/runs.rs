//! Run rows: admission (with the job's concurrency policy), transitions and queries.
//!
//! Transitions are compare-and-set on the status, so each run's terminal state is
//! written exactly once whoever races to write it (its monitor, a cancel, the server
//! reconciling after a crash): under READ COMMITTED, a writer that waited for another's
//! row lock re-evaluates the status guard on the row as committed.

use std::path::Path;

use ::postgres::types::ToSql;
use ::postgres::{GenericClient, Row, Transaction};
use jiff::Timestamp;
use stead_protocol::{Run, RunFilter, RunStatus, Trigger};

use super::pid_from;
use crate::clock::{from_ms, rfc3339, to_ms};
use crate::lifecycle::identity::StartIdentity;
use crate::runs::RunEnd;
use crate::store::rows::{
    self, IN_FLIGHT, LANDED, default_key, list_limit, plan_json, status_from, time, trigger_from,
};
use crate::store::{ActiveRun, Admission, NewRun, PlanFn, RunCount, StoreError};

const COLUMNS: &str = "id, job, trigger, status, exit_code, signal, reason, attempt, parent_id,
    idempotency_key, machine_id, boot_id, monitor_pid, scheduled_at_ms, created_at_ms,
    started_at_ms, ended_at_ms, log_path, original_trigger, resolution";

type Param<'a> = &'a (dyn ToSql + Sync);

fn from_row(row: &Row) -> Result<Run, StoreError> {
    let monitor_pid: Option<i64> = row.try_get(12)?;
    let original: Option<&str> = row.try_get(18)?;
    Ok(Run {
        id: row.try_get(0)?,
        job: row.try_get(1)?,
        trigger: trigger_from(row.try_get(2)?)?,
        status: status_from(row.try_get(3)?)?,
        exit_code: row.try_get(4)?,
        signal: row.try_get(5)?,
        reason: row.try_get(6)?,
        attempt: row.try_get(7)?,
        parent_id: row.try_get(8)?,
        idempotency_key: row.try_get(9)?,
        machine_id: row.try_get(10)?,
        boot_id: row.try_get(11)?,
        monitor_pid: monitor_pid.map(pid_from).transpose()?,
        scheduled_at: time(row.try_get(13)?),
        created_at: rfc3339(from_ms(row.try_get(14)?)),
        started_at: time(row.try_get(15)?),
        ended_at: time(row.try_get(16)?),
        log_path: row.try_get(17)?,
        original_trigger: original.map(trigger_from).transpose()?,
        resolution: row.try_get(19)?,
    })
}

pub fn get(c: &mut impl GenericClient, id: i64) -> Result<Option<Run>, StoreError> {
    c.query_opt(&format!("SELECT {COLUMNS} FROM runs WHERE id = $1"), &[&id])?
        .as_ref()
        .map(from_row)
        .transpose()
}

/// The job a run belongs to.
pub fn job_of(c: &mut impl GenericClient, id: i64) -> Result<i64, StoreError> {
    c.query_opt("SELECT job_id FROM runs WHERE id = $1", &[&id])?
        .ok_or(StoreError::NoSuchRun(id))?
        .try_get(0)
        .map_err(Into::into)
}

pub fn list(c: &mut impl GenericClient, filter: &RunFilter) -> Result<Vec<Run>, StoreError> {
    // Only the conditions given, so the planner can pick `runs_by_job` or
    // `runs_by_status`.
    let status = filter.status.map(RunStatus::as_str);
    let limit = list_limit(filter);
    let mut conditions = Vec::new();
    let mut values: Vec<Param<'_>> = Vec::new();
    if let Some(job) = &filter.job {
        values.push(job);
        conditions.push(format!("job = ${}", values.len()));
    }
    if let Some(status) = &status {
        values.push(status);
        conditions.push(format!("status = ${}", values.len()));
    }
    if let Some(before) = &filter.before_id {
        values.push(before);
        conditions.push(format!("id < ${}", values.len()));
    }
    values.push(&limit);
    let clause = if conditions.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conditions.join(" AND "))
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM runs {clause} ORDER BY id DESC LIMIT ${}",
        values.len()
    );
    c.query(&sql, &values)?.iter().map(from_row).collect()
}

pub fn counts(c: &mut impl GenericClient) -> Result<Vec<RunCount>, StoreError> {
    let rows = c.query(
        "SELECT job, status, trigger, resolution IS NOT NULL, count(*) FROM runs
         GROUP BY job, status, trigger, resolution IS NOT NULL ORDER BY job",
        &[],
    )?;
    rows.iter()
        .map(|row| {
            let count: i64 = row.try_get(4)?;
            Ok(RunCount {
                job: row.try_get(0)?,
                status: status_from(row.try_get(1)?)?,
                trigger: trigger_from(row.try_get(2)?)?,
                resolved: row.try_get(3)?,
                count: u64::try_from(count).unwrap_or(0),
            })
        })
        .collect()
}

fn active_from_row(row: &Row) -> Result<ActiveRun, StoreError> {
    let pid: Option<i64> = row.try_get(5)?;
    let identity: Option<String> = row.try_get(6)?;
    Ok(ActiveRun {
        id: row.try_get(0)?,
        job: row.try_get(1)?,
        status: status_from(row.try_get(2)?)?,
        machine_id: row.try_get(3)?,
        boot_id: row.try_get(4)?,
        monitor: pid
            .map(pid_from)
            .transpose()?
            .zip(identity.map(StartIdentity::from_stored)),
        epoch: row.try_get(7)?,
        cancel_requested: row.try_get::<_, Option<i64>>(8)?.is_some(),
    })
}

/// Runs that have not ended and match `condition` (a column compared with `$1`).
fn active_where(
    c: &mut impl GenericClient,
    condition: &str,
    value: Param<'_>,
) -> Result<Vec<ActiveRun>, StoreError> {
    c.query(
        &format!(
            "SELECT id, job, status, machine_id, boot_id, monitor_pid, monitor_start_identity,
                 epoch, cancel_requested_at_ms
             FROM runs WHERE status IN ({IN_FLIGHT}) AND {condition} ORDER BY id"
        ),
        &[value],
    )?
    .iter()
    .map(active_from_row)
    .collect()
}

pub fn active(c: &mut impl GenericClient, machine_id: &str) -> Result<Vec<ActiveRun>, StoreError> {
    active_where(c, "machine_id = $1", &machine_id)
}

pub fn admit(
    tx: &mut Transaction<'_>,
    new: &NewRun,
    log_dir: &Path,
    plan: PlanFn<'_>,
    epoch: i64,
) -> Result<Admission, StoreError> {
    // Admissions of one job, from any host, take turns on the job's row: each sees the
    // runs the one before it admitted, so `forbid` can never queue two.
    tx.execute(
        "SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE",
        &[&new.job_id],
    )?;
    let running = active_where(tx, "job_id = $1", &new.job_id)?;
    let verdict = rows::admission(new, &running)?;
    let id: i64 = tx
        .query_one(
            "INSERT INTO runs (job_id, job, trigger, scheduled_at_ms, idempotency_key,
                 parent_id, attempt, machine_id, boot_id, status, reason, created_at_ms,
                 ended_at_ms, log_path, plan, epoch, original_trigger)
             VALUES ($1, $2, $3, $4, '', $5, $6, $7, $8, $9, $10, $11, $12, '', '{}', $13, $14)
             RETURNING id",
            &[
                &new.job_id,
                &new.job,
                &new.trigger.as_str(),
                &new.scheduled_at.map(to_ms),
                &new.parent_id,
                &new.attempt,
                &new.machine_id,
                &new.boot_id,
                &verdict.status.as_str(),
                &verdict.reason,
                &to_ms(new.created_at),
                &verdict.ended_at_ms,
                &epoch,
                &new.original_trigger.map(Trigger::as_str),
            ],
        )?
        .try_get(0)?;
    if let Some((parent, note)) = &new.resolves {
        // The parent's debt is settled by this very row, in this transaction: a second
        // server (or boot) that tries the same finds it resolved and its insert undone.
        let resolution = rows::resumed_as(id, note.as_deref());
        if !resolve(tx, *parent, &resolution, new.created_at)? {
            return Err(StoreError::AlreadyResolved(*parent));
        }
    }
    let key = new
        .idempotency_key
        .clone()
        .unwrap_or_else(|| default_key(new, id));
    let log_path = log_dir.join(format!("{id}.log"));
    let monitor_plan = (verdict.status == RunStatus::Queued).then(|| plan(id, &log_path, &key));
    let run = tx.query_one(
        &format!(
            "UPDATE runs SET idempotency_key = $2, log_path = $3, plan = $4 WHERE id = $1
             RETURNING {COLUMNS}"
        ),
        &[
            &id,
            &key,
            &log_path.to_string_lossy(),
            &plan_json(monitor_plan.as_ref()),
        ],
    )?;
    let run = from_row(&run)?;
    if let Some(through) = new.fired_through {
        super::jobs::mark_fired(tx, new.job_id, through)?;
    }
    let replaced = if rows::replaces(new, &verdict) {
        for other in &running {
            request_cancel(tx, other.id, new.created_at)?;
        }
        running
    } else {
        Vec::new()
    };
    Ok(Admission {
        run,
        plan: monitor_plan,
        replaced,
    })
}

pub fn request_cancel(tx: &mut Transaction<'_>, id: i64, now: Timestamp) -> Result<(), StoreError> {
    tx.execute(
        &format!(
            "UPDATE runs SET cancel_requested_at_ms = COALESCE(cancel_requested_at_ms, $2)
             WHERE id = $1 AND status IN ({IN_FLIGHT})"
        ),
        &[&id, &to_ms(now)],
    )?;
    // The run may be on another host: its server hears this and signals the monitor.
    super::cluster::notify_cancel(tx, id)
}

/// Interrupted runs of `machine_id` whose debt is not settled yet, oldest first.
pub fn owed(c: &mut impl GenericClient, machine_id: &str) -> Result<Vec<Run>, StoreError> {
    list_where(
        c,
        "status = 'interrupted' AND resolution IS NULL AND machine_id = $1",
        &machine_id,
    )
}

/// Runs matching `condition` (with one parameter, `$1`), oldest first.
pub fn list_where(
    c: &mut impl GenericClient,
    condition: &str,
    value: Param<'_>,
) -> Result<Vec<Run>, StoreError> {
    c.query(
        &format!("SELECT {COLUMNS} FROM runs WHERE {condition} ORDER BY id"),
        &[value],
    )?
    .iter()
    .map(from_row)
    .collect()
}

/// Settles an interrupted run's debt, once.
pub fn resolve(
    tx: &mut Transaction<'_>,
    id: i64,
    resolution: &str,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let n = tx.execute(
        "UPDATE runs SET resolution = $2, resolved_at_ms = $3
         WHERE id = $1 AND status = 'interrupted' AND resolution IS NULL",
        &[&id, &resolution, &to_ms(now)],
    )?;
    Ok(n == 1)
}

/// A receipt proved an interrupted run's work landed: it is closed as succeeded. The one
/// transition out of a terminal status, and only while the debt is unsettled.
pub fn land(tx: &mut Transaction<'_>, id: i64, now: Timestamp) -> Result<bool, StoreError> {
    let n = tx.execute(
        "UPDATE runs SET status = 'succeeded', reason = $2, resolution = $2, resolved_at_ms = $3
         WHERE id = $1 AND status = 'interrupted' AND resolution IS NULL",
        &[&id, &LANDED, &to_ms(now)],
    )?;
    Ok(n == 1)
}

/// Ends a run whose status is one of `from` (a SQL list); the status guard makes it
/// happen at most once, whoever races to write it.
fn end_from(
    tx: &mut Transaction<'_>,
    id: i64,
    end: &RunEnd,
    from: &str,
) -> Result<bool, StoreError> {
    let n = tx.execute(
        &format!(
            "UPDATE runs SET status = $2, exit_code = $3, signal = $4, reason = $5,
                 ended_at_ms = $6
             WHERE id = $1 AND status IN ({from})"
        ),
        &[
            &id,
            &end.status.as_str(),
            &end.exit_code,
            &end.signal,
            &end.reason,
            &to_ms(end.ended_at),
        ],
    )?;
    Ok(n == 1)
}

/// Ends a run that is still queued: a cancel before start, which must not overwrite a
/// run its monitor has just marked running (and started).
pub fn settle_queued(tx: &mut Transaction<'_>, id: i64, end: &RunEnd) -> Result<bool, StoreError> {
    end_from(tx, id, end, "'queued'")
}

/// Ends a run that has not ended, from the server's side.
pub fn settle(tx: &mut Transaction<'_>, id: i64, end: &RunEnd) -> Result<bool, StoreError> {
    end_from(tx, id, end, IN_FLIGHT)
}

pub fn mark_running(
    tx: &mut Transaction<'_>,
    id: i64,
    pid: u32,
    identity: &StartIdentity,
    started_at: Timestamp,
) -> Result<bool, StoreError> {
    let n = tx.execute(
        "UPDATE runs SET status = 'running', monitor_pid = $2, monitor_start_identity = $3,
             started_at_ms = $4
         WHERE id = $1 AND status = 'queued'",
        &[&id, &i64::from(pid), &identity.as_str(), &to_ms(started_at)],
    )?;
    Ok(n == 1)
}

/// The monitor's final write: only from `running`, so a run the server already settled
/// (or a cancel before start) keeps its outcome.
pub fn finish(tx: &mut Transaction<'_>, id: i64, end: &RunEnd) -> Result<bool, StoreError> {
    end_from(tx, id, end, "'running'")
}
