//! What only a shared ledger does: the scheduler's leadership, hosts claiming queued
//! runs, settling the runs of hosts that went silent, and the notifications that wake
//! every server.
//!
//! - **Leadership** is one row with the host lease's rules: claimed when free or expired,
//!   renewed by its holder whatever the expiry says, its epoch bumped by every new holder.
//!   Fires and the settling of lost hosts are fenced by that epoch in their transaction,
//!   so a leader that froze and thawed after another took over writes nothing.
//! - **Claims** take queued runs no host owns (`machine_id = ''`) with `FOR UPDATE SKIP
//!   LOCKED`: hosts racing for the same runs each get different ones, never the same.
//! - **Notifications** (`LISTEN`/`NOTIFY`) carry "a run was queued" and "run N changed";
//!   they are delivered after the commit, so a woken server reads what woke it.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;
use stead_core::clock::{from_ms, rfc3339};
use stead_core::lease::HeldLease;
use stead_core::records::{HostRow, LeaderRow, LogShipment, ShippedLog, Wake};
use stead_core::runs::{MonitorPlan, RunEnd};
use stead_protocol::{Run, RunStatus};

use super::{PgStore, Sql, db_now_ms, describe, logs, ms, runs};
use crate::Refusal;
use crate::backend::Announce;
use crate::run_ledger::IN_FLIGHT;
use crate::{Claimed, ClaimingHost, Cluster, StoreError};

/// The channel of "a run was queued for any host".
pub const QUEUED: &str = "stead_queued";
/// The channel of "run N changed" (the payload is the id).
pub const RUN_CHANGED: &str = "stead_run";
/// The channel of "cancel run N" (the payload is the id), for the host running it.
pub const CANCEL: &str = "stead_cancel";
/// The channel of "jobs, services or holds changed".
pub const CHANGED: &str = "stead_changed";

/// How long a listener waits before connecting again after losing its connection, at
/// first and at most.
const LISTEN_RETRY: Duration = Duration::from_millis(250);
const LISTEN_RETRY_MAX: Duration = Duration::from_secs(10);

/// Tells every listening server of `what`, once the transaction commits.
pub fn notify(tx: &mut dyn Sql, what: Announce) -> Result<(), StoreError> {
    let (channel, payload) = match what {
        Announce::Run(id) => (RUN_CHANGED, id.to_string()),
        Announce::Cancel(id) => (CANCEL, id.to_string()),
        Announce::Queued => (QUEUED, String::new()),
        Announce::Changed => (CHANGED, String::new()),
    };
    tx.execute("SELECT pg_notify($1, $2)", &[&channel, &payload])?;
    Ok(())
}

/// Checks, holding the row until the commit, that `epoch` still leads.
pub fn fence_leader(tx: &mut dyn Sql, machine_id: &str, epoch: i64) -> Result<(), StoreError> {
    let leads = tx
        .query_opt(
            "SELECT 1 FROM leader WHERE id = 1 AND epoch = $1 AND machine_id = $2 FOR SHARE",
            &[&epoch, &machine_id],
        )?
        .is_some();
    if leads {
        Ok(())
    } else {
        Err(StoreError::Refused(Refusal::Fenced { epoch }))
    }
}

