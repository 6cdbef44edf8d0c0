//! Reconciling at boot: runs an earlier server left in flight are adopted when their
//! monitor lives, and cut (interrupted, owed) when it does not.

use std::sync::Arc;

use stead_core::identity;
use stead_core::runs::RunEnd;
use stead_protocol::RunStatus;
use tracing::{error, info};

use super::watch::{ProcessWatch, watch_monitor};
use crate::ledger::blocking;
use crate::shared::Shared;

/// At boot: every run of this machine that has not ended was started under an earlier
/// server. A live monitor is adopted (watched); anything else was cut and is
/// `interrupted`, with a reason that says what cut it.
pub async fn reconcile(shared: &Arc<Shared>) {
    let epoch = shared.epoch();
    let machine = shared.world.machine_id.clone();
    let boot = shared.boot_id.clone();
    let found = blocking(shared, move |s| {
        let mut adopted = Vec::new();
        let mut cut = Vec::new();
        let now = s.world.clock.now();
        // A run that waits was never handed to a monitor: it goes on waiting.
        for run in s
            .world
            .store
            .runs_active(&machine)?
            .into_iter()
            .filter(|r| !r.waiting)
        {
            let reason = match (&run.monitor, run.status) {
                _ if run.boot_id != boot => {
                    "interrupted: the machine rebooted while it ran".to_string()
                }
                (Some((pid, identity)), _) if identity::is_alive(*pid, identity) => {
                    adopted.push((run.id, *pid, identity.clone()));
                    continue;
                }
                (Some((pid, _)), _) => {
                    format!("interrupted: its monitor (pid {pid}) is gone")
                }
                (None, _) => {
                    "interrupted: the server stopped before the run's monitor started".to_string()
                }
            };
            info!(run = run.id, job = %run.job, %reason, "reconciled a cut run");
            cut.push((
                run.id,
                RunEnd::with_reason(RunStatus::Interrupted, reason, now),
            ));
        }
        // One transaction for all of them: a server that comes back to many cut runs
        // answers after one commit, not one per run.
        s.world.store.run_settle_all(&cut, epoch)?;
        Ok(adopted)
    })
    .await;
    match found {
        Ok(adopted) => {
            for (id, pid, identity) in adopted {
                info!(run = id, pid, "adopted a running run's monitor");
                let watch = ProcessWatch::open(pid, Some(&identity));
                watch_monitor(shared, id, pid, watch, None);
            }
        }
        Err(e) => error!(cause = %e.message, "failed to reconcile runs at boot"),
    }
}
