//! Starting a run's monitor, detached in a session of its own, with the plan and this
//! host's way to the ledger: forked by the spawner ([`super::spawner`]), or `steadd
//! monitor` exec'd with them on its stdin.

use std::os::fd::{AsFd, OwnedFd};
use std::process::Stdio;
use std::sync::Arc;

use stead_core::runs::{MonitorPlan, MonitorStart, RunEnd, ServerLink};
use stead_protocol::RunStatus;
use tokio::io::AsyncWriteExt;
use tracing::{error, warn};

use super::reuse::{Link, Reserved};
use super::watch::{ExitFd, ProcessWatch, watch_monitor, watch_registered};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;
use tokio::sync::Notify;

/// Starts a queued run's monitor; a run whose monitor cannot start ends failed, saying
/// why.
#[tracing::instrument(name = "run", skip_all, fields(run = plan.run_id))]
pub async fn launch(shared: &Arc<Shared>, plan: &MonitorPlan) {
    let Err(e) = spawn_monitor(shared, plan).await else {
        return;
    };
    error!(cause = %e, "failed to start the run's monitor");
    let end = RunEnd::with_reason(
        RunStatus::Failed,
        format!("failed to start its monitor: {e}"),
        shared.world.clock.now(),
    );
    let (id, epoch) = (plan.run_id, shared.epoch());
    if let Err(e) = blocking(shared, move |s| s.world.store.run_settle(id, &end, epoch)).await {
        error!(cause = %e.message, "failed to record that a monitor could not start");
    }
    shared.run_changed(id);
}

/// Starts the run's monitor, detached in its own session, and watches it: a monitor done
/// with its last run where one waits, else one forked by the spawner where it can be,
/// else `steadd monitor` exec'd with the plan on its stdin. Either way the monitor's
/// stdout is a socket to this server (its link), on which it marks its run running and
/// records its end without connecting.
async fn spawn_monitor(shared: &Arc<Shared>, plan: &MonitorPlan) -> std::io::Result<()> {
    let start = monitor_start(shared, plan);
    if handed_over(shared, plan.run_id, &start) {
        return Ok(());
    }
    let json = serde_json::to_vec(&start).expect("a monitor plan always serializes");
    // The monitor's stdout: its link to this server, served as any connection is.
    let (link, stdout) = std::os::unix::net::UnixStream::pair()?;
    let (pid, watch, only_one) = match forked(shared, json, stdout.into()).await {
        Ok((forked, _stdout)) => (forked.pid, ProcessWatch::of_exit(forked.watch), true),
        // A spawner that answered too late may have forked a monitor that shares this
        // link with the exec'd one: neither is taken again.
        Err((json, stdout)) => {
            let (pid, watch) = exec_monitor(shared, &json, stdout).await?;
            (pid, watch, false)
        }
    };
    link.set_nonblocking(true)?;
    let link = tokio::net::UnixStream::from_std(link)?;
    // A monitor alone on its link, watched by its exit watch, may take further runs: the
    // watch tells which process took each.
    let linked = watch
        .exit_fd()
        .filter(|_| only_one)
        .map(|exit| Link::new(pid, exit));
    if linked.is_some() {
        shared.runs.monitors.linked(pid, plan.run_id);
    }
    crate::request::connection::serve_link(shared, link, linked);
    watch_monitor(shared, plan.run_id, pid, watch);
    Ok(())
}

/// What a monitor of this server starts `plan` with.
fn monitor_start(shared: &Shared, plan: &MonitorPlan) -> MonitorStart {
    let timings = shared.world.config.timings;
    MonitorStart {
        plan: plan.clone(),
        store: shared.world.ledger.clone(),
        // The monitor records through this server: its writes and its neighbours' go
        // through one connection, rather than each monitor taking the ledger's lock (or a
        // database connection) of its own.
        server: Some(ServerLink {
            socket: shared.world.paths.socket().to_path_buf(),
            lease_ms: u64::try_from(timings.lease.as_millis()).unwrap_or(u64::MAX),
            heartbeat_ms: u64::try_from(timings.heartbeat.as_millis()).unwrap_or(u64::MAX),
            confirm_ownership: shared.world.store.is_shared(),
            linked: true,
        }),
        log_keep_free: shared.world.config.logs.keep_free,
        marked: false,
        secret_store: Some(shared.world.paths.secrets().path().to_path_buf()),
    }
}

/// Hands a run admitted marked running for the `reserved` monitor to it, watched from
/// now on. A monitor that gave up its wait first never takes it: watched all the same,
/// its exit settles the run (`interrupted`, its command never started).
#[tracing::instrument(name = "run", skip_all, fields(run = plan.run_id))]
pub async fn hand_marked(shared: &Arc<Shared>, plan: &MonitorPlan, reserved: Reserved) {
    let run_id = plan.run_id;
    let start = MonitorStart {
        marked: true,
        ..monitor_start(shared, plan)
    };
    let start = serde_json::to_value(&start).expect("a monitor plan always serializes");
    #[cfg(debug_assertions)]
    late_hand_over_for_tests(plan).await;
    let done = shared.watching(run_id);
    let taken = match shared.runs.monitors.hand_reserved(reserved, run_id, start) {
        Ok(taken) => taken,
        Err(gone) => {
            warn!(pid = gone.0, "the monitor reserved for the run left first");
            gone
        }
    };
    watch_taken(shared, run_id, taken, done);
}

