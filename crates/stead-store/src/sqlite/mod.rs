//! The SQLite ledger: `DIR/stead.db`, in WAL mode with full sync.
//!
//! `synchronous=FULL` because in WAL mode `NORMAL` can lose the last commits on power
//! loss, and a run must be on the ledger before it starts. Other processes (per-run
//! monitors, `stead doctor`) open the same file, so every connection sets a busy timeout
//! and every writing transaction begins `IMMEDIATE`. A file that is not a SQLite database
//! is reported and never touched.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::Refusal;
use jiff::{SignedDuration, Timestamp};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use stead_core::clock::{from_ms, to_ms};
use stead_core::lease::{ClaimOutcome, Claimant, HeldLease, LeaseOwner, LeaseRow, RenewOutcome};
use stead_core::locator::LedgerRef;
use stead_sys::identity::StartIdentity;

mod checkpoints;
mod jobs;
mod notify;
mod retention;
mod runs;
mod services;
mod sleeps;
#[cfg(test)]
mod tests_runs;

use crate::backend::sealed::{Backend, Part, relaxed};
use crate::backend::{Announce, Guard, Steps};
use crate::{Lease, Store, StoreError};

/// A connection the steps run on (a write transaction derefs to it): each concern's
/// steps are in the file that holds their SQL (`jobs.rs`, `services.rs`, `runs.rs`,
/// `retention.rs`, `notify.rs`; see `backend.rs`).
pub struct SqliteTx<'t>(pub &'t Connection);

impl Steps for SqliteTx<'_> {
    /// One writer at a time holds the whole file: admissions already take turns.
    fn lock_job(&mut self, _job_id: i64) -> Result<(), StoreError> {
        Ok(())
    }

    /// Nobody else shares this ledger: nobody to tell.
    fn announce(&mut self, _what: Announce) -> Result<(), StoreError> {
        Ok(())
    }
}

impl crate::rows::Cells for rusqlite::Row<'_> {
    fn int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        Ok(self.get(i)?)
    }

    fn text(&self, i: usize) -> Result<Option<String>, StoreError> {
        Ok(self.get(i)?)
    }
}

/// Append-only: a released schema is never edited, only followed by a new migration.
/// The schema version is the number of migrations applied (`PRAGMA user_version`).
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_server_lease.sql"),
    include_str!("migrations/002_jobs_and_runs.sql"),
    include_str!("migrations/003_resolutions.sql"),
    include_str!("migrations/004_services_and_holds.sql"),
    include_str!("migrations/005_job_ids_never_reused.sql"),
    include_str!("migrations/006_ended_processes.sql"),
    include_str!("migrations/007_retention.sql"),
    include_str!("migrations/008_retries_queues_notify.sql"),
    include_str!("migrations/009_in_flight_by_job_and_host.sql"),
    include_str!("migrations/010_sleeps_and_overdue.sql"),
    include_str!("migrations/011_checkpoints_and_steps.sql"),
    include_str!("migrations/012_run_waits.sql"),
];

/// Prepared statements kept per connection (rusqlite keeps 16), enough for every
/// statement of the paths a run takes, so none is parsed twice.
const STATEMENT_CACHE: usize = 96;

/// How long a statement waits for another process's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Waits for another process's lock, as SQLite's own busy handler would, but in shorter
/// steps: its default sleeps up to 100 ms at a time, long past the moment a lock held for
/// well under a millisecond came free. The waits begin at a quarter of a millisecond and
/// double from one to [`BUSY_STEP_MOST`], so a crowd of writers (a burst's monitors
/// going around a frozen server) backs off rather than waking a thousand times a second
/// each. `tries` is how many came before; answers whether to try again (for at most
/// [`BUSY_TIMEOUT`] in all).
fn wait_busy(tries: i32) -> bool {
    match busy_step(tries) {
        Some(pause) => {
            std::thread::sleep(pause);
            true
        }
        None => false,
    }
}

/// The longest single wait for a lock.
const BUSY_STEP_MOST: Duration = Duration::from_millis(16);

