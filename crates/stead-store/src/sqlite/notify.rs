//! Queues, notifiers and the outbox of events in SQLite's SQL.

use jiff::Timestamp;
use rusqlite::{OptionalExtension, params};
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::{NotifierStats, OutboxEvent, OutboxRow, StoredQueue};
use stead_protocol::{NotifierSpec, QueueSpec};

use super::SqliteTx;
use crate::StoreError;
use crate::backend::{NoticeSteps, QueueSteps};
use crate::rows::spec_json;

fn notifier_spec(json: &str) -> Result<NotifierSpec, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Row(format!("notifier: {e}")))
}

impl QueueSteps for SqliteTx<'_> {
    fn queue_list(&mut self) -> Result<Vec<StoredQueue>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached("SELECT name, parallel FROM queues ORDER BY name")?;
        let rows = stmt.query_map([], |r| {
            Ok(StoredQueue {
                name: r.get(0)?,
                parallel: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn queue_upsert(&mut self, spec: &QueueSpec, now: Timestamp) -> Result<(), StoreError> {
        let tx = self.0;
        tx.execute(
            "INSERT INTO queues (name, parallel, created_at_ms, updated_at_ms) VALUES (?1, ?2, ?3, ?3)
             ON CONFLICT (name) DO UPDATE SET parallel = excluded.parallel,
                 updated_at_ms = excluded.updated_at_ms",
            params![spec.name, spec.parallel, to_ms(now)],
        )?;
        Ok(())
    }

    fn queue_remove(&mut self, name: &str) -> Result<Option<StoredQueue>, StoreError> {
        let tx = self.0;
        Ok(tx
            .query_row(
                "DELETE FROM queues WHERE name = ?1 RETURNING name, parallel",
                [name],
                |r| {
                    Ok(StoredQueue {
                        name: r.get(0)?,
                        parallel: r.get(1)?,
                    })
                },
            )
            .optional()?)
    }
}

impl NoticeSteps for SqliteTx<'_> {
    fn notifier_list(&mut self) -> Result<Vec<NotifierSpec>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached("SELECT spec FROM notifiers ORDER BY name")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        let mut specs = Vec::new();
        for row in rows {
            specs.push(notifier_spec(&row?)?);
        }
        Ok(specs)
    }

    fn notifier_upsert(&mut self, spec: &NotifierSpec, now: Timestamp) -> Result<(), StoreError> {
        let tx = self.0;
        tx.execute(
            "INSERT INTO notifiers (name, spec, created_at_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (name) DO UPDATE SET spec = excluded.spec",
            params![spec.name, spec_json(spec), to_ms(now)],
        )?;
        Ok(())
    }

    /// Removes a notifier and the events it has not been delivered.
    fn notifier_remove(&mut self, name: &str) -> Result<Option<NotifierSpec>, StoreError> {
        let tx = self.0;
        let spec: Option<String> = tx
            .query_row(
                "DELETE FROM notifiers WHERE name = ?1 RETURNING spec",
                [name],
                |r| r.get(0),
            )
            .optional()?;
        tx.execute(
            "DELETE FROM outbox WHERE notifier = ?1 AND delivered_at_ms IS NULL",
            [name],
        )?;
        spec.as_deref().map(notifier_spec).transpose()
    }

    fn notifier_stats(&mut self, name: &str) -> Result<NotifierStats, StoreError> {
        let conn = self.0;
        let (pending, delivered, last): (i64, i64, Option<i64>) = conn
            .prepare_cached(
                "SELECT count(*) FILTER (WHERE delivered_at_ms IS NULL),
                        count(*) FILTER (WHERE delivered_at_ms IS NOT NULL),
                        max(delivered_at_ms)
                 FROM outbox WHERE notifier = ?1",
            )?
            .query_row([name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        let last_error: Option<String> = conn
            .prepare_cached(
                "SELECT last_error FROM outbox WHERE notifier = ?1 AND delivered_at_ms IS NULL
                 ORDER BY id LIMIT 1",
            )?
            .query_row([name], |r| r.get(0))
            .optional()?
            .flatten();
        Ok(NotifierStats {
            pending: u64::try_from(pending).unwrap_or(0),
            delivered: u64::try_from(delivered).unwrap_or(0),
            last_delivered_at: last.map(from_ms),
            last_error,
        })
    }

    fn outbox_insert(&mut self, event: &OutboxEvent) -> Result<(), StoreError> {
        let tx = self.0;
        tx.prepare_cached(
            "INSERT INTO outbox (event_id, notifier, event, run_id, payload, created_at_ms,
                 next_attempt_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
        )?
        .execute(params![
            event.event_id,
            event.notifier,
            event.event.as_str(),
            event.run_id,
            event.payload,
            to_ms(event.created_at)
        ])?;
        Ok(())
    }

    /// Per notifier, its oldest undelivered event, when its next attempt is due: events
    /// reach a receiver in the order they were written, one at a time.
    fn outbox_due(&mut self, now: Timestamp) -> Result<Vec<OutboxRow>, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare_cached(
            "SELECT o.id, o.event_id, o.notifier, o.payload, o.attempts FROM outbox o
             WHERE o.id IN (SELECT min(id) FROM outbox WHERE delivered_at_ms IS NULL
                            GROUP BY notifier)
               AND o.next_attempt_at_ms <= ?1
             ORDER BY o.id",
        )?;
        let rows = stmt.query_map([to_ms(now)], |r| {
            Ok(OutboxRow {
                id: r.get(0)?,
                event_id: r.get(1)?,
                notifier: r.get(2)?,
                payload: r.get(3)?,
                attempts: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The earliest next attempt of a notifier's oldest undelivered event: the events
    /// behind it wait for it, whenever theirs would be.
    fn outbox_next(&mut self) -> Result<Option<Timestamp>, StoreError> {
        let conn = self.0;
        let ms: Option<i64> = conn
            .prepare_cached(
                "SELECT min(next_attempt_at_ms) FROM outbox
                 WHERE id IN (SELECT min(id) FROM outbox WHERE delivered_at_ms IS NULL
                              GROUP BY notifier)",
            )?
            .query_row([], |r| r.get(0))?;
        Ok(ms.map(from_ms))
    }

    /// Records an attempt: delivered at `Ok(at)`, or failed with `Err((why, next attempt))`.
    fn outbox_attempted(
        &mut self,
        id: i64,
        outcome: &Result<Timestamp, (String, Timestamp)>,
    ) -> Result<(), StoreError> {
        let tx = self.0;
        match outcome {
            Ok(at) => tx.execute(
                "UPDATE outbox SET attempts = attempts + 1, delivered_at_ms = ?2, last_error = NULL
                 WHERE id = ?1",
                params![id, to_ms(*at)],
            )?,
            Err((why, next)) => tx.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?2, next_attempt_at_ms = ?3
                 WHERE id = ?1",
                params![id, why, to_ms(*next)],
            )?,
        };
        Ok(())
    }

    /// Deletes delivered events older than `before`.
    fn outbox_prune(&mut self, before: Timestamp) -> Result<u64, StoreError> {
        let tx = self.0;
        let n = tx.execute(
            "DELETE FROM outbox WHERE delivered_at_ms IS NOT NULL AND delivered_at_ms < ?1",
            [to_ms(before)],
        )?;
        Ok(n as u64)
    }
}
