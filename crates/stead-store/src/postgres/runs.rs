//! Run rows: admission (with the job's concurrency policy), transitions and queries.
//!
//! Transitions are compare-and-set on the status, so each run's terminal state is
//! written exactly once whoever races to write it (its monitor, a cancel, the server
//! reconciling after a crash): under READ COMMITTED, a writer that waited for another's
//! row lock re-evaluates the status guard on the row as committed.

use std::path::Path;

use ::postgres::Row;
use ::postgres::types::ToSql;
use jiff::Timestamp;
use stead_core::admission::Verdict;
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::{ActiveRun, NewRun, QueueLoad, RunCount, WaitingRun};
use stead_core::runs::{LANDED, MonitorPlan, RunEnd};
use stead_protocol::{Run, RunFilter, RunStatus, Trigger};
use stead_sys::identity::StartIdentity;

use super::PgTx;
use super::{Sql, pid_from};
use crate::Refusal;
use crate::StoreError;
use crate::backend::InFlightOf;
use crate::backend::RunSteps;
use crate::rows::{
    RUN_COLUMNS, end_start_ms, end_wait, ended_at_ms, list_limit, params_json, plan_from, run_from,
    status_from, status_list, trigger_from,
};
use crate::run_ledger::IN_FLIGHT;

type Param<'a> = &'a (dyn ToSql + Sync);

fn from_row(row: &Row) -> Result<Run, StoreError> {
    run_from(row)
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
        waiting: row.try_get::<_, i16>(9)? == 1,
        queue: row.try_get(10)?,
        staged_for: row.try_get::<_, Option<i64>>(11)?.map(from_ms),
    })
}

/// Runs that have not ended and match `condition` (a column compared with `$1`).
fn active_where(
    c: &mut dyn Sql,
    condition: &str,
    value: Param<'_>,
) -> Result<Vec<ActiveRun>, StoreError> {
    c.query(
        &format!(
            "SELECT id, job, status, machine_id, boot_id, monitor_pid, monitor_start_identity,
                 epoch, cancel_requested_at_ms, waiting, queue,
                 CASE WHEN scheduled_at_ms > created_at_ms THEN scheduled_at_ms END
             FROM runs WHERE status IN ({}) AND {condition} ORDER BY id",
            status_list(IN_FLIGHT)
        ),
        &[value],
    )?
    .iter()
    .map(active_from_row)
    .collect()
}

/// Admissions of one job, from any host, take turns on the job's row: each sees the runs
/// the one before it admitted, so `forbid` can never queue two.
pub fn lock_job(tx: &mut dyn Sql, job_id: i64) -> Result<(), StoreError> {
    tx.execute("SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE", &[&job_id])?;
    Ok(())
}

/// Runs matching `condition` (with one parameter, `$1`), oldest first.
pub fn list_where(
    c: &mut dyn Sql,
    condition: &str,
    value: Param<'_>,
) -> Result<Vec<Run>, StoreError> {
    c.query(
        &format!("SELECT {RUN_COLUMNS} FROM runs WHERE {condition} ORDER BY id"),
        &[value],
    )?
    .iter()
    .map(from_row)
    .collect()
}

/// Ends a run whose status is one of `from`; the status guard makes it happen at most
/// once, whoever races to write it. An ended run waits for nothing.
pub fn end_run(
    tx: &mut dyn Sql,
    id: i64,
    end: &RunEnd,
    from: &[RunStatus],
) -> Result<bool, StoreError> {
    let (says, started) = end_start_ms(end);
    let (waited_ms, wait_note) = end_wait(end);
    let n = tx.execute(
        &format!(
            "UPDATE runs SET status = $2, exit_code = $3, signal = $4, reason = $5,
                 ended_at_ms = $6, ended_processes = $7, waiting = 0,
                 started_at_ms = CASE WHEN $8 THEN $9::BIGINT
                     WHEN started_at_ms > $6 THEN $6 ELSE started_at_ms END,
                 waited_ms = $10, wait_note = $11
             WHERE id = $1 AND status IN ({})",
            status_list(from)
        ),
        &[
            &id,
            &end.status.as_str(),
            &end.exit_code,
            &end.signal,
            &end.reason,
            &to_ms(end.ended_at),
            &end.ended_processes.map(i64::from),
            &says,
            &started,
            &waited_ms,
            &wait_note,
        ],
    )?;
    Ok(n == 1)
}