/// The first pauses, in microseconds: twenty of a quarter millisecond (a lock held for
/// a commit is free again within them), then doubling from 1 ms up to [`BUSY_STEP_MOST`].
const BUSY_RAMP_US: [u64; 24] = [
    250, 250, 250, 250, 250, 250, 250, 250, 250, 250, //
    250, 250, 250, 250, 250, 250, 250, 250, 250, 250, //
    1_000, 2_000, 4_000, 8_000,
];

/// The pause before try `tries + 1`: the ramp, then [`BUSY_STEP_MOST`] each, until about
/// [`BUSY_TIMEOUT`] has passed in all.
fn busy_step(tries: i32) -> Option<Duration> {
    let tries = usize::try_from(tries).ok()?;
    if let Some(us) = BUSY_RAMP_US.get(tries) {
        return Some(Duration::from_micros(*us));
    }
    let ramp = Duration::from_micros(BUSY_RAMP_US.iter().sum());
    let most_tries = BUSY_TIMEOUT
        .saturating_sub(ramp)
        .as_millis()
        .div_ceil(BUSY_STEP_MOST.as_millis());
    (((tries - BUSY_RAMP_US.len()) as u128) < most_tries).then_some(BUSY_STEP_MOST)
}

/// The SQLite ledger.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    /// The file's device and inode when it was opened.
    file: Option<(u64, u64)>,
    conn: Mutex<Connection>,
}

/// The device and inode of the file at `path`.
fn file_id(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).map(|m| (m.dev(), m.ino()))
}

/// Switches a connection to WAL and returns the journal mode it ended in. The switch of a
/// brand-new file needs an exclusive lock, and SQLite answers a starter racing another
/// with SQLITE_BUSY at once instead of calling the busy handler: retried here for as
/// long as the busy timeout would have waited.
fn wal_mode(conn: &Connection) -> rusqlite::Result<String> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

impl SqliteStore {
    /// Opens (creating if absent) and migrates the ledger at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open_err = |source: rusqlite::Error| classify(path, source);
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_err)?;
        conn.busy_handler(Some(wait_busy)).map_err(open_err)?;
        // Every statement a run's admission, start and end take stays prepared: parsing
        // and planning them again cost more than executing them.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // Closing the last connection would checkpoint the WAL under an exclusive lock; a
        // server frozen while exiting would then block its successor's first write. Let
        // the WAL be checkpointed by commits (auto-checkpoint) instead.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(open_err)?;
        // A new ledger keeps a free-page map from its first page on, so that pruning can
        // give space back (`incremental_vacuum`); set before anything writes the file
        // (switching to WAL does). On a file that has pages already the pragma is not a
        // no-op: it rewrites the header, a durable commit that every monitor would pay on
        // its way to exec. So only a file without pages gets it.
        let pages: i64 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .map_err(open_err)?;
        if pages == 0 {
            conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")
                .map_err(open_err)?;
        }
        // Reading the journal mode reads page 1: a file that is not a database fails here,
        // before anything could write to it.
        let mode = wal_mode(&conn).map_err(open_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Migrate {
                path: path.to_path_buf(),
                detail: format!("journal mode is {mode}, WAL could not be enabled"),
            });
        }
        conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .map_err(open_err)?;
        migrate(path, &mut conn)?;
        restrict_permissions(path);
        Ok(Self {
            path: path.to_path_buf(),
            file: file_id(path).ok(),
            conn: Mutex::new(conn),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn ledger_name(&self) -> String {
        self.path.display().to_string()
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the connection leaves SQLite itself consistent (an open
        // transaction is rolled back when its guard drops), so poisoning is not fatal.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Brings the schema up to date. Several processes may open a new ledger at once (racing
/// starters, monitors), so each step reads the version and applies the next migration
/// inside one `BEGIN IMMEDIATE` transaction: the version cannot move between the read
/// and the write. (A migration library that reads the version first and then opens a
/// deferred transaction lets two starters both apply migration 1.)
fn migrate(path: &Path, conn: &mut Connection) -> Result<(), StoreError> {
    let known = schema_version_count();
    let failed = |detail: String| StoreError::Migrate {
        path: path.to_path_buf(),
        detail,
    };
    // Every monitor opens the ledger on a run's way to exec: read the version without a
    // write lock first, and take one only when there is something to migrate.
    let current: usize = conn
        .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
        .map_err(|e| classify(path, e))? as usize;
    if current == known {
        return Ok(());
    }
    loop {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| classify(path, e))?;
        let found: usize = tx
            .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .map_err(|e| classify(path, e))? as usize;
        if found > known {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found,
                known,
            });
        }
        if found == known {
            return Ok(());
        }
        tx.execute_batch(MIGRATIONS[found])
            .map_err(|e| failed(format!("migration {}: {e}", found + 1)))?;
        tx.pragma_update(None, "user_version", (found + 1) as i64)
            .map_err(|e| failed(e.to_string()))?;
        tx.commit().map_err(|e| failed(e.to_string()))?;
        tracing::info!(path = %path.display(), version = found + 1, "migrated the ledger");
    }
}

/// The schema version this build writes.
pub fn schema_version_count() -> usize {
    MIGRATIONS.len()
}

fn restrict_permissions(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600));
    }
}

