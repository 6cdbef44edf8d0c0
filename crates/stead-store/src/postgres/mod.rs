//! The PostgreSQL ledger: one database that the servers of several hosts share.
//!
//! It behaves as the SQLite ledger does through [`Store`] and
//! [`RunRecorder`](crate::RunRecorder): the transactions are the same (written once over
//! `Steps`, see `backend.rs`; each concern's steps are in the file here that holds its
//! SQL), and the contract tests in
//! `contract/` run against both. One difference of shape:
//! instead of SQLite's single `server_lease` row there is a `hosts` table, one lease row
//! per machine id, and a `PgStore` claims, renews, fences by and releases the row of the
//! machine id it was connected with.
//!
//! Concurrency: every write runs in a `READ COMMITTED` transaction with explicit row
//! locks, chosen over `SERIALIZABLE` because every invariant here is a single guarded row
//! (a compare-and-set on a run's status, a lease row, a job row) that READ COMMITTED
//! re-checks against the newest committed version when two writers meet, so no write
//! ever needs a retry loop:
//!
//! - **fencing**: a server's write first reads its host's epoch `FOR SHARE`. That lock
//!   conflicts with every `UPDATE` of the row, so the claim that moves the epoch waits
//!   for fenced writes in flight to commit, and a fenced write that starts after a claim
//!   reads the new epoch and fails with [`StoreError::Refused(Refusal::Fenced)`], having written nothing;
//! - **transitions** are `UPDATE ... WHERE status IN (...)`: a writer that waited for a
//!   concurrent one re-evaluates the guard on the row it committed, so exactly one wins;
//! - **admission** locks the job's row (`FOR UPDATE`), so two admissions of one job, from
//!   any host, see each other's runs for the concurrency policy;
//! - **catalog writes** (jobs and services) take a transaction-scoped advisory lock, so
//!   a service removal and a job that starts naming it cannot interleave;
//! - a monitor's final write locks the services its job depends on (`FOR SHARE`), so it
//!   decides "cut by a restart" against a restart flag that cannot move until it commits.
//!
//! The connection is one client behind a mutex, as SQLite's is. A connection found
//! closed is reopened once, after a short pause; a call whose connection was lost before
//! it committed is then tried again, while a commit whose answer was lost is reported as
//! [`StoreError::Unavailable`] rather than repeated, because it may have landed.
//!
//! TLS follows libpq's `sslmode` and `sslrootcert` (see `tls.rs`); every connection,
//! the listener's included, is made with the same settings.
//! The client is synchronous (it drives its own small runtime): call it from threads that
//! may block, as the server does through `spawn_blocking`, never from async code.

use std::mem::ManuallyDrop;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::Refusal;
use ::postgres::config::Host;
use ::postgres::error::Severity;
use ::postgres::types::ToSql;
use ::postgres::{Client, Config, GenericClient, IsolationLevel, Row, Transaction};
use jiff::{SignedDuration, Timestamp};
use stead_core::clock::{from_ms, to_ms};
use stead_core::lease::{ClaimOutcome, Claimant, HeldLease, LeaseOwner, LeaseRow, RenewOutcome};
use stead_core::locator::LedgerRef;
use stead_protocol::redact_url;
use stead_sys::identity::StartIdentity;
use stead_sys::machine;

mod checkpoints;
mod cluster;
mod jobs;
mod logs;
mod notify;
mod retention;
mod runs;
#[cfg(any(test, feature = "testing"))]
pub mod scratch;
mod services;
mod sleeps;
#[cfg(test)]
mod tests;
mod tls;

pub use tls::connect_url;

use crate::backend::Guard;
use crate::backend::sealed::{Backend, Part, relaxed};
use crate::{BackendError, Cluster, Lease, Store, StoreError};

