//! Service and hold rows.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};
use stead_protocol::ServiceSpec;

use crate::clock::{from_ms, to_ms};
use crate::store::rows::{service_spec, spec_json};
use crate::store::{StoreError, StoredHold, StoredService};

fn service_from_row(row: &Row<'_>) -> rusqlite::Result<Result<StoredService, StoreError>> {
    let spec: String = row.get(1)?;
    let restarting: Option<i64> = row.get(2)?;
    Ok(service_spec(&spec).map(|spec| StoredService {
        spec,
        restarting_since: restarting.map(from_ms),
    }))
}

pub fn list(conn: &Connection) -> Result<Vec<StoredService>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT name, spec, restarting_since_ms FROM services ORDER BY name")?;
    let rows = stmt.query_map([], service_from_row)?;
    let mut services = Vec::new();
    for row in rows {
        services.push(row??);
    }
    Ok(services)
}

fn get(conn: &Connection, name: &str) -> Result<Option<StoredService>, StoreError> {
    conn.query_row(
        "SELECT name, spec, restarting_since_ms FROM services WHERE name = ?1",
        [name],
        service_from_row,
    )
    .optional()?
    .transpose()
}

pub fn insert(
    tx: &Transaction<'_>,
    spec: &ServiceSpec,
    now: Timestamp,
) -> Result<StoredService, StoreError> {
    if get(tx, &spec.name)?.is_some() {
        return Err(StoreError::ServiceExists(spec.name.clone()));
    }
    tx.execute(
        "INSERT INTO services (name, spec, created_at_ms) VALUES (?1, ?2, ?3)",
        params![spec.name, spec_json(spec), to_ms(now)],
    )?;
    get(tx, &spec.name)?.ok_or_else(|| StoreError::NoSuchService(spec.name.clone()))
}

pub fn update(tx: &Transaction<'_>, spec: &ServiceSpec) -> Result<(), StoreError> {
    let n = tx.execute(
        "UPDATE services SET spec = ?2 WHERE name = ?1",
        params![spec.name, spec_json(spec)],
    )?;
    if n == 0 {
        return Err(StoreError::NoSuchService(spec.name.clone()));
    }
    Ok(())
}

pub fn remove(tx: &Transaction<'_>, name: &str) -> Result<StoredService, StoreError> {
    let service = get(tx, name)?.ok_or_else(|| StoreError::NoSuchService(name.to_string()))?;
    // A job that depends on it would silently lose its protection.
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
    tx.execute("DELETE FROM services WHERE name = ?1", [name])?;
    Ok(service)
}

pub fn set_restarting(
    tx: &Transaction<'_>,
    name: &str,
    since: Option<Timestamp>,
) -> Result<(), StoreError> {
    let n = tx.execute(
        "UPDATE services SET restarting_since_ms = ?2 WHERE name = ?1",
        params![name, since.map(to_ms)],
    )?;
    if n == 0 {
        return Err(StoreError::NoSuchService(name.to_string()));
    }
    Ok(())
}

/// The services `job_id` depends on that are being restarted now.
pub fn restarting_dependencies(
    tx: &Transaction<'_>,
    job_id: i64,
) -> Result<Vec<String>, StoreError> {
    let mut stmt = tx.prepare_cached(
        "SELECT s.name FROM jobs j, json_each(j.spec, '$.depends_on') d
             JOIN services s ON s.name = d.value
         WHERE j.id = ?1 AND s.restarting_since_ms IS NOT NULL",
    )?;
    let names = stmt
        .query_map([job_id], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(names)
}

fn hold_from_row(row: &Row<'_>) -> rusqlite::Result<StoredHold> {
    Ok(StoredHold {
        name: row.get(0)?,
        service: row.get(1)?,
        acquired_at: from_ms(row.get(2)?),
        expires_at: from_ms(row.get(3)?),
    })
}

pub fn holds(conn: &Connection) -> Result<Vec<StoredHold>, StoreError> {
    let mut stmt = conn
        .prepare("SELECT name, service, acquired_at_ms, expires_at_ms FROM holds ORDER BY name")?;
    let holds = stmt
        .query_map([], hold_from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(holds)
}

pub fn hold_upsert(tx: &Transaction<'_>, hold: &StoredHold) -> Result<StoredHold, StoreError> {
    // Renewing keeps the first acquisition time.
    tx.execute(
        "INSERT INTO holds (name, service, acquired_at_ms, expires_at_ms) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (name) DO UPDATE SET service = ?2, expires_at_ms = ?4",
        params![
            hold.name,
            hold.service,
            to_ms(hold.acquired_at),
            to_ms(hold.expires_at)
        ],
    )?;
    tx.query_row(
        "SELECT name, service, acquired_at_ms, expires_at_ms FROM holds WHERE name = ?1",
        [&hold.name],
        hold_from_row,
    )
    .map_err(Into::into)
}

pub fn hold_remove(tx: &Transaction<'_>, name: &str) -> Result<StoredHold, StoreError> {
    let hold = tx
        .query_row(
            "SELECT name, service, acquired_at_ms, expires_at_ms FROM holds WHERE name = ?1",
            [name],
            hold_from_row,
        )
        .optional()?
        .ok_or_else(|| StoreError::NoSuchHold(name.to_string()))?;
    tx.execute("DELETE FROM holds WHERE name = ?1", [name])?;
    Ok(hold)
}