/// Maps "this is not a database" errors to [`StoreError::Corrupt`].
fn classify(path: &Path, source: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    match source.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: source.to_string(),
        },
        _ => StoreError::Open {
            path: path.to_path_buf(),
            detail: source.to_string(),
        },
    }
}

fn ms(d: SignedDuration) -> i64 {
    d.as_millis().try_into().unwrap_or(i64::MAX)
}

fn read_lease(conn: &Connection) -> rusqlite::Result<LeaseRow> {
    conn.query_row(
        "SELECT epoch, server_id, token_hash, pid, start_identity, expires_at_ms
         FROM server_lease WHERE id = 1",
        [],
        |r| {
            let server_id: Option<String> = r.get(1)?;
            let owner = match server_id {
                Some(server_id) => Some(LeaseOwner {
                    server_id,
                    token_hash: r.get(2)?,
                    pid: r.get(3)?,
                    start_identity: StartIdentity::from_stored(r.get::<_, String>(4)?),
                }),
                None => None,
            };
            Ok(LeaseRow {
                epoch: r.get(0)?,
                owner,
                expires_at: from_ms(r.get(5)?),
            })
        },
    )
}

impl Lease for SqliteStore {
    fn claim_lease(
        &self,
        claimant: &Claimant,
        now: Timestamp,
        ttl: SignedDuration,
        dead_owner: Option<&LeaseRow>,
    ) -> Result<ClaimOutcome, StoreError> {
        let conn = self.conn();
        let now_ms = to_ms(now);
        let expires_ms = now_ms.saturating_add(ms(ttl));
        let dead = dead_owner.and_then(|row| Some((row.epoch, row.owner.as_ref()?)));
        // One compare-and-set statement: the check and the takeover cannot be split by a
        // pause or by another claimant. A dead owner's row is matched whole (epoch and
        // identity), so it cannot take a row that moved on since the caller judged it.
        let epoch: Option<i64> = conn
            .query_row(
                "UPDATE server_lease
                 SET epoch = epoch + 1, server_id = ?1, token_hash = ?2, pid = ?3,
                     start_identity = ?4, expires_at_ms = ?5, claimed_at_ms = ?6,
                     renewed_at_ms = ?6
                 WHERE id = 1 AND (server_id IS NULL OR expires_at_ms <= ?6
                    OR (epoch = ?7 AND server_id = ?8 AND pid = ?9 AND start_identity = ?10))
                 RETURNING epoch",
                params![
                    claimant.server_id,
                    claimant.token_hash,
                    claimant.pid,
                    claimant.start_identity.as_str(),
                    expires_ms,
                    now_ms,
                    dead.map(|(epoch, _)| epoch),
                    dead.map(|(_, o)| o.server_id.as_str()),
                    dead.map(|(_, o)| o.pid),
                    dead.map(|(_, o)| o.start_identity.as_str()),
                ],
                |r| r.get(0),
            )
            .optional()?;
        Ok(match epoch {
            Some(epoch) => ClaimOutcome::Claimed(HeldLease {
                claimant: claimant.clone(),
                epoch,
                expires_at: from_ms(expires_ms),
            }),
            None => ClaimOutcome::Held(read_lease(&conn)?),
        })
    }

