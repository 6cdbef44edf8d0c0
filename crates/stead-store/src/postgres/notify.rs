//! Queues, notifiers and the outbox of events in PostgreSQL's SQL.

use jiff::Timestamp;
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::{NotifierStats, OutboxEvent, OutboxRow, StoredQueue};
use stead_protocol::{NotifierSpec, QueueSpec};

use super::PgTx;
use crate::StoreError;
use crate::backend::{NoticeSteps, QueueSteps};
use crate::rows::spec_json;

fn queue_from(row: &::postgres::Row) -> Result<StoredQueue, StoreError> {
    Ok(StoredQueue {
        name: row.try_get(0)?,
        parallel: u32::try_from(row.try_get::<_, i64>(1)?).unwrap_or(u32::MAX),
    })
}

fn notifier_spec(json: &str) -> Result<NotifierSpec, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Row(format!("notifier: {e}")))
}

impl QueueSteps for PgTx<'_> {
    fn queue_list(&mut self) -> Result<Vec<StoredQueue>, StoreError> {
        let c = &mut *self.0;
        c.query("SELECT name, parallel FROM queues ORDER BY name", &[])?
            .iter()
            .map(queue_from)
            .collect()
    }

    fn queue_upsert(&mut self, spec: &QueueSpec, now: Timestamp) -> Result<(), StoreError> {
        let tx = &mut *self.0;
        tx.execute(
            "INSERT INTO queues (name, parallel, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $3)
             ON CONFLICT (name) DO UPDATE SET parallel = excluded.parallel,
                 updated_at_ms = excluded.updated_at_ms",
            &[&spec.name, &i64::from(spec.parallel), &to_ms(now)],
        )?;
        Ok(())
    }

    fn queue_remove(&mut self, name: &str) -> Result<Option<StoredQueue>, StoreError> {
        let tx = &mut *self.0;
        tx.query_opt(
            "DELETE FROM queues WHERE name = $1 RETURNING name, parallel",
            &[&name],
        )?
        .as_ref()
        .map(queue_from)
        .transpose()
    }
}

impl NoticeSteps for PgTx<'_> {
    fn notifier_list(&mut self) -> Result<Vec<NotifierSpec>, StoreError> {
        let c = &mut *self.0;
        c.query("SELECT spec FROM notifiers ORDER BY name", &[])?
            .iter()
            .map(|row| notifier_spec(row.try_get(0)?))
            .collect()
    }

    fn notifier_upsert(&mut self, spec: &NotifierSpec, now: Timestamp) -> Result<(), StoreError> {
        let tx = &mut *self.0;
        tx.execute(
            "INSERT INTO notifiers (name, spec, created_at_ms) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO UPDATE SET spec = excluded.spec",
            &[&spec.name, &spec_json(spec), &to_ms(now)],
        )?;
        Ok(())
    }

    fn notifier_remove(&mut self, name: &str) -> Result<Option<NotifierSpec>, StoreError> {
        let tx = &mut *self.0;
        let spec = tx.query_opt(
            "DELETE FROM notifiers WHERE name = $1 RETURNING spec",
            &[&name],
        )?;
        tx.execute(
            "DELETE FROM outbox WHERE notifier = $1 AND delivered_at_ms IS NULL",
            &[&name],
        )?;
        spec.map(|row| notifier_spec(row.try_get(0)?)).transpose()
    }

    fn notifier_stats(&mut self, name: &str) -> Result<NotifierStats, StoreError> {
        let c = &mut *self.0;
        let row = c.query_one(
            "SELECT count(*) FILTER (WHERE delivered_at_ms IS NULL),
                    count(*) FILTER (WHERE delivered_at_ms IS NOT NULL),
                    max(delivered_at_ms),
                    (SELECT last_error FROM outbox WHERE notifier = $1 AND delivered_at_ms IS NULL
                     ORDER BY id LIMIT 1)
             FROM outbox WHERE notifier = $1",
            &[&name],
        )?;
        Ok(NotifierStats {
            pending: u64::try_from(row.try_get::<_, i64>(0)?).unwrap_or(0),
            delivered: u64::try_from(row.try_get::<_, i64>(1)?).unwrap_or(0),
            last_delivered_at: row.try_get::<_, Option<i64>>(2)?.map(from_ms),
            last_error: row.try_get(3)?,
        })
    }

    fn outbox_insert(&mut self, event: &OutboxEvent) -> Result<(), StoreError> {
        let tx = &mut *self.0;
        tx.execute(
            "INSERT INTO outbox (event_id, notifier, event, run_id, payload, created_at_ms,
                 next_attempt_at_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $6)",
            &[
                &event.event_id,
                &event.notifier,
                &event.event.as_str(),
                &event.run_id,
                &event.payload,
                &to_ms(event.created_at),
            ],
        )?;
        Ok(())
    }

    fn outbox_due(&mut self, now: Timestamp) -> Result<Vec<OutboxRow>, StoreError> {
        let c = &mut *self.0;
        c.query(
            "SELECT o.id, o.event_id, o.notifier, o.payload, o.attempts FROM outbox o
             WHERE o.id IN (SELECT min(id) FROM outbox WHERE delivered_at_ms IS NULL
                            GROUP BY notifier)
               AND o.next_attempt_at_ms <= $1
             ORDER BY o.id",
            &[&to_ms(now)],
        )?
        .iter()
        .map(|r| {
            Ok(OutboxRow {
                id: r.try_get(0)?,
                event_id: r.try_get(1)?,
                notifier: r.try_get(2)?,
                payload: r.try_get(3)?,
                attempts: u32::try_from(r.try_get::<_, i64>(4)?).unwrap_or(u32::MAX),
            })
        })
        .collect()
    }

    fn outbox_next(&mut self) -> Result<Option<Timestamp>, StoreError> {
        let c = &mut *self.0;
        let row = c.query_one(
            "SELECT min(next_attempt_at_ms) FROM outbox
             WHERE id IN (SELECT min(id) FROM outbox WHERE delivered_at_ms IS NULL
                          GROUP BY notifier)",
            &[],
        )?;
        Ok(row.try_get::<_, Option<i64>>(0)?.map(from_ms))
    }

    fn outbox_attempted(
        &mut self,
        id: i64,
        outcome: &Result<Timestamp, (String, Timestamp)>,
    ) -> Result<(), StoreError> {
        let tx = &mut *self.0;
        match outcome {
            Ok(at) => tx.execute(
                "UPDATE outbox SET attempts = attempts + 1, delivered_at_ms = $2, last_error = NULL
                 WHERE id = $1",
                &[&id, &to_ms(*at)],
            )?,
            Err((why, next)) => tx.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = $2, next_attempt_at_ms = $3
                 WHERE id = $1",
                &[&id, why, &to_ms(*next)],
            )?,
        };
        Ok(())
    }

    fn outbox_prune(&mut self, before: Timestamp) -> Result<u64, StoreError> {
        let tx = &mut *self.0;
        Ok(tx.execute(
            "DELETE FROM outbox WHERE delivered_at_ms IS NOT NULL AND delivered_at_ms < $1",
            &[&to_ms(before)],
        )?)
    }
}
