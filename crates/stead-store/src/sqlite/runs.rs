//! Run rows: inserts, transitions and queries.
//!
//! Transitions are compare-and-set on the status, so each run's terminal state is
//! written exactly once whoever races to write it (its monitor, a cancel, the server
//! reconciling after a crash).

use std::path::Path;

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row, params};
use stead_core::admission::Verdict;
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::{ActiveRun, NewRun, QueueLoad, RunCount, WaitingRun};
use stead_core::runs::{LANDED, MonitorPlan, RunEnd};
use stead_protocol::{Run, RunFilter, RunStatus, Trigger};
use stead_sys::identity::StartIdentity;

use super::SqliteTx;
use crate::Refusal;
use crate::StoreError;
use crate::backend::InFlightOf;
use crate::backend::RunSteps;
use crate::rows::{
    RUN_COLUMNS, end_start_ms, end_wait, ended_at_ms, list_limit, params_json, plan_from, run_from,
    status_from, status_list, trigger_from,
};
use crate::run_ledger::IN_FLIGHT;

fn from_row(row: &Row<'_>) -> rusqlite::Result<Result<Run, StoreError>> {
    Ok(run_from(row))
}

pub fn get(conn: &Connection, id: i64) -> Result<Option<Run>, StoreError> {
    conn.prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?
        .transpose()
}

/// The statement and values of a listing.
pub(super) fn list_query(filter: &RunFilter) -> (String, Vec<rusqlite::types::Value>) {
    let limit = list_limit(filter);
    // Only the conditions given, so SQLite can pick `runs_by_job` or `runs_by_status`
    // (an `(? IS NULL OR col = ?)` form hides them and scans the whole ledger).
    let mut conditions = Vec::new();
    let mut values: Vec<rusqlite::types::Value> = Vec::new();
    if let Some(job) = &filter.job {
        values.push(job.clone().into());
        conditions.push(format!("job = ?{}", values.len()));
    }
    if let Some(status) = filter.status {
        values.push(status.as_str().to_string().into());
        conditions.push(format!("status = ?{}", values.len()));
    }
    if let Some(before) = filter.before_id {
        values.push(before.into());
        conditions.push(format!("id < ?{}", values.len()));
    }
    if filter.no_skipped {
        conditions.push("status <> 'skipped'".to_string());
    }
    values.push(limit.into());
    let clause = if conditions.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conditions.join(" AND "))
    };
    let sql = format!(
        "SELECT {RUN_COLUMNS} FROM runs {clause} ORDER BY id DESC LIMIT ?{}",
        values.len()
    );
    (sql, values)
}

fn active_from_row(row: &Row<'_>) -> rusqlite::Result<Result<ActiveRun, StoreError>> {
    let status: String = row.get(2)?;
    let pid: Option<u32> = row.get(5)?;
    let identity: Option<String> = row.get(6)?;
    Ok(status_from(&status).and_then(|status| {
        Ok(ActiveRun {
            id: row.get(0)?,
            job: row.get(1)?,
            status,
            machine_id: row.get(3)?,
            boot_id: row.get(4)?,
            monitor: pid.zip(identity.map(StartIdentity::from_stored)),
            epoch: row.get(7)?,
            cancel_requested: row.get::<_, Option<i64>>(8)?.is_some(),
            waiting: row.get::<_, i64>(9)? == 1,
            queue: row.get(10)?,
            staged_for: row.get::<_, Option<i64>>(11)?.map(from_ms),
        })
    }))
}

const ACTIVE_COLUMNS: &str = "id, job, status, machine_id, boot_id, monitor_pid, \
     monitor_start_identity, epoch, cancel_requested_at_ms, waiting, queue, \
     CASE WHEN scheduled_at_ms > created_at_ms THEN scheduled_at_ms END";

