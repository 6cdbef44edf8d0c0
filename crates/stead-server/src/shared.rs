//! The state a running server shares between its tasks.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use stead_protocol::{Hello, PROTOCOL, StatusResult};
use tokio::sync::{Notify, broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::World;
use super::startup::Held;
use crate::request::metrics::Metrics;
use crate::request::web::HttpState;
use crate::system::lock::{LockPaths, LockRecord};
use stead_core::clock::{LedgerClock, rfc3339};
use stead_core::lease::HeldLease;
use stead_core::plan::Planner;
use stead_sys::identity::StartIdentity;

/// Why a server stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// A client sent `stop`.
    Requested,
    /// A signal (SIGTERM, SIGINT) arrived.
    Signal(&'static str),
    /// The lease now belongs to someone else; the sentence names them.
    Superseded(String),
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Requested => f.write_str("stop requested by a client"),
            StopReason::Signal(name) => write!(f, "received {name}"),
            StopReason::Superseded(why) => f.write_str(why),
        }
    }
}

/// Where the server is in its life. Moves forward only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Serving,
    /// Stop has begun; nothing is released yet.
    Stopping,
    /// Socket, lease and lock file are released: a successor may start.
    Released,
}

/// What every part of a running server shares: its world, who it is, what wakes its
/// tasks, the runs in its hands, and its lease and life.
#[derive(Debug)]
pub struct Shared {
    pub world: World,
    /// Who this server is.
    pub me: Me,
    /// What wakes the server's background tasks.
    pub wake: Wakes,
    /// The runs in this server's hands: how they are planned, written, started and
    /// watched.
    pub runs: RunBooks,
    lease: watch::Sender<HeldLease>,
    stop_reason: Mutex<Option<StopReason>>,
    /// Cancelled when the server begins to stop.
    pub stop: CancellationToken,
    pub phase: watch::Sender<Phase>,
    /// The id of every run whose row changed (created, started, ended): sent through
    /// [`Shared::run_changed`] or [`Shared::run_changed_quietly`].
    pub run_events: broadcast::Sender<i64>,
    /// Bumped whenever jobs, services or holds change (runs have `run_events`): readiness
    /// waiters look again.
    pub changes: watch::Sender<u64>,
    /// The scheduler's leader epoch while this server leads (always, on a ledger of one
    /// host); the scheduler runs only then.
    pub leader: watch::Sender<Option<i64>>,
    /// The server's runtime, for work handed over from threads of its own (the shared
    /// ledger's listener).
    pub runtime: tokio::runtime::Handle,
    /// What `/metrics` reports from this process.
    pub metrics: Metrics,
    /// The HTTP API: where it listens, and how to start it.
    pub web: HttpState,
    /// On a shared ledger, the clock `world.clock` is: this host's, set to the database's.
    pub ledger_clock: Option<Arc<LedgerClock>>,
    /// Whether this host's runs are still its own, as last confirmed (shared ledgers).
    pub ownership: crate::runs::ownership::Ownership,
    /// Held while a prune runs: one at a time.
    pub pruning: tokio::sync::Mutex<()>,
    /// A permit for each background task that has made its first pass: what the start
    /// touched is let go of once they have (`resident`), not while they still run code
    /// they will not run again soon.
    pub first_passes: tokio::sync::Semaphore,
    /// The last reading of the machine's clocks, and the sleeps lately noticed.
    pub sleeps: crate::tasks::sleeps::SleepWatch,
    /// The jobs overdue, as last read.
    pub overdue: crate::tasks::overdue::OverdueBook,
}

/// Who a server is: what its hello, its status, its lock file and its runs' rows say of
/// it.
#[derive(Debug)]
pub struct Me {
    pub server_id: String,
    pub pid: u32,
    pub start_identity: StartIdentity,
    pub started_at: Timestamp,
    pub lock_record: LockRecord,
    pub lock_paths: LockPaths,
    /// This boot of this machine: runs record it, and a row from another boot was cut
    /// by a reboot.
    pub boot_id: String,
    /// This host's name on a shared ledger (what `--host` names).
    pub host_name: String,
    /// The socket file this server bound (device, inode).
    socket_inode: Mutex<(u64, u64)>,
}