/// Append-only: a released schema is never edited, only followed by a new migration.
/// The schema version is the number of migrations applied, one row each in
/// `schema_migrations`.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_hosts_and_leader.sql"),
    include_str!("migrations/002_jobs_and_runs.sql"),
    include_str!("migrations/003_services_and_holds.sql"),
    include_str!("migrations/004_ended_processes.sql"),
    include_str!("migrations/005_ledger_identity_and_clocks.sql"),
    include_str!("migrations/006_run_logs.sql"),
    include_str!("migrations/007_retention.sql"),
    include_str!("migrations/008_retries_queues_notify.sql"),
    include_str!("migrations/009_in_flight_by_job_and_host.sql"),
    include_str!("migrations/010_sleeps_and_overdue.sql"),
    include_str!("migrations/011_checkpoints_and_steps.sql"),
    include_str!("migrations/012_run_waits.sql"),
];

/// The database's clock in milliseconds, read when the statement runs
/// (`clock_timestamp()`, not the transaction's start, which a lock wait can leave behind):
/// every expiry on a shared ledger is written and judged by it, never by a host's clock.
macro_rules! db_now_ms {
    () => {
        "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
    };
}
pub(crate) use db_now_ms;

/// Advisory lock keys (per database): migrating, and writing jobs or services.
const MIGRATION_LOCK: i64 = i64::from_be_bytes(*b"stead:mg");
const CATALOG_LOCK: i64 = i64::from_be_bytes(*b"stead:ct");

/// How long to wait before reopening a connection found closed: long enough for a
/// database that is restarting to accept again, short enough to stay within a request.
const RECONNECT_PAUSE: Duration = Duration::from_millis(250);
const KEEPALIVE_RETRIES: u32 = 3;

/// How quickly a connection gives up on a database it cannot reach, set from the lease
/// (the time within which a host must notice it is cut off, and the time after which
/// the others judge it lost): a dead link is noticed within a lease, not after the
/// kernel's quarter of an hour of retransmissions, and a healed one is used again at the
/// next call rather than after a retransmission backoff.
#[derive(Debug, Clone, Copy)]
pub struct LinkTimeouts {
    /// A connection attempt that has not completed within this fails.
    pub connect: Duration,
    /// Data the database does not acknowledge within this ends the connection (Linux's
    /// TCP_USER_TIMEOUT), so a call in flight over a dead link fails.
    pub unacknowledged: Duration,
    /// An idle connection (the listener's) is probed after this, then every
    /// `keepalive_interval`, and dropped after three probes go unanswered.
    pub keepalive_idle: Duration,
    pub keepalive_interval: Duration,
    /// Any one statement running longer than this is cancelled by the database.
    pub statement: Duration,
}

impl LinkTimeouts {
    /// Timeouts for a cluster whose hosts hold leases of `lease`.
    pub fn for_lease(lease: Duration) -> Self {
        let at_least = |d: Duration, floor_ms: u64| d.max(Duration::from_millis(floor_ms));
        Self {
            // An attempt begun while the link was down would otherwise wait out SYN
            // retransmissions after it heals: short, so a healed link is used within a
            // heartbeat or two.
            connect: at_least(lease / 4, 500).min(Duration::from_secs(5)),
            unacknowledged: at_least(lease / 2, 500),
            keepalive_idle: at_least(lease / 4, 1_000),
            keepalive_interval: at_least(lease / 8, 1_000),
            statement: at_least(lease, 1_000),
        }
    }
}

impl Default for LinkTimeouts {
    /// For the default lease of 30 s.
    fn default() -> Self {
        Self::for_lease(Duration::from_secs(30))
    }
}

