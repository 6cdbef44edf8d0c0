//! Reading and filling a stopped or running server's ledger (`DIR/stead.db`) directly,
//! with SQLite, as no stead command does: counting ended runs while a server works
//! (read-only), and bulk-inserting finished runs into the ledger of a stopped server.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

/// How long a statement waits for a lock held by the server or a monitor.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The statuses a run never leaves (`docs/ledger.md`).
const TERMINAL: &str = "('succeeded', 'failed', 'cancelled', 'interrupted', 'skipped')";

pub fn ledger(dir: &Path) -> std::path::PathBuf {
    dir.join("stead.db")
}

/// A read-only connection to the ledger of the state directory `dir`.
pub fn read_only(dir: &Path) -> anyhow::Result<Connection> {
    let path = ledger(dir);
    let conn = Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("opening {} read-only", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(conn)
}

/// Runs that have ended, and how many of them succeeded.
pub fn ended(conn: &Connection) -> anyhow::Result<(u64, u64)> {
    let (ended, succeeded): (i64, i64) = conn.query_row(
        &format!(
            "SELECT count(*), coalesce(sum(status = 'succeeded'), 0)
             FROM runs WHERE status IN {TERMINAL}"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok((u64::try_from(ended)?, u64::try_from(succeeded)?))
}

/// A run's `created_at_ms` and `started_at_ms`, if it has started.
pub fn run_times(conn: &Connection, id: i64) -> anyhow::Result<Option<(i64, i64)>> {
    Ok(conn
        .query_row(
            "SELECT created_at_ms, started_at_ms FROM runs
             WHERE id = ?1 AND started_at_ms IS NOT NULL",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// The newest run of a job, which the inserted runs copy.
struct Newest {
    job_id: i64,
    machine_id: String,
    boot_id: String,
    epoch: i64,
    id: i64,
    created_ms: i64,
}

/// Inserts `n` succeeded on-demand runs of the job `job` into the ledger of the state
/// directory `dir`, in one transaction. The server must be stopped. The rows copy the
/// machine, boot and epoch of the newest run already there (so there must be one), and
/// are spread one per second over the `n` seconds before that run.
pub fn fill(dir: &Path, job: &str, n: u64) -> anyhow::Result<()> {
    let path = ledger(dir);
    let mut conn =
        Connection::open(&path).with_context(|| format!("opening {}", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let tx = conn.transaction()?;
    let newest = tx
        .query_row(
            "SELECT job_id, machine_id, boot_id, epoch, id, created_at_ms FROM runs
             WHERE job = ?1 ORDER BY id DESC LIMIT 1",
            [job],
            |r| {
                Ok(Newest {
                    job_id: r.get(0)?,
                    machine_id: r.get(1)?,
                    boot_id: r.get(2)?,
                    epoch: r.get(3)?,
                    id: r.get(4)?,
                    created_ms: r.get(5)?,
                })
            },
        )
        .optional()?
        .with_context(|| format!("no run of job {job} to copy into {}", path.display()))?;
    let logs = dir.join("logs/runs");
    {
        let mut insert = tx.prepare(
            "INSERT INTO runs (id, job_id, job, trigger, scheduled_at_ms, idempotency_key,
                 attempt, machine_id, boot_id, status, exit_code, created_at_ms,
                 started_at_ms, ended_at_ms, log_path, plan, epoch)
             VALUES (?1, ?2, ?3, 'on_demand', NULL, ?4, 1, ?5, ?6, 'succeeded', 0, ?7,
                 ?8, ?9, ?10, '{}', ?11)",
        )?;
        for i in 0..n as i64 {
            let id = newest.id + 1 + i;
            let created = newest.created_ms - (n as i64 - i) * 1000;
            insert.execute(params![
                id,
                newest.job_id,
                job,
                format!("{job}#{id}"),
                newest.machine_id,
                newest.boot_id,
                created,
                created + 3,
                created + 5,
                logs.join(format!("{id}.log")).to_string_lossy(),
                newest.epoch,
            ])?;
        }
    }
    tx.commit()?;
    let total: i64 = conn.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))?;
    if total < n as i64 {
        bail!("the ledger holds {total} runs after inserting {n}");
    }
    Ok(())
}
