//! Checkpoints and completed steps in PostgreSQL's SQL.

use jiff::Timestamp;
use stead_core::clock::{from_ms, rfc3339, to_ms};
use stead_protocol::{Checkpoint, Step};

use super::PgTx;
use crate::StoreError;
use crate::backend::{CheckpointSteps, KeyHolder};

const CHECKPOINT: &str = "SELECT name, value, run_id, set_at_ms FROM checkpoints";
const STEP: &str = "SELECT name, run_id, attempt, completed_at_ms FROM steps";

fn checkpoint(r: &::postgres::Row) -> Result<Checkpoint, StoreError> {
    Ok(Checkpoint {
        key: r.try_get(0)?,
        value: r.try_get(1)?,
        run_id: r.try_get(2)?,
        set_at: rfc3339(from_ms(r.try_get(3)?)),
    })
}

fn step(r: &::postgres::Row) -> Result<Step, StoreError> {
    Ok(Step {
        name: r.try_get(0)?,
        run_id: r.try_get(1)?,
        attempt: r.try_get(2)?,
        completed_at: rfc3339(from_ms(r.try_get(3)?)),
    })
}

impl CheckpointSteps for PgTx<'_> {
    fn key_holder(&mut self, run_id: i64, lock: bool) -> Result<Option<KeyHolder>, StoreError> {
        let c = &mut *self.0;
        // The row first, locked: an end being written waits for this transaction, or
        // this one waits for it and reads the run ended. Then the holder, read after.
        let sql = if lock {
            "SELECT idempotency_key, attempt FROM runs WHERE id = $1 FOR SHARE"
        } else {
            "SELECT idempotency_key, attempt FROM runs WHERE id = $1"
        };
        let Some(row) = c.query_opt(sql, &[&run_id])? else {
            return Ok(None);
        };
        let key: String = row.try_get(0)?;
        let holder: Option<i64> = c
            .query_one(
                "SELECT max(id) FROM runs WHERE idempotency_key = $1
                 AND status IN ('queued', 'running')",
                &[&key],
            )?
            .try_get(0)?;
        Ok(Some(KeyHolder {
            key,
            attempt: row.try_get(1)?,
            holder,
        }))
    }

    fn checkpoint_get(&mut self, key: &str, name: &str) -> Result<Option<Checkpoint>, StoreError> {
        let c = &mut *self.0;
        c.query_opt(
            &format!("{CHECKPOINT} WHERE idempotency_key = $1 AND name = $2"),
            &[&key, &name],
        )?
        .as_ref()
        .map(checkpoint)
        .transpose()
    }

    fn checkpoint_list(&mut self, key: &str) -> Result<Vec<Checkpoint>, StoreError> {
        let c = &mut *self.0;
        c.query(
            &format!("{CHECKPOINT} WHERE idempotency_key = $1 ORDER BY name"),
            &[&key],
        )?
        .iter()
        .map(checkpoint)
        .collect()
    }

    fn checkpoint_count(&mut self, key: &str) -> Result<u64, StoreError> {
        let c = &mut *self.0;
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM checkpoints WHERE idempotency_key = $1",
                &[&key],
            )?
            .try_get(0)?;
        Ok(n as u64)
    }

    fn checkpoint_put(
        &mut self,
        key: &str,
        name: &str,
        value: &str,
        run_id: i64,
        now: Timestamp,
    ) -> Result<Checkpoint, StoreError> {
        let c = &mut *self.0;
        checkpoint(&c.query_one(
            "INSERT INTO checkpoints (idempotency_key, name, value, run_id, set_at_ms)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (idempotency_key, name) DO UPDATE SET value = excluded.value,
                 run_id = excluded.run_id, set_at_ms = excluded.set_at_ms
             RETURNING name, value, run_id, set_at_ms",
            &[&key, &name, &value, &run_id, &to_ms(now)],
        )?)
    }

    fn step_get(&mut self, key: &str, name: &str) -> Result<Option<Step>, StoreError> {
        let c = &mut *self.0;
        c.query_opt(
            &format!("{STEP} WHERE idempotency_key = $1 AND name = $2"),
            &[&key, &name],
        )?
        .as_ref()
        .map(step)
        .transpose()
    }

    fn step_list(&mut self, key: &str) -> Result<Vec<Step>, StoreError> {
        let c = &mut *self.0;
        c.query(
            &format!("{STEP} WHERE idempotency_key = $1 ORDER BY completed_at_ms, name"),
            &[&key],
        )?
        .iter()
        .map(step)
        .collect()
    }

    fn step_count(&mut self, key: &str) -> Result<u64, StoreError> {
        let c = &mut *self.0;
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM steps WHERE idempotency_key = $1",
                &[&key],
            )?
            .try_get(0)?;
        Ok(n as u64)
    }

    fn step_put(
        &mut self,
        key: &str,
        name: &str,
        run_id: i64,
        attempt: i64,
        now: Timestamp,
    ) -> Result<Step, StoreError> {
        let c = &mut *self.0;
        c.execute(
            "INSERT INTO steps (idempotency_key, name, run_id, attempt, completed_at_ms)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (idempotency_key, name) DO NOTHING",
            &[&key, &name, &run_id, &attempt, &to_ms(now)],
        )?;
        self.step_get(key, name)?
            .ok_or_else(|| StoreError::Row(format!("step {name:?} missing after its insert")))
    }
}