/// The PostgreSQL ledger.
pub struct PgStore {
    config: Config,
    tls: tls::Tls,
    /// `HOST:PORT/DB`, for messages: never the URL, which may carry a password.
    ledger: String,
    machine_id: String,
    /// Which ledger this is (its id and database), once the schema has one.
    identity: (String, String),
    /// Dropped by hand (see `Drop`): the sync client's own drop blocks on a runtime.
    client: ManuallyDrop<Mutex<Client>>,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // SAFETY: this is the store's drop; the field is never touched again.
        let client = unsafe { ManuallyDrop::take(&mut self.client) };
        // Closing the connection blocks on the client's private runtime, which panics on
        // a thread that already drives one (a server drops its store on its runtime's
        // thread): close it on a thread of its own there.
        if tokio::runtime::Handle::try_current().is_ok() {
            let _ = std::thread::spawn(move || drop(client)).join();
        }
    }
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("ledger", &self.ledger)
            .field("machine_id", &self.machine_id)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB` or
    /// `key=value` pairs), brings its schema up to date and records this host's name.
    /// `machine_id` names the host whose lease row this store claims and fences by.
    pub fn connect(url: &str, machine_id: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, machine_id, LinkTimeouts::default())
    }

    /// [`PgStore::connect`] with the timeouts of a cluster's lease.
    pub fn connect_with(
        url: &str,
        machine_id: &str,
        link: LinkTimeouts,
    ) -> Result<Self, StoreError> {
        let mut store = Self::open(url, machine_id, link)?;
        {
            let mut client = store.client();
            migrate(&store.ledger, machine_id, &mut client)?;
            cluster::name_host(&mut client, machine_id, &machine::host_name())?;
        }
        store.identity = store.read_identity()?;
        Ok(store)
    }

    /// Connects without touching the schema or the hosts: for a run's monitor, started
    /// by a server that did both already (every run start would otherwise pay for them).
    pub fn connect_recorder(
        url: &str,
        machine_id: &str,
        link: LinkTimeouts,
    ) -> Result<Self, StoreError> {
        let mut store = Self::open(url, machine_id, link)?;
        store.identity = store.read_identity()?;
        Ok(store)
    }

    /// Looks at the ledger for `stead doctor` without writing anything: the session is
    /// read-only (the database refuses any write), the schema is not migrated and the
    /// host's row is not touched.
    pub fn inspect(url: &str, machine_id: &str) -> Result<Inspection, StoreError> {
        let store = Self::open(url, machine_id, LinkTimeouts::default())?;
        store.with_client(|c| {
            c.batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")?;
            // Each table is looked up before it is read: a statement naming a table that
            // does not exist fails as it is planned, whatever its branches.
            let exists = |c: &mut Client, table: &str| -> Result<bool, StoreError> {
                Ok(
                    c.query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])?
                        .try_get(0)?,
                )
            };
            let schema: i32 = if exists(c, "schema_migrations")? {
                c.query_one(
                    "SELECT COALESCE(max(version), 0) FROM schema_migrations",
                    &[],
                )?
                .try_get(0)?
            } else {
                0
            };
            let sent = Timestamp::now();
            let ledger_ms: i64 = c
                .query_one(concat!("SELECT ", db_now_ms!()), &[])?
                .try_get(0)?;
            let received = Timestamp::now();
            let lease = if exists(c, "hosts")? {
                Some(read_lease(c, machine_id)?)
            } else {
                None
            };
            Ok(Inspection {
                schema: usize::try_from(schema).unwrap_or(0),
                known: schema_version_count(),
                lease,
                ledger_time: from_ms(ledger_ms),
                local_sent: sent,
                local_received: received,
            })
        })
    }

    fn read_identity(&self) -> Result<(String, String), StoreError> {
        self.with_client(|c| {
            let row = c.query_one(
                "SELECT (SELECT ledger_id FROM ledger), current_database()",
                &[],
            )?;
            Ok((row.try_get(0)?, row.try_get(1)?))
        })
    }

    fn open(url: &str, machine_id: &str, link: LinkTimeouts) -> Result<Self, StoreError> {
        let bad_url = |detail: String| StoreError::LedgerUrl {
            url: redact_url(url),
            detail,
        };
        let (rest, tls) = tls::Tls::from_url(url)?;
        let mut config: Config = rest.parse().map_err(|e| bad_url(describe(&e)))?;
        tls.configure(&mut config);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(link.connect);
        }
        // The URL's own `options` win: the timeouts are set only where none are. A
        // transaction left open by a connection that died mid-way (a partition) would hold
        // its locks (the host's lease row among them) until the database noticed the dead
        // peer, hours later by default: the database ends it after a statement's timeout
        // too, so the host's next connection can renew its lease.
        if config.get_options().is_none() {
            let ms = link.statement.as_millis();
            config.options(&format!(
                "-c statement_timeout={ms} -c idle_in_transaction_session_timeout={ms}"
            ));
        }
        config
            .application_name("stead")
            .keepalives(true)
            .keepalives_idle(link.keepalive_idle)
            .keepalives_interval(link.keepalive_interval)
            .keepalives_retries(KEEPALIVE_RETRIES)
            .tcp_user_timeout(link.unacknowledged);
        let ledger = location(&config);
        let client = tls
            .connect(&config)
            .map_err(|e| tls.unavailable(&ledger, &e))?;
        Ok(Self {
            config,
            tls,
            ledger,
            machine_id: machine_id.to_string(),
            identity: Default::default(),
            client: ManuallyDrop::new(Mutex::new(client)),
        })
    }

    /// Where the ledger is, as `HOST:PORT/DB`.
    pub fn location(&self) -> &str {
        &self.ledger
    }

    fn client(&self) -> MutexGuard<'_, Client> {
        // A panic while holding the client leaves the database consistent (an open
        // transaction is rolled back when it drops), so poisoning is not fatal.
        self.client.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `op` on the connection, reopening it first if it was found closed, and once
    /// more if `op` lost it: `op` must not have committed anything when it fails with a
    /// lost connection (the write helper reports a lost commit as `Unavailable`).
    fn with_client<T>(
        &self,
        mut op: impl FnMut(&mut Client) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut client = self.client();
        if client.is_closed() {
            self.reconnect(&mut client)?;
        }
        let result = match op(&mut client) {
            Err(StoreError::Backend {
                source: BackendError::Postgres(e),
                ..
            }) if lost(&e) || client.is_closed() => {
                tracing::warn!(ledger = %self.ledger, "lost the PostgreSQL connection: {}", describe(&e));
                self.reconnect(&mut client)?;
                op(&mut client)
            }
            other => other,
        };
        match result {
            Err(StoreError::Backend {
                source: BackendError::Postgres(e),
                ..
            }) if lost(&e) => Err(unavailable(&self.ledger, &e)),
            other => other.map_err(|e| e.on(&self.ledger)),
        }
    }

    fn reconnect(&self, client: &mut Client) -> Result<(), StoreError> {
        std::thread::sleep(RECONNECT_PAUSE);
        *client = self
            .tls
            .connect(&self.config)
            .map_err(|e| self.tls.unavailable(&self.ledger, &e))?;
        tracing::info!(ledger = %self.ledger, "reconnected to the PostgreSQL ledger");
        Ok(())
    }

    /// Runs `f` in one READ COMMITTED transaction. With `epoch`, the transaction first
    /// checks that this host's lease still carries it, holding the row `FOR SHARE` until
    /// the commit, so no newer server of this host can claim in between.
    fn write_raw<T>(
        &self,
        epoch: Option<i64>,
        mut f: impl FnMut(&mut Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.with_client(|client| {
            let mut tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::ReadCommitted)
                .start()?;
            if let Some(epoch) = epoch
                && self.host_epoch(&mut tx)? != epoch
            {
                return Err(StoreError::Refused(Refusal::Fenced { epoch }));
            }
            let value = f(&mut tx)?;
            self.commit(tx)?;
            Ok(value)
        })
    }

    /// Commits `tx`; a connection lost meanwhile leaves the outcome unknown, and says so.
    fn commit(&self, tx: Transaction<'_>) -> Result<(), StoreError> {
        tx.commit().map_err(|e| {
            if lost(&e) {
                StoreError::Unavailable {
                    ledger: self.ledger.clone(),
                    detail: format!(
                        "the connection was lost while committing, so whether the write \
                         landed is unknown ({})",
                        describe(&e)
                    ),
                }
            } else {
                e.into()
            }
        })
    }

    /// This host's lease epoch, holding its row `FOR SHARE` until the commit.
    fn host_epoch(&self, tx: &mut Transaction<'_>) -> Result<i64, StoreError> {
        Ok(tx
            .query_opt(
                "SELECT epoch FROM hosts WHERE machine_id = $1 FOR SHARE",
                &[&self.machine_id],
            )?
            .map(|row| row.try_get(0))
            .transpose()?
            // A host that never claimed is at epoch 0, as SQLite's fresh row is.
            .unwrap_or(0))
    }

    /// What a write under `guard` checks and takes first, in its transaction.
    fn apply_guard(&self, tx: &mut Transaction<'_>, guard: Guard) -> Result<(), StoreError> {
        match guard {
            Guard::Leader(epoch) => cluster::fence_leader(tx, &self.machine_id, epoch)?,
            Guard::Catalog(_) => {
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CATALOG_LOCK])?;
            }
            // This transaction's commit returns before it is flushed to the WAL.
            Guard::Mark => {
                tx.batch_execute("SET LOCAL synchronous_commit = off")?;
            }
            Guard::Unfenced | Guard::Host(_) => {}
        }
        Ok(())
    }
}

/// What `stead doctor` reads of a shared ledger.
#[derive(Debug)]
pub struct Inspection {
    /// The schema version found, and the one this build writes.
    pub schema: usize,
    pub known: usize,
    /// This host's lease row, once the schema has one.
    pub lease: Option<LeaseRow>,
    /// The database's clock, read while this host's went from `local_sent` to
    /// `local_received`.
    pub ledger_time: Timestamp,
    pub local_sent: Timestamp,
    pub local_received: Timestamp,
}

/// Brings the schema up to date in one transaction under an advisory lock, so hosts and
/// monitors connecting to a new database at once apply each migration exactly once, and
/// a schema newer than this build is refused before anything is written.
fn migrate(ledger: &str, machine_id: &str, client: &mut Client) -> Result<(), StoreError> {
    let known = schema_version_count();
    let failed = |detail: String| StoreError::Migrate {
        path: format!("postgres://{ledger}").into(),
        detail,
    };
    let pg = |e: ::postgres::Error| failed(describe(&e));
    let mut tx = client.transaction().map_err(pg)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(pg)?;
    // Created on first use, here and not in a migration: it is what says which
    // migrations ran. (Checked first rather than `IF NOT EXISTS`, which would send a
    // notice on every connection.)
    let fresh: bool = tx
        .query_one("SELECT to_regclass('schema_migrations') IS NULL", &[])
        .and_then(|row| row.try_get(0))
        .map_err(pg)?;
    if fresh {
        tx.batch_execute(
            "CREATE TABLE schema_migrations (
                 version       INTEGER PRIMARY KEY,
                 applied_at_ms BIGINT NOT NULL,
                 applied_by    TEXT NOT NULL
             )",
        )
        .map_err(pg)?;
    }
    let found: i32 = tx
        .query_one(
            "SELECT COALESCE(max(version), 0) FROM schema_migrations",
            &[],
        )
        .and_then(|row| row.try_get(0))
        .map_err(pg)?;
    let found = usize::try_from(found).unwrap_or(0);
    if found > known {
        return Err(StoreError::TooNew {
            path: format!("postgres://{ledger}").into(),
            found,
            known,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found) {
        let version = index + 1;
        tx.batch_execute(sql)
            .map_err(|e| failed(format!("migration {version}: {}", describe(&e))))?;
        tx.execute(
            "INSERT INTO schema_migrations (version, applied_at_ms, applied_by)
             VALUES ($1, $2, $3)",
            &[&(version as i32), &to_ms(Timestamp::now()), &machine_id],
        )
        .map_err(pg)?;
    }
    tx.commit().map_err(pg)?;
    if found < known {
        tracing::info!(ledger, version = known, "migrated the ledger");
    }
    Ok(())
}

/// The schema version this build writes.
pub fn schema_version_count() -> usize {
    MIGRATIONS.len()
}

/// Whether `e` means the connection is gone (the server closed it, the network failed,
/// or the server said so with a FATAL error): nothing of an open transaction committed.
fn lost(e: &::postgres::Error) -> bool {
    e.is_closed()
        || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
        || e.as_db_error().is_some_and(|db| {
            matches!(
                db.parsed_severity(),
                Some(Severity::Fatal | Severity::Panic)
            )
        })
}

fn unavailable(ledger: &str, e: &::postgres::Error) -> StoreError {
    StoreError::Unavailable {
        ledger: ledger.to_string(),
        detail: describe(e),
    }
}

/// An error in full: the server's message and SQLSTATE, or the cause under a client-side
/// error (tokio-postgres shows only "db error" or "error connecting to server").
pub(crate) fn describe(e: &::postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{db} (SQLSTATE {})", db.code().code());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// `HOST:PORT/DB` of a configuration, for messages.
fn location(config: &Config) -> String {
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                Host::Unix(dir) => format!("{}:{port}", dir.display()),
            }
        })
        .collect();
    let hosts = if hosts.is_empty() {
        "(no host)".to_string()
    } else {
        hosts.join(",")
    };
    // PostgreSQL's default database is the user's name.
    let db = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or("postgres");
    format!("{hosts}/{db}")
}

fn ms(d: SignedDuration) -> i64 {
    d.as_millis().try_into().unwrap_or(i64::MAX)
}

/// A pid as stored (BIGINT: PostgreSQL has no unsigned 32-bit integer).
fn pid_from(stored: i64) -> Result<u32, StoreError> {
    u32::try_from(stored).map_err(|_| StoreError::Row(format!("pid {stored} out of range")))
}

fn read_lease(c: &mut impl GenericClient, machine_id: &str) -> Result<LeaseRow, StoreError> {
    let Some(row) = c.query_opt(
        "SELECT epoch, server_id, token_hash, pid, start_identity, expires_at_ms
         FROM hosts WHERE machine_id = $1",
        &[&machine_id],
    )?
    else {
        // Never claimed: the same row as SQLite's before its first claim.
        return Ok(LeaseRow {
            epoch: 0,
            owner: None,
            expires_at: from_ms(0),
        });
    };
    let server_id: Option<String> = row.try_get(1)?;
    let owner = match server_id {
        Some(server_id) => Some(LeaseOwner {
            server_id,
            token_hash: row.try_get(2)?,
            pid: pid_from(row.try_get(3)?)?,
            start_identity: StartIdentity::from_stored(row.try_get::<_, String>(4)?),
        }),
        None => None,
    };
    Ok(LeaseRow {
        epoch: row.try_get(0)?,
        owner,
        expires_at: from_ms(row.try_get(5)?),
    })
}

impl Lease for PgStore {
    fn claim_lease(
        &self,
        claimant: &Claimant,
        now: Timestamp,
        ttl: SignedDuration,
        dead_owner: Option<&LeaseRow>,
    ) -> Result<ClaimOutcome, StoreError> {
        let dead = dead_owner.and_then(|row| Some((row.epoch, row.owner.as_ref()?)));
        let dead_epoch = dead.map(|(epoch, _)| epoch);
        let dead_server = dead.map(|(_, o)| o.server_id.as_str());
        let dead_pid = dead.map(|(_, o)| i64::from(o.pid));
        let dead_identity = dead.map(|(_, o)| o.start_identity.as_str());
        self.write_raw(None, |tx| {
            // One compare-and-set statement, as in SQLite: a host's first claim inserts
            // its row at epoch 1; later claims take a released, expired or proven-dead
            // row (matched whole) and bump the epoch. The conflicting row is locked
            // before the condition is evaluated, so two claimants cannot both win.
            // "Expired" and the new expiry are the database's time, never this host's.
            let claimed = tx
                .query_opt(
                    concat!(
                        "INSERT INTO hosts AS h (machine_id, epoch, server_id, token_hash, pid,
                             start_identity, expires_at_ms, claimed_at_ms, renewed_at_ms,
                             clock_offset_ms)
                         VALUES ($1, 1, $2, $3, $4, $5, ",
                        db_now_ms!(),
                        " + $6, ",
                        db_now_ms!(),
                        ", ",
                        db_now_ms!(),
                        ", $7 - ",
                        db_now_ms!(),
                        ")
                         ON CONFLICT (machine_id) DO UPDATE
                         SET epoch = h.epoch + 1, server_id = EXCLUDED.server_id,
                             token_hash = EXCLUDED.token_hash, pid = EXCLUDED.pid,
                             start_identity = EXCLUDED.start_identity,
                             expires_at_ms = EXCLUDED.expires_at_ms,
                             claimed_at_ms = EXCLUDED.claimed_at_ms,
                             renewed_at_ms = EXCLUDED.renewed_at_ms,
                             clock_offset_ms = EXCLUDED.clock_offset_ms
                         WHERE h.server_id IS NULL OR h.expires_at_ms <= ",
                        db_now_ms!(),
                        "
                            OR (h.epoch = $8 AND h.server_id = $9 AND h.pid = $10
                                AND h.start_identity = $11)
                         RETURNING epoch, expires_at_ms"
                    ),
                    &[
                        &self.machine_id,
                        &claimant.server_id,
                        &claimant.token_hash,
                        &i64::from(claimant.pid),
                        &claimant.start_identity.as_str(),
                        &ms(ttl),
                        &to_ms(now),
                        &dead_epoch,
                        &dead_server,
                        &dead_pid,
                        &dead_identity,
                    ],
                )?
                .map(|row| Ok::<_, StoreError>((row.try_get(0)?, row.try_get(1)?)))
                .transpose()?;
            Ok(match claimed {
                Some((epoch, expires_ms)) => ClaimOutcome::Claimed(HeldLease {
                    claimant: claimant.clone(),
                    epoch,
                    expires_at: from_ms(expires_ms),
                }),
                None => ClaimOutcome::Held(read_lease(tx, &self.machine_id)?),
            })
        })
    }

    fn renew_lease(
        &self,
        lease: &HeldLease,
        now: Timestamp,
        ttl: SignedDuration,
    ) -> Result<RenewOutcome, StoreError> {
        let c = &lease.claimant;
        self.write_raw(None, |tx| {
            // Deliberately no `expires_at_ms > now`: an owner that slept past its expiry
            // re-arms its own lease. Identity and token are the fence.
            let renewed: Option<i64> = tx
                .query_opt(
                    concat!(
                        "UPDATE hosts SET expires_at_ms = ",
                        db_now_ms!(),
                        " + $1,
                             renewed_at_ms = ",
                        db_now_ms!(),
                        ",
                             clock_offset_ms = $2 - ",
                        db_now_ms!(),
                        "
                         WHERE machine_id = $3 AND epoch = $4 AND server_id = $5
                           AND token_hash = $6 AND pid = $7 AND start_identity = $8
                         RETURNING expires_at_ms"
                    ),
                    &[
                        &ms(ttl),
                        &to_ms(now),
                        &self.machine_id,
                        &lease.epoch,
                        &c.server_id,
                        &c.token_hash,
                        &i64::from(c.pid),
                        &c.start_identity.as_str(),
                    ],
                )?
                .map(|row| row.try_get(0))
                .transpose()?;
            Ok(match renewed {
                Some(expires) => RenewOutcome::Renewed {
                    expires_at: from_ms(expires),
                },
                None => RenewOutcome::Superseded(read_lease(tx, &self.machine_id)?),
            })
        })
    }

    fn release_lease(&self, lease: &HeldLease, _now: Timestamp) -> Result<bool, StoreError> {
        let c = &lease.claimant;
        self.write_raw(None, |tx| {
            let n = tx.execute(
                concat!(
                    "UPDATE hosts
                     SET server_id = NULL, token_hash = NULL, pid = NULL, start_identity = NULL,
                         expires_at_ms = ",
                    db_now_ms!(),
                    "
                     WHERE machine_id = $1 AND epoch = $2 AND server_id = $3 AND token_hash = $4
                       AND pid = $5 AND start_identity = $6"
                ),
                &[
                    &self.machine_id,
                    &lease.epoch,
                    &c.server_id,
                    &c.token_hash,
                    &i64::from(c.pid),
                    &c.start_identity.as_str(),
                ],
            )?;
            Ok(n == 1)
        })
    }

    fn lease_row(&self) -> Result<LeaseRow, StoreError> {
        self.with_client(|c| read_lease(c, &self.machine_id))
    }
}

impl Store for PgStore {
    fn recorder(&self) -> &dyn crate::RunRecorder {
        self
    }

    fn ledger_ref(&self) -> LedgerRef {
        LedgerRef::Postgres {
            ledger_id: self.identity.0.clone(),
            database: self.identity.1.clone(),
        }
    }

    fn cluster(&self) -> Option<&dyn Cluster> {
        Some(self)
    }
}

impl Backend for PgStore {
    type Tx<'t> = PgTx<'t>;

    fn read<T>(
        &self,
        f: &mut dyn FnMut(&mut PgTx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.with_client(|client| f(&mut PgTx(client)))
    }

    /// Host writes hold this host's lease row `FOR SHARE` (see [`PgStore::write_raw`]);
    /// leader writes hold the leadership row; catalog writes also take a transaction-scoped
    /// advisory lock, so a service removal and a job that starts naming it cannot
    /// interleave.
    fn write<T>(
        &self,
        guard: Guard,
        f: &mut dyn FnMut(&mut PgTx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let host_epoch = match guard {
            Guard::Host(epoch) | Guard::Catalog(epoch) => Some(epoch),
            Guard::Unfenced | Guard::Mark | Guard::Leader(_) => None,
        };
        self.write_raw(host_epoch, |tx| {
            self.apply_guard(tx, guard)?;
            f(&mut PgTx(tx))
        })
    }

    /// One READ COMMITTED transaction with a savepoint per part; this host's lease row is
    /// read (and held `FOR SHARE`) once for every part fenced by it.
    fn write_each<T>(
        &self,
        parts: &mut [Part<'_, Self, T>],
    ) -> Result<Vec<Result<T, StoreError>>, StoreError> {
        let relaxed = relaxed::<Self, T>(parts);
        self.with_client(|client| {
            let mut tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::ReadCommitted)
                .start()?;
            if relaxed {
                self.apply_guard(&mut tx, Guard::Mark)?;
            }
            let mut host = None;
            let mut answers = Vec::with_capacity(parts.len());
            for (guard, f) in parts.iter_mut() {
                if let Guard::Host(fence) | Guard::Catalog(fence) = *guard {
                    let current = match host {
                        Some(current) => current,
                        None => *host.insert(self.host_epoch(&mut tx)?),
                    };
                    if current != fence {
                        answers.push(Err(StoreError::Refused(Refusal::Fenced { epoch: fence })));
                        continue;
                    }
                }
                let mut part = tx.savepoint("part")?;
                let written = match *guard {
                    Guard::Mark => Ok(()),
                    guard => self.apply_guard(&mut part, guard),
                }
                .and_then(|()| f(&mut PgTx(&mut part)));
                match written {
                    Ok(value) => {
                        part.commit()?;
                        answers.push(Ok(value));
                    }
                    Err(e) => {
                        part.rollback()?;
                        answers.push(Err(e.on(&self.ledger)));
                    }
                }
            }
            self.commit(tx)?;
            Ok(answers)
        })
    }
}

/// A connection or a transaction the steps run on: each concern's steps are in the file
/// that holds their SQL (`jobs.rs`, `services.rs`, `runs.rs`, `retention.rs`,
/// `notify.rs`; see `backend.rs`).
pub struct PgTx<'t>(pub &'t mut dyn Sql);

impl crate::backend::Steps for PgTx<'_> {
    fn lock_job(&mut self, job_id: i64) -> Result<(), StoreError> {
        runs::lock_job(&mut *self.0, job_id)
    }

    fn announce(&mut self, what: crate::backend::Announce) -> Result<(), StoreError> {
        cluster::notify(&mut *self.0, what)
    }
}

impl crate::rows::Cells for Row {
    fn int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        Ok(self.try_get(i)?)
    }

    fn text(&self, i: usize) -> Result<Option<String>, StoreError> {
        Ok(self.try_get(i)?)
    }
}

/// The statements the steps need, on a connection or in a transaction alike (the
/// client library's own trait for that cannot be a trait object).
pub trait Sql {
    fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, ::postgres::Error>;
    fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, ::postgres::Error>;
    fn query_one(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, ::postgres::Error>;
    fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, ::postgres::Error>;
}

impl<C: GenericClient> Sql for C {
    fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, ::postgres::Error> {
        GenericClient::query(self, sql, params)
    }

    fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, ::postgres::Error> {
        GenericClient::query_opt(self, sql, params)
    }

    fn query_one(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, ::postgres::Error> {
        GenericClient::query_one(self, sql, params)
    }

    fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, ::postgres::Error> {
        GenericClient::execute(self, sql, params)
    }
}