/// What wakes the server's background tasks, each told why.
#[derive(Debug, Default)]
pub struct Wakes {
    /// The accept loop: bind a new socket file (the old one was removed).
    pub rebind: Notify,
    /// The heartbeat: renew now (a request found the lease expired).
    pub renew_now: Notify,
    /// The scheduler: jobs were added, changed or removed.
    pub jobs_changed: Notify,
    /// The starter: a run was written waiting (for its time or a place in its queue).
    pub waiting_changed: Notify,
    /// The deliverer: notifiers changed.
    pub notifiers_changed: Notify,
    /// The resumer: a run was cut while this server serves, or a service it waited for
    /// is ready again.
    pub runs_cut: Notify,
    /// The claimer: a run was queued for any host (shared ledgers only).
    pub claim_now: Notify,
    /// The log shipper: a run of this host ended.
    pub ship_now: Notify,
    /// Retention: a run's end found the disk holding the logs below its reserve.
    pub disk_low: Notify,
}

/// The runs in a server's hands, from plan to end.
#[derive(Debug)]
pub struct RunBooks {
    /// What their plans are made with.
    pub planner: Planner,
    /// The process that forks their monitors.
    pub spawner: crate::runs::spawner::Spawner,
    /// On-demand admissions, monitors' running marks and runs' ends waiting for their
    /// commit.
    pub writes: crate::request::group_commit::Group,
    /// Whether the starter has cause to read the ledger (see `starter::Due`).
    pub starter: crate::tasks::starter::Due,
    /// The monitors linked to this server, and those waiting for another run.
    pub monitors: crate::runs::Monitors,
    /// Monitors being started for runs whose admission was already answered
    /// (`runs::start_now`): a stopping server lets them finish.
    pub launches: tokio_util::task::TaskTracker,
    /// The runs whose monitors are watched (`runs::watch`), each with whether its end
    /// has been recorded through this server (a monitor that exits after that leaves
    /// nothing to read or settle) and a wake-up for when its monitor is done with it
    /// without exiting (it took another run: `runs::reuse`).
    watched: Mutex<HashMap<i64, Watched>>,
    /// Runs of this host that ended and whose logs are still to be shipped whole to the
    /// shared ledger (`ship`).
    log_ends: Mutex<BTreeSet<i64>>,
}

/// A watched run: see `Shared::watched`.
#[derive(Debug)]
struct Watched {
    ended: bool,
    done: Arc<Notify>,
}

impl Shared {
    pub fn new(
        world: World,
        server_id: String,
        started: Held,
        web: HttpState,
        ledger_clock: Option<Arc<LedgerClock>>,
    ) -> Self {
        let started_at = world.clock.now();
        let runs = RunBooks {
            planner: Planner {
                ledger: world.store.ledger_ref(),
                state_dir: world.paths.dir().to_path_buf(),
                log_dir: world.paths.logs_dir().join("runs"),
                power_supplies: world.config.power_supplies.clone(),
            },
            spawner: crate::runs::spawner::Spawner::new(
                &world.monitor_exe,
                world.paths.dir(),
                world.config.timings.spawner_idle,
            ),
            writes: crate::request::group_commit::Group::default(),
            starter: crate::tasks::starter::Due::default(),
            monitors: Default::default(),
            launches: tokio_util::task::TaskTracker::new(),
            watched: Mutex::new(HashMap::new()),
            log_ends: Mutex::new(BTreeSet::new()),
        };
        let me = Me {
            server_id,
            pid: std::process::id(),
            start_identity: started.start_identity,
            started_at,
            lock_record: started.lock_record,
            lock_paths: started.lock_paths,
            boot_id: stead_sys::identity::boot_id().unwrap_or_else(|_| "unknown".into()),
            host_name: stead_sys::machine::host_name(),
            socket_inode: Mutex::new(started.socket_inode),
        };
        Self {
            world,
            me,
            wake: Wakes::default(),
            runs,
            lease: watch::channel(started.lease).0,
            stop_reason: Mutex::new(None),
            stop: CancellationToken::new(),
            phase: watch::channel(Phase::Serving).0,
            run_events: broadcast::channel(1024).0,
            changes: watch::channel(0).0,
            leader: watch::channel(None).0,
            runtime: tokio::runtime::Handle::current(),
            metrics: Metrics::default(),
            web,
            ledger_clock,
            ownership: Default::default(),
            pruning: tokio::sync::Mutex::new(()),
            first_passes: tokio::sync::Semaphore::new(0),
            sleeps: Default::default(),
            overdue: Default::default(),
        }
    }

