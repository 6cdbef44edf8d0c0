//! Sleeps in SQLite's SQL.

use rusqlite::{Row, params};
use stead_core::clock::{from_ms, rfc3339, to_ms};
use stead_protocol::Sleep;

use super::SqliteTx;
use crate::StoreError;
use crate::backend::SleepSteps;
use crate::sleeps::NewSleep;

fn sleep_from(row: &Row<'_>) -> rusqlite::Result<Sleep> {
    Ok(Sleep {
        id: row.get(0)?,
        host: row.get(1)?,
        machine_id: row.get(2)?,
        started_at: rfc3339(from_ms(row.get(3)?)),
        ended_at: rfc3339(from_ms(row.get(4)?)),
        duration_ms: u64::try_from(row.get::<_, i64>(5)?).unwrap_or(0),
        wall_set_ms: row.get(6)?,
    })
}

impl SleepSteps for SqliteTx<'_> {
    fn sleep_insert(&mut self, sleep: &NewSleep) -> Result<i64, StoreError> {
        let id = self
            .0
            .prepare_cached(
                "INSERT INTO sleeps (machine_id, host, started_at_ms, ended_at_ms, duration_ms,
                     wall_set_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
            )?
            .query_row(
                params![
                    sleep.machine_id,
                    sleep.host,
                    to_ms(sleep.started_at),
                    to_ms(sleep.ended_at),
                    sleep.duration_ms,
                    sleep.wall_set_ms
                ],
                |r| r.get(0),
            )?;
        Ok(id)
    }

    fn sleep_list(&mut self, limit: u32) -> Result<Vec<Sleep>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, host, machine_id, started_at_ms, ended_at_ms, duration_ms, wall_set_ms
             FROM sleeps ORDER BY id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit], sleep_from)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn runs_add_slept(&mut self, sleep: &NewSleep) -> Result<u64, StoreError> {
        // A sleep happens seldom: one pass over the host's runs ended since it began is
        // cheap beside it, and no index is kept up on every run's end for it.
        let n = self
            .0
            .prepare_cached(
                "UPDATE runs SET slept_ms = slept_ms + ?3
             WHERE machine_id = ?1 AND started_at_ms <= ?2
               AND (status = 'running' OR ended_at_ms >= ?2)",
            )?
            .execute(params![
                sleep.machine_id,
                to_ms(sleep.started_at),
                sleep.duration_ms
            ])?;
        Ok(n as u64)
    }

    fn holds_add_slept(&mut self, sleep: &NewSleep) -> Result<u64, StoreError> {
        let n = self
            .0
            .prepare_cached(
                "UPDATE holds SET expires_at_ms = expires_at_ms + ?2 WHERE expires_at_ms >= ?1",
            )?
            .execute(params![to_ms(sleep.started_at), sleep.duration_ms])?;
        Ok(n as u64)
    }
}
