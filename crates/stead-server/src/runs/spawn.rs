//! Starting a run's monitor: `stead monitor`, detached in a session of its own, with the
//! plan and this host's way to the ledger on its stdin.

use std::process::Stdio;
use std::sync::Arc;

use stead_core::runs::{MonitorPlan, MonitorStart, RunEnd, ServerLink};
use stead_protocol::RunStatus;
use tokio::io::AsyncWriteExt;
use tracing::error;

use super::watch::{ProcessWatch, watch_monitor};
use crate::ledger::blocking;
use crate::shared::Shared;

/// Starts a queued run's monitor; a run whose monitor cannot start ends failed, saying
/// why.
pub async fn launch(shared: &Arc<Shared>, plan: &MonitorPlan) {
    let Err(e) = spawn_monitor(shared, plan).await else {
        return;
    };
    error!(run = plan.run_id, cause = %e, "failed to start the run's monitor");
    let end = RunEnd::with_reason(
        RunStatus::Failed,
        format!("failed to start its monitor: {e}"),
        shared.world.clock.now(),
    );
    let (id, epoch) = (plan.run_id, shared.epoch());
    if let Err(e) = blocking(shared, move |s| s.world.store.run_settle(id, &end, epoch)).await {
        error!(run = id, cause = %e.message, "failed to record that a monitor could not start");
    }
    let _ = shared.run_events.send(id);
}

/// Starts `stead monitor` detached in its own session, hands it the plan, and watches it.
async fn spawn_monitor(shared: &Arc<Shared>, plan: &MonitorPlan) -> std::io::Result<()> {
    let mut command = tokio::process::Command::new(&shared.world.monitor_exe);
    // The state directory in its command line tells a person (and `ps`) whose run it is.
    command
        .arg("--state-dir")
        .arg(shared.world.paths.dir())
        .arg("monitor")
        .stdin(Stdio::piped())
        // The monitor closes its stdout once the run's end is recorded (see `watch_monitor`).
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        // The monitor must outlive this server: never tie it to our lifetime.
        .kill_on_drop(false);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            rustix::process::setsid()
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
    let mut child = command.spawn()?;
    let pid = child
        .id()
        .ok_or_else(|| std::io::Error::other("the monitor exited at once"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let timings = shared.world.config.timings;
    let start = MonitorStart {
        plan: plan.clone(),
        store: shared.world.ledger.clone(),
        // On a shared ledger the monitor records through this server, sharing its
        // connection; on SQLite it writes the file itself, as cheap as asking.
        server: shared.world.store.is_shared().then(|| ServerLink {
            socket: shared.world.paths.socket().to_path_buf(),
            lease_ms: u64::try_from(timings.lease.as_millis()).unwrap_or(u64::MAX),
            heartbeat_ms: u64::try_from(timings.heartbeat.as_millis()).unwrap_or(u64::MAX),
        }),
        log_keep_free: shared.world.config.logs.keep_free,
    };
    let json = serde_json::to_vec(&start).expect("a monitor plan always serializes");
    stdin.write_all(&json).await?;
    drop(stdin);
    // The child is not reaped while we hold it, so its pid cannot be reused before the
    // watch is set up; dropping it afterwards leaves the reaping to the runtime.
    let watch = ProcessWatch::open(pid, None);
    let ended = child.stdout.take();
    drop(child);
    watch_monitor(shared, plan.run_id, pid, watch, ended);
    Ok(())
}
