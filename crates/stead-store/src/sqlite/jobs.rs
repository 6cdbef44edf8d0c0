//! Job rows: the spec as JSON plus the columns the scheduler reads.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row, params};
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::StoredJob;
use stead_protocol::JobSpec;

use super::SqliteTx;
use crate::StoreError;
use crate::backend::JobSteps;
use crate::rows::{job_spec, spec_json};

const COLUMNS: &str =
    "id, spec, created_at_ms, updated_at_ms, anchor_ms, fired_through_ms, paused_until_ms,
    overdue_since_ms";

fn from_row(row: &Row<'_>) -> rusqlite::Result<Result<StoredJob, StoreError>> {
    let id: i64 = row.get(0)?;
    let spec: String = row.get(1)?;
    let fired_through: Option<i64> = row.get(5)?;
    Ok(job_spec(id, &spec).and_then(|spec| {
        Ok(StoredJob {
            id,
            spec,
            created_at: from_ms(row.get(2)?),
            updated_at: from_ms(row.get(3)?),
            anchor: from_ms(row.get(4)?),
            fired_through: fired_through.map(from_ms),
            paused_until: row.get::<_, Option<i64>>(6)?.map(from_ms),
            overdue_since: row.get::<_, Option<i64>>(7)?.map(from_ms),
        })
    }))
}

pub fn get(tx: &Connection, name: &str) -> Result<Option<StoredJob>, StoreError> {
    let found = tx
        .prepare_cached(&format!("SELECT {COLUMNS} FROM jobs WHERE name = ?1"))?
        .query_row([name], from_row)
        .optional()?;
    found.transpose()
}

impl JobSteps for SqliteTx<'_> {
    fn job_get(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        get(self.0, name)
    }

    fn job_list(&mut self) -> Result<Vec<StoredJob>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM jobs ORDER BY name"))?;
        let rows = stmt.query_map([], from_row)?;
        let mut jobs = Vec::new();
        for row in rows {
            jobs.push(row??);
        }
        Ok(jobs)
    }

    /// The enabled jobs whose `after` names `name`. The spec is JSON: a text search passes
    /// over the rows without an `after` (most of them) before any is parsed.
    fn jobs_after(&mut self, name: &str) -> Result<Vec<StoredJob>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM jobs
             WHERE instr(spec, '\"after\"') > 0
               AND EXISTS (SELECT 1 FROM json_each(spec, '$.after') WHERE value = ?1)
               AND json_extract(spec, '$.enabled') IS NOT 0
             ORDER BY name"
        ))?;
        let rows = stmt.query_map([name], from_row)?;
        let mut jobs = Vec::new();
        for row in rows {
            jobs.push(row??);
        }
        Ok(jobs)
    }

    /// `None` when the name is taken.
    fn job_insert(
        &mut self,
        spec: &JobSpec,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        let tx = self.0;
        if get(tx, &spec.name)?.is_some() {
            return Ok(None);
        }
        let now_ms = to_ms(now);
        tx.execute(
            "INSERT INTO jobs (name, spec, enabled, created_at_ms, updated_at_ms, anchor_ms)
             VALUES (?1, ?2, ?3, ?4, ?4, ?4)",
            params![spec.name, spec_json(spec), spec.enabled, now_ms],
        )?;
        get(tx, &spec.name)
    }

    /// `None` when there is no such job.
    fn job_update(
        &mut self,
        spec: &JobSpec,
        schedule_changed: bool,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        let tx = self.0;
        let now_ms = to_ms(now);
        // A new schedule counts its fires from now: what the old one missed is not owed.
        let n = tx.execute(
            "UPDATE jobs SET spec = ?2, enabled = ?3, updated_at_ms = ?4,
                 anchor_ms = CASE WHEN ?5 THEN ?4 ELSE anchor_ms END,
                 fired_through_ms = CASE WHEN ?5 THEN ?4 ELSE fired_through_ms END
             WHERE name = ?1",
            params![
                spec.name,
                spec_json(spec),
                spec.enabled,
                now_ms,
                schedule_changed
            ],
        )?;
        if n == 0 {
            return Ok(None);
        }
        get(tx, &spec.name)
    }

    /// `None` when there is no such job.
    fn job_remove(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        let tx = self.0;
        let Some(job) = get(tx, name)? else {
            return Ok(None);
        };
        tx.execute("DELETE FROM jobs WHERE id = ?1", [job.id])?;
        Ok(Some(job))
    }

    fn job_mark_fired(&mut self, job_id: i64, through: Timestamp) -> Result<(), StoreError> {
        let tx = self.0;
        // Only ever forward: a late writer can never make a handled fire due again.
        tx.execute(
            "UPDATE jobs SET fired_through_ms = ?2
             WHERE id = ?1 AND (fired_through_ms IS NULL OR fired_through_ms < ?2)",
            params![job_id, to_ms(through)],
        )?;
        Ok(())
    }

    /// Pauses a job until `until`, or unpauses it; `None` when there is no such job.
    fn job_set_paused(
        &mut self,
        name: &str,
        until: Option<Timestamp>,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        let tx = self.0;
        tx.execute(
            "UPDATE jobs SET paused_until_ms = ?2, updated_at_ms = ?3 WHERE name = ?1",
            params![name, until.map(to_ms), to_ms(now)],
        )?;
        get(tx, name)
    }

    fn job_last_success(&mut self, job_id: i64) -> Result<Option<Timestamp>, StoreError> {
        let ended: Option<Option<i64>> = self
            .0
            .prepare_cached(
                "SELECT ended_at_ms FROM runs WHERE job_id = ?1 AND status = 'succeeded'
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([job_id], |r| r.get(0))
            .optional()?;
        Ok(ended.flatten().map(from_ms))
    }

    fn job_set_overdue(
        &mut self,
        job_id: i64,
        since: Option<Timestamp>,
    ) -> Result<bool, StoreError> {
        let changed = self
            .0
            .prepare_cached(
                "UPDATE jobs SET overdue_since_ms = ?2 WHERE id = ?1 AND overdue_since_ms IS NOT ?2",
            )?
            .execute(params![job_id, since.map(to_ms)])?;
        Ok(changed > 0)
    }
}
