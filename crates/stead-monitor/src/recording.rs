//! How a monitor reaches the ledger: through its own host's server, which holds the
//! host's connection to the ledger and writes the marks and ends of a burst together
//! (group commit), so a host starting hundreds of runs at once takes one lock per burst
//! rather than one per monitor, and needs no more database connections than its server
//! has. Only when that server cannot be reached (stopped, restarting, frozen) does the
//! monitor open the ledger itself, for that one call, and close it again. A monitor
//! started without a server link (a test's) opens the ledger itself for good.
//!
//! The first way to the server is the link it started the monitor with (the monitor's
//! stdout, a socket to it): no connection to make. Should that server be gone or frozen,
//! the next way is its socket path (its successor's), the last the ledger itself.
//!
//! A call the server may have carried out before its answer was lost is checked against
//! the run's row when it is made again directly, so a lost answer never turns a run the
//! server marked running into one this monitor thinks it may not start.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use jiff::Timestamp;
use stead_client::{ClientError, Connection};
use stead_core::clock::rfc3339;
use stead_core::locator::{LedgerRef, StoreLocator};
use stead_core::runs::{CommandStart, MonitorStart, RunEnd, ServerLink};
use stead_protocol::{
    ErrorCode, Method, MonitorCheck, MonitorFinished, MonitorNext, MonitorStarted, Run, RunId,
    method,
};
use stead_store::{RunRecorder, StoreError};
use stead_sys::identity::StartIdentity;

/// What the ledger says of a run still going, for [`Ledger::check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The run has ended on the ledger: someone settled it while its command ran.
    Ended,
    /// The run is still this host's, as the database confirmed this long ago.
    Confirmed(Duration),
    /// Nobody could say.
    Unknown,
}

/// The ledger as a monitor reaches it.
pub enum Ledger {
    /// The SQLite file, opened by the monitor.
    Local(Box<dyn RunRecorder>),
    /// A shared ledger, through this host's server.
    Shared(Box<SharedLedger>),
}

pub struct SharedLedger {
    socket: PathBuf,
    /// How long a call to the server may take before the monitor goes around it.
    patience: Duration,
    conn: Mutex<Option<Connection>>,
    /// Whether `conn` is still the link the monitor started with: only the server that
    /// made it can hand the monitor another run.
    on_link: AtomicBool,
    store: StoreLocator,
    run_ledger: LedgerRef,
    lease: Duration,
}

/// How long a call to the server `server` may take before the monitor goes around it:
/// a heartbeat (a live server answers within one), at least a second.
fn patience(server: &ServerLink) -> Duration {
    Duration::from_millis(server.heartbeat_ms).max(Duration::from_secs(1))
}

/// This machine's id, which a monitor needs only to open the ledger itself.
fn machine() -> String {
    stead_sys::machine::machine_id().unwrap_or_default()
}

impl Ledger {
    /// The ledger a monitor started with `start` records into.
    pub fn open(start: &MonitorStart) -> Result<Self, StoreError> {
        let Some(server) = &start.server else {
            let lease = Duration::ZERO;
            let (store, ledger) = (&start.store, &start.plan.ledger);
            return stead_store::open_recorder(store, ledger, &machine(), lease).map(Ledger::Local);
        };
        let link = server
            .linked
            .then(take_link)
            .flatten()
            .map(Connection::linked);
        Ok(Ledger::Shared(Box::new(SharedLedger {
            socket: server.socket.clone(),
            patience: patience(server),
            on_link: AtomicBool::new(link.is_some()),
            conn: Mutex::new(link),
            store: start.store.clone(),
            run_ledger: start.plan.ledger.clone(),
            lease: Duration::from_millis(server.lease_ms),
        })))
    }
}

impl Ledger {
    /// The same ledger, for the next run this monitor took: `start` is that run's, on the
    /// same link.
    pub fn renew(&mut self, start: &MonitorStart) {
        if let (Ledger::Shared(shared), Some(server)) = (self, &start.server) {
            shared.socket = server.socket.clone();
            shared.patience = patience(server);
            shared.store = start.store.clone();
            shared.run_ledger = start.plan.ledger.clone();
            shared.lease = Duration::from_millis(server.lease_ms);
        }
    }

