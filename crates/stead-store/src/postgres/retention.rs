//! Retention's steps in PostgreSQL's SQL (see `retention.rs` for the rules). A run's
//! shipped log (`run_logs`, `run_log_chunks`) goes with it; a pruned log's chunks go
//! when the log is marked pruned. The space is given back by autovacuum.

use jiff::Timestamp;
use stead_core::clock::{from_ms, to_ms};

use super::PgTx;
use crate::StoreError;
use crate::backend::RetentionSteps;
use crate::retention::{KeepRule, LOG_PROTECTED, LogState, PRUNABLE, Prunable, id_list};

impl RetentionSteps for PgTx<'_> {
    fn run_job_ids(&mut self) -> Result<Vec<i64>, StoreError> {
        let c = &mut *self.0;
        c.query("SELECT DISTINCT job_id FROM runs ORDER BY job_id", &[])?
            .iter()
            .map(|r| r.try_get(0).map_err(Into::into))
            .collect()
    }

    fn run_nth_newest(&mut self, job_id: i64, n: u32) -> Result<Option<i64>, StoreError> {
        let c = &mut *self.0;
        let offset = i64::from(n) - 1;
        c.query_opt(
            "SELECT id FROM runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2",
            &[&job_id, &offset],
        )?
        .map(|r| r.try_get(0))
        .transpose()
        .map_err(Into::into)
    }

    fn runs_prunable(
        &mut self,
        rule: &KeepRule,
        below: i64,
        after: i64,
        limit: usize,
    ) -> Result<(Vec<Prunable>, Option<i64>), StoreError> {
        let c = &mut *self.0;
        let cutoff = to_ms(rule.created_before);
        let max = limit as i64;
        let rows = c.query(
            &format!(
                "SELECT r.id, r.job, r.machine_id, r.log_path FROM runs r
                 WHERE r.job_id = $1 AND r.id > $2 AND (r.id < $3 OR r.created_at_ms < $4)
                   AND {PRUNABLE}
                 ORDER BY r.id LIMIT $5"
            ),
            &[&rule.job_id, &after, &below, &cutoff, &max],
        )?;
        let runs = rows
            .iter()
            .map(|r| {
                Ok(Prunable {
                    id: r.try_get(0)?,
                    job: r.try_get(1)?,
                    machine_id: r.try_get(2)?,
                    log_path: r.try_get(3)?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let next = (runs.len() == limit)
            .then(|| runs.last().map(|r| r.id))
            .flatten();
        Ok((runs, next))
    }

    fn runs_delete(&mut self, ids: &[i64]) -> Result<u64, StoreError> {
        let c = &mut *self.0;
        let list = id_list(ids);
        c.execute(
            &format!("DELETE FROM run_log_chunks WHERE run_id IN ({list})"),
            &[],
        )?;
        c.execute(
            &format!("DELETE FROM run_logs WHERE run_id IN ({list})"),
            &[],
        )?;
        let keys: Vec<String> = c
            .query(
                &format!("DELETE FROM runs WHERE id IN ({list}) RETURNING idempotency_key"),
                &[],
            )?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
        // Checkpoints and steps go with the last run of their key.
        for table in ["checkpoints", "steps"] {
            c.execute(
                &format!(
                    "DELETE FROM {table} WHERE idempotency_key = ANY($1)
                     AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.idempotency_key = {table}.idempotency_key)"
                ),
                &[&keys],
            )?;
        }
        Ok(keys.len() as u64)
    }

    fn runs_log_state(&mut self, ids: &[i64]) -> Result<Vec<LogState>, StoreError> {
        let c = &mut *self.0;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        c.query(
            &format!(
                "SELECT id, job, ended_at_ms, {LOG_PROTECTED}, log_pruned_at_ms IS NOT NULL
                 FROM runs WHERE id IN ({}) ORDER BY id",
                id_list(ids)
            ),
            &[],
        )?
        .iter()
        .map(|r| {
            Ok(LogState {
                id: r.try_get(0)?,
                job: r.try_get(1)?,
                ended_at: r.try_get::<_, Option<i64>>(2)?.map(from_ms),
                protected: r.try_get(3)?,
                log_pruned: r.try_get(4)?,
            })
        })
        .collect()
    }

    fn runs_mark_log_pruned(
        &mut self,
        ids: &[i64],
        now: Timestamp,
    ) -> Result<Vec<i64>, StoreError> {
        let c = &mut *self.0;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let now = to_ms(now);
        let mut marked = c
            .query(
                &format!(
                    "UPDATE runs SET log_pruned_at_ms = $1
                     WHERE id IN ({}) AND log_pruned_at_ms IS NULL AND NOT {LOG_PROTECTED}
                     RETURNING id",
                    id_list(ids)
                ),
                &[&now],
            )?
            .iter()
            .map(|r| r.try_get(0).map_err(Into::into))
            .collect::<Result<Vec<i64>, StoreError>>()?;
        marked.sort_unstable();
        if !marked.is_empty() {
            // The ledger's copy of a pruned log goes too; its row says there is nothing left.
            let list = id_list(&marked);
            c.execute(
                &format!("DELETE FROM run_log_chunks WHERE run_id IN ({list})"),
                &[],
            )?;
            c.execute(
                &format!(
                    "UPDATE run_logs SET shipped_bytes = 0, complete = TRUE WHERE run_id IN ({list})"
                ),
                &[],
            )?;
        }
        Ok(marked)
    }
}
