//! The PostgreSQL ledger: one database that the servers of several hosts share.
//!
//! It behaves as the SQLite ledger does through [`Store`] and [`RunRecorder`] (the
//! contract tests in `store/contract.rs` run against both), with one difference of shape:
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
//!   reads the new epoch and fails with [`StoreError::Fenced`], having written nothing;
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
//! TLS is not supported yet: the client connects without it (`sslmode=require` is
//! refused), so the database should be reached over loopback or a trusted network.
//! The client is synchronous (it drives its own small runtime): call it from threads that
//! may block, as the server does through `spawn_blocking`, never from async code.

use std::mem::ManuallyDrop;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use ::postgres::config::{Host, SslMode};
use ::postgres::error::Severity;
use ::postgres::{Client, Config, GenericClient, IsolationLevel, NoTls, Transaction};
use jiff::{SignedDuration, Timestamp};
use stead_protocol::{JobSpec, Run, RunFilter, RunStatus, ServiceSpec};

mod cluster;
mod jobs;
mod runs;
pub mod scratch;
mod services;
#[cfg(test)]
mod tests;

use super::{
    ActiveRun, Admission, Changes, ClaimingHost, Fence, HostRow, LeaderRow, NewRun, PlanFn,
    RunCount, Store, StoreError, StoredHold, StoredJob, StoredService, Wake,
};
use crate::clock::{from_ms, to_ms};
use crate::lifecycle::identity::StartIdentity;
use crate::lifecycle::lease::{
    ClaimOutcome, Claimant, HeldLease, LeaseOwner, LeaseRow, RenewOutcome,
};
use crate::runs::MonitorPlan;
use crate::runs::{RunEnd, RunRecorder};

/// Append-only: a released schema is never edited, only followed by a new migration.
/// The schema version is the number of migrations applied, one row each in
/// `schema_migrations`.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_hosts_and_leader.sql"),
    include_str!("migrations/002_jobs_and_runs.sql"),
    include_str!("migrations/003_services_and_holds.sql"),
];

