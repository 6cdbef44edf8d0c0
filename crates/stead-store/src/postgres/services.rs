//! Service and hold rows.

use ::postgres::Row;
use jiff::Timestamp;
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::{StoredHold, StoredService};
use stead_protocol::ServiceSpec;

use super::PgTx;
use crate::StoreError;
use crate::backend::ServiceSteps;
use crate::rows::{service_spec, spec_json};

const SERVICE_COLUMNS: &str = "name, spec, restarting_since_ms";
const HOLD_COLUMNS: &str = "name, service, acquired_at_ms, expires_at_ms";

fn service_from_row(row: &Row) -> Result<StoredService, StoreError> {
    let restarting: Option<i64> = row.try_get(2)?;
    Ok(StoredService {
        spec: service_spec(row.try_get(1)?)?,
        restarting_since: restarting.map(from_ms),
    })
}

fn hold_from_row(row: &Row) -> Result<StoredHold, StoreError> {
    Ok(StoredHold {
        name: row.try_get(0)?,
        service: row.try_get(1)?,
        acquired_at: from_ms(row.try_get(2)?),
        expires_at: from_ms(row.try_get(3)?),
    })
}

impl ServiceSteps for PgTx<'_> {
    fn service_list(&mut self) -> Result<Vec<StoredService>, StoreError> {
        let c = &mut *self.0;
        c.query(
            &format!("SELECT {SERVICE_COLUMNS} FROM services ORDER BY name"),
            &[],
        )?
        .iter()
        .map(service_from_row)
        .collect()
    }

    fn service_insert(
        &mut self,
        spec: &ServiceSpec,
        now: Timestamp,
    ) -> Result<Option<StoredService>, StoreError> {
        let tx = &mut *self.0;
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
        .transpose()
    }

    /// False when there is no such service.
    fn service_update(&mut self, spec: &ServiceSpec) -> Result<bool, StoreError> {
        let tx = &mut *self.0;
        let n = tx.execute(
            "UPDATE services SET spec = $2 WHERE name = $1",
            &[&spec.name, &spec_json(spec)],
        )?;
        Ok(n == 1)
    }

    /// Removes a service that no job names; the caller holds the catalog lock, so no job
    /// can start naming it before the commit.
    /// `None` when there is no such service.
    fn service_remove(&mut self, name: &str) -> Result<Option<StoredService>, StoreError> {
        let tx = &mut *self.0;
        tx.query_opt(
            &format!("DELETE FROM services WHERE name = $1 RETURNING {SERVICE_COLUMNS}"),
            &[&name],
        )?
        .as_ref()
        .map(service_from_row)
        .transpose()
    }

    fn service_set_restarting(
        &mut self,
        name: &str,
        since: Option<Timestamp>,
    ) -> Result<bool, StoreError> {
        let tx = &mut *self.0;
        let n = tx.execute(
            "UPDATE services SET restarting_since_ms = $2 WHERE name = $1",
            &[&name, &since.map(to_ms)],
        )?;
        Ok(n == 1)
    }

    /// The services `job_id` depends on that are being restarted now, in `depends_on`
    /// order. With `lock`, they are held `FOR SHARE` until the commit: no restart starts or
    /// ends meanwhile.
    fn services_restarting_for(
        &mut self,
        job_id: i64,
        lock: bool,
    ) -> Result<Vec<String>, StoreError> {
        let c = &mut *self.0;
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
                if lock { " FOR SHARE OF s" } else { "" }
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

    fn hold_list(&mut self) -> Result<Vec<StoredHold>, StoreError> {
        let c = &mut *self.0;
        c.query(
            &format!("SELECT {HOLD_COLUMNS} FROM holds ORDER BY name"),
            &[],
        )?
        .iter()
        .map(hold_from_row)
        .collect()
    }

    fn hold_upsert(&mut self, hold: &StoredHold) -> Result<StoredHold, StoreError> {
        let tx = &mut *self.0;
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

    /// `None` when there is no such hold.
    fn hold_remove(&mut self, name: &str) -> Result<Option<StoredHold>, StoreError> {
        let tx = &mut *self.0;
        tx.query_opt(
            &format!("DELETE FROM holds WHERE name = $1 RETURNING {HOLD_COLUMNS}"),
            &[&name],
        )?
        .as_ref()
        .map(hold_from_row)
        .transpose()
    }
}