    /// Offers this monitor, done with `after`, to the server that started it, for up to
    /// `wait`: the next run's start (as JSON) if it hands one over. Only on the link.
    /// `stopped` is asked whenever a signal interrupts the wait: when it says so, the
    /// link is closed and nothing is taken.
    pub fn next(
        &self,
        after: i64,
        wait: Duration,
        stopped: &mut dyn FnMut() -> bool,
    ) -> Option<serde_json::Value> {
        let Ledger::Shared(shared) = self else {
            return None;
        };
        if !shared.on_link.load(Ordering::SeqCst) {
            return None;
        }
        let mut conn = shared.conn.lock().unwrap_or_else(|p| p.into_inner());
        let asked = MonitorNext {
            after,
            wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            takes_marked: true,
        };
        let patience = wait + shared.patience;
        match conn
            .as_mut()?
            .call_unless::<method::MonitorNext>(&asked, patience, stopped)
        {
            Ok(next) => next.start,
            Err(_) => {
                *conn = None;
                shared.on_link.store(false, Ordering::SeqCst);
                None
            }
        }
    }
}

/// The link to the server that started this monitor, its stdout: moved to a descriptor
/// of its own that no command inherits, with `/dev/null` put in its place, so nothing
/// printed by mistake goes down it, and a link dropped leaves no descriptor 1 for a file
/// opened later to take.
fn take_link() -> Option<std::os::unix::net::UnixStream> {
    use std::os::fd::AsFd;
    let stdout = std::io::stdout();
    let link = rustix::io::fcntl_dupfd_cloexec(stdout.as_fd(), 3).ok()?;
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stdout(&null);
    }
    Some(std::os::unix::net::UnixStream::from(link))
}

/// What asking the server came to.
enum Asked<T> {
    Answered(T),
    /// The server answered with an error: it is there, but could not do it.
    Failed(StoreError),
    /// No answer: the server is gone, stopping or frozen.
    Unreachable,
}

impl SharedLedger {
    /// Whether the run is still this host's; see [`Check`]. Asked of the server, which
    /// answers from memory; of the database directly only when the server cannot be
    /// reached.
    pub fn check(&self, run_id: i64) -> Check {
        let asked = MonitorCheck {
            run_id,
            restarting: false,
        };
        match self.ask::<method::MonitorCheck>(&asked) {
            Asked::Answered(v) if v.ended => Check::Ended,
            Asked::Answered(v) => v.confirmed_ms_ago.map_or(Check::Unknown, |ms| {
                Check::Confirmed(Duration::from_millis(ms))
            }),
            Asked::Failed(_) => Check::Unknown,
            Asked::Unreachable => match self.direct(|r| r.run(run_id)) {
                Ok(Some(run)) if run.status.is_terminal() => Check::Ended,
                Ok(Some(_)) => Check::Confirmed(Duration::ZERO),
                Ok(None) | Err(_) => Check::Unknown,
            },
        }
    }

    /// The connection to the server, opened when there is none.
    fn connection(&self) -> MutexGuard<'_, Option<Connection>> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        if conn.is_none() {
            *conn = Connection::open(&self.socket, self.patience).ok();
        }
        conn
    }

    fn ask<M: Method>(&self, params: &M::Params) -> Asked<M::Output> {
        let mut conn = self.connection();
        let Some(open) = conn.as_mut() else {
            return Asked::Unreachable;
        };
        match open.call_within::<M>(params, self.patience) {
            Ok(value) => Asked::Answered(value),
            Err(ClientError::Server(body)) if body.code != ErrorCode::ShuttingDown => {
                Asked::Failed(StoreError::Unavailable {
                    ledger: self.store.describe(),
                    detail: format!("this host's server could not record it: {}", body.message),
                })
            }
            Err(_) => {
                // The answer may still come: this connection is done.
                *conn = None;
                self.on_link.store(false, Ordering::SeqCst);
                Asked::Unreachable
            }
        }
    }

    /// `op` on a connection of the monitor's own, closed again afterwards.
    fn direct<T>(
        &self,
        op: impl FnOnce(&dyn RunRecorder) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let recorder =
            stead_store::open_recorder(&self.store, &self.run_ledger, &machine(), self.lease)?;
        op(recorder.as_ref())
    }
}