/// Watches the monitor `taken` (its pid and registered exit watch), which has `run_id`
/// now; `done`: the watch registered before it had the run.
fn watch_taken(shared: &Arc<Shared>, run_id: i64, taken: (u32, ExitFd), done: Arc<Notify>) {
    let (pid, exit) = taken;
    watch_registered(shared, run_id, pid, ProcessWatch::of_registered(exit), done);
}

/// Debug builds only (the tests' binaries): holds a marked run of the job `JOB` back from
/// its monitor for `MS` milliseconds after its commit (`STEAD_TEST_HAND_OVER_LATE=JOB:MS`),
/// while the server serves on, so a test can cancel the run or kill the server in between
/// (see `reuse.rs`); runs of other jobs are handed over at once. Release builds have no
/// such setting.
#[cfg(debug_assertions)]
async fn late_hand_over_for_tests(plan: &MonitorPlan) {
    let late = std::env::var("STEAD_TEST_HAND_OVER_LATE").unwrap_or_default();
    let ms = late
        .split_once(':')
        .filter(|(job, _)| plan.env.get("STEAD_JOB").is_some_and(|name| name == job))
        .and_then(|(_, ms)| ms.parse::<u64>().ok());
    if let Some(ms) = ms {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}

/// Hands the run to a monitor waiting for one (`reuse`), watched from now on; false when
/// none waits.
fn handed_over(shared: &Arc<Shared>, run_id: i64, start: &MonitorStart) -> bool {
    // A burst of fires finds none waiting: spared the rest.
    if !shared.runs.monitors.any_waiting() {
        return false;
    }
    let start = serde_json::to_value(start).expect("a monitor plan always serializes");
    // Registered before the monitor has the run, so that its end is known to come
    // through here however soon it comes.
    let done = shared.watching(run_id);
    match shared.runs.monitors.hand(run_id, &start) {
        Some(taken) => {
            watch_taken(shared, run_id, taken, done);
            true
        }
        None => {
            shared.watched_ended(run_id);
            false
        }
    }
}

/// Asks the spawner for the monitor; hands the plan and the link back when it cannot
/// (or where there is no spawner: see [`stead_sys::spawn::FORK_SERVER`]), and has one
/// started for the next run when none runs.
async fn forked(
    shared: &Arc<Shared>,
    json: Vec<u8>,
    stdout: OwnedFd,
) -> Result<(stead_monitor::spawner::Forked, OwnedFd), (Vec<u8>, OwnedFd)> {
    match shared.runs.spawner.spawn(&json, stdout.as_fd()).await {
        Ok(forked) => Ok((forked, stdout)),
        Err(_) => {
            warm_spawner(shared);
            Err((json, stdout))
        }
    }
}

/// Has a spawner started, off the event loop (it forks and execs), where none runs.
pub fn warm_spawner(shared: &Arc<Shared>) {
    if shared.runs.spawner.needs_start() {
        let warming = shared.clone();
        tokio::task::spawn_blocking(move || warming.runs.spawner.warm());
    }
}

/// What a monitor's (or the spawner's) stderr is: the monitors' log, or nowhere when it
/// cannot be opened (a diagnostic lost is no reason to hold a run back).
pub fn monitors_stderr(logs_dir: &std::path::Path) -> Stdio {
    match super::logs::monitors_log(logs_dir) {
        Ok(file) => Stdio::from(file),
        Err(e) => {
            warn!(cause = %e, "cannot open the monitors' log; their diagnostics are lost");
            Stdio::null()
        }
    }
}

/// `steadd monitor`, exec'd detached in its own session, with the plan on its stdin and
/// `stdout` as its stdout.
async fn exec_monitor(
    shared: &Arc<Shared>,
    json: &[u8],
    stdout: OwnedFd,
) -> std::io::Result<(u32, ProcessWatch)> {
    let mut command = tokio::process::Command::new(&shared.world.monitor_exe);
    // The state directory in its command line tells a person (and `ps`) whose run it is.
    command
        .arg("--state-dir")
        .arg(shared.world.paths.dir())
        .arg("monitor")
        .stdin(Stdio::piped())
        // Its link to this server.
        .stdout(Stdio::from(stdout))
        .stderr(monitors_stderr(&shared.world.paths.logs_dir()))
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
    // Its stdout is the child's alone now: the command held the only other copy.
    drop(command);
    let pid = child
        .id()
        .ok_or_else(|| std::io::Error::other("the monitor exited at once"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    stdin.write_all(json).await?;
    drop(stdin);
    // The child is not reaped while we hold it, so its pid cannot be reused before the
    // watch is set up; dropping it afterwards leaves the reaping to the runtime.
    let watch = ProcessWatch::open(pid, None);
    drop(child);
    Ok((pid, watch))
}
