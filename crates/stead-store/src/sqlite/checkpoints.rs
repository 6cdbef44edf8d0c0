//! Checkpoints and completed steps in SQLite's SQL.

use jiff::Timestamp;
use rusqlite::{OptionalExtension, Row, params};
use stead_core::clock::{from_ms, rfc3339, to_ms};
use stead_protocol::{Checkpoint, Step};

use super::SqliteTx;
use crate::StoreError;
use crate::backend::{CheckpointSteps, KeyHolder};

const CHECKPOINT: &str = "SELECT name, value, run_id, set_at_ms FROM checkpoints";
const STEP: &str = "SELECT name, run_id, attempt, completed_at_ms FROM steps";

fn checkpoint(r: &Row<'_>) -> rusqlite::Result<Checkpoint> {
    Ok(Checkpoint {
        key: r.get(0)?,
        value: r.get(1)?,
        run_id: r.get(2)?,
        set_at: rfc3339(from_ms(r.get(3)?)),
    })
}

fn step(r: &Row<'_>) -> rusqlite::Result<Step> {
    Ok(Step {
        name: r.get(0)?,
        run_id: r.get(1)?,
        attempt: r.get(2)?,
        completed_at: rfc3339(from_ms(r.get(3)?)),
    })
}

impl CheckpointSteps for SqliteTx<'_> {
    /// A write transaction holds the whole file: `lock` adds nothing.
    fn key_holder(&mut self, run_id: i64, _lock: bool) -> Result<Option<KeyHolder>, StoreError> {
        let conn = self.0;
        Ok(conn
            .prepare_cached(
                "SELECT r.idempotency_key, r.attempt,
                        (SELECT max(h.id) FROM runs h WHERE h.idempotency_key = r.idempotency_key
                             AND h.status IN ('queued', 'running'))
                 FROM runs r WHERE r.id = ?1",
            )?
            .query_row([run_id], |r| {
                Ok(KeyHolder {
                    key: r.get(0)?,
                    attempt: r.get(1)?,
                    holder: r.get(2)?,
                })
            })
            .optional()?)
    }

    fn checkpoint_get(&mut self, key: &str, name: &str) -> Result<Option<Checkpoint>, StoreError> {
        let conn = self.0;
        Ok(conn
            .prepare_cached(&format!(
                "{CHECKPOINT} WHERE idempotency_key = ?1 AND name = ?2"
            ))?
            .query_row([key, name], checkpoint)
            .optional()?)
    }

    fn checkpoint_list(&mut self, key: &str) -> Result<Vec<Checkpoint>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached(&format!(
            "{CHECKPOINT} WHERE idempotency_key = ?1 ORDER BY name"
        ))?;
        let rows = stmt.query_map([key], checkpoint)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn checkpoint_count(&mut self, key: &str) -> Result<u64, StoreError> {
        let conn = self.0;
        Ok(conn
            .prepare_cached("SELECT count(*) FROM checkpoints WHERE idempotency_key = ?1")?
            .query_row([key], |r| r.get::<_, i64>(0))? as u64)
    }

    fn checkpoint_put(
        &mut self,
        key: &str,
        name: &str,
        value: &str,
        run_id: i64,
        now: Timestamp,
    ) -> Result<Checkpoint, StoreError> {
        let conn = self.0;
        Ok(conn
            .prepare_cached(
                "INSERT INTO checkpoints (idempotency_key, name, value, run_id, set_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (idempotency_key, name) DO UPDATE SET value = excluded.value,
                     run_id = excluded.run_id, set_at_ms = excluded.set_at_ms
                 RETURNING name, value, run_id, set_at_ms",
            )?
            .query_row(params![key, name, value, run_id, to_ms(now)], checkpoint)?)
    }

    fn step_get(&mut self, key: &str, name: &str) -> Result<Option<Step>, StoreError> {
        let conn = self.0;
        Ok(conn
            .prepare_cached(&format!("{STEP} WHERE idempotency_key = ?1 AND name = ?2"))?
            .query_row([key, name], step)
            .optional()?)
    }

    fn step_list(&mut self, key: &str) -> Result<Vec<Step>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached(&format!(
            "{STEP} WHERE idempotency_key = ?1 ORDER BY completed_at_ms, name"
        ))?;
        let rows = stmt.query_map([key], step)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn step_count(&mut self, key: &str) -> Result<u64, StoreError> {
        let conn = self.0;
        Ok(conn
            .prepare_cached("SELECT count(*) FROM steps WHERE idempotency_key = ?1")?
            .query_row([key], |r| r.get::<_, i64>(0))? as u64)
    }

    fn step_put(
        &mut self,
        key: &str,
        name: &str,
        run_id: i64,
        attempt: i64,
        now: Timestamp,
    ) -> Result<Step, StoreError> {
        let conn = self.0;
        conn.prepare_cached(
            "INSERT INTO steps (idempotency_key, name, run_id, attempt, completed_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (idempotency_key, name) DO NOTHING",
        )?
        .execute(params![key, name, run_id, attempt, to_ms(now)])?;
        self.step_get(key, name)?
            .ok_or_else(|| StoreError::Row(format!("step {name:?} missing after its insert")))
    }
}
