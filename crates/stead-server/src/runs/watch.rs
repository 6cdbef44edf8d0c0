//! Watching monitors, this server's own and ones adopted from an earlier server, until
//! they exit; settling a run whose monitor died without recording it.

use std::sync::Arc;
use std::time::Duration;

use stead_protocol::RunStatus;
use stead_sys::exit::ExitWatch;
use stead_sys::identity::{self, StartIdentity};
use tokio::io::unix::AsyncFd;
use tracing::{Instrument, error, info, warn};

use super::cancel::cut_end;
use crate::request::ledger_calls::{active_run, blocking};
use crate::shared::Shared;

/// Watches a monitor until it exits, then settles its run if the monitor could not. A
/// monitor tells of its run's start and end as it records them (through this server:
/// waiters hear of the end then, not once a failure hook the monitor runs afterwards is
/// done); its exit only needs a look at the ledger when its end did not come through
/// this server.
pub fn watch_monitor(shared: &Arc<Shared>, run_id: i64, pid: u32, watch: ProcessWatch) {
    let done = shared.watching(run_id);
    watch_registered(shared, run_id, pid, watch, done);
}

/// [`watch_monitor`], once the watch is registered (`Shared::watching`, which answered
/// `done`): until the monitor exits, or is done with the run and takes another.
pub fn watch_registered(
    shared: &Arc<Shared>,
    run_id: i64,
    pid: u32,
    watch: ProcessWatch,
    done: Arc<tokio::sync::Notify>,
) {
    let shared = shared.clone();
    let span = tracing::info_span!("run", run = run_id);
    tokio::spawn(
        async move {
            let _watching = shared.metrics.watching_monitor();
            let exited = tokio::select! {
                () = watch.exited() => true,
                // It recorded the run's end through this server, and its log is whole.
                () = done.notified() => false,
                // A stopping server stops watching: the monitor goes on, and the next server
                // adopts it.
                () = shared.stop.cancelled() => return,
            };
            if shared.watched_ended(run_id) || !exited {
                // Its end came through this server: told, and followed up, already.
                shared.log_ended(run_id);
                return;
            }
            let epoch = shared.epoch();
            let machine = shared.world.machine_id.clone();
            // The run as it ended, settled here if the monitor could not record it.
            let ended = blocking(&shared, move |s| {
                let Some(run) = s.world.store.run_get(run_id)? else {
                    return Ok(Exited::Gone);
                };
                if run.status.is_terminal() {
                    return Ok(Exited::Ended(run.status, false));
                }
                let active = active_run(&s.world.store, &machine, run_id)?;
                if run.monitor_pid.is_some_and(|marked| marked != pid)
                    && let Some((other, identity)) = active.as_ref().and_then(|r| r.monitor.clone())
                {
                    // Another monitor marked it: one the spawner forked after this server
                    // gave up on its answer and started this one instead, which then found
                    // the run taken. That one is the run's, and is watched in its place.
                    return Ok(Exited::NotTheRuns(other, identity));
                }
                let end = cut_end(
                    active.is_some_and(|r| r.cancel_requested),
                    &format!("its monitor (pid {pid}) exited without recording an outcome"),
                    s.world.clock.now(),
                );
                let settled = s.world.store.run_settle(run_id, &end, epoch)?;
                Ok(Exited::Ended(end.status, settled))
            })
            .await;
            match ended {
                Ok(Exited::Ended(status, settled)) => {
                    if settled {
                        warn!(pid, "a monitor died without recording its run; interrupted");
                    }
                    if status == RunStatus::Interrupted {
                        // Cut while this server serves: it is owed now, not only at the next boot.
                        shared.wake.runs_cut.notify_one();
                    }
                }
                Ok(Exited::NotTheRuns(other, identity)) => {
                    info!(pid = other, "watching the monitor that marked the run");
                    let watch = ProcessWatch::open(other, Some(&identity));
                    watch_monitor(&shared, run_id, other, watch);
                    return;
                }
                Ok(Exited::Gone) => {}
                Err(e) => {
                    error!(cause = %e.message, "failed to settle a run after its monitor exited")
                }
            }
            // Its log is whole now: on a shared ledger, the rest is shipped at once.
            shared.log_ended(run_id);
            // Its end, written here or by the monitor without this server: waiters hear of it.
            shared.run_changed(run_id);
        }
        .instrument(span),
    );
}

