//! Sleeps in PostgreSQL's SQL.

use stead_core::clock::{from_ms, rfc3339, to_ms};
use stead_protocol::Sleep;

use super::PgTx;
use crate::StoreError;
use crate::backend::SleepSteps;
use crate::sleeps::NewSleep;

fn sleep_from(row: &::postgres::Row) -> Result<Sleep, StoreError> {
    Ok(Sleep {
        id: row.try_get(0)?,
        host: row.try_get(1)?,
        machine_id: row.try_get(2)?,
        started_at: rfc3339(from_ms(row.try_get(3)?)),
        ended_at: rfc3339(from_ms(row.try_get(4)?)),
        duration_ms: u64::try_from(row.try_get::<_, i64>(5)?).unwrap_or(0),
        wall_set_ms: row.try_get(6)?,
    })
}

impl SleepSteps for PgTx<'_> {
    fn sleep_insert(&mut self, sleep: &NewSleep) -> Result<i64, StoreError> {
        let row = self.0.query_one(
            "INSERT INTO sleeps (machine_id, host, started_at_ms, ended_at_ms, duration_ms,
                 wall_set_ms)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            &[
                &sleep.machine_id,
                &sleep.host,
                &to_ms(sleep.started_at),
                &to_ms(sleep.ended_at),
                &sleep.duration_ms,
                &sleep.wall_set_ms,
            ],
        )?;
        Ok(row.try_get(0)?)
    }

    fn sleep_list(&mut self, limit: u32) -> Result<Vec<Sleep>, StoreError> {
        self.0
            .query(
                "SELECT id, host, machine_id, started_at_ms, ended_at_ms, duration_ms,
                     wall_set_ms
                 FROM sleeps ORDER BY id DESC LIMIT $1",
                &[&i64::from(limit)],
            )?
            .iter()
            .map(sleep_from)
            .collect()
    }

    fn runs_add_slept(&mut self, sleep: &NewSleep) -> Result<u64, StoreError> {
        Ok(self.0.execute(
            "UPDATE runs SET slept_ms = slept_ms + $3
             WHERE machine_id = $1 AND started_at_ms <= $2
               AND (status = 'running' OR ended_at_ms >= $2)",
            &[
                &sleep.machine_id,
                &to_ms(sleep.started_at),
                &sleep.duration_ms,
            ],
        )?)
    }

    fn holds_add_slept(&mut self, sleep: &NewSleep) -> Result<u64, StoreError> {
        Ok(self.0.execute(
            "UPDATE holds SET expires_at_ms = expires_at_ms + $2 WHERE expires_at_ms >= $1",
            &[&to_ms(sleep.started_at), &sleep.duration_ms],
        )?)
    }
}
