//! The server's side of runs: admit a run, start its monitor, watch monitors (its own
//! and ones adopted from an earlier server), cancel, and reconcile at boot.
//!
//! The server never holds a run's command: each run's monitor does, and records the
//! outcome itself. The server watches each monitor's process (a pidfd on Linux) only to
//! learn that a row changed, and to settle the rare run whose monitor died before it
//! could record anything. Every server write here is fenced by its lease epoch.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use stead_protocol::{ErrorBody, ErrorCode, JobSpec, Run, RunFilter, RunStatus};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tracing::{error, info, warn};

use super::shared::Shared;
use crate::clock::rfc3339;
use crate::lifecycle::identity::{self, StartIdentity};
use crate::runs::{DEFAULT_KILL_GRACE_MS, DEFAULT_LOG_MAX_BYTES, MonitorPlan, RunEnd};
use crate::schedule;
use crate::store::sqlite::MAX_RUN_LIST;
use crate::store::{ActiveRun, Fence, NewRun, Store, StoreError, StoredJob};

/// How long `cancel` waits for the monitor to record the end before answering.
const CANCEL_WAIT: Duration = Duration::from_millis(DEFAULT_KILL_GRACE_MS + 2_000);

/// Maps a store failure to a protocol error.
pub fn store_error(e: StoreError) -> ErrorBody {
    let code = match &e {
        StoreError::JobExists(_)
        | StoreError::ServiceExists(_)
        | StoreError::ServiceInUse { .. }
        | StoreError::Overlap(_)
        | StoreError::AlreadyResolved(_) => ErrorCode::Conflict,
        StoreError::NoSuchJob(_)
        | StoreError::NoSuchRun(_)
        | StoreError::NoSuchService(_)
        | StoreError::NoSuchHold(_) => ErrorCode::NotFound,
        StoreError::Fenced { .. } => ErrorCode::ShuttingDown,
        _ => ErrorCode::StoreUnavailable,
    };
    ErrorBody::new(code, e.to_string())
}

/// Every run queued or running, on any host, newest first.
pub fn in_flight(store: &Arc<dyn Store>) -> Result<Vec<Run>, StoreError> {
    let mut runs = Vec::new();
    for status in [RunStatus::Running, RunStatus::Queued] {
        let filter = RunFilter {
            status: Some(status),
            limit: Some(MAX_RUN_LIST),
            ..Default::default()
        };
        runs.extend(store.run_list(&filter)?);
    }
    Ok(runs)
}

/// Runs blocking ledger work off the async thread.
pub async fn blocking<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&Shared) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ErrorBody> {
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || f(&shared))
        .await
        .map_err(|e| ErrorBody::new(ErrorCode::Internal, e.to_string()))?
        .map_err(store_error)
}

/// Admits a run of `job` and, when it is queued, starts its monitor. Runs replaced by it
/// (concurrency = replace) are cancelled.
pub async fn start(shared: &Arc<Shared>, job: &StoredJob, new: NewRun) -> Result<Run, ErrorBody> {
    let spec = job.spec.clone();
    let epoch = match new.fence {
        Fence::Host => shared.epoch(),
        // A server that no longer leads offers an epoch no row carries: fenced.
        Fence::Leader => shared.leader.borrow().unwrap_or(-1),
    };
    let admission = blocking(shared, move |s| {
        let log_dir = s.world.paths.logs_dir().join("runs");
        let plan = |id: i64, log: &Path, key: &str| plan_for(s, &spec, &new, id, log, key);
        s.world.store.run_admit(&new, &log_dir, &plan, epoch)
    })
    .await?;
    let _ = shared.run_events.send(admission.run.id);
    for old in &admission.replaced {
        info!(
            run = old.id,
            by = admission.run.id,
            "cancelling a run replaced by a newer one"
        );
        signal_cancel(old);
    }
    if let Some(plan) = admission.plan {
        launch(shared, &plan).await;
    } else if admission.run.status == RunStatus::Queued {
        // Queued for any host of a shared ledger: this one may claim it too.
        shared.claim_now.notify_one();
    }
    let id = admission.run.id;
    blocking(shared, move |s| s.world.store.run_get(id))
        .await?
        .ok_or_else(|| store_error(StoreError::NoSuchRun(id)))
}