    fn renew_lease(
        &self,
        lease: &HeldLease,
        now: Timestamp,
        ttl: SignedDuration,
    ) -> Result<RenewOutcome, StoreError> {
        let conn = self.conn();
        let now_ms = to_ms(now);
        let expires_ms = now_ms.saturating_add(ms(ttl));
        let c = &lease.claimant;
        // Deliberately no `expires_at_ms > now`: an owner that slept past its expiry
        // re-arms its own lease. Identity and token are the fence.
        let renewed: Option<i64> = conn
            .query_row(
                "UPDATE server_lease SET expires_at_ms = ?1, renewed_at_ms = ?2
                 WHERE id = 1 AND epoch = ?3 AND server_id = ?4 AND token_hash = ?5
                   AND pid = ?6 AND start_identity = ?7
                 RETURNING expires_at_ms",
                params![
                    expires_ms,
                    now_ms,
                    lease.epoch,
                    c.server_id,
                    c.token_hash,
                    c.pid,
                    c.start_identity.as_str()
                ],
                |r| r.get(0),
            )
            .optional()?;
        Ok(match renewed {
            Some(expires) => RenewOutcome::Renewed {
                expires_at: from_ms(expires),
            },
            None => RenewOutcome::Superseded(read_lease(&conn)?),
        })
    }

    fn release_lease(&self, lease: &HeldLease, now: Timestamp) -> Result<bool, StoreError> {
        let conn = self.conn();
        let c = &lease.claimant;
        let n = conn.execute(
            "UPDATE server_lease
             SET server_id = NULL, token_hash = NULL, pid = NULL, start_identity = NULL,
                 expires_at_ms = ?1
             WHERE id = 1 AND epoch = ?2 AND server_id = ?3 AND token_hash = ?4
               AND pid = ?5 AND start_identity = ?6",
            params![
                to_ms(now),
                lease.epoch,
                c.server_id,
                c.token_hash,
                c.pid,
                c.start_identity.as_str()
            ],
        )?;
        Ok(n == 1)
    }

    fn lease_row(&self) -> Result<LeaseRow, StoreError> {
        Ok(read_lease(&self.conn())?)
    }
}

impl Store for SqliteStore {
    fn recorder(&self) -> &dyn crate::RunRecorder {
        self
    }

    fn ledger_ref(&self) -> LedgerRef {
        LedgerRef::Sqlite {
            path: self.path.clone(),
        }
    }

    fn in_place(&self) -> bool {
        match file_id(&self.path) {
            Ok(now) => self.file.is_none_or(|then| then == now),
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        }
    }
}

impl Backend for SqliteStore {
    type Tx<'t> = SqliteTx<'t>;

