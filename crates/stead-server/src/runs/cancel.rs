//! Cancelling a run (through its monitor, or at once while it is queued), relaying
//! cancels asked for on another host, and cutting runs on purpose.

use std::sync::Arc;

use jiff::Timestamp;
use stead_core::records::ActiveRun;
use stead_core::runs::DEFAULT_KILL_GRACE_MS;
use stead_core::runs::RunEnd;
use stead_protocol::{ErrorBody, ErrorCode, Run, RunStatus};
use stead_store::StoreError;
use stead_sys::identity;
use tracing::{info, warn};

use super::wait::wait_terminal;
use crate::request::ledger_calls::{active_run, blocking};
use crate::shared::Shared;
use stead_store::Refusal;

/// How long `cancel` waits for the monitor to record the end before answering.
const CANCEL_WAIT: std::time::Duration =
    std::time::Duration::from_millis(DEFAULT_KILL_GRACE_MS + 2_000);

/// Asks a run's monitor to cancel it (SIGUSR1), if the monitor is who the row says and
/// still has the run (a monitor that took another since is not signalled: the run is
/// over). False when the monitor is gone.
pub(super) fn signal_cancel(shared: &Shared, run: &ActiveRun) -> bool {
    match &run.monitor {
        Some((pid, identity)) if identity::is_alive(*pid, identity) => shared
            .runs
            .monitors
            .signal_for(*pid, run.id, rustix::process::Signal::USR1)
            .unwrap_or(true),
        _ => false,
    }
}

/// How a run cut for `why` (its monitor gone, its machine rebooted) ends: `interrupted`,
/// owed and resumed; but `cancelled` when its cancel was asked for, as was asked: a
/// monitor that died before it could record the cancel must not have the run resumed.
pub(super) fn cut_end(cancel_requested: bool, why: &str, now: Timestamp) -> RunEnd {
    if cancel_requested {
        RunEnd::with_reason(RunStatus::Cancelled, format!("cancelled: {why}"), now)
    } else {
        RunEnd::with_reason(RunStatus::Interrupted, format!("interrupted: {why}"), now)
    }
}

/// Cancels a run: a queued one at once, a running one through its monitor, waiting
/// (boundedly) for the monitor to record the end.
#[tracing::instrument(name = "run", skip_all, fields(run = id))]
pub async fn cancel(shared: &Arc<Shared>, id: i64) -> Result<Run, ErrorBody> {
    let mut events = shared.run_events.subscribe();
    let epoch = shared.epoch();
    let machine = shared.world.machine_id.clone();
    let now = shared.world.clock.now();
    let outcome = blocking(shared, move |s| {
        let run = s
            .world
            .store
            .run_get(id)?
            .ok_or(StoreError::Refused(Refusal::NoSuchRun(id)))?;
        if run.status.is_terminal() {
            return Ok(Err(run));
        }
        if run.status == RunStatus::Queued {
            let end = RunEnd::with_reason(RunStatus::Cancelled, "cancelled before it started", now);
            if s.world.store.run_settle_queued(id, &end, epoch)? {
                return Ok(Ok(None));
            }
        }
        s.world.store.run_request_cancel(id, now, epoch)?;
        Ok(Ok(active_run(&s.world.store, &machine, id)?))
    })
    .await?;
    let active = match outcome {
        Err(done) => {
            return Err(ErrorBody::new(
                ErrorCode::Conflict,
                format!("run {} already ended: {}", done.id, done.status.as_str()),
            ));
        }
        Ok(active) => active,
    };
    if let Some(active) = &active
        && !signal_cancel(shared, active)
    {
        // The monitor is gone: nobody else will ever record this run.
        let end = RunEnd::with_reason(
            RunStatus::Cancelled,
            "cancelled (its monitor was already gone)",
            now,
        );
        blocking(shared, move |s| s.world.store.run_settle(id, &end, epoch)).await?;
    }
    shared.run_changed(id);
    wait_terminal(shared, id, &mut events, CANCEL_WAIT).await
}

/// Cancels asked for on another host: this host's runs among `which` whose cancel was
/// requested have their monitors told. `None`: every such run (after the notifications
/// were not heard for a while: at start, and when the listener reconnects).
pub async fn relay_cancels(shared: &Arc<Shared>, which: Option<i64>) {
    let machine = shared.world.machine_id.clone();
    let found = blocking(shared, move |s| {
        Ok(s.world
            .store
            .runs_active(&machine)?
            .into_iter()
            .filter(|r| r.cancel_requested && which.is_none_or(|id| r.id == id))
            .collect::<Vec<_>>())
    })
    .await;
    match found {
        Ok(runs) => {
            for run in runs {
                if signal_cancel(shared, &run) {
                    info!(run = run.id, "cancelling a run as asked on another host");
                }
            }
        }
        Err(e) => warn!(cause = %e.message, "failed to look up runs to cancel"),
    }
}

/// Cuts every run of this machine that has not ended and whose job `which` selects:
/// each is settled `interrupted` with `reason` (so it is owed, and resumed), then its
/// monitor is told to stop, taking the run's process group down with it.
pub async fn cut_where(
    shared: &Arc<Shared>,
    reason: &str,
    which: impl Fn(&str) -> bool + Send + 'static,
) -> Result<(), ErrorBody> {
    let epoch = shared.epoch();
    let machine = shared.world.machine_id.clone();
    let reason = reason.to_string();
    let cut = blocking(shared, move |s| {
        let mut cut = Vec::new();
        for run in s.world.store.runs_active(&machine)? {
            // A waiting run holds no process: nothing of it is cut, it goes on waiting.
            if run.waiting || !which(&run.job) {
                continue;
            }
            let end =
                RunEnd::with_reason(RunStatus::Interrupted, reason.clone(), s.world.clock.now());
            if s.world.store.run_settle(run.id, &end, epoch)? {
                cut.push(run);
            }
        }
        Ok(cut)
    })
    .await?;
    for run in &cut {
        if let Some((pid, identity)) = &run.monitor
            && identity::is_alive(*pid, identity)
        {
            let stop = rustix::process::Signal::TERM;
            shared.runs.monitors.signal_for(*pid, run.id, stop);
        }
        info!(run = run.id, job = %run.job, "cut a run on the way down");
        shared.run_changed(run.id);
    }
    Ok(())
}