impl Cluster for PgStore {
    fn lead(&self, lease: &HeldLease, ttl: SignedDuration) -> Result<Option<i64>, StoreError> {
        let server = &lease.claimant.server_id;
        self.write_raw(None, |tx| {
            // One statement: the holder renews (even past its expiry, as a host lease does);
            // anyone else takes a free or expired row and bumps the epoch. Expiry is the
            // database's time: a host whose clock runs ahead cannot take a live term.
            Ok(tx
                .query_opt(
                    concat!(
                        "UPDATE leader
                         SET epoch = CASE WHEN machine_id = $1 AND server_id = $2 THEN epoch
                                          ELSE epoch + 1 END,
                             machine_id = $1, server_id = $2,
                             expires_at_ms = ",
                        db_now_ms!(),
                        " + $3
                         WHERE id = 1 AND ((machine_id = $1 AND server_id = $2)
                                           OR machine_id IS NULL
                                           OR expires_at_ms <= ",
                        db_now_ms!(),
                        ")
                         RETURNING epoch"
                    ),
                    &[&self.machine_id, server, &ms(ttl)],
                )?
                .map(|row| row.try_get(0))
                .transpose()?)
        })
    }

    fn ledger_time(&self) -> Result<Timestamp, StoreError> {
        self.with_client(|c| {
            let row = c.query_one(concat!("SELECT ", db_now_ms!()), &[])?;
            Ok(from_ms(row.try_get(0)?))
        })
    }

    fn resign(&self, lease: &HeldLease, epoch: i64) -> Result<(), StoreError> {
        let store = self;
        store.write_raw(None, |tx| {
            tx.execute(
                "UPDATE leader SET machine_id = NULL, server_id = NULL, expires_at_ms = 0
             WHERE id = 1 AND epoch = $1 AND server_id = $2",
                &[&epoch, &lease.claimant.server_id],
            )?;
            Ok(())
        })
    }

    fn leader(&self) -> Result<Option<LeaderRow>, StoreError> {
        let store = self;
        store.with_client(|c| {
            let row = c.query_one(
                concat!(
                    "SELECT epoch, machine_id, server_id, expires_at_ms,
                            expires_at_ms > ",
                    db_now_ms!(),
                    "
                     FROM leader WHERE id = 1"
                ),
                &[],
            )?;
            Ok(Some(LeaderRow {
                epoch: row.try_get(0)?,
                machine_id: row.try_get(1)?,
                server_id: row.try_get(2)?,
                expires_at: from_ms(row.try_get(3)?),
                live: row.try_get(4)?,
            }))
        })
    }

    fn hosts(&self) -> Result<Vec<HostRow>, StoreError> {
        let store = self;
        store.with_client(|c| {
            let rows = c.query(
                concat!(
                    "SELECT h.machine_id, h.name, h.server_id, h.pid, h.epoch, h.renewed_at_ms,
                        h.expires_at_ms,
                        (SELECT count(*) FROM runs r
                         WHERE r.machine_id = h.machine_id AND r.status IN ('queued', 'running')),
                        ",
                    db_now_ms!(),
                    " - h.renewed_at_ms, h.clock_offset_ms
                     FROM hosts h ORDER BY h.name, h.machine_id"
                ),
                &[],
            )?;
            rows.iter()
                .map(|row| {
                    let pid: Option<i64> = row.try_get(3)?;
                    let renewed: Option<i64> = row.try_get(5)?;
                    let in_flight: i64 = row.try_get(7)?;
                    let silent_ms: Option<i64> = row.try_get(8)?;
                    Ok(HostRow {
                        machine_id: row.try_get(0)?,
                        name: row.try_get(1)?,
                        server_id: row.try_get(2)?,
                        pid: pid.and_then(|p| u32::try_from(p).ok()),
                        epoch: row.try_get(4)?,
                        renewed_at: renewed.map(from_ms),
                        expires_at: from_ms(row.try_get(6)?),
                        silent_for: silent_ms.map(SignedDuration::from_millis),
                        clock_offset_ms: row.try_get(9)?,
                        in_flight: u64::try_from(in_flight).unwrap_or(0),
                    })
                })
                .collect()
        })
    }

    fn runs_claim(
        &self,
        host: &ClaimingHost<'_>,
        limit: u32,
        epoch: i64,
    ) -> Result<Claimed, StoreError> {
        let store = self;
        let token = uuid::Uuid::now_v7().to_string();
        store.write_raw(Some(epoch), |tx| {
            // A job with `hosts` runs only on those; the spec is JSON, so the list is read
            // from it rather than kept twice.
            let rows = tx.query(
                "WITH picked AS (
                 SELECT r.id FROM runs r JOIN jobs j ON j.id = r.job_id
                 WHERE r.status = 'queued' AND r.machine_id = ''
                   AND (NOT (j.spec::jsonb ? 'hosts') OR (j.spec::jsonb -> 'hosts') ? $2)
                 ORDER BY r.id LIMIT $3
                 FOR UPDATE OF r SKIP LOCKED)
             UPDATE runs r SET machine_id = $1, boot_id = $4, claim_token = $5
             FROM picked WHERE r.id = picked.id
             RETURNING r.id, r.plan, r.waiting",
                &[
                    &host.machine_id,
                    &host.name,
                    &i64::from(limit),
                    &host.boot_id,
                    &token,
                ],
            )?;
            let mut claimed = Claimed::default();
            for row in rows {
                let id: i64 = row.try_get(0)?;
                let stored: String = row.try_get(1)?;
                let waiting: i16 = row.try_get(2)?;
                let mut plan: MonitorPlan = serde_json::from_str(&stored)
                    .map_err(|e| StoreError::Row(format!("run {id}: its plan: {e}")))?;
                // The plan was made on the host that queued it: its log and state directory
                // are this host's now.
                plan.log_path = host.log_dir.join(format!("{id}.log"));
                plan.env.insert(
                    "STEAD_STATE_DIR".into(),
                    host.state_dir.display().to_string(),
                );
                tx.execute(
                    "UPDATE runs SET log_path = $2, plan = $3 WHERE id = $1",
                    &[
                        &id,
                        &plan.log_path.to_string_lossy(),
                        &serde_json::to_string(&plan).expect("a plan serializes"),
                    ],
                )?;
                notify(tx, Announce::Run(id))?;
                if waiting == 1 {
                    claimed.waiting += 1;
                } else {
                    claimed.plans.push(plan);
                }
            }
            Ok(claimed)
        })
    }

