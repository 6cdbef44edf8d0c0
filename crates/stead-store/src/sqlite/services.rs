//! Service and hold rows.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row, params};
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::{StoredHold, StoredService};
use stead_protocol::ServiceSpec;

use super::SqliteTx;
use crate::StoreError;
use crate::backend::ServiceSteps;
use crate::rows::{service_spec, spec_json};

fn service_from_row(row: &Row<'_>) -> rusqlite::Result<Result<StoredService, StoreError>> {
    let spec: String = row.get(1)?;
    let restarting: Option<i64> = row.get(2)?;
    Ok(service_spec(&spec).map(|spec| StoredService {
        spec,
        restarting_since: restarting.map(from_ms),
    }))
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

fn hold_from_row(row: &Row<'_>) -> rusqlite::Result<StoredHold> {
    Ok(StoredHold {
        name: row.get(0)?,
        service: row.get(1)?,
        acquired_at: from_ms(row.get(2)?),
        expires_at: from_ms(row.get(3)?),
    })
}

impl ServiceSteps for SqliteTx<'_> {
    fn service_list(&mut self) -> Result<Vec<StoredService>, StoreError> {
        let conn = self.0;
        let mut stmt =
            conn.prepare("SELECT name, spec, restarting_since_ms FROM services ORDER BY name")?;
        let rows = stmt.query_map([], service_from_row)?;
        let mut services = Vec::new();
        for row in rows {
            services.push(row??);
        }
        Ok(services)
    }

    /// `None` when the name is taken.
    fn service_insert(
        &mut self,
        spec: &ServiceSpec,
        now: Timestamp,
    ) -> Result<Option<StoredService>, StoreError> {
        let tx = self.0;
        if get(tx, &spec.name)?.is_some() {
            return Ok(None);
        }
        tx.execute(
            "INSERT INTO services (name, spec, created_at_ms) VALUES (?1, ?2, ?3)",
            params![spec.name, spec_json(spec), to_ms(now)],
        )?;
        get(tx, &spec.name)
    }

    /// False when there is no such service.
    fn service_update(&mut self, spec: &ServiceSpec) -> Result<bool, StoreError> {
        let tx = self.0;
        let n = tx.execute(
            "UPDATE services SET spec = ?2 WHERE name = ?1",
            params![spec.name, spec_json(spec)],
        )?;
        Ok(n == 1)
    }

    /// `None` when there is no such service.
    fn service_remove(&mut self, name: &str) -> Result<Option<StoredService>, StoreError> {
        let tx = self.0;
        let Some(service) = get(tx, name)? else {
            return Ok(None);
        };
        tx.execute("DELETE FROM services WHERE name = ?1", [name])?;
        Ok(Some(service))
    }

    /// False when there is no such service.
    fn service_set_restarting(
        &mut self,
        name: &str,
        since: Option<Timestamp>,
    ) -> Result<bool, StoreError> {
        let tx = self.0;
        let n = tx.execute(
            "UPDATE services SET restarting_since_ms = ?2 WHERE name = ?1",
            params![name, since.map(to_ms)],
        )?;
        Ok(n == 1)
    }

    /// The services `job_id` depends on that are being restarted now, in `depends_on`
    /// order. (A write transaction already holds the whole database: no row lock to take.)
    fn services_restarting_for(
        &mut self,
        job_id: i64,
        _lock: bool,
    ) -> Result<Vec<String>, StoreError> {
        let tx = self.0;
        let mut stmt = tx.prepare_cached(
            "SELECT s.name FROM jobs j, json_each(j.spec, '$.depends_on') d
                 JOIN services s ON s.name = d.value
             WHERE j.id = ?1 AND s.restarting_since_ms IS NOT NULL
             ORDER BY d.key",
        )?;
        let names = stmt
            .query_map([job_id], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(names)
    }

    fn hold_list(&mut self) -> Result<Vec<StoredHold>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare(
            "SELECT name, service, acquired_at_ms, expires_at_ms FROM holds ORDER BY name",
        )?;
        let holds = stmt
            .query_map([], hold_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(holds)
    }

    fn hold_upsert(&mut self, hold: &StoredHold) -> Result<StoredHold, StoreError> {
        let tx = self.0;
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

    /// `None` when there is no such hold.
    fn hold_remove(&mut self, name: &str) -> Result<Option<StoredHold>, StoreError> {
        let tx = self.0;
        let hold = tx
            .query_row(
                "SELECT name, service, acquired_at_ms, expires_at_ms FROM holds WHERE name = ?1",
                [name],
                hold_from_row,
            )
            .optional()?;
        if hold.is_some() {
            tx.execute("DELETE FROM holds WHERE name = ?1", [name])?;
        }
        Ok(hold)
    }
}
