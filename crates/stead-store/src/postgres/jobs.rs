//! Job rows: the spec as JSON plus the columns the scheduler reads.

use ::postgres::Row;
use jiff::Timestamp;
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::StoredJob;
use stead_protocol::JobSpec;

use super::PgTx;
use super::Sql;
use crate::StoreError;
use crate::backend::JobSteps;
use crate::rows::{job_spec, spec_json};

const COLUMNS: &str =
    "id, spec, created_at_ms, updated_at_ms, anchor_ms, fired_through_ms, paused_until_ms,
    overdue_since_ms";

fn from_row(row: &Row) -> Result<StoredJob, StoreError> {
    let id: i64 = row.try_get(0)?;
    let fired_through: Option<i64> = row.try_get(5)?;
    Ok(StoredJob {
        id,
        spec: job_spec(id, row.try_get(1)?)?,
        created_at: from_ms(row.try_get(2)?),
        updated_at: from_ms(row.try_get(3)?),
        anchor: from_ms(row.try_get(4)?),
        fired_through: fired_through.map(from_ms),
        paused_until: row.try_get::<_, Option<i64>>(6)?.map(from_ms),
        overdue_since: row.try_get::<_, Option<i64>>(7)?.map(from_ms),
    })
}

pub fn get(c: &mut dyn Sql, name: &str) -> Result<Option<StoredJob>, StoreError> {
    c.query_opt(
        &format!("SELECT {COLUMNS} FROM jobs WHERE name = $1"),
        &[&name],
    )?
    .as_ref()
    .map(from_row)
    .transpose()
}

pub fn insert(
    tx: &mut dyn Sql,
    spec: &JobSpec,
    now: Timestamp,
) -> Result<Option<StoredJob>, StoreError> {
    // The name's uniqueness decides, in the statement: no window between a check and
    // the insert for another host to fill.
    tx.query_opt(
        &format!(
            "INSERT INTO jobs (name, spec, enabled, created_at_ms, updated_at_ms, anchor_ms)
             VALUES ($1, $2, $3, $4, $4, $4)
             ON CONFLICT (name) DO NOTHING
             RETURNING {COLUMNS}"
        ),
        &[&spec.name, &spec_json(spec), &spec.enabled, &to_ms(now)],
    )?
    .as_ref()
    .map(from_row)
    .transpose()
}

impl JobSteps for PgTx<'_> {
    fn job_get(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        get(&mut *self.0, name)
    }

    fn job_list(&mut self) -> Result<Vec<StoredJob>, StoreError> {
        let c = &mut *self.0;
        c.query(&format!("SELECT {COLUMNS} FROM jobs ORDER BY name"), &[])?
            .iter()
            .map(from_row)
            .collect()
    }

    /// The enabled jobs whose `after` names `name`.
    fn jobs_after(&mut self, name: &str) -> Result<Vec<StoredJob>, StoreError> {
        let c = &mut *self.0;
        c.query(
            &format!(
                "SELECT {COLUMNS} FROM jobs
                 WHERE (spec::jsonb -> 'after') ? $1
                   AND COALESCE((spec::jsonb ->> 'enabled')::boolean, true)
                 ORDER BY name"
            ),
            &[&name],
        )?
        .iter()
        .map(from_row)
        .collect()
    }

    fn job_insert(
        &mut self,
        spec: &JobSpec,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        insert(&mut *self.0, spec, now)
    }

    fn job_update(
        &mut self,
        spec: &JobSpec,
        schedule_changed: bool,
        now: Timestamp,
    ) -> Result<Option<StoredJob>, StoreError> {
        let tx = &mut *self.0;
        // A new schedule counts its fires from now: what the old one missed is not owed.
        tx.query_opt(
            &format!(
                "UPDATE jobs SET spec = $2, enabled = $3, updated_at_ms = $4,
                     anchor_ms = CASE WHEN $5 THEN $4 ELSE anchor_ms END,
                     fired_through_ms = CASE WHEN $5 THEN $4 ELSE fired_through_ms END
                 WHERE name = $1
                 RETURNING {COLUMNS}"
            ),
            &[
                &spec.name,
                &spec_json(spec),
                &spec.enabled,
                &to_ms(now),
                &schedule_changed,
            ],
        )?
        .as_ref()
        .map(from_row)
        .transpose()
    }

    fn job_remove(&mut self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        let tx = &mut *self.0;
        tx.query_opt(
            &format!("DELETE FROM jobs WHERE name = $1 RETURNING {COLUMNS}"),
            &[&name],
        )?
        .as_ref()
        .map(from_row)
        .transpose()
    }

    fn job_mark_fired(&mut self, job_id: i64, through: Timestamp) -> Result<(), StoreError> {
        let tx = &mut *self.0;
        // Only ever forward: a late writer can never make a handled fire due again.
        tx.execute(
            "UPDATE jobs SET fired_through_ms = $2
             WHERE id = $1 AND (fired_through_ms IS NULL OR fired_through_ms < $2)",
            &[&job_id, &to_ms(through)],
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
        let tx = &mut *self.0;
        tx.execute(
            "UPDATE jobs SET paused_until_ms = $2, updated_at_ms = $3 WHERE name = $1",
            &[&name, &until.map(to_ms), &to_ms(now)],
        )?;
        get(tx, name)
    }

    fn job_last_success(&mut self, job_id: i64) -> Result<Option<Timestamp>, StoreError> {
        let c = &mut *self.0;
        let row = c.query_opt(
            "SELECT ended_at_ms FROM runs WHERE job_id = $1 AND status = 'succeeded'
             ORDER BY id DESC LIMIT 1",
            &[&job_id],
        )?;
        Ok(row
            .map(|r| r.try_get::<_, Option<i64>>(0))
            .transpose()?
            .flatten()
            .map(from_ms))
    }

    fn job_set_overdue(
        &mut self,
        job_id: i64,
        since: Option<Timestamp>,
    ) -> Result<bool, StoreError> {
        let changed = self.0.execute(
            "UPDATE jobs SET overdue_since_ms = $2
             WHERE id = $1 AND overdue_since_ms IS DISTINCT FROM $2",
            &[&job_id, &since.map(to_ms)],
        )?;
        Ok(changed > 0)
    }
}