    fn read<T>(
        &self,
        f: &mut dyn FnMut(&mut SqliteTx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let conn = self.conn();
        f(&mut SqliteTx(&conn)).map_err(|e| e.on(&self.ledger_name()))
    }

    /// One `BEGIN IMMEDIATE` transaction. A fenced one first checks that the lease still
    /// carries the epoch: the write lock is held from the check to the commit, so no newer
    /// server can claim in between. (With one host, its server's lease epoch is also its
    /// leader epoch, and the whole database is one serialized writer: every guard is the
    /// lease check.)
    fn write<T>(
        &self,
        guard: Guard,
        f: &mut dyn FnMut(&mut SqliteTx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn();
        // In WAL mode, `synchronous=NORMAL` commits without syncing the WAL.
        let relaxed = guard == Guard::Mark;
        if relaxed {
            run_cached(&conn, "PRAGMA synchronous=NORMAL")
                .map_err(|e| StoreError::from(e).on(&self.ledger_name()))?;
        }
        let result = (|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            if let Guard::Host(epoch) | Guard::Leader(epoch) | Guard::Catalog(epoch) = guard {
                let current: i64 = tx
                    .prepare_cached("SELECT epoch FROM server_lease WHERE id = 1")?
                    .query_row([], |r| r.get(0))?;
                if current != epoch {
                    return Err(StoreError::Refused(Refusal::Fenced { epoch }));
                }
            }
            let value = f(&mut SqliteTx(&tx))?;
            tx.commit()?;
            Ok(value)
        })();
        if relaxed {
            // Every other write waits on the disk, whatever this one came to.
            if let Err(e) = run_cached(&conn, "PRAGMA synchronous=FULL") {
                return Err(StoreError::from(e).on(&self.ledger_name()));
            }
        }
        result.map_err(|e| e.on(&self.ledger_name()))
    }

    /// One `BEGIN IMMEDIATE` transaction with a `SAVEPOINT` per part. The lease's epoch
    /// is read once for every fenced part: the write lock holds it still to the commit.
    fn write_each<T>(
        &self,
        parts: &mut [Part<'_, Self, T>],
    ) -> Result<Vec<Result<T, StoreError>>, StoreError> {
        let mut conn = self.conn();
        let relaxed = relaxed::<Self, T>(parts);
        if relaxed {
            run_cached(&conn, "PRAGMA synchronous=NORMAL")
                .map_err(|e| StoreError::from(e).on(&self.ledger_name()))?;
        }
        // A part alone needs no savepoint: when it fails, nothing is committed.
        let alone = parts.len() == 1;
        let result = (|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut epoch = None;
            let mut answers = Vec::with_capacity(parts.len());
            for (guard, f) in parts.iter_mut() {
                if let Guard::Host(fence) | Guard::Leader(fence) | Guard::Catalog(fence) = *guard {
                    let current = match epoch {
                        Some(current) => current,
                        None => *epoch.insert(
                            tx.prepare_cached("SELECT epoch FROM server_lease WHERE id = 1")?
                                .query_row([], |r| r.get::<_, i64>(0))?,
                        ),
                    };
                    if current != fence {
                        answers.push(Err(StoreError::Refused(Refusal::Fenced { epoch: fence })));
                        continue;
                    }
                }
                if alone {
                    match f(&mut SqliteTx(&tx)) {
                        Ok(value) => answers.push(Ok(value)),
                        Err(e) => {
                            tx.rollback()?;
                            return Ok(vec![Err(e.on(&self.ledger_name()))]);
                        }
                    }
                    continue;
                }
                run_cached(&tx, "SAVEPOINT part")?;
                match f(&mut SqliteTx(&tx)) {
                    Ok(value) => {
                        run_cached(&tx, "RELEASE part")?;
                        answers.push(Ok(value));
                    }
                    Err(e) => {
                        tx.execute_batch("ROLLBACK TO part; RELEASE part")?;
                        answers.push(Err(e.on(&self.ledger_name())));
                    }
                }
            }
            tx.commit()?;
            Ok(answers)
        })();
        if relaxed && let Err(e) = run_cached(&conn, "PRAGMA synchronous=FULL") {
            return Err(StoreError::from(e).on(&self.ledger_name()));
        }
        result.map_err(|e: StoreError| e.on(&self.ledger_name()))
    }

    /// `PRAGMA incremental_vacuum(pages)`: the free pages pruning left go back to the file
    /// system, a bounded number at a time. A ledger created before retention existed has
    /// no free-page map (`auto_vacuum = NONE`), and only a `VACUUM` converts it: that
    /// rewrites the whole file, so it is done once, at the first prune that finds no run
    /// in flight (no monitor then waits on the ledger while it runs; this server admits
    /// nothing while it holds the connection).
    fn reclaim_space(&self, pages: u32) -> Result<(), StoreError> {
        let conn = self.conn();
        let result = (|| {
            let mode: i64 = conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
            if mode != AUTO_VACUUM_INCREMENTAL {
                let in_flight: i64 = conn.query_row(
                    "SELECT count(*) FROM runs WHERE status IN ('queued', 'running')",
                    [],
                    |r| r.get(0),
                )?;
                if in_flight == 0 {
                    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")?;
                    tracing::info!(path = %self.path.display(), "converted the ledger to incremental vacuum");
                }
                return Ok(());
            }
            // Stepped to the end: each step of this pragma gives back one page.
            let mut stmt = conn.prepare(&format!("PRAGMA incremental_vacuum({pages})"))?;
            let mut rows = stmt.query([])?;
            while rows.next()?.is_some() {}
            Ok(())
        })();
        result.map_err(|e: StoreError| e.on(&self.ledger_name()))
    }
}

/// Runs `sql`, one statement that answers no rows, prepared once per connection: the
/// statements every write transaction runs are not parsed again for each.
fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

/// `PRAGMA auto_vacuum`'s value for `INCREMENTAL`.
const AUTO_VACUUM_INCREMENTAL: i64 = 2;

/// The result of SQLite's integrity check on a ledger, opened read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Integrity {
    pub schema_version: usize,
    pub journal_mode: String,
    /// Empty when SQLite answered "ok".
    pub problems: Vec<String>,
}

