//! Queues, notifiers and the outbox of events in PostgreSQL's SQL.

use jiff::Timestamp;
use stead_core::clock::{from_ms, to_ms};
use stead_core::records::{NotifierStats, OutboxEvent, OutboxRow, StoredQueue};
use stead_protocol::{NotifierSpec, QueueSpec};

use super::Sql;
use crate::StoreError;
use crate::rows::spec_json;

fn queue_from(row: &::postgres::Row) -> Result<StoredQueue, StoreError> {
    Ok(StoredQueue {
        name: row.try_get(0)?,
        parallel: u32::try_from(row.try_get::<_, i64>(1)?).unwrap_or(u32::MAX),
    })
}

pub fn queue_list(c: &mut dyn Sql) -> Result<Vec<StoredQueue>, StoreError> {
    c.query("SELECT name, parallel FROM queues ORDER BY name", &[])?
        .iter()
        .map(queue_from)
        .collect()
}

pub fn queue_upsert(tx: &mut dyn Sql, spec: &QueueSpec, now: Timestamp) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO queues (name, parallel, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $3)
         ON CONFLICT (name) DO UPDATE SET parallel = excluded.parallel,
             updated_at_ms = excluded.updated_at_ms",
        &[&spec.name, &i64::from(spec.parallel), &to_ms(now)],
    )?;
    Ok(())
}

pub fn queue_remove(tx: &mut dyn Sql, name: &str) -> Result<Option<StoredQueue>, StoreError> {
    tx.query_opt(
        "DELETE FROM queues WHERE name = $1 RETURNING name, parallel",
        &[&name],
    )?
    .as_ref()
    .map(queue_from)
    .transpose()
}

fn notifier_spec(json: &str) -> Result<NotifierSpec, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Row(format!("notifier: {e}")))
}

pub fn notifier_list(c: &mut dyn Sql) -> Result<Vec<NotifierSpec>, StoreError> {
    c.query("SELECT spec FROM notifiers ORDER BY name", &[])?
        .iter()
        .map(|row| notifier_spec(row.try_get(0)?))
        .collect()
}

pub fn notifier_upsert(
    tx: &mut dyn Sql,
    spec: &NotifierSpec,
    now: Timestamp,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO notifiers (name, spec, created_at_ms) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET spec = excluded.spec",
        &[&spec.name, &spec_json(spec), &to_ms(now)],
    )?;
    Ok(())
}

pub fn notifier_remove(tx: &mut dyn Sql, name: &str) -> Result<Option<NotifierSpec>, StoreError> {
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

pub fn notifier_stats(c: &mut dyn Sql, name: &str) -> Result<NotifierStats, StoreError> {
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

pub fn outbox_insert(tx: &mut dyn Sql, event: &OutboxEvent) -> Result<(), StoreError> {
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

pub fn outbox_due(c: &mut dyn Sql, now: Timestamp) -> Result<Vec<OutboxRow>, StoreError> {
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

pub fn outbox_next(c: &mut dyn Sql) -> Result<Option<Timestamp>, StoreError> {
    let row = c.query_one(
        "SELECT min(next_attempt_at_ms) FROM outbox
         WHERE id IN (SELECT min(id) FROM outbox WHERE delivered_at_ms IS NULL
                      GROUP BY notifier)",
        &[],
    )?;
    Ok(row.try_get::<_, Option<i64>>(0)?.map(from_ms))
}

pub fn outbox_attempted(
    tx: &mut dyn Sql,
    id: i64,
    outcome: &Result<Timestamp, (String, Timestamp)>,
) -> Result<(), StoreError> {
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

pub fn outbox_prune(tx: &mut dyn Sql, before: Timestamp) -> Result<u64, StoreError> {
    Ok(tx.execute(
        "DELETE FROM outbox WHERE delivered_at_ms IS NOT NULL AND delivered_at_ms < $1",
        &[&to_ms(before)],
    )?)
}