impl RunRecorder for Ledger {
    fn prepare(&self) {
        if let Ledger::Shared(shared) = self {
            drop(shared.connection());
        }
    }

    fn mark_running(
        &self,
        run_id: i64,
        pid: u32,
        identity: &StartIdentity,
        at: Timestamp,
    ) -> Result<bool, StoreError> {
        let shared = match self {
            Ledger::Local(recorder) => return recorder.mark_running(run_id, pid, identity, at),
            Ledger::Shared(shared) => shared,
        };
        let started = MonitorStarted {
            run_id,
            pid,
            start_identity: identity.to_string(),
            at: rfc3339(at),
        };
        match shared.ask::<method::MonitorStarted>(&started) {
            Asked::Answered(marked) => Ok(marked),
            Asked::Failed(e) => Err(e),
            Asked::Unreachable => shared.direct(|r| {
                Ok(r.mark_running(run_id, pid, identity, at)?
                    // The server may have marked it before its answer was lost.
                    || r.run(run_id)?.is_some_and(|run| {
                        run.status == stead_protocol::RunStatus::Running
                            && run.monitor_pid == Some(pid)
                    }))
            }),
        }
    }

    fn finish(&self, run_id: i64, end: &RunEnd) -> Result<bool, StoreError> {
        let shared = match self {
            Ledger::Local(recorder) => return recorder.finish(run_id, end),
            Ledger::Shared(shared) => shared,
        };
        let finished = MonitorFinished {
            run_id,
            status: end.status,
            exit_code: end.exit_code,
            signal: end.signal,
            reason: end.reason.clone(),
            ended_at: rfc3339(end.ended_at),
            ended_processes: end.ended_processes,
            started_at: match end.started {
                CommandStart::AsMarked => None,
                CommandStart::At(at) => Some(Some(rfc3339(at))),
                CommandStart::Never => Some(None),
            },
            waited_ms: end.waited.as_ref().map(|w| w.ms),
            wait_note: end.waited.as_ref().map(|w| w.note.clone()),
        };
        match shared.ask::<method::MonitorFinished>(&finished) {
            Asked::Answered(recorded) => Ok(recorded),
            Asked::Failed(e) => Err(e),
            Asked::Unreachable => shared.direct(|r| {
                Ok(r.finish(run_id, end)?
                    // The server may have recorded this very end before its answer was
                    // lost.
                    || r.run(run_id)?.is_some_and(|run| {
                        run.status == end.status && run.reason == end.reason
                    }))
            }),
        }
    }

    fn run(&self, run_id: i64) -> Result<Option<Run>, StoreError> {
        let shared = match self {
            Ledger::Local(recorder) => return recorder.run(run_id),
            Ledger::Shared(shared) => shared,
        };
        match shared.ask::<method::RunGet>(&RunId { id: run_id }) {
            Asked::Answered(run) => Ok(Some(run)),
            Asked::Failed(e) => Err(e),
            Asked::Unreachable => shared.direct(|r| r.run(run_id)),
        }
    }

    fn restarting_service(&self, run_id: i64) -> Result<Option<String>, StoreError> {
        let shared = match self {
            Ledger::Local(recorder) => return recorder.restarting_service(run_id),
            Ledger::Shared(shared) => shared,
        };
        let asked = MonitorCheck {
            run_id,
            restarting: true,
        };
        match shared.ask::<method::MonitorCheck>(&asked) {
            Asked::Answered(v) => Ok(v.restarting_service),
            Asked::Failed(e) => Err(e),
            Asked::Unreachable => shared.direct(|r| r.restarting_service(run_id)),
        }
    }
}