/// Advisory lock keys (per database): migrating, and writing jobs or services.
const MIGRATION_LOCK: i64 = i64::from_be_bytes(*b"stead:mg");
const CATALOG_LOCK: i64 = i64::from_be_bytes(*b"stead:ct");

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to wait before reopening a connection found closed: long enough for a
/// database that is restarting to accept again, short enough to stay within a request.
const RECONNECT_PAUSE: Duration = Duration::from_millis(250);
/// A peer that stops answering is noticed within about idle + interval * retries.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(15);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;
/// A request the server does not acknowledge within this is given up (Linux), rather
/// than retransmitted for the kernel's default quarter of an hour.
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// The PostgreSQL ledger.
pub struct PgStore {
    config: Config,
    /// `HOST:PORT/DB`, for messages: never the URL, which may carry a password.
    ledger: String,
    machine_id: String,
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
        let store = Self::open(url, machine_id)?;
        {
            let mut client = store.client();
            migrate(&store.ledger, machine_id, &mut client)?;
            cluster::name_host(&mut client, machine_id, &crate::machine::host_name())?;
        }
        Ok(store)
    }

    /// Connects without touching the schema or the hosts: for a run's monitor, started
    /// by a server that did both already (every run start would otherwise pay for them).
    pub fn connect_recorder(url: &str, machine_id: &str) -> Result<Self, StoreError> {
        Self::open(url, machine_id)
    }

    fn open(url: &str, machine_id: &str) -> Result<Self, StoreError> {
        let bad_url = |detail: String| StoreError::LedgerUrl {
            url: redact_url(url),
            detail,
        };
        let mut config: Config = url.parse().map_err(|e| bad_url(describe(&e)))?;
        if config.get_ssl_mode() == SslMode::Require {
            return Err(bad_url("sslmode=require: TLS is not supported yet".into()));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config
            .application_name("stead")
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(KEEPALIVE_RETRIES)
            .tcp_user_timeout(TCP_USER_TIMEOUT);
        let ledger = location(&config);
        let client = config
            .connect(NoTls)
            .map_err(|e| unavailable(&ledger, &e))?;
        Ok(Self {
            config,
            ledger,
            machine_id: machine_id.to_string(),
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
            Err(StoreError::Postgres(e)) if lost(&e) || client.is_closed() => {
                tracing::warn!(ledger = %self.ledger, "lost the PostgreSQL connection: {}", describe(&e));
                self.reconnect(&mut client)?;
                op(&mut client)
            }
            other => other,
        };
        match result {
            Err(StoreError::Postgres(e)) if lost(&e) => Err(unavailable(&self.ledger, &e)),
            other => other,
        }
    }

    fn reconnect(&self, client: &mut Client) -> Result<(), StoreError> {
        std::thread::sleep(RECONNECT_PAUSE);
        *client = self
            .config
            .connect(NoTls)
            .map_err(|e| unavailable(&self.ledger, &e))?;
        tracing::info!(ledger = %self.ledger, "reconnected to the PostgreSQL ledger");
        Ok(())
    }

    fn read<T>(&self, op: impl Fn(&mut Client) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.with_client(op)
    }

    /// Runs `f` in one READ COMMITTED transaction. With `epoch`, the transaction first
    /// checks that this host's lease still carries it, holding the row `FOR SHARE` until
    /// the commit, so no newer server of this host can claim in between.
    fn write<T>(
        &self,
        epoch: Option<i64>,
        f: impl Fn(&mut Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.with_client(|client| {
            let mut tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::ReadCommitted)
                .start()?;
            if let Some(epoch) = epoch {
                let current: i64 = tx
                    .query_opt(
                        "SELECT epoch FROM hosts WHERE machine_id = $1 FOR SHARE",
                        &[&self.machine_id],
                    )?
                    .map(|row| row.try_get(0))
                    .transpose()?
                    // A host that never claimed is at epoch 0, as SQLite's fresh row is.
                    .unwrap_or(0);
                if current != epoch {
                    return Err(StoreError::Fenced { epoch });
                }
            }
            let value = f(&mut tx)?;
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
                    StoreError::Postgres(e)
                }
            })?;
            Ok(value)
        })
    }

    /// Runs `f` in one transaction fenced by the scheduler's leadership: `epoch` must
    /// still lead, and the leader row is held until the commit.
    fn write_led<T>(
        &self,
        epoch: i64,
        f: impl Fn(&mut Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.write(None, |tx| {
            cluster::fence_leader(tx, &self.machine_id, epoch)?;
            f(tx)
        })
    }

    /// A write to jobs or services: serialized with every other, as SQLite's writes are,
    /// so checks across rows (a service no job names any more) hold until the commit.
    fn write_catalog<T>(
        &self,
        epoch: i64,
        f: impl Fn(&mut Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.write(Some(epoch), |tx| {
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CATALOG_LOCK])?;
            let value = f(tx)?;
            // Every server's scheduler and readiness waiters look again.
            cluster::notify_changed(tx)?;
            Ok(value)
        })
    }
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
pub(super) fn describe(e: &::postgres::Error) -> String {
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

/// `url` with any password replaced by `***`, in the URL form (`//user:secret@host`,
/// `?password=secret`) and the key/value form (`password=secret`, quoted or not).
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_pairs(url);
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{hosts}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    let query: String = match query {
        Some(query) => {
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some(("password", _)) => "password=***".to_string(),
                    _ => pair.to_string(),
                })
                .collect();
            format!("?{}", pairs.join("&"))
        }
        None => String::new(),
    };
    format!("{scheme}://{authority}{path}{query}")
}

