//! The per-run monitor (`steadd monitor`, a hidden command of the daemon program
//! `steadd`; see docs/architecture.md, "Two programs"): one small process per run that
//! marks the run running, runs its command in a process group of its own (then, should
//! it genuinely fail, its alternatives), copies its output to the run's log, enforces
//! its timeout, obeys cancel, kills whatever the command leaves behind, records how the
//! run ended, and after a genuine failure runs the failure hook. A monitor done with its
//! run, with nothing of it left, may take the next run its server hands it instead of
//! exiting ([`run_start`]; the server's side is `runs::reuse`).
//!
//! The server starts it detached in a session of its own, with the [`MonitorPlan`] as
//! JSON on stdin and, as its stdout, a socket to the server over which it records (see
//! `recording`). Signals to the monitor: SIGUSR1 cancels the run (its server queues it
//! with the run's id, which a monitor taking run after run goes by); SIGTERM, SIGINT or
//! SIGHUP stop the monitor, which stops the command first and records the run as
//! `interrupted`; once the run is recorded, either kind stops the failure hook instead.
//! The design is in `docs/ledger.md`.
//!
//! - `signals`: signal handlers feeding a self-pipe;
//! - `process_group`: the command's process group;
//! - `reap`: exit statuses and reaping;
//! - `log`: the capped log file;
//! - `secrets`, `mask`: the run's secrets, read from the host's store, given to its
//!   command and masked in its log;
//! - `watch`: the event loop;
//! - `conditions`: waiting for the network or mains power, keeping the machine awake;
//! - `chain`: the command and its alternatives;
//! - `hook`: the failure hook;
//! - `sweep`: ending what the command left behind, those that left its group included;
//! - `recording`: how the monitor reaches the ledger (through its server, or itself);
//! - `spawner`: the process that forks monitors without exec'ing a binary.

mod chain;
mod conditions;
mod hook;
mod log;
mod mask;
mod process_group;
mod reap;
mod recording;
mod secrets;
mod signals;
pub mod spawner;
pub mod sweep;
mod watch;

use std::io::Read;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use stead_protocol::{KeepFree, RunStatus};

use self::chain::Chained;
use self::conditions::Gate;
use self::log::Log;
use self::recording::{Check, Ledger, SharedLedger};
use self::signals::SignalPipe;
use self::watch::{Ownership, Stop};
use stead_core::runs::{CommandStart, MonitorPlan, MonitorStart, RunEnd};
use stead_store::{RunRecorder, StoreError};
use stead_sys::identity;

/// How long to keep retrying a ledger write that fails (the ledger may be busy, or its
/// disk briefly unavailable) before giving up on it.
const LEDGER_RETRY_FOR: Duration = Duration::from_secs(60);
/// How often a monitor on a shared ledger asks whether its run is still its own: its
/// host's heartbeat (when its server confirms ownership with the database), within
/// these bounds, so well within the time a lost host's debt takes to be resumed
/// elsewhere (a lease, then the resume delay).
const OWNERSHIP_CHECK: Duration = Duration::from_secs(2);
const OWNERSHIP_CHECK_MIN: Duration = Duration::from_millis(100);
const LEDGER_FIRST_PAUSE: Duration = Duration::from_millis(50);
const LEDGER_LAST_PAUSE: Duration = Duration::from_secs(5);

/// Writes a line about the monitor itself (not its run: that goes to the run's log) to
/// its stderr, which its server points at `logs/monitors.log`: when, which process, what.
pub fn diagnostic(who: &str, what: &str) {
    use std::io::Write;
    let line = format!(
        "{} stead {who}[{}]: {what}\n",
        Timestamp::now(),
        std::process::id()
    );
    // One write, so lines of monitors writing at once do not interleave.
    let _ = std::io::stderr().write_all(line.as_bytes());
}

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

/// Entry point of `steadd monitor`: reads the plan from stdin, opens the ledger, runs.
/// Exits 0 once the run is settled, 1 when the ledger could not be written.
pub fn main() -> i32 {
    let mut input = String::new();
    let start = match std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| e.to_string())
        .and_then(|_| serde_json::from_str::<MonitorStart>(&input).map_err(|e| e.to_string()))
    {
        Ok(start) => start,
        Err(e) => {
            // Without a plan there is no log to write to; stderr is all there is.
            diagnostic("monitor", &format!("failed to read the plan: {e}"));
            return 1;
        }
    };
    run_start(&start)
}

/// How long a monitor done with its run waits on its link for another before it exits
/// (see [`next_run`]).
const NEXT_RUN_WAIT: Duration = Duration::from_secs(1);

