//! Run logs shipped to the shared ledger: each host's server appends its runs' output in
//! chunks ([`LOG_CHUNK_BYTES`] at most, each starting at a multiple of it, so the chunk
//! holding any offset is found by division), and any server reads them back by offset.
//!
//! Only the host that ran a run ships its log (the run's `machine_id` must be the
//! store's), fenced by that host's epoch, and only at the offset the ledger holds: a
//! write that finds another offset (a superseded server that shipped the same bytes)
//! writes nothing. Chunks are appended in the transaction that moves `shipped_bytes`, so
//! a reader that reads the count first finds at least that many bytes in the chunks.

use std::path::PathBuf;

use jiff::Timestamp;
use postgres::Row;
use stead_core::clock::to_ms;
use stead_core::records::{LogShipment, ShippedLog};
use stead_core::runs::DEFAULT_LOG_MAX_BYTES;

use super::PgStore;
use crate::Refusal;
use crate::{LOG_CHUNK_BYTES, StoreError};

const CHUNK: u64 = LOG_CHUNK_BYTES as u64;

const SHIPMENT_COLUMNS: &str = "r.id, r.log_path, r.status, coalesce(l.shipped_bytes, 0),
    (r.plan::jsonb ->> 'log_max_bytes')::bigint";

fn bytes(stored: i64) -> u64 {
    u64::try_from(stored).unwrap_or(0)
}

fn stored(bytes: u64) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

fn shipment(row: &Row) -> Result<LogShipment, StoreError> {
    let status: String = row.try_get(2)?;
    let cap: Option<i64> = row.try_get(4)?;
    Ok(LogShipment {
        run_id: row.try_get(0)?,
        log_path: PathBuf::from(row.try_get::<_, String>(1)?),
        ended: status != "running",
        shipped: bytes(row.try_get(3)?),
        log_max_bytes: cap.map_or(DEFAULT_LOG_MAX_BYTES, bytes),
    })
}

pub fn to_ship(store: &PgStore, ended: Option<&[i64]>) -> Result<Vec<LogShipment>, StoreError> {
    store.with_client(|c| {
        let rows = match ended {
            // At a server's start: every ended run of this host, however long ago.
            None => c.query(
                &format!(
                    "SELECT {SHIPMENT_COLUMNS} FROM runs r LEFT JOIN run_logs l ON l.run_id = r.id
                     WHERE r.machine_id = $1 AND r.status NOT IN ('queued', 'skipped')
                       AND NOT coalesce(l.complete, FALSE)
                     ORDER BY r.id"
                ),
                &[&store.machine_id],
            )?,
            Some(ids) => c.query(
                &format!(
                    "SELECT {SHIPMENT_COLUMNS} FROM runs r LEFT JOIN run_logs l ON l.run_id = r.id
                     WHERE r.machine_id = $1
                       AND (r.status = 'running'
                            OR (r.id = ANY($2) AND r.status NOT IN ('queued', 'skipped')))
                       AND NOT coalesce(l.complete, FALSE)
                     ORDER BY r.id"
                ),
                &[&store.machine_id, &ids],
            )?,
        };
        rows.iter().map(shipment).collect()
    })
}

pub fn ship(
    store: &PgStore,
    id: i64,
    offset: u64,
    data: &[u8],
    complete: bool,
    epoch: i64,
) -> Result<u64, StoreError> {
    if data.len() > LOG_CHUNK_BYTES {
        return Err(StoreError::Row(format!(
            "run {id}: {} bytes of log in one write, more than {LOG_CHUNK_BYTES}",
            data.len()
        )));
    }
    let now = to_ms(Timestamp::now());
    store.write_raw(Some(epoch), |tx| {
        // Only the run's own host ships its log.
        tx.execute(
            "INSERT INTO run_logs (run_id, updated_at_ms)
             SELECT id, $3 FROM runs WHERE id = $1 AND machine_id = $2
             ON CONFLICT (run_id) DO NOTHING",
            &[&id, &store.machine_id, &now],
        )?;
        let Some(row) = tx.query_opt(
            "SELECT l.shipped_bytes, l.complete OR l.kept_on_host
             FROM run_logs l JOIN runs r ON r.id = l.run_id
             WHERE l.run_id = $1 AND r.machine_id = $2 FOR UPDATE OF l",
            &[&id, &store.machine_id],
        )?
        else {
            return Err(StoreError::Refused(Refusal::NoSuchRun(id)));
        };
        let held = bytes(row.try_get(0)?);
        let closed: bool = row.try_get(1)?;
        if held != offset || closed {
            return Ok(held);
        }
        let mut at = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let within = at % CHUNK;
            let take = rest
                .len()
                .min(usize::try_from(CHUNK - within).unwrap_or(usize::MAX));
            let (piece, after) = rest.split_at(take);
            if within == 0 {
                tx.execute(
                    "INSERT INTO run_log_chunks (run_id, byte_offset, data) VALUES ($1, $2, $3)",
                    &[&id, &stored(at), &piece],
                )?;
            } else {
                tx.execute(
                    "UPDATE run_log_chunks SET data = data || $3
                     WHERE run_id = $1 AND byte_offset = $2",
                    &[&id, &stored(at - within), &piece],
                )?;
            }
            at += take as u64;
            rest = after;
        }
        tx.execute(
            "UPDATE run_logs SET shipped_bytes = $2, complete = $3, updated_at_ms = $4
             WHERE run_id = $1",
            &[&id, &stored(at), &complete, &now],
        )?;
        Ok(at)
    })
}

pub fn read(store: &PgStore, id: i64, offset: u64, max: usize) -> Result<ShippedLog, StoreError> {
    let max = max.min(LOG_CHUNK_BYTES) as u64;
    store.with_client(|c| {
        let Some(row) = c.query_opt(
            "SELECT shipped_bytes, complete, kept_on_host FROM run_logs WHERE run_id = $1",
            &[&id],
        )?
        else {
            return Ok(ShippedLog::default());
        };
        let shipped = bytes(row.try_get(0)?);
        let mut log = ShippedLog {
            data: Vec::new(),
            shipped,
            complete: row.try_get(1)?,
            kept_on_host: row.try_get(2)?,
        };
        let end = shipped.min(offset.saturating_add(max));
        if offset >= end {
            return Ok(log);
        }
        // The chunk holding `offset`, and the next one when the stretch runs into it.
        let first = offset - offset % CHUNK;
        let rows = c.query(
            "SELECT byte_offset, data FROM run_log_chunks
             WHERE run_id = $1 AND byte_offset >= $2 AND byte_offset < $3
             ORDER BY byte_offset",
            &[&id, &stored(first), &stored(end)],
        )?;
        let mut at = offset;
        for row in rows {
            let start = bytes(row.try_get(0)?);
            let data: &[u8] = row.try_get(1)?;
            let stop = (start + data.len() as u64).min(end);
            if start > at || stop <= at {
                break;
            }
            let from = usize::try_from(at - start).unwrap_or(usize::MAX);
            let to = usize::try_from(stop - start).unwrap_or(usize::MAX);
            log.data.extend_from_slice(&data[from..to]);
            at = stop;
        }
        if at != end {
            return Err(StoreError::Row(format!(
                "run {id}: the shipped log holds {shipped} bytes but its chunks end at {at}"
            )));
        }
        Ok(log)
    })
}