    fn settle_lost_hosts(
        &self,
        silence: SignedDuration,
        now: Timestamp,
        epoch: i64,
    ) -> Result<Vec<i64>, StoreError> {
        let store = self;
        store.write_raw(None, |tx| {
            fence_leader(tx, &store.machine_id, epoch)?;
            // Silence is measured between two readings of the database's clock (the
            // renewal it stamped, its now): no host's clock takes part.
            let lost = tx.query(
                concat!(
                    "SELECT r.id, h.name, h.renewed_at_ms FROM runs r JOIN hosts h
                       ON h.machine_id = r.machine_id
                     WHERE r.status IN ('queued', 'running') AND r.machine_id <> ''
                       AND coalesce(h.renewed_at_ms, 0) < ",
                    db_now_ms!(),
                    " - $1
                       AND h.machine_id <> $2
                     ORDER BY r.id FOR UPDATE OF r"
                ),
                &[&ms(silence), &store.machine_id],
            )?;
            let mut settled = Vec::new();
            for row in lost {
                let id: i64 = row.try_get(0)?;
                let name: String = row.try_get(1)?;
                let renewed: Option<i64> = row.try_get(2)?;
                let since = renewed.map_or_else(|| "ever".to_string(), |ms| rfc3339(from_ms(ms)));
                let end = RunEnd::with_reason(
                    RunStatus::Interrupted,
                    format!("interrupted: its host {name} was lost (no heartbeat since {since})"),
                    now,
                );
                if runs::end_run(tx, id, &end, IN_FLIGHT)? {
                    notify(tx, Announce::Run(id))?;
                    settled.push(id);
                }
            }
            Ok(settled)
        })
    }