/// Watches the run `start` describes to its end (what `steadd monitor` does once it has
/// read its plan, and what a monitor the spawner forked does at once), then, where its
/// server has one for it, the next run, and so on. Exits 0 once the last run is
/// settled, 1 when the ledger could not be written.
pub fn run_start(start: &MonitorStart) -> i32 {
    // A shared ledger may be restarting: the connection is retried as every write is.
    let mut ledger = match with_retry(|| Ledger::open(start)) {
        Ok(ledger) => ledger,
        Err(e) => {
            log::note_at(&start.plan.log_path, &format!("failed to start: {e}"));
            return 1;
        }
    };
    // Once for every run this process takes: a signal between two runs is not lost.
    let mut signals = SignalPipe::install();
    let mut next = None;
    loop {
        let start = next.as_ref().unwrap_or(start);
        let plan = &start.plan;
        let watch = match (&ledger, &start.server) {
            (Ledger::Shared(shared), Some(link)) if link.confirm_ownership => Some(Watchful {
                ledger: shared,
                every: Duration::from_millis(link.heartbeat_ms)
                    .clamp(OWNERSHIP_CHECK_MIN, OWNERSHIP_CHECK),
                fence_after: plan
                    .resume_anywhere
                    .then(|| Duration::from_millis(link.lease_ms)),
            }),
            _ => None,
        };
        let (outcome, done) = run_watched(
            plan,
            &ledger,
            watch,
            start.log_keep_free,
            start.marked,
            start.secret_store.as_deref(),
            signals.as_mut(),
        );
        let code = match outcome {
            Outcome::NotQueued | Outcome::Ended { .. } => 0,
            Outcome::NoIdentity(_) | Outcome::Unrecorded { .. } => 1,
        };
        let taken = match (done, signals.as_mut()) {
            (true, Ok(signals)) => next_run(&ledger, plan.run_id, signals),
            _ => None,
        };
        let Some(taken) = taken else {
            return code;
        };
        ledger.renew(&taken);
        next = Some(taken);
    }
}

/// The next run for a monitor done with `after`, from the server that started it: asked
/// for on its link, and waited for a moment (`NEXT_RUN_WAIT`). `None`, and the monitor
/// exits, when a stop is pending or comes while it waits, when anything of the last run is
/// still a child of this process, or when no run came.
fn next_run(ledger: &Ledger, after: i64, signals: &mut SignalPipe) -> Option<MonitorStart> {
    if !signals.drop_cancels(None) || has_children() {
        return None;
    }
    let start = ledger.next(after, NEXT_RUN_WAIT, &mut || signals.stop_pending())?;
    match serde_json::from_value::<MonitorStart>(start) {
        Ok(start) => {
            // A cancel that arrived while the offer was on its way was meant for the last
            // run (or for no run), unless it was queued with the new run's id: the run
            // handed over marked is running already, and its server may cancel it at once.
            let keep = start.marked.then_some(start.plan.run_id);
            signals.drop_cancels(keep);
            Some(start)
        }
        Err(e) => {
            // The server took it for handed over: it settles the run once this monitor
            // has exited.
            diagnostic(
                "monitor",
                &format!("an unreadable plan for the next run: {e}"),
            );
            None
        }
    }
}