/// The query for the runs of `of` that have not ended, oldest first, and the value of
/// its `?1`. Each reads a partial index of the runs in flight (migration 9), so its cost
/// follows the runs going, not every run kept.
pub(super) fn in_flight_query(of: InFlightOf<'_>) -> (String, rusqlite::types::Value) {
    let (condition, value) = match of {
        InFlightOf::Machine(machine_id) => ("machine_id = ?1", machine_id.to_string().into()),
        InFlightOf::Job(job_id) => ("job_id = ?1", job_id.into()),
    };
    let sql = format!(
        "SELECT {ACTIVE_COLUMNS} FROM runs
         WHERE status IN ({}) AND {condition} ORDER BY id",
        status_list(IN_FLIGHT)
    );
    (sql, value)
}

impl RunSteps for SqliteTx<'_> {
    fn run_get(&mut self, id: i64) -> Result<Option<Run>, StoreError> {
        get(self.0, id)
    }

    fn run_list(&mut self, filter: &RunFilter) -> Result<Vec<Run>, StoreError> {
        let conn = self.0;
        let (sql, values) = list_query(filter);
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values), from_row)?;
        let mut runs = Vec::new();
        for row in rows {
            runs.push(row??);
        }
        Ok(runs)
    }

    fn run_counts(&mut self) -> Result<Vec<RunCount>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached(
            "SELECT job, status, trigger, resolution IS NOT NULL, count(*) FROM runs
             GROUP BY job, status, trigger, resolution IS NOT NULL ORDER BY job",
        )?;
        let rows = stmt.query_map([], |row| {
            let status: String = row.get(1)?;
            let trigger: String = row.get(2)?;
            let count: i64 = row.get(4)?;
            Ok((
                row.get::<_, String>(0)?,
                status,
                trigger,
                row.get(3)?,
                count,
            ))
        })?;
        let mut counts = Vec::new();
        for row in rows {
            let (job, status, trigger, resolved, count) = row?;
            counts.push(RunCount {
                job,
                status: status_from(&status)?,
                trigger: trigger_from(&trigger)?,
                resolved,
                count: u64::try_from(count).unwrap_or(0),
            });
        }
        Ok(counts)
    }

    /// Runs queued or running, oldest first.
    fn runs_in_flight(&mut self, of: InFlightOf<'_>) -> Result<Vec<ActiveRun>, StoreError> {
        let conn = self.0;
        let (sql, value) = in_flight_query(of);
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([value], active_from_row)?;
        let mut runs = Vec::new();
        for row in rows {
            runs.push(row??);
        }
        Ok(runs)
    }

    /// Interrupted runs of `machine_id` whose debt is not settled yet, oldest first.
    fn runs_owed(&mut self, machine_id: &str) -> Result<Vec<Run>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs
             WHERE status = 'interrupted' AND resolution IS NULL AND machine_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([machine_id], from_row)?;
        let mut runs = Vec::new();
        for row in rows {
            runs.push(row??);
        }
        Ok(runs)
    }

    /// The job a run belongs to.
    fn run_job(&mut self, run_id: i64) -> Result<i64, StoreError> {
        let conn = self.0;
        let id = run_id;
        conn.prepare_cached("SELECT job_id FROM runs WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?
            .ok_or(StoreError::Refused(Refusal::NoSuchRun(id)))
    }

    /// Writes a new run's row; its key, log path and plan follow in [`complete`].
    fn run_insert(
        &mut self,
        new: &NewRun,
        verdict: &Verdict,
        epoch: i64,
    ) -> Result<i64, StoreError> {
        let tx = self.0;
        tx.prepare_cached(
            "INSERT INTO runs (job_id, job, trigger, scheduled_at_ms, idempotency_key, parent_id,
                 attempt, machine_id, boot_id, status, reason, created_at_ms, ended_at_ms,
                 log_path, plan, epoch, original_trigger, params, queue, waiting, not_before_ms)
             VALUES (?1, ?2, ?3, ?4, '', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, '', '{}', ?13, ?14,
                 ?15, ?16, ?17, ?18)",
        )?
        .execute(params![
            new.job_id,
            new.job,
            new.trigger.as_str(),
            new.scheduled_at.map(to_ms),
            new.parent_id,
            new.attempt,
            new.machine_id,
            new.boot_id,
            verdict.status.as_str(),
            verdict.reason,
            to_ms(new.created_at),
            ended_at_ms(new, verdict),
            epoch,
            new.original_trigger.map(Trigger::as_str),
            params_json(new.params.as_ref()),
            new.queue,
            i64::from(new.waiting && verdict.status == RunStatus::Queued),
            new.not_before.map(to_ms),
        ])?;
        Ok(tx.last_insert_rowid())
    }

    /// Completes a new row with its key, log path and plan, and answers it.
    fn run_complete(
        &mut self,
        id: i64,
        key: &str,
        log_path: &Path,
        plan: &str,
    ) -> Result<Run, StoreError> {
        let tx = self.0;
        tx.prepare_cached(
            "UPDATE runs SET idempotency_key = ?2, log_path = ?3, plan = ?4 WHERE id = ?1",
        )?
        .execute(params![id, key, log_path.to_string_lossy(), plan])?;
        get(tx, id)?.ok_or(StoreError::Refused(Refusal::NoSuchRun(id)))
    }

    /// Ends a run whose status is one of `from`; the status guard makes it happen at most
    /// once, whoever races to write it. An ended run waits for nothing.
    fn run_end(&mut self, id: i64, end: &RunEnd, from: &[RunStatus]) -> Result<bool, StoreError> {
        let tx = self.0;
        let (says, started) = end_start_ms(end);
        let (waited_ms, wait_note) = end_wait(end);
        let n = tx
            .prepare_cached(&format!(
                "UPDATE runs SET status = ?2, exit_code = ?3, signal = ?4, reason = ?5,
                     ended_at_ms = ?6, ended_processes = ?7, waiting = 0,
                     started_at_ms = CASE WHEN ?8 THEN ?9
                         WHEN started_at_ms > ?6 THEN ?6 ELSE started_at_ms END,
                     waited_ms = ?10, wait_note = ?11
                 WHERE id = ?1 AND status IN ({})",
                status_list(from)
            ))?
            .execute(params![
                id,
                end.status.as_str(),
                end.exit_code,
                end.signal,
                end.reason,
                to_ms(end.ended_at),
                end.ended_processes,
                says,
                started,
                waited_ms,
                wait_note
            ])?;
        Ok(n == 1)
    }

    fn run_mark_running(
        &mut self,
        id: i64,
        pid: u32,
        identity: &StartIdentity,
        started_at: Timestamp,
    ) -> Result<bool, StoreError> {
        let tx = self.0;
        let n = tx
            .prepare_cached(
                "UPDATE runs SET status = 'running', monitor_pid = ?2, monitor_start_identity = ?3,
                     started_at_ms = ?4
                 WHERE id = ?1 AND status = 'queued' AND waiting = 0",
            )?
            .execute(params![id, pid, identity.as_str(), to_ms(started_at)])?;
        Ok(n == 1)
    }

    fn run_request_cancel(&mut self, id: i64, now: Timestamp) -> Result<(), StoreError> {
        let tx = self.0;
        tx.execute(
            "UPDATE runs SET cancel_requested_at_ms = COALESCE(cancel_requested_at_ms, ?2)
             WHERE id = ?1 AND status IN ('queued', 'running')",
            params![id, to_ms(now)],
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
        let tx = self.0;
        let n = tx.execute(
            "UPDATE runs SET resolution = ?2, resolved_at_ms = ?3
             WHERE id = ?1 AND status = 'interrupted' AND resolution IS NULL",
            params![id, resolution, to_ms(now)],
        )?;
        Ok(n == 1)
    }

    /// A receipt proved an interrupted run's work landed: it is closed as succeeded. The one
    /// transition out of a terminal status, and only while the debt is unsettled.
    fn run_land(&mut self, id: i64, now: Timestamp) -> Result<bool, StoreError> {
        let tx = self.0;
        let n = tx.execute(
            "UPDATE runs SET status = 'succeeded', reason = ?2, resolution = ?2, resolved_at_ms = ?3
             WHERE id = ?1 AND status = 'interrupted' AND resolution IS NULL",
            params![id, LANDED, to_ms(now)],
        )?;
        Ok(n == 1)
    }

    /// Queued runs of `machine_id` that wait for their time or their queue, oldest first.
    fn runs_waiting(&mut self, machine_id: &str) -> Result<Vec<WaitingRun>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached(
            "SELECT id, job, queue, not_before_ms, plan FROM runs
             WHERE waiting = 1 AND machine_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([machine_id], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<String>>(2)?,
                row.get::<_, Option<i64>>(3)?,
                row.get::<_, String>(4)?,
            ))
        })?;
        let mut runs = Vec::new();
        for row in rows {
            let (id, job, queue, not_before, plan) = row?;
            runs.push(WaitingRun {
                id,
                job,
                queue,
                not_before: not_before.map(from_ms),
                plan: plan_from(id, &plan)?,
            });
        }
        Ok(runs)
    }

    /// Hands a waiting run to a monitor: it stops waiting, carries this boot (the one its
    /// monitor runs under) and, when its plan was made only now, that plan.
    fn run_release(
        &mut self,
        id: i64,
        boot_id: &str,
        plan: Option<&str>,
        anywhere: bool,
    ) -> Result<bool, StoreError> {
        let tx = self.0;
        let n = tx.execute(
            "UPDATE runs SET waiting = 0, boot_id = ?2, plan = COALESCE(?3, plan),
                 machine_id = CASE WHEN ?4 THEN '' ELSE machine_id END
             WHERE id = ?1 AND waiting = 1 AND status = 'queued'",
            params![id, boot_id, plan, anywhere],
        )?;
        Ok(n == 1)
    }

    /// A run's stored plan (`None`: made when it starts) and the epoch it was written under.
    fn run_plan(&mut self, id: i64) -> Result<Option<(Option<MonitorPlan>, i64)>, StoreError> {
        let conn = self.0;
        let found = conn
            .prepare_cached("SELECT plan, epoch FROM runs WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .optional()?;
        found
            .map(|(plan, epoch)| Ok((plan_from(id, &plan)?, epoch)))
            .transpose()
    }

    /// The outcome of the job's latest run before `id` that ended on its own (succeeded or
    /// failed), leaving out failures a retry followed: what a success recovers from.
    fn run_last_outcome_before(
        &mut self,
        job_id: i64,
        id: i64,
    ) -> Result<Option<RunStatus>, StoreError> {
        let conn = self.0;
        let status: Option<String> = conn
            .prepare_cached(
                "SELECT status FROM runs r
                 WHERE job_id = ?1 AND id < ?2 AND status IN ('succeeded', 'failed')
                   AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.parent_id = r.id AND c.trigger = 'retry')
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row(params![job_id, id], |r| r.get(0))
            .optional()?;
        status.as_deref().map(status_from).transpose()
    }

    /// Per queue (`None`: runs of jobs with no queue), this host's runs in flight handed to
    /// monitors and those waiting.
    fn queue_loads(&mut self, machine_id: &str) -> Result<Vec<QueueLoad>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached(
            "SELECT queue, sum(waiting = 0), sum(waiting = 1) FROM runs
             WHERE status IN ('queued', 'running') AND machine_id = ?1 GROUP BY queue",
        )?;
        let rows = stmt.query_map([machine_id], |row| {
            Ok(QueueLoad {
                queue: row.get(0)?,
                running: u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                waiting: u64::try_from(row.get::<_, i64>(2)?).unwrap_or(0),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
