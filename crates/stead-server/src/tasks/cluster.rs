//! A server among several hosts on one shared ledger: it campaigns for the scheduler's
//! leadership, claims the runs queued for any host, hears the ledger's notifications,
//! ships its runs' logs (`ship`), and, while it leads, settles the runs of hosts that
//! went silent.
//!
//! On a ledger of one host none of this runs: the one server leads with its own epoch
//! and starts the runs it admits itself.

use std::sync::Arc;

use tracing::{error, info, warn};

use crate::request::ledger_calls::on_cluster;
use crate::runs;
use crate::shared::Shared;
use stead_core::records::Wake;
use stead_store::ClaimingHost;
use stead_store::Refusal;

/// The most runs one claim takes: the rest stay for other hosts, or the next claim.
const CLAIM_BATCH: u32 = 16;

/// Starts the cluster's tasks, or, on a ledger of one host, makes this server the leader.
pub fn start(shared: &Arc<Shared>) {
    if !shared.world.store.is_shared() {
        shared.leader.send_replace(Some(shared.epoch()));
        return;
    }
    listen(shared);
    crate::tasks::ship::start(shared);
    tokio::spawn(campaign(shared.clone()));
    tokio::spawn(claim(shared.clone()));
}

/// Hands the ledger's notifications to the server's own wake-ups, from the store's
/// listener thread, until the server stops.
fn listen(shared: &Arc<Shared>) {
    let to = shared.clone();
    let wake = Box::new(move |event: Wake| {
        match event {
            Wake::Queued => to.wake.claim_now.notify_one(),
            Wake::Run(id) => {
                to.run_changed(id);
            }
            Wake::Cancel(id) => {
                // Called on the listener's thread: the signal is sent from the runtime.
                let shared = to.clone();
                to.runtime
                    .spawn(async move { runs::relay_cancels(&shared, Some(id)).await });
            }
            Wake::Changed => {
                // A job (or a service, a hold, a notifier) changed through another host's
                // server: the leader's scheduler reads the jobs again, readiness waiters
                // look again, the deliverer reads the notifiers again.
                to.wake.jobs_changed.notify_one();
                to.wake.notifiers_changed.notify_one();
                to.changed();
            }
            Wake::Reconnected => {
                to.wake.claim_now.notify_one();
                to.wake.jobs_changed.notify_one();
                to.wake.notifiers_changed.notify_one();
                to.changed();
                // A cancel sent while nobody here listened is on the run's row.
                let shared = to.clone();
                to.runtime
                    .spawn(async move { runs::relay_cancels(&shared, None).await });
            }
        }
        !to.stop.is_cancelled()
    });
    let listening = match shared.world.store.cluster() {
        Some(cluster) => cluster.listen(wake),
        None => Err(stead_store::StoreError::Refused(Refusal::NotShared)),
    };
    if let Err(e) = listening {
        error!(cause = %e, "cannot listen to the shared ledger; claims wait for the heartbeat");
    }
}