/// The key/value form with the value of `password` replaced; a quoted value may hold
/// spaces and escaped quotes, so it is skipped to its closing quote.
fn redact_pairs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("password") {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let after_key = from["password".len()..].trim_start();
        let at_word_start = before.is_empty() || before.ends_with(char::is_whitespace);
        match after_key.strip_prefix('=') {
            Some(value) if at_word_start => {
                out.push_str("password=***");
                let value = value.trim_start();
                rest = match value.strip_prefix('\'') {
                    Some(quoted) => {
                        let mut escaped = false;
                        let end = quoted
                            .char_indices()
                            .find(|&(_, c)| {
                                let close = c == '\'' && !escaped;
                                escaped = c == '\\' && !escaped;
                                close
                            })
                            .map_or(quoted.len(), |(i, _)| i + 1);
                        &quoted[end..]
                    }
                    None => &value[value.find(char::is_whitespace).unwrap_or(value.len())..],
                };
            }
            _ => {
                out.push_str("password");
                rest = &from["password".len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Passes a transition's outcome through, telling every server when the row changed.
fn changed(did: bool, tx: &mut Transaction<'_>, id: i64) -> Result<bool, StoreError> {
    if did {
        cluster::notify_run(tx, id)?;
    }
    Ok(did)
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

impl Store for PgStore {
    fn claim_lease(
        &self,
        claimant: &Claimant,
        now: Timestamp,
        ttl: SignedDuration,
        dead_owner: Option<&LeaseRow>,
    ) -> Result<ClaimOutcome, StoreError> {
        let now_ms = to_ms(now);
        let expires_ms = now_ms.saturating_add(ms(ttl));
        let dead = dead_owner.and_then(|row| Some((row.epoch, row.owner.as_ref()?)));
        let dead_epoch = dead.map(|(epoch, _)| epoch);
        let dead_server = dead.map(|(_, o)| o.server_id.as_str());
        let dead_pid = dead.map(|(_, o)| i64::from(o.pid));
        let dead_identity = dead.map(|(_, o)| o.start_identity.as_str());
        self.write(None, |tx| {
            // One compare-and-set statement, as in SQLite: a host's first claim inserts
            // its row at epoch 1; later claims take a released, expired or proven-dead
            // row (matched whole) and bump the epoch. The conflicting row is locked
            // before the condition is evaluated, so two claimants cannot both win.
            let epoch: Option<i64> = tx
                .query_opt(
                    "INSERT INTO hosts AS h (machine_id, epoch, server_id, token_hash, pid,
                         start_identity, expires_at_ms, claimed_at_ms, renewed_at_ms)
                     VALUES ($1, 1, $2, $3, $4, $5, $6, $7, $7)
                     ON CONFLICT (machine_id) DO UPDATE
                     SET epoch = h.epoch + 1, server_id = EXCLUDED.server_id,
                         token_hash = EXCLUDED.token_hash, pid = EXCLUDED.pid,
                         start_identity = EXCLUDED.start_identity,
                         expires_at_ms = EXCLUDED.expires_at_ms,
                         claimed_at_ms = EXCLUDED.claimed_at_ms,
                         renewed_at_ms = EXCLUDED.renewed_at_ms
                     WHERE h.server_id IS NULL OR h.expires_at_ms <= $7
                        OR (h.epoch = $8 AND h.server_id = $9 AND h.pid = $10
                            AND h.start_identity = $11)
                     RETURNING epoch",
                    &[
                        &self.machine_id,
                        &claimant.server_id,
                        &claimant.token_hash,
                        &i64::from(claimant.pid),
                        &claimant.start_identity.as_str(),
                        &expires_ms,
                        &now_ms,
                        &dead_epoch,
                        &dead_server,
                        &dead_pid,
                        &dead_identity,
                    ],
                )?
                .map(|row| row.try_get(0))
                .transpose()?;
            Ok(match epoch {
                Some(epoch) => ClaimOutcome::Claimed(HeldLease {
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
        let now_ms = to_ms(now);
        let expires_ms = now_ms.saturating_add(ms(ttl));
        let c = &lease.claimant;
        self.write(None, |tx| {
            // Deliberately no `expires_at_ms > now`: an owner that slept past its expiry
            // re-arms its own lease. Identity and token are the fence.
            let renewed: Option<i64> = tx
                .query_opt(
                    "UPDATE hosts SET expires_at_ms = $1, renewed_at_ms = $2
                     WHERE machine_id = $3 AND epoch = $4 AND server_id = $5
                       AND token_hash = $6 AND pid = $7 AND start_identity = $8
                     RETURNING expires_at_ms",
                    &[
                        &expires_ms,
                        &now_ms,
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

    fn release_lease(&self, lease: &HeldLease, now: Timestamp) -> Result<bool, StoreError> {
        let c = &lease.claimant;
        self.write(None, |tx| {
            let n = tx.execute(
                "UPDATE hosts
                 SET server_id = NULL, token_hash = NULL, pid = NULL, start_identity = NULL,
                     expires_at_ms = $1
                 WHERE machine_id = $2 AND epoch = $3 AND server_id = $4 AND token_hash = $5
                   AND pid = $6 AND start_identity = $7",
                &[
                    &to_ms(now),
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
        self.read(|c| read_lease(c, &self.machine_id))
    }

    fn job_insert(
        &self,
        spec: &JobSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError> {
        self.write_catalog(epoch, |tx| jobs::insert(tx, spec, now))
    }

    fn job_get(&self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        self.read(|c| jobs::get(c, name))
    }

    fn job_list(&self) -> Result<Vec<StoredJob>, StoreError> {
        self.read(jobs::list)
    }

    fn job_update(
        &self,
        spec: &JobSpec,
        schedule_changed: bool,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError> {
        self.write_catalog(epoch, |tx| jobs::update(tx, spec, schedule_changed, now))
    }

    fn job_remove(&self, name: &str, epoch: i64) -> Result<StoredJob, StoreError> {
        self.write_catalog(epoch, |tx| jobs::remove(tx, name))
    }

    fn apply(&self, changes: &Changes, now: Timestamp, epoch: i64) -> Result<(), StoreError> {
        self.write_catalog(epoch, |tx| {
            for spec in &changes.create_services {
                services::insert(tx, spec, now)?;
            }
            for spec in &changes.update_services {
                services::update(tx, spec)?;
            }
            for name in &changes.remove_jobs {
                jobs::remove(tx, name)?;
            }
            for (spec, schedule_changed) in &changes.update_jobs {
                jobs::update(tx, spec, *schedule_changed, now)?;
            }
            for spec in &changes.create_jobs {
                jobs::insert(tx, spec, now)?;
            }
            for name in &changes.remove_services {
                services::remove(tx, name)?;
            }
            Ok(())
        })
    }

    fn run_admit(
        &self,
        new: &NewRun,
        log_dir: &Path,
        plan: PlanFn<'_>,
        epoch: i64,
    ) -> Result<Admission, StoreError> {
        let admit = |tx: &mut Transaction<'_>| {
            let mut admission = runs::admit(tx, new, log_dir, plan, epoch)?;
            cluster::notify_run(tx, admission.run.id)?;
            if new.machine_id.is_empty() && admission.plan.is_some() {
                // Queued for any host: the host that claims it starts it, with the plan
                // kept on the row.
                admission.plan = None;
                cluster::notify_queued(tx)?;
            }
            Ok(admission)
        };
        match new.fence {
            Fence::Host => self.write(Some(epoch), admit),
            Fence::Leader => self.write_led(epoch, admit),
        }
    }

    fn run_get(&self, id: i64) -> Result<Option<Run>, StoreError> {
        self.read(|c| runs::get(c, id))
    }

    fn run_list(&self, filter: &RunFilter) -> Result<Vec<Run>, StoreError> {
        self.read(|c| runs::list(c, filter))
    }

    fn run_counts(&self) -> Result<Vec<RunCount>, StoreError> {
        self.read(runs::counts)
    }

    fn runs_active(&self, machine_id: &str) -> Result<Vec<ActiveRun>, StoreError> {
        self.read(|c| runs::active(c, machine_id))
    }

    fn run_settle(&self, id: i64, end: &RunEnd, epoch: i64) -> Result<bool, StoreError> {
        self.write(Some(epoch), |tx| {
            changed(runs::settle(tx, id, end)?, tx, id)
        })
    }

    fn run_settle_queued(&self, id: i64, end: &RunEnd, epoch: i64) -> Result<bool, StoreError> {
        self.write(Some(epoch), |tx| {
            changed(runs::settle_queued(tx, id, end)?, tx, id)
        })
    }

    fn run_settle_all(&self, ends: &[(i64, RunEnd)], epoch: i64) -> Result<Vec<i64>, StoreError> {
        self.write(Some(epoch), |tx| {
            let mut settled = Vec::new();
            for (id, end) in ends {
                if changed(runs::settle(tx, *id, end)?, tx, *id)? {
                    settled.push(*id);
                }
            }
            Ok(settled)
        })
    }

    fn run_request_cancel(&self, id: i64, now: Timestamp, epoch: i64) -> Result<(), StoreError> {
        self.write(Some(epoch), |tx| runs::request_cancel(tx, id, now))
    }

    fn runs_owed(&self, machine_id: &str) -> Result<Vec<Run>, StoreError> {
        self.read(|c| runs::owed(c, machine_id))
    }

    fn run_resolve(
        &self,
        id: i64,
        resolution: &str,
        now: Timestamp,
        epoch: i64,
    ) -> Result<bool, StoreError> {
        self.write(Some(epoch), |tx| {
            changed(runs::resolve(tx, id, resolution, now)?, tx, id)
        })
    }

    fn run_land(&self, id: i64, now: Timestamp, epoch: i64) -> Result<bool, StoreError> {
        self.write(Some(epoch), |tx| changed(runs::land(tx, id, now)?, tx, id))
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn lead(
        &self,
        lease: &HeldLease,
        now: Timestamp,
        ttl: SignedDuration,
    ) -> Result<Option<i64>, StoreError> {
        cluster::lead(self, lease, now, ttl)
    }

    fn resign(&self, lease: &HeldLease, epoch: i64) -> Result<(), StoreError> {
        cluster::resign(self, lease, epoch)
    }

    fn leader(&self) -> Result<Option<LeaderRow>, StoreError> {
        cluster::leader(self)
    }

    fn hosts(&self) -> Result<Vec<HostRow>, StoreError> {
        cluster::hosts(self)
    }

    fn runs_claim(
        &self,
        host: &ClaimingHost<'_>,
        limit: u32,
        epoch: i64,
    ) -> Result<Vec<MonitorPlan>, StoreError> {
        cluster::claim(self, host, limit, epoch)
    }

    fn settle_lost_hosts(
        &self,
        cutoff: Timestamp,
        now: Timestamp,
        epoch: i64,
    ) -> Result<Vec<i64>, StoreError> {
        cluster::settle_lost_hosts(self, cutoff, now, epoch)
    }

    fn runs_owed_by_lost_hosts(&self, cutoff: Timestamp) -> Result<Vec<Run>, StoreError> {
        cluster::owed_by_lost_hosts(self, cutoff)
    }

    fn listen(&self, wake: Box<dyn Fn(Wake) -> bool + Send>) -> Result<(), StoreError> {
        cluster::listen(self, wake)
    }

    fn service_list(&self) -> Result<Vec<StoredService>, StoreError> {
        self.read(services::list)
    }

    fn service_insert(
        &self,
        spec: &ServiceSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredService, StoreError> {
        self.write_catalog(epoch, |tx| services::insert(tx, spec, now))
    }

    fn service_remove(&self, name: &str, epoch: i64) -> Result<StoredService, StoreError> {
        self.write_catalog(epoch, |tx| services::remove(tx, name))
    }

    fn service_set_restarting(
        &self,
        name: &str,
        since: Option<Timestamp>,
        epoch: i64,
    ) -> Result<(), StoreError> {
        self.write(Some(epoch), |tx| {
            services::set_restarting(tx, name, since)?;
            cluster::notify_changed(tx)
        })
    }

    fn hold_list(&self) -> Result<Vec<StoredHold>, StoreError> {
        self.read(services::holds)
    }

    fn hold_upsert(&self, hold: &StoredHold, epoch: i64) -> Result<StoredHold, StoreError> {
        self.write(Some(epoch), |tx| {
            let hold = services::hold_upsert(tx, hold)?;
            cluster::notify_changed(tx)?;
            Ok(hold)
        })
    }

    fn hold_remove(&self, name: &str, epoch: i64) -> Result<StoredHold, StoreError> {
        self.write(Some(epoch), |tx| {
            let hold = services::hold_remove(tx, name)?;
            cluster::notify_changed(tx)?;
            Ok(hold)
        })
    }
}

/// The monitor's writes. Not fenced by the server's epoch: the monitor is the authority
/// on its own run, whichever server is current; the status guards keep them exactly-once.
impl RunRecorder for PgStore {
    fn mark_running(
        &self,
        run_id: i64,
        monitor_pid: u32,
        monitor_identity: &StartIdentity,
        started_at: Timestamp,
    ) -> Result<bool, StoreError> {
        self.write(None, |tx| {
            let marked = runs::mark_running(tx, run_id, monitor_pid, monitor_identity, started_at)?;
            changed(marked, tx, run_id)
        })
    }

    fn finish(&self, run_id: i64, end: &RunEnd) -> Result<bool, StoreError> {
        self.write(None, |tx| {
            // Decided here, in the same transaction, with the services locked: the
            // outcome cannot race the restart's start or end.
            let job_id = runs::job_of(tx, run_id)?;
            let restarting = if end.status == RunStatus::Failed {
                services::restarting_dependencies(tx, job_id, services::Lock::Share)?
            } else {
                Vec::new()
            };
            let end = super::rows::monitor_end(end, restarting.first().map(String::as_str));
            let finished = runs::finish(tx, run_id, &end)?;
            changed(finished, tx, run_id)
        })
    }

    fn run(&self, run_id: i64) -> Result<Option<Run>, StoreError> {
        self.read(|c| runs::get(c, run_id))
    }

    fn restarting_service(&self, run_id: i64) -> Result<Option<String>, StoreError> {
        self.read(|c| {
            let job_id = runs::job_of(c, run_id)?;
            Ok(
                services::restarting_dependencies(c, job_id, services::Lock::Unlocked)?
                    .into_iter()
                    .next(),
            )
        })
    }
}