fn plan_for(
    shared: &Shared,
    spec: &JobSpec,
    new: &NewRun,
    id: i64,
    log_path: &Path,
    key: &str,
) -> MonitorPlan {
    let argv = argv_of(spec.shell, &spec.command);
    let mut env: BTreeMap<String, String> = spec.env.clone();
    env.insert("STEAD_RUN_ID".into(), id.to_string());
    env.insert("STEAD_JOB".into(), spec.name.clone());
    env.insert("STEAD_TRIGGER".into(), new.trigger.as_str().into());
    env.insert(
        "STEAD_SCHEDULED_AT".into(),
        new.scheduled_at.map(rfc3339).unwrap_or_default(),
    );
    env.insert("STEAD_IDEMPOTENCY_KEY".into(), key.to_string());
    env.insert("STEAD_ATTEMPT".into(), new.attempt.to_string());
    env.insert(
        "STEAD_STATE_DIR".into(),
        shared.world.paths.dir().display().to_string(),
    );
    MonitorPlan {
        run_id: id,
        ledger: shared.world.ledger.clone(),
        argv,
        cwd: spec.cwd.as_ref().map(Into::into),
        env,
        timeout_ms: spec
            .timeout
            .as_deref()
            .and_then(|t| schedule::parse_duration(t).ok())
            .map(|d| d.as_millis() as u64),
        kill_grace_ms: DEFAULT_KILL_GRACE_MS,
        log_path: log_path.to_path_buf(),
        log_max_bytes: DEFAULT_LOG_MAX_BYTES,
        alternatives: spec
            .alternatives
            .iter()
            .map(|alt| argv_of(spec.shell, alt))
            .collect(),
        on_failure: spec.on_failure.clone(),
    }
}

/// What is executed: a shell job's one script goes to `sh -c`.
fn argv_of(shell: bool, command: &[String]) -> Vec<String> {
    if shell {
        vec!["sh".into(), "-c".into(), command.join(" ")]
    } else {
        command.to_vec()
    }
}

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
    let json = serde_json::to_vec(plan).expect("a monitor plan always serializes");
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

/// Watches a monitor until it exits, then settles its run if the monitor could not.
/// For a monitor this server started, `ended` is its stdout: it writes a byte there once
/// the run is marked running, and closes it as soon as the run's end is recorded, so
/// waiters hear of the end then, not when a failure hook the monitor runs afterwards is
/// done.
fn watch_monitor(
    shared: &Arc<Shared>,
    run_id: i64,
    pid: u32,
    watch: ProcessWatch,
    ended: Option<tokio::process::ChildStdout>,
) {
    let shared = shared.clone();
    tokio::spawn(async move {
        let _watching = shared.metrics.watching_monitor();
        let announced = async {
            match ended {
                Some(mut out) => {
                    // A byte: the run is marked running. End of file: its end is recorded.
                    let mut sink = [0u8; 64];
                    while matches!(out.read(&mut sink).await, Ok(n) if n > 0) {
                        let _ = shared.run_events.send(run_id);
                    }
                    let _ = shared.run_events.send(run_id);
                }
                None => std::future::pending().await,
            }
        };
        let exited = watch.exited();
        tokio::pin!(announced, exited);
        let announced_first = tokio::select! {
            () = &mut exited => false,
            () = &mut announced => {
                tokio::select! {
                    () = &mut exited => {}
                    () = shared.stop.cancelled() => return,
                }
                true
            }
            // A stopping server stops watching: the monitor goes on, and the next server
            // adopts it.
            () = shared.stop.cancelled() => return,
        };
        let epoch = shared.epoch();
        // The run as it ended, settled here if the monitor could not record it.
        let ended = blocking(&shared, move |s| {
            let Some(run) = s.world.store.run_get(run_id)? else {
                return Ok(None);
            };
            if run.status.is_terminal() {
                return Ok(Some((run.status, false)));
            }
            let end = RunEnd::with_reason(
                RunStatus::Interrupted,
                format!("interrupted: its monitor (pid {pid}) exited without recording an outcome"),
                s.world.clock.now(),
            );
            let settled = s.world.store.run_settle(run_id, &end, epoch)?;
            Ok(Some((RunStatus::Interrupted, settled)))
        })
        .await;
        let settled_here = matches!(ended, Ok(Some((_, true))));
        match ended {
            Ok(Some((status, settled))) => {
                if settled {
                    warn!(
                        run = run_id,
                        pid, "a monitor died without recording its run; interrupted"
                    );
                }
                if status == RunStatus::Interrupted {
                    // Cut while this server serves: it is owed now, not only at the next boot.
                    shared.runs_cut.notify_one();
                }
            }
            Ok(None) => {}
            Err(e) => {
                error!(run = run_id, cause = %e.message, "failed to settle a run after its monitor exited")
            }
        }
        // The pipe's end already told waiters, unless the end was written only now.
        if settled_here || !announced_first {
            let _ = shared.run_events.send(run_id);
        }
    });
}