/// The leadership: claimed or renewed every heartbeat; lost when another server's claim
/// bumped the epoch (a fenced write, or a renewal that finds the row taken).
async fn campaign(shared: Arc<Shared>) {
    let timings = shared.world.config.timings;
    let ttl = stead_core::clock::span(timings.lease);
    // Another host's silence counts only if this server heard the ledger all along: after
    // an outage of the ledger itself every host looks silent until it renews again.
    let mut heard_since: Option<std::time::Instant> = None;
    // When the leadership was last renewed, by this host's monotonic clock: a leader cut
    // off from the database steps down once a lease has passed since, as its term has
    // then run out for everyone else.
    let mut renewed: Option<std::time::Instant> = None;
    loop {
        let asked = std::time::Instant::now();
        let lease = shared.lease();
        let outcome = on_cluster(&shared, move |_, c| c.lead(&lease, ttl)).await;
        let was = *shared.leader.borrow();
        match outcome {
            Ok(Some(epoch)) => {
                renewed = Some(asked);
                if was != Some(epoch) {
                    info!(epoch, "leading the scheduler for every host");
                    shared.leader.send_replace(Some(epoch));
                    // Debts of lost hosts a previous leader cut but did not resume yet
                    // are this server's to settle now.
                    shared.wake.runs_cut.notify_one();
                }
                let heard = *heard_since.get_or_insert_with(std::time::Instant::now);
                if heard.elapsed() >= timings.lease {
                    settle_lost_hosts(&shared, epoch).await;
                }
            }
            Ok(None) => {
                heard_since.get_or_insert_with(std::time::Instant::now);
                if was.is_some() {
                    warn!("another server leads the scheduler now; this one stops scheduling");
                    shared.leader.send_replace(None);
                }
            }
            Err(e) => {
                heard_since = None;
                // Unknown: the fence stops any write a successor made stale.
                warn!(cause = %e.message, "failed to renew the scheduler's leadership");
                if was.is_some() && renewed.is_none_or(|at| at.elapsed() >= timings.lease) {
                    warn!(
                        "the leadership could not be renewed for a lease; this server stops scheduling"
                    );
                    shared.leader.send_replace(None);
                }
            }
        }
        tokio::select! {
            () = shared.stop.cancelled() => break,
            () = tokio::time::sleep(timings.heartbeat) => {}
        }
    }
    let led = *shared.leader.borrow();
    if let Some(epoch) = led {
        shared.leader.send_replace(None);
        let lease = shared.lease();
        // Handed over at once rather than after the lease: the next leader needs no wait.
        let _ = on_cluster(&shared, move |_, c| c.resign(&lease, epoch)).await;
    }
}

/// Ends the runs of hosts silent for a whole lease as interrupted, and wakes the resumer
/// for the ones that may resume elsewhere.
async fn settle_lost_hosts(shared: &Arc<Shared>, epoch: i64) {
    let now = shared.world.clock.now();
    let lease = stead_core::clock::span(shared.world.config.timings.lease);
    let settled = on_cluster(shared, move |_, c| c.settle_lost_hosts(lease, now, epoch)).await;
    match settled {
        Ok(ids) if !ids.is_empty() => {
            warn!(runs = ?ids, "runs of a lost host ended interrupted");
            for id in ids {
                shared.run_changed(id);
            }
            shared.wake.runs_cut.notify_one();
        }
        Ok(_) => {}
        Err(e) => warn!(cause = %e.message, "failed to settle the runs of lost hosts"),
    }
}

/// Claims runs queued for any host that this host may run, and starts them, whenever
/// one is queued (a notification) and at every heartbeat.
async fn claim(shared: Arc<Shared>) {
    let heartbeat = shared.world.config.timings.heartbeat;
    loop {
        loop {
            let epoch = shared.epoch();
            let claimed = on_cluster(&shared, move |s, c| {
                let log_dir = s.world.paths.logs_dir().join("runs");
                let host = ClaimingHost {
                    machine_id: &s.world.machine_id,
                    name: &s.me.host_name,
                    boot_id: &s.me.boot_id,
                    log_dir: &log_dir,
                    state_dir: s.world.paths.dir(),
                };
                c.runs_claim(&host, CLAIM_BATCH, epoch)
            })
            .await;
            let claimed = match claimed {
                Ok(claimed) => claimed,
                Err(e) => {
                    warn!(cause = %e.message, "failed to claim queued runs");
                    break;
                }
            };
            let full = claimed.len() == CLAIM_BATCH as usize;
            if claimed.waiting > 0 {
                // They wait for a place in their queue here: the starter hands them over.
                shared.wake.waiting_changed.notify_one();
            }
            for plan in claimed.plans {
                info!(run = plan.run_id, "claimed a queued run");
                runs::launch(&shared, &plan).await;
            }
            if !full {
                break;
            }
        }
        tokio::select! {
            () = shared.stop.cancelled() => return,
            () = shared.wake.claim_now.notified() => {}
            () = tokio::time::sleep(heartbeat) => {}
        }
    }
}
