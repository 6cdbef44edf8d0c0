//! Retention's steps in SQLite's SQL (see `retention.rs` for the rules).

use jiff::Timestamp;
use rusqlite::{OptionalExtension, params};
use stead_core::clock::{from_ms, to_ms};

use super::SqliteTx;
use crate::StoreError;
use crate::backend::RetentionSteps;
use crate::retention::{KeepRule, LOG_PROTECTED, LogState, PRUNABLE, Prunable, id_list};

impl RetentionSteps for SqliteTx<'_> {
    fn run_job_ids(&mut self) -> Result<Vec<i64>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached("SELECT DISTINCT job_id FROM runs ORDER BY job_id")?;
        let ids = stmt.query_map([], |r| r.get(0))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    fn run_nth_newest(&mut self, job_id: i64, n: u32) -> Result<Option<i64>, StoreError> {
        let conn = self.0;
        Ok(conn
            .query_row(
                "SELECT id FROM runs WHERE job_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2",
                params![job_id, i64::from(n) - 1],
                |r| r.get(0),
            )
            .optional()?)
    }

    fn runs_prunable(
        &mut self,
        rule: &KeepRule,
        below: i64,
        after: i64,
        limit: usize,
    ) -> Result<(Vec<Prunable>, Option<i64>), StoreError> {
        let conn = self.0;
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

    fn runs_delete(&mut self, ids: &[i64]) -> Result<u64, StoreError> {
        let conn = self.0;
        let list = id_list(ids);
        let keys: Vec<String> = conn
            .prepare(&format!(
                "SELECT DISTINCT idempotency_key FROM runs WHERE id IN ({list})"
            ))?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let deleted = conn.execute(&format!("DELETE FROM runs WHERE id IN ({list})"), [])? as u64;
        // Checkpoints and steps go with the last run of their key.
        let keys = serde_json::to_string(&keys).map_err(|e| StoreError::Row(e.to_string()))?;
        for table in ["checkpoints", "steps"] {
            conn.prepare_cached(&format!(
                "DELETE FROM {table} WHERE idempotency_key IN (
                     SELECT k.value FROM json_each(?1) k
                     WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.idempotency_key = k.value))"
            ))?
            .execute([&keys])?;
        }
        Ok(deleted)
    }

    fn runs_log_state(&mut self, ids: &[i64]) -> Result<Vec<LogState>, StoreError> {
        let conn = self.0;
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

    fn runs_mark_log_pruned(
        &mut self,
        ids: &[i64],
        now: Timestamp,
    ) -> Result<Vec<i64>, StoreError> {
        let conn = self.0;
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
}