/// Asks a run's monitor to cancel it (SIGUSR1), if the monitor is who the row says.
fn signal_cancel(run: &ActiveRun) -> bool {
    match &run.monitor {
        Some((pid, identity)) if identity::is_alive(*pid, identity) => {
            rustix::process::kill_process(
                rustix::process::Pid::from_raw(*pid as i32).expect("a recorded pid is positive"),
                rustix::process::Signal::USR1,
            )
            .is_ok()
        }
        _ => false,
    }
}

/// Cancels a run: a queued one at once, a running one through its monitor, waiting
/// (boundedly) for the monitor to record the end.
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
            .ok_or(StoreError::NoSuchRun(id))?;
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
        let active = s.world.store.runs_active(&machine)?;
        Ok(Ok(active.into_iter().find(|r| r.id == id)))
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
        && !signal_cancel(active)
    {
        // The monitor is gone: nobody else will ever record this run.
        let end = RunEnd::with_reason(
            RunStatus::Cancelled,
            "cancelled (its monitor was already gone)",
            now,
        );
        blocking(shared, move |s| s.world.store.run_settle(id, &end, epoch)).await?;
    }
    let _ = shared.run_events.send(id);
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
                if signal_cancel(&run) {
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
            if !which(&run.job) {
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
            && let Some(pid) = rustix::process::Pid::from_raw(*pid as i32)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        info!(run = run.id, job = %run.job, "cut a run on the way down");
        let _ = shared.run_events.send(run.id);
    }
    Ok(())
}

/// Returns the run once it is terminal, or as it is after `limit`.
pub async fn wait_terminal(
    shared: &Arc<Shared>,
    id: i64,
    events: &mut tokio::sync::broadcast::Receiver<i64>,
    limit: Duration,
) -> Result<Run, ErrorBody> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let run = blocking(shared, move |s| s.world.store.run_get(id))
            .await?
            .ok_or_else(|| store_error(StoreError::NoSuchRun(id)))?;
        if run.status.is_terminal() {
            return Ok(run);
        }
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Ok(changed) if changed != id => continue,
                    // A changed row, or missed events: look again.
                    _ => break,
                },
                () = tokio::time::sleep_until(deadline) => return Ok(run),
                () = shared.stop.cancelled() => return Ok(run),
            }
        }
    }
}

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
        for run in s.world.store.runs_active(&machine)? {
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

/// Waits for a process that need not be our child to exit.
enum ProcessWatch {
    /// A pidfd becomes readable when the process exits (Linux).
    #[cfg(target_os = "linux")]
    Pidfd(tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>),
    /// Poll the start identity (other platforms, or when a pidfd is unavailable).
    Poll(u32, Option<StartIdentity>),
    /// Already gone.
    Gone,
}

impl ProcessWatch {
    /// Opens the watch first and checks the identity second, so a pid reused in between
    /// cannot be mistaken for the monitor.
    fn open(pid: u32, identity: Option<&StartIdentity>) -> Self {
        #[cfg(target_os = "linux")]
        {
            let pidfd = rustix::process::Pid::from_raw(pid as i32).and_then(|p| {
                rustix::process::pidfd_open(p, rustix::process::PidfdFlags::NONBLOCK).ok()
            });
            if let Some(fd) = pidfd {
                if identity.is_some_and(|id| !identity::is_alive(pid, id)) {
                    return ProcessWatch::Gone;
                }
                // SAFETY: the AsyncFd owns the pidfd, which stays open while registered.
                if let Ok(async_fd) = unsafe {
                    tokio::io::unix::AsyncFd::register_with_interest(
                        fd,
                        tokio::io::Interest::READABLE,
                    )
                } {
                    return ProcessWatch::Pidfd(async_fd);
                }
            } else if identity.is_some_and(|id| !identity::is_alive(pid, id))
                || (identity.is_none() && identity::of_pid(pid).ok().flatten().is_none())
            {
                return ProcessWatch::Gone;
            }
        }
        let identity = identity
            .cloned()
            .or_else(|| identity::of_pid(pid).ok().flatten());
        match identity {
            Some(identity) => ProcessWatch::Poll(pid, Some(identity)),
            None => ProcessWatch::Gone,
        }
    }

    async fn exited(self) {
        match self {
            #[cfg(target_os = "linux")]
            ProcessWatch::Pidfd(fd) => {
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