/// Reads the lease row without writing to the ledger (for `stead doctor`).
pub fn read_lease_readonly(path: &Path) -> Result<LeaseRow, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| classify(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| classify(path, e))?;
    read_lease(&conn).map_err(|e| classify(path, e))
}

/// Runs `PRAGMA integrity_check` on the ledger without writing to it.
pub fn check_integrity(path: &Path) -> Result<Integrity, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| classify(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| classify(path, e))?;
    let journal_mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .map_err(|e| classify(path, e))?;
    let schema_version = conn
        .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
        .map_err(|e| classify(path, e))? as usize;
    let mut stmt = conn
        .prepare("PRAGMA integrity_check")
        .map_err(|e| classify(path, e))?;
    let rows: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .map_err(|e| classify(path, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| classify(path, e))?;
    let problems = if rows == ["ok"] { Vec::new() } else { rows };
    Ok(Integrity {
        schema_version,
        journal_mode,
        problems,
    })
}

#[cfg(test)]
mod tests {
    //! What only SQLite has: a file, its integrity, racing openers. The lease and every
    //! other behaviour through the trait are in the store contract (`contract/`).

    use super::*;

    #[test]
    fn a_busy_ledger_is_waited_for_in_short_steps_for_the_busy_timeout() {
        let steps: Vec<Duration> = (0..).map_while(busy_step).collect();
        assert_eq!(steps[0], Duration::from_micros(250));
        assert!(steps.windows(2).all(|w| w[0] <= w[1]), "{steps:?}");
        assert!(steps.iter().all(|s| *s <= BUSY_STEP_MOST));
        let total: Duration = steps.iter().sum();
        assert!(
            total >= BUSY_TIMEOUT && total < BUSY_TIMEOUT + Duration::from_millis(100),
            "{total:?}"
        );
    }