/// Whether any process is still a child of this one (reaped or not).
fn has_children() -> bool {
    // SAFETY: waitpid on this process's own children, without blocking or reaping
    // (WNOWAIT); ECHILD says there are none.
    let rc = unsafe {
        libc::waitid(
            libc::P_ALL,
            0,
            std::ptr::null_mut(),
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    !(rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
}

/// How a monitor of a shared ledger keeps asking whether its run is still its own.
struct Watchful<'a> {
    ledger: &'a SharedLedger,
    every: Duration,
    /// Stop the command once ownership went unconfirmed this long (a job that may
    /// resume on any host).
    fence_after: Option<Duration>,
}

/// The longest a monitor waits for a fire admitted ahead of its time: a plan asking for
/// more (a clock that jumped back while it was on its way, or a staged fire adopted
/// much later) starts after this.
const START_LEAD_MAX: Duration = Duration::from_secs(5);

/// When the command of a fire admitted ahead of its instant is due: its instant, when
/// that is still to come (at most [`START_LEAD_MAX`] from now); `None` to start now.
fn due(plan: &MonitorPlan, now: Timestamp) -> Option<Timestamp> {
    let at = plan.not_before?.timestamp();
    let latest = now.checked_add(START_LEAD_MAX).unwrap_or(Timestamp::MAX);
    (at > now).then(|| at.min(latest))
}

/// Runs `plan` to its end with `signals`, and says whether the monitor is done with it:
/// the run settled (by this monitor, or before it started), no failure hook ran and no
/// stop of the monitor was asked for, so it may take another run. `marked`: the server
/// recorded the run running for this monitor when it admitted it.
fn run_watched(
    plan: &MonitorPlan,
    recorder: &dyn RunRecorder,
    watch: Option<Watchful<'_>>,
    keep_free: KeepFree,
    marked: bool,
    secret_store: Option<&std::path::Path>,
    signals: Result<&mut SignalPipe, &mut std::io::Error>,
) -> (Outcome, bool) {
    // Orphaned descendants then come back to the monitor, to be reaped and killed,
    // instead of escaping to init. Where there is no subreaper (macOS) they are found by
    // the marker their command gave them (see `sweep`).
    let _ = stead_sys::procs::become_subreaper();
    let me = match own_identity() {
        Ok(me) => me,
        Err(e) => {
            // A made-up identity would let the server take the monitor for dead.
            log::note_at(
                &plan.log_path,
                &format!("failed to start: cannot read the monitor's identity: {e}"),
            );
            return (Outcome::NoIdentity(e), false);
        }
    };
    // Everything that can be made ready is made ready before a fire admitted ahead of
    // its time, so the command starts on the instant: the log, the way to the ledger.
    let session = Session::open(plan, signals, keep_free);
    recorder.prepare();
    // A fire admitted ahead of its instant is taken now, marked as starting on its
    // instant, and then waited for: the mark's trip to the ledger is not on the way
    // from the instant to the command. The run's end corrects its start to when the
    // command was spawned (the mark's answer, or a wake-up, may come after the
    // instant). A cancel or a stop meanwhile ends the wait, and the run then ends
    // before its command started, with no start.
    let due = due(plan, Timestamp::now());
    let marked = if marked {
        Ok(true)
    } else {
        with_retry(|| {
            let at = due.unwrap_or_else(Timestamp::now);
            recorder.mark_running(plan.run_id, std::process::id(), &me, at)
        })
    };
    match marked {
        Ok(true) => {}
        Ok(false) => return (Outcome::NotQueued, true),
        Err(error) => {
            log::note_at(&plan.log_path, &format!("failed to start: {error}"));
            return (Outcome::Unrecorded { end: None, error }, false);
        }
    }
    if let (Some(due), Ok(session)) = (due, &session) {
        // Woken on time rather than up to the kernel's default slack (50 µs) late.
        stead_sys::spawn::tighten_timer_slack();
        session.signals.wait_until(due);
    }
    let (chained, session) = match session {
        Ok(mut session) => {
            let chained =
                match conditions::wait(&plan.conditions, session.signals, &mut session.log) {
                    Gate::Skip(reason, waited) => Chained {
                        end: never_started(RunEnd {
                            waited,
                            ..RunEnd::with_reason(RunStatus::Skipped, reason, Timestamp::now())
                        }),
                        halted: None,
                    },
                    Gate::Go(waited) => {
                        let awake =
                            conditions::keep_awake(&plan.conditions, plan.run_id, &mut session.log);
                        let mut chained = session.execute(plan, recorder, watch, secret_store);
                        drop(awake);
                        chained.end.waited = waited;
                        chained
                    }
                };
            (chained, Some(session))
        }
        Err(end) => {
            let end = never_started(*end);
            (Chained { end, halted: None }, None)
        }
    };
    let finished = with_retry(|| recorder.finish(plan.run_id, &chained.end));
    match (finished, session) {
        (Ok(recorded), session) => {
            // Only once the end is recorded, so that the hook reads the final run; and
            // only by the monitor that recorded it.
            if recorded && let Some(mut session) = session {
                hook::after(plan, recorder, &chained, session.signals, &mut session.log);
            }
            let hooked = hook::applies(plan, &chained);
            let stopped = matches!(
                chained.halted,
                Some(Stop::Interrupted(_) | Stop::Settled | Stop::Unconfirmed(_))
            );
            let done = recorded && !hooked && !stopped;
            let outcome = Outcome::Ended {
                end: chained.end,
                recorded,
            };
            (outcome, done)
        }
        (Err(error), session) => {
            let note = format!("failed to record the run's end: {error}");
            match session {
                Some(mut session) => session.log.note(&note),
                None => log::note_at(&plan.log_path, &note),
            }
            let outcome = Outcome::Unrecorded {
                end: Some(chained.end),
                error,
            };
            (outcome, false)
        }
    }
}

/// This process's start identity, read once: a monitor that takes several runs marks
/// each with it. (The spawner never reads it, so its forks do not inherit its own.)
fn own_identity() -> std::io::Result<identity::StartIdentity> {
    static OWN: std::sync::OnceLock<identity::StartIdentity> = std::sync::OnceLock::new();
    if let Some(me) = OWN.get() {
        return Ok(me.clone());
    }
    let me = identity::current()?;
    Ok(OWN.get_or_init(|| me).clone())
}

/// The log and the signals, for the commands and the failure hook.
struct Session<'s> {
    signals: &'s mut SignalPipe,
    log: Log,
}

impl<'s> Session<'s> {
    /// Opens the log and takes the signals; when either fails, that is the run's end.
    fn open(
        plan: &MonitorPlan,
        signals: Result<&'s mut SignalPipe, &mut std::io::Error>,
        keep_free: KeepFree,
    ) -> Result<Self, Box<RunEnd>> {
        let mut log = match Log::open(&plan.log_path, plan.log_max_bytes, keep_free) {
            Ok(log) => log,
            Err(e) => {
                let detail = format!("cannot open the log {}: {e}", plan.log_path.display());
                return Err(Box::new(failed_to_start(None, &detail)));
            }
        };
        match signals {
            Ok(signals) => Ok(Self { signals, log }),
            Err(e) => Err(Box::new(failed_to_start(
                Some(&mut log),
                &format!("cannot handle signals: {e}"),
            ))),
        }
    }

    /// Runs the command (and its alternatives) to the run's end.
    fn execute(
        &mut self,
        plan: &MonitorPlan,
        recorder: &dyn RunRecorder,
        watch: Option<Watchful<'_>>,
        secret_store: Option<&std::path::Path>,
    ) -> Chained {
        // A cancel or stop that arrived while the run was being marked: start nothing.
        if let Some(stop) = self.signals.take().into_iter().find_map(Stop::from_signal) {
            let reason = format!("{} before it started", stop.reason());
            self.log.note(&reason);
            return Chained {
                end: never_started(RunEnd::with_reason(stop.status(), reason, Timestamp::now())),
                halted: Some(stop),
            };
        }
        let restarting = || recorder.restarting_service(plan.run_id).ok().flatten();
        // On a shared ledger a server that judged this host lost may end the run while
        // its command runs: asked now and then, so the work is not done twice. A run
        // that may resume anywhere also stops once its host could not confirm it for a
        // lease (cut off from the database, it may be judged lost and resumed
        // elsewhere); otherwise an unreadable ledger leaves the run going.
        let confirmed = std::cell::Cell::new(Instant::now());
        let check = || {
            let watch = watch.as_ref()?;
            match watch.ledger.check(plan.run_id) {
                Check::Ended => return Some(Stop::Settled),
                Check::Confirmed(ago) => {
                    let at = Instant::now().checked_sub(ago).unwrap_or(confirmed.get());
                    confirmed.set(confirmed.get().max(at));
                }
                Check::Unknown => {}
            }
            let limit = watch.fence_after?;
            (confirmed.get().elapsed() > limit)
                .then(|| Stop::Unconfirmed(u64::try_from(limit.as_millis()).unwrap_or(u64::MAX)))
        };
        let ownership = watch.as_ref().map(|w| Ownership {
            every: w.every,
            check: &check,
        });
        // Read as the command is about to start: a run that needs a secret this host
        // lacks starts nothing, and none of its alternatives either.
        let secrets::Given { env, masks } = match secrets::read(plan, secret_store) {
            Ok(given) => given,
            Err(detail) => {
                let end = failed_to_start(Some(&mut self.log), &detail);
                return Chained {
                    end: never_started(end),
                    halted: None,
                };
            }
        };
        self.log.mask(masks);
        let commands = chain::Commands {
            plan,
            secret_env: &env,
        };
        let mut chained = chain::run(
            commands,
            self.signals,
            &mut self.log,
            &restarting,
            ownership,
        );
        if let Some(lost) = self.log.finish() {
            // The log could not be made to say it: the run's record does.
            let end = &mut chained.end;
            end.reason = Some(match end.reason.take() {
                Some(reason) => format!("{reason}; {lost}"),
                None => lost,
            });
        }
        chained
    }
}

/// `end`, of a run whose command was never spawned: the run has no start, whatever its
/// mark said.
fn never_started(end: RunEnd) -> RunEnd {
    RunEnd {
        started: CommandStart::Never,
        ..end
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
/// [`LEDGER_RETRY_FOR`], and for as long as it takes while the ledger's disk is full: the
/// run's end is recorded as soon as space allows (nothing else can record it meanwhile,
/// since the server's writes fail the same way).
fn with_retry<T>(mut write: impl FnMut() -> Result<T, StoreError>) -> Result<T, StoreError> {
    let give_up = Instant::now() + LEDGER_RETRY_FOR;
    let mut pause = LEDGER_FIRST_PAUSE;
    loop {
        match write() {
            Ok(value) => return Ok(value),
            Err(e) if !e.is_disk_full() && Instant::now() + pause >= give_up => return Err(e),
            Err(_) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(LEDGER_LAST_PAUSE);
            }
        }
    }
}
