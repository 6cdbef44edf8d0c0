//! Job rows: the spec as JSON plus the columns the scheduler reads.

use ::postgres::Row;
use jiff::Timestamp;
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::StoredJob;
use stead_protocol::JobSpec;

use super::Sql;
use crate::StoreError;
use crate::rows::{job_spec, spec_json};

const COLUMNS: &str =
    "id, spec, created_at_ms, updated_at_ms, anchor_ms, fired_through_ms, paused_until_ms";

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

pub fn list(c: &mut dyn Sql) -> Result<Vec<StoredJob>, StoreError> {
    c.query(&format!("SELECT {COLUMNS} FROM jobs ORDER BY name"), &[])?
        .iter()
        .map(from_row)
        .collect()
}

/// The enabled jobs whose `after` names `name`.
pub fn after(c: &mut dyn Sql, name: &str) -> Result<Vec<StoredJob>, StoreError> {
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

pub fn update(
    tx: &mut dyn Sql,
    spec: &JobSpec,
    schedule_changed: bool,
    now: Timestamp,
) -> Result<Option<StoredJob>, StoreError> {
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

pub fn remove(tx: &mut dyn Sql, name: &str) -> Result<Option<StoredJob>, StoreError> {
    tx.query_opt(
        &format!("DELETE FROM jobs WHERE name = $1 RETURNING {COLUMNS}"),
        &[&name],
    )?
    .as_ref()
    .map(from_row)
    .transpose()
}

pub fn mark_fired(tx: &mut dyn Sql, job_id: i64, through: Timestamp) -> Result<(), StoreError> {
    // Only ever forward: a late writer can never make a handled fire due again.
    tx.execute(
        "UPDATE jobs SET fired_through_ms = $2
         WHERE id = $1 AND (fired_through_ms IS NULL OR fired_through_ms < $2)",
        &[&job_id, &to_ms(through)],
    )?;
    Ok(())
}

/// Pauses a job until `until`, or unpauses it; `None` when there is no such job.
pub fn set_paused(
    tx: &mut dyn Sql,
    name: &str,
    until: Option<Timestamp>,
    now: Timestamp,
) -> Result<Option<StoredJob>, StoreError> {
    tx.execute(
        "UPDATE jobs SET paused_until_ms = $2, updated_at_ms = $3 WHERE name = $1",
        &[&name, &until.map(to_ms), &to_ms(now)],
    )?;
    get(tx, name)
}