    #[test]
    fn a_part_refused_after_it_wrote_is_undone_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("stead.db")).unwrap();
        crate::contract::run_writes::a_part_refused_after_it_wrote_is_undone_alone(&store);
    }

    #[test]
    fn opening_a_ledger_that_has_pages_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stead.db");
        drop(SqliteStore::open(&path).unwrap());
        let counter = |path: &Path| -> i64 {
            // The header's file change counter moves with every commit.
            let bytes = std::fs::read(path).unwrap();
            i64::from(u32::from_be_bytes(bytes[24..28].try_into().unwrap()))
        };
        let store = SqliteStore::open(&path).unwrap();
        // Everything in the WAL is in the file once checkpointed.
        store
            .conn()
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .unwrap();
        let before = counter(&path);
        let wal_before = std::fs::metadata(path.with_extension("db-wal"))
            .unwrap()
            .len();
        let again = SqliteStore::open(&path).unwrap();
        assert_eq!(
            std::fs::metadata(path.with_extension("db-wal"))
                .unwrap()
                .len(),
            wal_before,
            "an open wrote to the WAL"
        );
        drop((again, store));
        assert_eq!(counter(&path), before);
    }

    fn auto_vacuum(path: &Path) -> i64 {
        Connection::open(path)
            .unwrap()
            .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_new_ledger_vacuums_incrementally_and_an_older_one_is_converted_once_idle() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("fresh.db");
        SqliteStore::open(&fresh).unwrap();
        assert_eq!(auto_vacuum(&fresh), AUTO_VACUUM_INCREMENTAL);

        // A ledger written before retention: no free-page map.
        let old = dir.path().join("old.db");
        Connection::open(&old)
            .unwrap()
            .execute_batch("PRAGMA auto_vacuum = NONE; CREATE TABLE before (x INTEGER);")
            .unwrap();
        let store = SqliteStore::open(&old).unwrap();
        assert_eq!(auto_vacuum(&old), 0);
        store
            .conn()
            .execute_batch(
                "INSERT INTO runs (job_id, job, trigger, idempotency_key, attempt, machine_id,
                    boot_id, status, created_at_ms, log_path, plan, epoch)
                 VALUES (1, 'a', 'on_demand', 'a#1', 1, 'm', 'b', 'running', 0, '', '{}', 1)",
            )
            .unwrap();
        // Not while a run is in flight: its monitor would wait on the rewrite.
        store.reclaim_space(10).unwrap();
        assert_eq!(auto_vacuum(&old), 0);
        store.conn().execute_batch("DELETE FROM runs").unwrap();
        store.reclaim_space(10).unwrap();
        assert_eq!(auto_vacuum(&old), AUTO_VACUUM_INCREMENTAL);
        // From then on, each call gives back a bounded number of pages.
        store
            .conn()
            .execute_batch(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                 INSERT INTO runs (job_id, job, trigger, idempotency_key, attempt, machine_id,
                    boot_id, status, created_at_ms, ended_at_ms, log_path, plan, epoch)
                 SELECT 1, 'a', 'on_demand', 'a#' || i, 1, 'm', 'b', 'succeeded', 0, 1, '',
                    printf('%.4000c', 'x'), 1 FROM n;
                 DELETE FROM runs;",
            )
            .unwrap();
        let free = || -> i64 {
            store
                .conn()
                .query_row("PRAGMA freelist_count", [], |r| r.get(0))
                .unwrap()
        };
        let before = free();
        assert!(before > 100, "{before} free pages");
        store.reclaim_space(10).unwrap();
        assert_eq!(free(), before - 10);
        store.reclaim_space(100_000).unwrap();
        assert_eq!(free(), 0);
    }

    fn store() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("stead.db")).unwrap();
        (dir, store)
    }

    #[test]
    fn a_file_that_is_not_a_database_is_reported_and_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stead.db");
        let garbage = b"this is not a database, it is a diary entry\n".repeat(200);
        std::fs::write(&path, &garbage).unwrap();
        let err = SqliteStore::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("changed nothing"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), garbage);
        assert!(matches!(
            check_integrity(&path).unwrap_err(),
            StoreError::Corrupt { .. }
        ));
    }

    #[test]
    fn starters_racing_to_create_the_ledger_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stead.db");
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|scope| {
            let opened: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        barrier.wait();
                        SqliteStore::open(&path).map(drop)
                    })
                })
                .collect();
            for handle in opened {
                handle.join().unwrap().unwrap();
            }
        });
        let report = check_integrity(&path).unwrap();
        assert_eq!(report.schema_version, schema_version_count());
    }

    #[test]
    fn integrity_check_passes_on_a_fresh_ledger() {
        let (dir, _store) = store();
        let report = check_integrity(&dir.path().join("stead.db")).unwrap();
        assert_eq!(report.problems, Vec::<String>::new());
        assert_eq!(report.journal_mode, "wal");
        assert_eq!(report.schema_version, schema_version_count());
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let (dir, store) = store();
        store
            .conn()
            .execute_batch("PRAGMA user_version = 999")
            .unwrap();
        drop(store);
        let err = SqliteStore::open(&dir.path().join("stead.db")).unwrap_err();
        assert!(
            matches!(err, StoreError::TooNew { found: 999, .. }),
            "{err}"
        );
    }
}