    /// Whether the socket path still holds the socket file this server bound.
    pub fn socket_is_ours(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(self.world.paths.socket())
            .is_ok_and(|m| (m.dev(), m.ino()) == self.socket_inode())
    }

    pub fn socket_inode(&self) -> (u64, u64) {
        *self
            .me
            .socket_inode
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_socket_inode(&self, inode: (u64, u64)) {
        *self
            .me
            .socket_inode
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = inode;
    }

    pub fn lease(&self) -> HeldLease {
        self.lease.borrow().clone()
    }

    /// Follows lease renewals.
    pub fn lease_updates(&self) -> watch::Receiver<HeldLease> {
        self.lease.subscribe()
    }

    pub fn set_lease_expiry(&self, expires_at: Timestamp) {
        self.lease
            .send_modify(|lease| lease.expires_at = expires_at);
    }

    pub fn epoch(&self) -> i64 {
        self.lease().epoch
    }

    pub fn hello(&self) -> Hello {
        Hello {
            protocol: PROTOCOL.to_string(),
            server_id: self.me.server_id.clone(),
            epoch: self.epoch(),
            pid: self.me.pid,
            version: crate::VERSION.to_string(),
        }
    }

    pub fn status(&self) -> StatusResult {
        let lease = self.lease();
        StatusResult {
            server_id: self.me.server_id.clone(),
            pid: self.me.pid,
            epoch: lease.epoch,
            version: crate::VERSION.to_string(),
            protocol: PROTOCOL.to_string(),
            started_at: rfc3339(self.me.started_at),
            lease_expires_at: rfc3339(lease.expires_at),
            state_dir: self.world.paths.dir().display().to_string(),
            socket: self.world.paths.socket().display().to_string(),
            start_identity: self.me.start_identity.to_string(),
            ledger: self.world.ledger.describe(),
            http: self.web.endpoint().map(|e| e.url()),
            clock_offset_ms: self.clock_offset_ms(),
            disk: self.disk(),
            overdue: self.overdue.list(),
        }
    }

    /// The disk holding the state directory: free and total bytes, and the logs'
    /// reserve there. `None` when the file system cannot say.
    pub fn disk(&self) -> Option<stead_protocol::DiskSpace> {
        let (free, total) = stead_sys::disk::space(self.world.paths.dir()).ok()?;
        let keep_free = self.world.config.logs.keep_free;
        Some(stead_protocol::DiskSpace::new(free, total, keep_free))
    }

    /// On a shared ledger, this host's clock minus the database's, as last measured.
    pub fn clock_offset_ms(&self) -> Option<i64> {
        let offset = self.ledger_clock.as_ref()?.offset();
        i64::try_from((-offset).as_millis()).ok()
    }

    /// A time a process of this host read on its own clock (a monitor's), as the
    /// ledger's clock has it: records agree across hosts whose clocks do not.
    pub fn in_ledger_time(&self, local: Timestamp) -> Timestamp {
        match &self.ledger_clock {
            Some(clock) => local + clock.offset(),
            None => local,
        }
    }

    /// This host's own wall clock, whatever the ledger's says.
    pub fn local_now(&self) -> Timestamp {
        match &self.ledger_clock {
            Some(clock) => clock.local_now(),
            None => self.world.clock.now(),
        }
    }

    /// Records why the server stops (the first reason wins) and starts the stop.
    pub fn begin_stop(&self, reason: StopReason) {
        let mut slot = self.stop_reason.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(reason);
        }
        drop(slot);
        self.phase.send_if_modified(|phase| {
            let moved = *phase == Phase::Serving;
            if moved {
                *phase = Phase::Stopping;
            }
            moved
        });
        self.stop.cancel();
    }

    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop_reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn superseded(&self) -> bool {
        matches!(self.stop_reason(), Some(StopReason::Superseded(_)))
    }