    fn runs_owed_by_lost_hosts(&self, silence: SignedDuration) -> Result<Vec<Run>, StoreError> {
        self.with_client(|c| {
            runs::list_where(
                c,
                concat!(
                    "status = 'interrupted' AND resolution IS NULL AND machine_id IN
                     (SELECT machine_id FROM hosts
                      WHERE coalesce(renewed_at_ms, 0) < ",
                    db_now_ms!(),
                    " - $1)
                     AND job_id IN (SELECT id FROM jobs WHERE spec::jsonb ->> 'resume_on' = 'any')"
                ),
                &ms(silence),
            )
        })
    }

    fn logs_to_ship(&self, ended: Option<&[i64]>) -> Result<Vec<LogShipment>, StoreError> {
        logs::to_ship(self, ended)
    }

    fn log_ship(
        &self,
        id: i64,
        offset: u64,
        data: &[u8],
        complete: bool,
        epoch: i64,
    ) -> Result<u64, StoreError> {
        logs::ship(self, id, offset, data, complete, epoch)
    }

    fn log_read(&self, id: i64, offset: u64, max: usize) -> Result<ShippedLog, StoreError> {
        logs::read(self, id, offset, max)
    }

    fn runs_ended(&self, ids: &[i64]) -> Result<Vec<i64>, StoreError> {
        self.with_client(|c| {
            let rows = c.query(
                "SELECT id FROM runs WHERE id = ANY($1)
                 AND status NOT IN ('queued', 'running') ORDER BY id",
                &[&ids],
            )?;
            rows.iter().map(|row| Ok(row.try_get(0)?)).collect()
        })
    }

    /// Listens on a connection of its own, on a thread of its own, until `wake` says stop.
    fn listen(&self, wake: Box<dyn Fn(Wake) -> bool + Send>) -> Result<(), StoreError> {
        let store = self;
        let config = store.config.clone();
        let tls = store.tls.clone();
        let ledger = store.ledger.clone();
        std::thread::Builder::new()
        .name("stead-listen".into())
        .spawn(move || {
            let mut retry = LISTEN_RETRY;
            loop {
                match tls.connect(&config) {
                    Ok(mut client) => {
                        retry = LISTEN_RETRY;
                        if !listen_on(&mut client, &wake, &ledger) {
                            return;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(%ledger, "cannot listen on the ledger: {}; retrying", tls.describe(&e));
                    }
                }
                std::thread::sleep(retry);
                retry = (retry * 2).min(LISTEN_RETRY_MAX);
            }
        })
        .map_err(|e| StoreError::Unavailable {
            ledger: store.ledger.clone(),
            detail: format!("cannot start the listener thread: {e}"),
        })?;
        Ok(())
    }
}

/// Delivers notifications until the connection is lost (true: connect again) or `wake`
/// says stop (false).
fn listen_on(client: &mut Client, wake: &dyn Fn(Wake) -> bool, ledger: &str) -> bool {
    if let Err(e) = client.batch_execute(&format!(
        "LISTEN {QUEUED}; LISTEN {RUN_CHANGED}; LISTEN {CANCEL}; LISTEN {CHANGED};"
    )) {
        tracing::warn!(%ledger, "cannot listen on the ledger: {}", describe(&e));
        return true;
    }
    // Anything sent while no connection listened is looked at again now.
    if !wake(Wake::Reconnected) {
        return false;
    }
    let mut notifications = client.notifications();
    let mut iter = notifications.blocking_iter();
    loop {
        match iter.next() {
            Ok(Some(n)) => {
                let id = n.payload().parse::<i64>();
                let event = match (n.channel(), id) {
                    (QUEUED, _) => Wake::Queued,
                    (CHANGED, _) => Wake::Changed,
                    (RUN_CHANGED, Ok(id)) => Wake::Run(id),
                    (CANCEL, Ok(id)) => Wake::Cancel(id),
                    _ => continue,
                };
                if !wake(event) {
                    return false;
                }
            }
            Ok(None) => return true,
            Err(e) => {
                tracing::warn!(%ledger, "lost the ledger's notifications: {}; reconnecting", describe(&e));
                return true;
            }
        }
    }
}

/// Records the host's name (what `--host` matches), at every connection of the host.
pub fn name_host(client: &mut Client, machine_id: &str, name: &str) -> Result<(), StoreError> {
    // A host that never claimed gets a row at epoch 0 (what a missing row reads as).
    client.execute(
        "INSERT INTO hosts (machine_id, name, epoch, expires_at_ms) VALUES ($1, $2, 0, 0)
         ON CONFLICT (machine_id) DO UPDATE SET name = EXCLUDED.name
         WHERE hosts.name IS DISTINCT FROM EXCLUDED.name",
        &[&machine_id, &name],
    )?;
    Ok(())
}
