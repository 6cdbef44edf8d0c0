//! Retention's steps in SQLite's SQL (see `retention.rs` for the rules).

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, params};
use stead_core::clock::{from_ms, to_ms};

use crate::StoreError;
use crate::retention::{KeepRule, LOG_PROTECTED, LogState, PRUNABLE, Prunable, id_list};

pub fn job_ids(conn: &Connection) -> Result<Vec<i64>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT DISTINCT job_id FROM runs ORDER BY job_id")?;
    let ids = stmt.query_map([], |r| r.get(0))?;
    Ok(ids.collect::<Result<_, _>>()?)
}

pub fn nth_newest(conn: &Connection, job_id: i64, n: u32) -> Result<Option<i64>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT id FROM runs WHERE job_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2",
            params![job_id, i64::from(n) - 1],
            |r| r.get(0),
        )
        .optional()?)
}

pub fn prunable(
    conn: &Connection,
    rule: &KeepRule,
    below: i64,
    after: i64,
    limit: usize,
) -> Result<(Vec<Prunable>, Option<i64>), StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT r.id, r.job, r.machine_id, r.log_path FROM runs r
         WHERE r.job_id = ?1 AND r.id > ?2 AND (r.id < ?3 OR r.created_at_ms < ?4)
           AND {PRUNABLE}
         ORDER BY r.id LIMIT ?5"
    ))?;
    let rows = stmt.query_map(
        params![
            rule.job_id,
            after,
            below,
            to_ms(rule.created_before),
            limit as i64
        ],
        |r| {
            Ok(Prunable {
                id: r.get(0)?,
                job: r.get(1)?,
                machine_id: r.get(2)?,
                log_path: r.get(3)?,
            })
        },
    )?;
    let runs: Vec<Prunable> = rows.collect::<Result<_, _>>()?;
    let next = (runs.len() == limit)
        .then(|| runs.last().map(|r| r.id))
        .flatten();
    Ok((runs, next))
}

pub fn delete(conn: &Connection, ids: &[i64]) -> Result<u64, StoreError> {
    Ok(conn.execute(
        &format!("DELETE FROM runs WHERE id IN ({})", id_list(ids)),
        [],
    )? as u64)
}

pub fn log_states(conn: &Connection, ids: &[i64]) -> Result<Vec<LogState>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare(&format!(
        "SELECT id, job, ended_at_ms, {LOG_PROTECTED}, log_pruned_at_ms IS NOT NULL
         FROM runs WHERE id IN ({}) ORDER BY id",
        id_list(ids)
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok(LogState {
            id: r.get(0)?,
            job: r.get(1)?,
            ended_at: r.get::<_, Option<i64>>(2)?.map(from_ms),
            protected: r.get(3)?,
            log_pruned: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn mark_log_pruned(
    conn: &Connection,
    ids: &[i64],
    now: Timestamp,
) -> Result<Vec<i64>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare(&format!(
        "UPDATE runs SET log_pruned_at_ms = ?1
         WHERE id IN ({}) AND log_pruned_at_ms IS NULL AND NOT {LOG_PROTECTED}
         RETURNING id",
        id_list(ids)
    ))?;
    let rows = stmt.query_map([to_ms(now)], |r| r.get(0))?;
    let mut marked: Vec<i64> = rows.collect::<Result<_, _>>()?;
    marked.sort_unstable();
    Ok(marked)
}