/// What a watched monitor's exit came to.
enum Exited {
    /// The run is not on the ledger (pruned, or another ledger's).
    Gone,
    /// The run's end, and whether it was settled here (`interrupted`) for want of one.
    Ended(RunStatus, bool),
    /// Another monitor marked the run: it is the run's, and is watched instead.
    NotTheRuns(u32, StartIdentity),
}

/// An exit watch registered with the runtime: a monitor's is registered once and
/// watched by the watch of each run it takes.
pub type ExitFd = Arc<AsyncFd<ExitWatch>>;

/// Registers `watch` with the runtime.
fn register(watch: ExitWatch) -> std::io::Result<ExitFd> {
    // SAFETY: the AsyncFd owns the watch, whose descriptor stays open while registered.
    let fd = unsafe { AsyncFd::register_with_interest(watch, tokio::io::Interest::READABLE) }?;
    Ok(Arc::new(fd))
}

/// Waits for a process that need not be our child to exit.
pub enum ProcessWatch {
    /// Its exit watch turns readable when the process exits (see [`stead_sys::exit`]).
    Exit(ExitFd),
    /// Poll the start identity (when no exit watch could be had).
    Poll(u32, Option<StartIdentity>),
    /// Already gone.
    Gone,
}

impl ProcessWatch {
    /// A watch on an exit watch opened while the process could not have been reaped (the
    /// spawner's), so it is the very process asked for.
    pub fn of_exit(watch: ExitWatch) -> Self {
        let pid = watch.pid();
        match register(watch) {
            Ok(fd) => ProcessWatch::Exit(fd),
            Err(_) => Self::open(pid, None),
        }
    }

    /// A watch on an exit watch registered already: a monitor's, for its next run.
    pub fn of_registered(fd: ExitFd) -> Self {
        ProcessWatch::Exit(fd)
    }

    /// Opens the watch first and checks the identity second, so a pid reused in between
    /// cannot be mistaken for the monitor.
    pub fn open(pid: u32, identity: Option<&StartIdentity>) -> Self {
        match ExitWatch::open(pid) {
            Ok(Some(watch)) => {
                if identity.is_some_and(|id| !identity::is_alive(pid, id)) {
                    return ProcessWatch::Gone;
                }
                if let Ok(fd) = register(watch) {
                    return ProcessWatch::Exit(fd);
                }
            }
            Ok(None) => return ProcessWatch::Gone,
            // Out of descriptors, say: the identity is polled instead.
            Err(_) => {}
        }
        let identity = identity
            .cloned()
            .or_else(|| identity::of_pid(pid).ok().flatten());
        match identity {
            Some(identity) if identity::is_alive(pid, &identity) => {
                ProcessWatch::Poll(pid, Some(identity))
            }
            _ => ProcessWatch::Gone,
        }
    }

    /// The exit watch, where there is one: a monitor's later runs are watched by it too,
    /// registered once.
    pub fn exit_fd(&self) -> Option<ExitFd> {
        match self {
            ProcessWatch::Exit(fd) => Some(fd.clone()),
            _ => None,
        }
    }

    pub async fn exited(self) {
        match self {
            ProcessWatch::Exit(fd) => {
                let _ = fd.readable().await;
            }
            ProcessWatch::Poll(pid, identity) => {
                let alive = |pid, identity: &Option<StartIdentity>| match identity {
                    Some(id) => identity::is_alive(pid, id),
                    None => false,
                };
                while alive(pid, &identity) {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
            ProcessWatch::Gone => {}
        }
    }
}
