//! Reconciling at boot: runs an earlier server left in flight are adopted when their
//! monitor lives, and cut (interrupted, owed) when it does not.

use std::collections::BTreeSet;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use stead_protocol::RunStatus;
use stead_sys::identity;
use tracing::{error, info};

use super::cancel::cut_end;
use super::watch::{ProcessWatch, watch_monitor};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

/// How long after its instant a fire admitted ahead may go unmarked before it counts as
/// cut: its monitor marks it on the instant (or 5 s after it was started, whatever the
/// clock did), so only a monitor that is gone leaves it unmarked this long.
const STAGED_GRACE: SignedDuration = SignedDuration::from_secs(10);

/// At boot: every run of this machine that has not ended was started under an earlier
/// server. A live monitor is adopted (watched); anything else was cut and is
/// `interrupted`, with a reason that says what cut it. A fire admitted ahead of its
/// instant and not yet marked is judged once its monitor has had its chance to mark it.
pub async fn reconcile(shared: &Arc<Shared>) {
    let later = pass(shared, None).await;
    let Some(at) = later.iter().map(|(_, at)| *at).max() else {
        return;
    };
    let shared = shared.clone();
    tokio::spawn(async move {
        let clock = shared.world.clock.clone();
        tokio::select! {
            () = shared.stop.cancelled() => {}
            () = clock.sleep_until(at) => {
                pass(&shared, Some(later.into_iter().map(|(id, _)| id).collect())).await;
            }
        }
    });
}

/// Adopts or cuts the runs in flight (`only` these, when given); answers the fires
/// admitted ahead it left to be judged later, with when.
async fn pass(shared: &Arc<Shared>, only: Option<BTreeSet<i64>>) -> Vec<(i64, Timestamp)> {
    let late = only.is_some();
    let epoch = shared.epoch();
    let machine = shared.world.machine_id.clone();
    let boot = shared.me.boot_id.clone();
    let found = blocking(shared, move |s| {
        let mut adopted = Vec::new();
        let mut cut = Vec::new();
        let mut later = Vec::new();
        let now = s.world.clock.now();
        // A run that waits was never handed to a monitor: it goes on waiting.
        for run in s
            .world
            .store
            .runs_active(&machine)?
            .into_iter()
            .filter(|r| !r.waiting)
            .filter(|r| only.as_ref().is_none_or(|ids| ids.contains(&r.id)))
        {
            let why = match (&run.monitor, run.status) {
                _ if run.boot_id != boot => "the machine rebooted while it ran".to_string(),
                (Some((pid, identity)), _) if identity::is_alive(*pid, identity) => {
                    adopted.push((run.id, *pid, identity.clone()));
                    continue;
                }
                (Some((pid, _)), _) => format!("its monitor (pid {pid}) is gone"),
                (None, RunStatus::Queued)
                    if only.is_none()
                        && let Some(judged) = run
                            .staged_for
                            .and_then(|at| at.checked_add(STAGED_GRACE).ok())
                            .filter(|judged| *judged > now) =>
                {
                    later.push((run.id, judged));
                    continue;
                }
                (None, _) => "the server stopped before the run's monitor started".to_string(),
            };
            let end = cut_end(run.cancel_requested, &why, now);
            let reason = end.reason.as_deref().unwrap_or_default();
            info!(run = run.id, job = %run.job, %reason, "reconciled a cut run");
            cut.push((run.id, end));
        }
        // One transaction for all of them: a server that comes back to many cut runs
        // answers after one commit, not one per run.
        s.world.store.run_settle_all(&cut, epoch)?;
        Ok((
            adopted,
            later,
            cut.into_iter().map(|(id, _)| id).collect::<Vec<_>>(),
        ))
    })
    .await;
    match found {
        Ok((adopted, later, cut)) => {
            for (id, pid, identity) in adopted {
                info!(run = id, pid, "adopted a running run's monitor");
                let watch = ProcessWatch::open(pid, Some(&identity));
                watch_monitor(shared, id, pid, watch);
            }
            if late && !cut.is_empty() {
                // Cut while this server serves: the resumer looks at once.
                for id in cut {
                    shared.run_changed(id);
                }
                shared.wake.runs_cut.notify_one();
            }
            later
        }
        Err(e) => {
            error!(cause = %e.message, "failed to reconcile runs at boot");
            Vec::new()
        }
    }
}
