//! The heartbeat: renews the lease every heartbeat interval, and at once when a request
//! finds it expired (the server just woke from a sleep); on a shared ledger it then
//! confirms this host's runs for their monitors (`ownership`). Each beat also samples
//! the clocks for a sleep (`sleeps`) and checks for overdue jobs (`overdue`).
//!
//! A renewal that finds the lease expired but still ours re-arms it; only a renewal that
//! finds another epoch or owner stops the server. Between renewals the task sleeps: an
//! idle server wakes once per heartbeat and for nothing else.

use std::sync::Arc;

use tracing::{debug, error, info, warn};

use crate::request::ledger_calls::blocking;
use crate::shared::{Shared, StopReason};
use crate::system::lock;
use stead_core::clock::rfc3339;
use stead_core::lease::{self, RenewOutcome};
use stead_protocol::limits::CLOCK_SKEW_WARN_MS;

pub async fn run(shared: Arc<Shared>) {
    let interval = shared.world.config.timings.heartbeat;
    loop {
        tokio::select! {
            biased;
            () = shared.stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
            () = shared.wake.renew_now.notified() => {}
        }
        crate::tasks::sleeps::observe(&shared).await;
        if !renew(&shared).await {
            return;
        }
        crate::tasks::overdue::check(&shared).await;
        shared.runs.spawner.let_go_if_idle();
        if shared.world.store.is_shared() {
            crate::runs::ownership::refresh(&shared).await;
        }
    }
}

/// Sets a shared ledger's clock before the server schedules anything (later renewals
/// keep it set).
pub async fn read_ledger_clock(shared: &Arc<Shared>) {
    let Some(clock) = shared.ledger_clock.clone() else {
        return;
    };
    let read = blocking(shared, move |s| {
        let sent = clock.local_now();
        let ledger = match s.world.store.cluster() {
            Some(cluster) => cluster.ledger_time()?,
            None => return Ok(()),
        };
        clock.observe(sent, ledger, clock.local_now());
        Ok(())
    })
    .await;
    if let Err(e) = read {
        warn!(cause = %e.message, "failed to read the ledger's clock; using this host's until the next renewal");
    }
    if let Some(offset) = shared.clock_offset_ms()
        && offset.abs() > CLOCK_SKEW_WARN_MS
    {
        warn!(
            offset_ms = offset,
            "this host's clock is {} the database's by {:.1} s; stead follows the database's clock",
            if offset > 0 { "ahead of" } else { "behind" },
            offset.abs() as f64 / 1000.0
        );
    }
}

/// One renewal. Returns false once the server must stop.
async fn renew(shared: &Arc<Shared>) -> bool {
    let ttl = stead_core::clock::span(shared.world.config.timings.lease);
    let task = {
        let shared = shared.clone();
        tokio::task::spawn_blocking(move || {
            let held = shared.lease();
            let now = shared.world.clock.now();
            // The renewal carries this host's own reading, so the ledger can say how far
            // it is from the database's clock; the expiry it returns is the database's.
            let sent = shared.local_now();
            let outcome = shared.world.store.renew_lease(&held, sent, ttl);
            if let (Some(clock), Ok(RenewOutcome::Renewed { expires_at })) =
                (&shared.ledger_clock, &outcome)
            {
                clock.observe(sent, *expires_at - ttl, shared.local_now());
            }
            let in_place = shared.world.store.in_place();
            if let (Ok(RenewOutcome::Renewed { .. }), true) = (&outcome, in_place) {
                // A starter that lost the lease race may have left its own record behind.
                match lock::reassert(&shared.me.lock_paths, &shared.me.lock_record, || {
                    !shared.stop.is_cancelled()
                }) {
                    Ok(true) => info!("rewrote the lock file, which no longer named this server"),
                    Ok(false) => {}
                    Err(e) => warn!(cause = %e, "failed to check the lock file"),
                }
                // A cleaner of /tmp (or a person) may have removed the socket file: the
                // server would serve nobody while renewing its lease for ever.
                if !shared.socket_is_ours() {
                    shared.wake.rebind.notify_one();
                }
            }
            (held, now, outcome, in_place)
        })
    };
    let (held, now, outcome, in_place) = match task.await {
        Ok(result) => result,
        Err(e) => {
            error!(cause = %e, "lease renewal task failed");
            return true;
        }
    };
    if shared.stop.is_cancelled() {
        // Stopping: the release may already have cleared the row; that is no supersession.
        return false;
    }
    if !in_place {
        // The state directory (or its ledger) was removed under this server: whoever
        // serves it now has a ledger of its own, and nothing written here reaches it.
        // Rebinding the socket would only take it from that server.
        let why = format!(
            "the ledger {} was removed or replaced under this server, which no longer serves {}",
            shared.world.ledger.describe(),
            shared.world.paths.dir().display()
        );
        error!("{why}; stopping");
        shared.begin_stop(StopReason::Superseded(why));
        return false;
    }
    match outcome {
        Ok(RenewOutcome::Renewed { expires_at }) => {
            if held.expires_at <= now {
                info!(
                    expired_at = %rfc3339(held.expires_at),
                    expires_at = %rfc3339(expires_at),
                    "re-armed our own expired lease (the server was asleep or frozen)"
                );
            } else {
                debug!(expires_at = %rfc3339(expires_at), "renewed the lease");
            }
            shared.set_lease_expiry(expires_at);
            shared.metrics.lease_renewal("renewed");
            true
        }
        Ok(RenewOutcome::Superseded(row)) => {
            let why = lease::supersession(&held, &row);
            error!(epoch = held.epoch, "{why}; stopping");
            shared.metrics.lease_renewal("lost");
            shared.begin_stop(StopReason::Superseded(why));
            false
        }
        Err(e) => {
            // The lease stays ours until someone else claims it; the next beat retries.
            warn!(cause = %e, "failed to renew the lease; retrying at the next heartbeat");
            shared.metrics.lease_renewal("failed");
            true
        }
    }
}