    /// Whether this host limits the runs of jobs that name no queue
    /// (`[queues] default_parallel`): their runs are then written waiting.
    pub fn default_limit(&self) -> bool {
        self.world.config.queues.default_parallel.is_some()
    }

    /// The machine a run admitted here is for: none yet on a shared ledger (the first
    /// eligible host to claim it runs it), else this one.
    pub fn queue_host(&self) -> &str {
        if self.world.store.is_shared() {
            ""
        } else {
            &self.world.machine_id
        }
    }

    /// A background task made a pass; the first of each task's counts (see
    /// `first_passes`). `made` is the task's own record of having counted.
    pub fn passed(&self, made: &mut bool) {
        if !std::mem::replace(made, true) {
            self.first_passes.add_permits(1);
        }
    }

    /// Run `id`'s row changed: its waiters are told, and the starter reads the ledger
    /// again (the change may have written a run waiting, or made room for one).
    pub fn run_changed(&self, id: i64) {
        self.runs.starter.changed();
        let _ = self.run_events.send(id);
    }

    /// Run `id`'s row changed in a way this server knows wrote no run waiting (a running
    /// mark, an admission that does not wait, an end whose commit found no run waiting
    /// here): its waiters are told, and the starter reads the ledger again only if runs
    /// were waiting when it last did (for them, an end makes room).
    pub fn run_changed_quietly(&self, id: i64) {
        let _ = self.run_events.send(id);
    }

    fn watched_runs(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Watched>> {
        self.runs.watched.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A watch of the run's monitor begins: what wakes it when the monitor is done with
    /// the run but lives on.
    pub fn watching(&self, run_id: i64) -> Arc<Notify> {
        let done = Arc::new(Notify::new());
        let watched = Watched {
            ended: false,
            done: done.clone(),
        };
        self.watched_runs().insert(run_id, watched);
        done
    }

    /// The run's monitor is done with it (its end is recorded, its log whole) and lives
    /// on to take another: its watch is over.
    pub fn monitor_done(&self, run_id: i64) {
        if let Some(watched) = self.watched_runs().get(&run_id) {
            watched.done.notify_one();
        }
    }

    /// The run's end is on the ledger, recorded (or found recorded) through this server.
    pub fn ended_here(&self, run_id: i64) {
        if let Some(watched) = self.watched_runs().get_mut(&run_id) {
            watched.ended = true;
        }
    }

    /// The watch of the run's monitor is over: whether its end was recorded through this
    /// server meanwhile.
    pub fn watched_ended(&self, run_id: i64) -> bool {
        self.watched_runs()
            .remove(&run_id)
            .is_some_and(|watched| watched.ended)
    }

    /// A run of this host ended: on a shared ledger, the rest of its log is shipped now.
    pub fn log_ended(&self, run_id: i64) {
        if self.world.store.is_shared() {
            self.runs
                .log_ends
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(run_id);
            self.wake.ship_now.notify_one();
        }
    }

    /// The ended runs whose logs are still to be shipped whole.
    pub fn logs_ended(&self) -> BTreeSet<i64> {
        self.runs
            .log_ends
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Of the ended runs a pass looked at (`looked_at`), all are done but those `left`.
    pub fn logs_shipped(&self, looked_at: &[i64], left: &BTreeSet<i64>) {
        let mut ends = self.runs.log_ends.lock().unwrap_or_else(|p| p.into_inner());
        for id in looked_at {
            if !left.contains(id) {
                ends.remove(id);
            }
        }
    }

    /// Tells readiness waiters that jobs, services or holds changed.
    pub fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Resolves once socket, lease and lock file are released.
    pub async fn released(&self) {
        let mut rx = self.phase.subscribe();
        let _ = rx.wait_for(|p| *p == Phase::Released).await;
    }
}