impl RunSteps for PgTx<'_> {
    fn run_get(&mut self, id: i64) -> Result<Option<Run>, StoreError> {
        let c = &mut *self.0;
        c.query_opt(
            &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"),
            &[&id],
        )?
        .as_ref()
        .map(from_row)
        .transpose()
    }

    fn run_list(&mut self, filter: &RunFilter) -> Result<Vec<Run>, StoreError> {
        let c = &mut *self.0;
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
        if filter.no_skipped {
            conditions.push("status <> 'skipped'".to_string());
        }
        values.push(&limit);
        let clause = if conditions.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", conditions.join(" AND "))
        };
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs {clause} ORDER BY id DESC LIMIT ${}",
            values.len()
        );
        c.query(&sql, &values)?.iter().map(from_row).collect()
    }

    fn run_counts(&mut self) -> Result<Vec<RunCount>, StoreError> {
        let c = &mut *self.0;
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

    /// Runs queued or running, oldest first.
    fn runs_in_flight(&mut self, of: InFlightOf<'_>) -> Result<Vec<ActiveRun>, StoreError> {
        let c = &mut *self.0;
        match of {
            InFlightOf::Machine(machine_id) => active_where(c, "machine_id = $1", &machine_id),
            InFlightOf::Job(job_id) => active_where(c, "job_id = $1", &job_id),
        }
    }

    /// Interrupted runs of `machine_id` whose debt is not settled yet, oldest first.
    fn runs_owed(&mut self, machine_id: &str) -> Result<Vec<Run>, StoreError> {
        let c = &mut *self.0;
        list_where(
            c,
            "status = 'interrupted' AND resolution IS NULL AND machine_id = $1",
            &machine_id,
        )
    }

    /// The job a run belongs to.
    fn run_job(&mut self, run_id: i64) -> Result<i64, StoreError> {
        let c = &mut *self.0;
        let id = run_id;
        c.query_opt("SELECT job_id FROM runs WHERE id = $1", &[&id])?
            .ok_or(StoreError::Refused(Refusal::NoSuchRun(id)))?
            .try_get(0)
            .map_err(Into::into)
    }

    /// Writes a new run's row; its key, log path and plan follow in [`complete`].
    fn run_insert(
        &mut self,
        new: &NewRun,
        verdict: &Verdict,
        epoch: i64,
    ) -> Result<i64, StoreError> {
        let tx = &mut *self.0;
        Ok(tx
            .query_one(
                "INSERT INTO runs (job_id, job, trigger, scheduled_at_ms, idempotency_key,
                     parent_id, attempt, machine_id, boot_id, status, reason, created_at_ms,
                     ended_at_ms, log_path, plan, epoch, original_trigger, params, queue, waiting,
                     not_before_ms)
                 VALUES ($1, $2, $3, $4, '', $5, $6, $7, $8, $9, $10, $11, $12, '', '{}', $13, $14,
                     $15, $16, $17, $18)
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
                    &ended_at_ms(new, verdict),
                    &epoch,
                    &new.original_trigger.map(Trigger::as_str),
                    &params_json(new.params.as_ref()),
                    &new.queue,
                    &i16::from(new.waiting && verdict.status == RunStatus::Queued),
                    &new.not_before.map(to_ms),
                ],
            )?
            .try_get(0)?)
    }

    /// Completes a new row with its key, log path and plan, and answers it.
    fn run_complete(
        &mut self,
        id: i64,
        key: &str,
        log_path: &Path,
        plan: &str,
    ) -> Result<Run, StoreError> {
        let tx = &mut *self.0;
        let row = tx.query_one(
            &format!(
                "UPDATE runs SET idempotency_key = $2, log_path = $3, plan = $4 WHERE id = $1
                 RETURNING {RUN_COLUMNS}"
            ),
            &[&id, &key, &log_path.to_string_lossy(), &plan],
        )?;
        from_row(&row)
    }

    fn run_end(&mut self, id: i64, end: &RunEnd, from: &[RunStatus]) -> Result<bool, StoreError> {
        end_run(&mut *self.0, id, end, from)
    }

    fn run_mark_running(
        &mut self,
        id: i64,
        pid: u32,
        identity: &StartIdentity,
        started_at: Timestamp,
    ) -> Result<bool, StoreError> {
        let tx = &mut *self.0;
        let n = tx.execute(
            "UPDATE runs SET status = 'running', monitor_pid = $2, monitor_start_identity = $3,
                 started_at_ms = $4
             WHERE id = $1 AND status = 'queued' AND waiting = 0",
            &[&id, &i64::from(pid), &identity.as_str(), &to_ms(started_at)],
        )?;
        Ok(n == 1)
    }

    fn run_request_cancel(&mut self, id: i64, now: Timestamp) -> Result<(), StoreError> {
        let tx = &mut *self.0;
        tx.execute(
            &format!(
                "UPDATE runs SET cancel_requested_at_ms = COALESCE(cancel_requested_at_ms, $2)
                 WHERE id = $1 AND status IN ({})",
                status_list(IN_FLIGHT)
            ),
            &[&id, &to_ms(now)],
        )?;
        Ok(())
    }

    /// Settles an interrupted run's debt, once.
    fn run_resolve(
        &mut self,
        id: i64,
        resolution: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let tx = &mut *self.0;
        let n = tx.execute(
            "UPDATE runs SET resolution = $2, resolved_at_ms = $3
             WHERE id = $1 AND status = 'interrupted' AND resolution IS NULL",
            &[&id, &resolution, &to_ms(now)],
        )?;
        Ok(n == 1)
    }

    /// A receipt proved an interrupted run's work landed: it is closed as succeeded. The one
    /// transition out of a terminal status, and only while the debt is unsettled.
    fn run_land(&mut self, id: i64, now: Timestamp) -> Result<bool, StoreError> {
        let tx = &mut *self.0;
        let n = tx.execute(
            "UPDATE runs SET status = 'succeeded', reason = $2, resolution = $2, resolved_at_ms = $3
             WHERE id = $1 AND status = 'interrupted' AND resolution IS NULL",
            &[&id, &LANDED, &to_ms(now)],
        )?;
        Ok(n == 1)
    }

    /// Queued runs of `machine_id` that wait for their time or their queue, oldest first.
    fn runs_waiting(&mut self, machine_id: &str) -> Result<Vec<WaitingRun>, StoreError> {
        let c = &mut *self.0;
        c.query(
            "SELECT id, job, queue, not_before_ms, plan FROM runs
             WHERE waiting = 1 AND machine_id = $1 ORDER BY id",
            &[&machine_id],
        )?
        .iter()
        .map(|row| {
            let id: i64 = row.try_get(0)?;
            Ok(WaitingRun {
                id,
                job: row.try_get(1)?,
                queue: row.try_get(2)?,
                not_before: row.try_get::<_, Option<i64>>(3)?.map(from_ms),
                plan: plan_from(id, row.try_get(4)?)?,
            })
        })
        .collect()
    }

    /// Hands a waiting run to a monitor: it stops waiting, carries this boot and, when its
    /// plan was made only now, that plan.
    fn run_release(
        &mut self,
        id: i64,
        boot_id: &str,
        plan: Option<&str>,
        anywhere: bool,
    ) -> Result<bool, StoreError> {
        let tx = &mut *self.0;
        let n = tx.execute(
            "UPDATE runs SET waiting = 0, boot_id = $2, plan = COALESCE($3, plan),
                 machine_id = CASE WHEN $4 THEN '' ELSE machine_id END
             WHERE id = $1 AND waiting = 1 AND status = 'queued'",
            &[&id, &boot_id, &plan, &anywhere],
        )?;
        Ok(n == 1)
    }

    /// A run's stored plan (`None`: made when it starts) and the epoch it was written under.
    fn run_plan(&mut self, id: i64) -> Result<Option<(Option<MonitorPlan>, i64)>, StoreError> {
        let c = &mut *self.0;
        c.query_opt("SELECT plan, epoch FROM runs WHERE id = $1", &[&id])?
            .map(|row| Ok((plan_from(id, row.try_get(0)?)?, row.try_get(1)?)))
            .transpose()
    }

    /// The outcome of the job's latest run before `id` that ended on its own, leaving out
    /// failures a retry followed.
    fn run_last_outcome_before(
        &mut self,
        job_id: i64,
        id: i64,
    ) -> Result<Option<RunStatus>, StoreError> {
        let c = &mut *self.0;
        c.query_opt(
            "SELECT status FROM runs r
             WHERE job_id = $1 AND id < $2 AND status IN ('succeeded', 'failed')
               AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.parent_id = r.id AND c.trigger = 'retry')
             ORDER BY id DESC LIMIT 1",
            &[&job_id, &id],
        )?
        .map(|row| status_from(row.try_get(0)?))
        .transpose()
    }

    /// Per queue, this host's runs in flight handed to monitors and those waiting.
    fn queue_loads(&mut self, machine_id: &str) -> Result<Vec<QueueLoad>, StoreError> {
        let c = &mut *self.0;
        c.query(
            "SELECT queue, count(*) FILTER (WHERE waiting = 0), count(*) FILTER (WHERE waiting = 1)
             FROM runs WHERE status IN ('queued', 'running') AND machine_id = $1 GROUP BY queue",
            &[&machine_id],
        )?
        .iter()
        .map(|row| {
            Ok(QueueLoad {
                queue: row.try_get(0)?,
                running: u64::try_from(row.try_get::<_, i64>(1)?).unwrap_or(0),
                waiting: u64::try_from(row.try_get::<_, i64>(2)?).unwrap_or(0),
            })
        })
        .collect()
    }
}
