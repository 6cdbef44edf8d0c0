//! The per-run monitor (`stead monitor`): one small process per run that marks the run
//! running, runs its command in a process group of its own, copies its output to the
//! run's log, enforces its timeout, obeys cancel, kills whatever the command leaves
//! behind, and records how the run ended.
//!
//! The server starts it detached in a session of its own, with the [`MonitorPlan`] as
//! JSON on stdin. Signals to the monitor: SIGUSR1 cancels the run; SIGTERM, SIGINT or
//! SIGHUP stop the monitor, which stops the command first and records the run as
//! `interrupted`. The design is in `docs/ledger.md`.
//!
//! - [`signals`]: signal handlers feeding a self-pipe;
//! - [`group`]: the command's process group;
//! - [`reap`]: exit statuses and reaping;
//! - [`log`]: the capped log file;
//! - [`watch`]: the event loop.

mod group;
mod log;
mod reap;
mod signals;
mod watch;

use std::io::Read;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use stead_protocol::RunStatus;

use self::log::Log;
use self::signals::SignalPipe;
use self::watch::Stop;
use super::{MonitorPlan, RunEnd, RunRecorder};
use crate::lifecycle::identity;
use crate::store::StoreError;
use crate::store::sqlite::SqliteStore;

/// How long to keep retrying a ledger write that fails (the ledger may be busy, or its
/// disk briefly unavailable) before giving up on it.
const LEDGER_RETRY_FOR: Duration = Duration::from_secs(60);
const LEDGER_FIRST_PAUSE: Duration = Duration::from_millis(50);
const LEDGER_LAST_PAUSE: Duration = Duration::from_secs(5);

/// What a monitor did with its run.
#[derive(Debug)]
pub enum Outcome {
    /// The run was no longer queued (settled before it could start): nothing ran and
    /// nothing was recorded.
    NotQueued,
    /// The run ended as `end`. `recorded` is false when someone else had settled it in
    /// the meantime; their outcome stands.
    Ended { end: RunEnd, recorded: bool },
    /// The monitor could not read its own start identity, which the run's record must
    /// carry; nothing ran, and the server settles the run when it finds it still queued.
    NoIdentity(std::io::Error),
    /// The ledger could not be written. `end` is what the run came to, if it started; the
    /// server settles the run when it finds this monitor gone.
    Unrecorded {
        end: Option<RunEnd>,
        error: StoreError,
    },
}

/// Entry point of `stead monitor`: reads the plan from stdin, opens the ledger, runs.
/// Exits 0 once the run is settled, 1 when the ledger could not be written.
pub fn main() -> i32 {
    let mut input = String::new();
    let plan = match std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| e.to_string())
        .and_then(|_| serde_json::from_str::<MonitorPlan>(&input).map_err(|e| e.to_string()))
    {
        Ok(plan) => plan,
        Err(e) => {
            // Without a plan there is no log to write to; stderr is all there is.
            eprintln!("stead monitor: failed to read the plan: {e}");
            return 1;
        }
    };
    let store = match SqliteStore::open(&plan.ledger) {
        Ok(store) => store,
        Err(e) => {
            log::note_at(&plan.log_path, &format!("failed to start: {e}"));
            return 1;
        }
    };
    match run(&plan, &store) {
        Outcome::NotQueued | Outcome::Ended { .. } => 0,
        Outcome::NoIdentity(_) | Outcome::Unrecorded { .. } => 1,
    }
}

/// Runs `plan` to its end, recording into `recorder`.
pub fn run(plan: &MonitorPlan, recorder: &dyn RunRecorder) -> Outcome {
    // Orphaned descendants then come back to the monitor, to be reaped and killed,
    // instead of escaping to init. Without it (not Linux, or refused) they are still
    // found by process group.
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    // Before the run is marked running: from then on the server may signal the monitor,
    // and an unhandled SIGUSR1 would kill it.
    let signals = SignalPipe::install();
    let me = match identity::current() {
        Ok(me) => me,
        Err(e) => {
            // A made-up identity would let the server take the monitor for dead.
            log::note_at(
                &plan.log_path,
                &format!("failed to start: cannot read the monitor's identity: {e}"),
            );
            return Outcome::NoIdentity(e);
        }
    };
    let marked = with_retry(|| {
        recorder.mark_running(plan.run_id, std::process::id(), &me, Timestamp::now())
    });
    match marked {
        Ok(true) => {}
        Ok(false) => return Outcome::NotQueued,
        Err(error) => {
            log::note_at(&plan.log_path, &format!("failed to start: {error}"));
            return Outcome::Unrecorded { end: None, error };
        }
    }
    let end = execute(plan, signals);
    match with_retry(|| recorder.finish(plan.run_id, &end)) {
        Ok(recorded) => Outcome::Ended { end, recorded },
        Err(error) => {
            log::note_at(
                &plan.log_path,
                &format!("failed to record the run's end: {error}"),
            );
            Outcome::Unrecorded {
                end: Some(end),
                error,
            }
        }
    }
}

/// Starts the command and watches it to its end; every failure becomes the run's end.
fn execute(plan: &MonitorPlan, signals: std::io::Result<SignalPipe>) -> RunEnd {
    let mut log = match Log::open(&plan.log_path, plan.log_max_bytes) {
        Ok(log) => log,
        Err(e) => {
            let detail = format!("cannot open the log {}: {e}", plan.log_path.display());
            return failed_to_start(None, &detail);
        }
    };
    let mut signals = match signals {
        Ok(signals) => signals,
        Err(e) => return failed_to_start(Some(&mut log), &format!("cannot handle signals: {e}")),
    };
    // A cancel or stop that arrived while the run was being marked: start nothing.
    if let Some(stop) = signals.take().into_iter().find_map(Stop::from_signal) {
        let reason = format!("{} before it started", stop.reason(plan));
        log.note(&reason);
        return RunEnd::with_reason(stop.status(), reason, Timestamp::now());
    }
    match group::spawn(plan) {
        Ok(started) => watch::watch(plan, started, &mut signals, &mut log),
        Err(detail) => failed_to_start(Some(&mut log), &detail),
    }
}

fn failed_to_start(log: Option<&mut Log>, detail: &str) -> RunEnd {
    let reason = format!("failed to start: {detail}");
    if let Some(log) = log {
        log.note(&reason);
    }
    RunEnd::with_reason(RunStatus::Failed, reason, Timestamp::now())
}

/// Calls `write` until it succeeds, pausing with backoff, for up to
/// [`LEDGER_RETRY_FOR`].
fn with_retry<T>(mut write: impl FnMut() -> Result<T, StoreError>) -> Result<T, StoreError> {
    let give_up = Instant::now() + LEDGER_RETRY_FOR;
    let mut pause = LEDGER_FIRST_PAUSE;
    loop {
        match write() {
            Ok(value) => return Ok(value),
            Err(e) if Instant::now() + pause >= give_up => return Err(e),
            Err(_) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(LEDGER_LAST_PAUSE);
            }
        }
    }
}
