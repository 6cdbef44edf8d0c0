//! Service and hold rows.

use ::postgres::{GenericClient, Row, Transaction};
use jiff::Timestamp;
use stead_protocol::ServiceSpec;

use crate::clock::{from_ms, to_ms};
use crate::store::rows::{service_spec, spec_json};
use crate::store::{StoreError, StoredHold, StoredService};

const SERVICE_COLUMNS: &str = "name, spec, restarting_since_ms";
const HOLD_COLUMNS: &str = "name, service, acquired_at_ms, expires_at_ms";

fn service_from_row(row: &Row) -> Result<StoredService, StoreError> {
    let restarting: Option<i64> = row.try_get(2)?;
    Ok(StoredService {
        spec: service_spec(row.try_get(1)?)?,
        restarting_since: restarting.map(from_ms),
    })
}

pub fn list(c: &mut impl GenericClient) -> Result<Vec<StoredService>, StoreError> {
    c.query(
        &format!("SELECT {SERVICE_COLUMNS} FROM services ORDER BY name"),
        &[],
    )?
    .iter()
    .map(service_from_row)
    .collect()
}

pub fn insert(
    tx: &mut Transaction<'_>,
    spec: &ServiceSpec,
    now: Timestamp,
) -> Result<StoredService, StoreError> {
    tx.query_opt(
        &format!(
            "INSERT INTO services (name, spec, created_at_ms) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO NOTHING
             RETURNING {SERVICE_COLUMNS}"
        ),
        &[&spec.name, &spec_json(spec), &to_ms(now)],
    )?
    .as_ref()
    .map(service_from_row)
    .transpose()?
    .ok_or_else(|| StoreError::ServiceExists(spec.name.clone()))
}

pub fn update(tx: &mut Transaction<'_>, spec: &ServiceSpec) -> Result<(), StoreError> {
    let n = tx.execute(
        "UPDATE services SET spec = $2 WHERE name = $1",
        &[&spec.name, &spec_json(spec)],
    )?;
    if n == 0 {
        return Err(StoreError::NoSuchService(spec.name.clone()));
    }
    Ok(())
}

/// Removes a service that no job names; the caller holds the catalog lock, so no job
/// can start naming it before the commit.
pub fn remove(tx: &mut Transaction<'_>, name: &str) -> Result<StoredService, StoreError> {
    let service = tx
        .query_opt(
            &format!("DELETE FROM services WHERE name = $1 RETURNING {SERVICE_COLUMNS}"),
            &[&name],
        )?
        .as_ref()
        .map(service_from_row)
        .transpose()?
        .ok_or_else(|| StoreError::NoSuchService(name.to_string()))?;
    // A job that depends on it would silently lose its protection: refused, and the
    // delete is rolled back with the transaction.
    let dependents: Vec<String> = super::jobs::list(tx)?
        .into_iter()
        .filter(|j| j.spec.depends_on.iter().any(|d| d == name))
        .map(|j| j.spec.name)
        .collect();
    if !dependents.is_empty() {
        return Err(StoreError::ServiceInUse {
            service: name.to_string(),
            jobs: dependents,
        });
    }
    Ok(service)
}

pub fn set_restarting(
    tx: &mut Transaction<'_>,
    name: &str,
    since: Option<Timestamp>,
) -> Result<(), StoreError> {
    let n = tx.execute(
        "UPDATE services SET restarting_since_ms = $2 WHERE name = $1",
        &[&name, &since.map(to_ms)],
    )?;
    if n == 0 {
        return Err(StoreError::NoSuchService(name.to_string()));
    }
    Ok(())
}

/// Whether reading the services a job depends on locks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    Unlocked,
    /// `FOR SHARE` until the commit: no restart starts or ends meanwhile.
    Share,
}

/// The services `job_id` depends on that are being restarted now, in `depends_on`
/// order.
pub fn restarting_dependencies(
    c: &mut impl GenericClient,
    job_id: i64,
    lock: Lock,
) -> Result<Vec<String>, StoreError> {
    // Every dependency is read (and locked), restarting or not, and filtered here: a
    // lock taken only on the rows restarting now would leave the others free to start.
    let rows = c.query(
        &format!(
            "SELECT s.name, s.restarting_since_ms IS NOT NULL
             FROM jobs j
             CROSS JOIN LATERAL jsonb_array_elements_text(j.spec::jsonb -> 'depends_on')
                 WITH ORDINALITY AS d (name, position)
             JOIN services s ON s.name = d.name
             WHERE j.id = $1
             ORDER BY d.position{}",
            match lock {
                Lock::Unlocked => "",
                Lock::Share => " FOR SHARE OF s",
            }
        ),
        &[&job_id],
    )?;
    let mut names = Vec::new();
    for row in &rows {
        if row.try_get::<_, bool>(1)? {
            names.push(row.try_get(0)?);
        }
    }
    Ok(names)
}

fn hold_from_row(row: &Row) -> Result<StoredHold, StoreError> {
    Ok(StoredHold {
        name: row.try_get(0)?,
        service: row.try_get(1)?,
        acquired_at: from_ms(row.try_get(2)?),
        expires_at: from_ms(row.try_get(3)?),
    })
}

pub fn holds(c: &mut impl GenericClient) -> Result<Vec<StoredHold>, StoreError> {
    c.query(
        &format!("SELECT {HOLD_COLUMNS} FROM holds ORDER BY name"),
        &[],
    )?
    .iter()
    .map(hold_from_row)
    .collect()
}

pub fn hold_upsert(tx: &mut Transaction<'_>, hold: &StoredHold) -> Result<StoredHold, StoreError> {
    // Renewing keeps the first acquisition time.
    let row = tx.query_one(
        &format!(
            "INSERT INTO holds (name, service, acquired_at_ms, expires_at_ms)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (name) DO UPDATE
             SET service = EXCLUDED.service, expires_at_ms = EXCLUDED.expires_at_ms
             RETURNING {HOLD_COLUMNS}"
        ),
        &[
            &hold.name,
            &hold.service,
            &to_ms(hold.acquired_at),
            &to_ms(hold.expires_at),
        ],
    )?;
    hold_from_row(&row)
}

pub fn hold_remove(tx: &mut Transaction<'_>, name: &str) -> Result<StoredHold, StoreError> {
    tx.query_opt(
        &format!("DELETE FROM holds WHERE name = $1 RETURNING {HOLD_COLUMNS}"),
        &[&name],
    )?
    .as_ref()
    .map(hold_from_row)
    .transpose()?
    .ok_or_else(|| StoreError::NoSuchHold(name.to_string()))
}
