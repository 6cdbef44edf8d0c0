//! Reading and filling a stopped or running server's ledger (`DIR/stead.db`) directly,
//! with SQLite, as no stead command does: counting ended runs while a server works
//! (read-only), and bulk-inserting finished runs into the ledger of a stopped server.
//! [`Backend`] and [`Reader`] let a figure run on either ledger: this SQLite file or a
//! PostgreSQL database (read through [`crate::pg`]).

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

/// Where a figure's server keeps its ledger.
#[derive(Debug, Clone, Copy)]
pub enum Backend<'a> {
    /// `DIR/stead.db`, the server's own.
    Sqlite,
    /// The PostgreSQL database at this URL, named to the server by `STEAD_STORE_URL`.
    Postgres(&'a str),
}

impl<'a> Backend<'a> {
    /// The environment of `stead status` when it starts the figure's server.
    pub fn server_env(self) -> Vec<(&'static str, &'a str)> {
        match self {
            Self::Sqlite => Vec::new(),
            Self::Postgres(url) => vec![("STEAD_STORE_URL", url)],
        }
    }

    /// The state directory name of the figure whose SQLite directory is `base`: the same
    /// on SQLite, `base` + `p` on PostgreSQL, so both sides can run under one root.
    pub fn dir_name(self, base: &str) -> String {
        match self {
            Self::Sqlite => base.to_string(),
            Self::Postgres(_) => format!("{base}p"),
        }
    }

    /// A reader of the ledger of the server of the state directory `dir`.
    pub fn reader(self, dir: &Path) -> anyhow::Result<Reader> {
        Ok(match self {
            Self::Sqlite => Reader::Sqlite(read_only(dir)?),
            Self::Postgres(url) => Reader::Postgres(Box::new(crate::pg::connect(url)?)),
        })
    }
}

/// A connection to a running server's ledger, of either backend.
pub enum Reader {
    Sqlite(Connection),
    Postgres(Box<postgres::Client>),
}

impl Reader {
    /// Runs that have ended, and how many of them succeeded.
    pub fn ended(&mut self) -> anyhow::Result<(u64, u64)> {
        match self {
            Self::Sqlite(conn) => ended(conn),
            Self::Postgres(client) => crate::pg::ended(client),
        }
    }

    /// Runs running now.
    pub fn running(&mut self) -> anyhow::Result<u64> {
        match self {
            Self::Sqlite(conn) => {
                let n: i64 = conn.query_row(
                    "SELECT count(*) FROM runs WHERE status = 'running'",
                    [],
                    |r| r.get(0),
                )?;
                Ok(u64::try_from(n)?)
            }
            Self::Postgres(client) => crate::pg::running(client),
        }
    }

    /// What the server and its monitors hold of the ledger now: on PostgreSQL stead's
    /// connections to the database, on SQLite the processes that have the file open.
    pub fn held(&mut self, dir: &Path) -> anyhow::Result<u64> {
        match self {
            Self::Sqlite(_) => Ok(crate::proc::holding(&dir.join("stead.db"))),
            Self::Postgres(client) => crate::pg::stead_connections(client),
        }
    }

    /// A run's `created_at_ms` and `started_at_ms`, if it has started.
    pub fn run_times(&mut self, id: i64) -> anyhow::Result<Option<(i64, i64)>> {
        match self {
            Self::Sqlite(conn) => run_times(conn, id),
            Self::Postgres(client) => crate::pg::run_times(client, id),
        }
    }
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

/// Starts the server of `dir` with `env` and has it run a job `job` (`true`, any number
/// at once) once: the run [`fill`] copies.
pub fn with_one_run(
    stead: &crate::stead::Stead,
    dir: &Path,
    env: &[(&str, &str)],
    job: &str,
) -> anyhow::Result<()> {
    stead.status(dir, env)?;
    stead.call(
        dir,
        &["job", "add", job, "--concurrency", "allow", "--", "true"],
    )?;
    stead.json(dir, &["run", job, "--wait", "--json"])?;
    Ok(())
}

/// Stops the server of `dir`, inserts `n` runs of `job` ([`fill`]) and starts the server
/// again with `env`.
pub fn refill(
    stead: &crate::stead::Stead,
    dir: &Path,
    env: &[(&str, &str)],
    job: &str,
    n: u64,
) -> anyhow::Result<()> {
    stead.stop(dir)?;
    fill(dir, job, n)?;
    stead.status(dir, env)?;
    Ok(())
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

/// A run's status and resolution (`None`: no such run).
pub fn status(conn: &Connection, id: i64) -> anyhow::Result<Option<(String, Option<String>)>> {
    Ok(conn
        .query_row(
            "SELECT status, resolution FROM runs WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// The run that resumes `parent`: its id, trigger, `created_at_ms` and `started_at_ms`
/// (`None` until the monitor marks it running).
pub struct Resumed {
    pub id: i64,
    pub trigger: String,
    pub created_ms: i64,
    pub started_ms: Option<i64>,
}

pub fn resumed(conn: &Connection, parent: i64) -> anyhow::Result<Option<Resumed>> {
    Ok(conn
        .query_row(
            "SELECT id, trigger, created_at_ms, started_at_ms FROM runs WHERE parent_id = ?1",
            [parent],
            |r| {
                Ok(Resumed {
                    id: r.get(0)?,
                    trigger: r.get(1)?,
                    created_ms: r.get(2)?,
                    started_ms: r.get(3)?,
                })
            },
        )
        .optional()?)
}

/// The row id of the job named `name`.
pub fn job_id(conn: &Connection, name: &str) -> anyhow::Result<Option<i64>> {
    Ok(conn
        .query_row("SELECT id FROM jobs WHERE name = ?1", [name], |r| r.get(0))
        .optional()?)
}

/// Runs that have not ended.
pub fn active(conn: &Connection) -> anyhow::Result<u64> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM runs WHERE status IN ('queued', 'running')",
        [],
        |r| r.get(0),
    )?;
    Ok(u64::try_from(n)?)
}

/// Of the runs with ids in `first..=last`: how many are still active, how many are
/// interrupted with a resolution, and how many runs resume one of them.
pub fn settled(conn: &Connection, first: i64, last: i64) -> anyhow::Result<(u64, u64, u64)> {
    let (active, resolved, resumes): (i64, i64, i64) = conn.query_row(
        "SELECT
             (SELECT count(*) FROM runs WHERE id BETWEEN ?1 AND ?2
                  AND status IN ('queued', 'running')),
             (SELECT count(*) FROM runs WHERE id BETWEEN ?1 AND ?2
                  AND status = 'interrupted' AND resolution IS NOT NULL),
             (SELECT count(*) FROM runs WHERE parent_id BETWEEN ?1 AND ?2)",
        [first, last],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    Ok((
        u64::try_from(active)?,
        u64::try_from(resolved)?,
        u64::try_from(resumes)?,
    ))
}

/// The rows [`owe`] adds to a stopped server's ledger: runs a new server must settle.
pub struct Owed<'a> {
    /// Runs still `running` of the job `job` (which exists), whose monitor is gone: a
    /// reconcile at boot interrupts them, and the resume pass resumes them.
    pub running: u64,
    /// `interrupted` runs without resolution of a removed job (`removed_job_id`, a name
    /// no job has): the resume pass declines them.
    pub interrupted: u64,
    pub job: &'a str,
    pub removed_job_id: i64,
    pub removed_job: &'a str,
    /// This machine's id, as the next server will see it.
    pub machine_id: &'a str,
    /// The current boot, so the reconcile blames the monitor, not a reboot.
    pub boot_id: &'a str,
    /// The pid of a process that has exited: the "monitor" of the running rows.
    pub dead_pid: u32,
}

/// Appends `owed.running` running rows, then `owed.interrupted` interrupted rows, after
/// the newest run of `owed.job` (which copies its epoch), created in the last minute,
/// in one transaction. The server must be stopped. Returns the first and last id added.
pub fn owe(dir: &Path, owed: &Owed<'_>) -> anyhow::Result<(i64, i64)> {
    let path = ledger(dir);
    let mut conn =
        Connection::open(&path).with_context(|| format!("opening {}", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let tx = conn.transaction()?;
    let (job_id, epoch): (i64, i64) = tx
        .query_row(
            "SELECT job_id, epoch FROM runs WHERE job = ?1 ORDER BY id DESC LIMIT 1",
            [owed.job],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?
        .with_context(|| format!("no run of job {} in {}", owed.job, path.display()))?;
    let first: i64 = tx.query_row("SELECT coalesce(max(id), 0) + 1 FROM runs", [], |r| {
        r.get(0)
    })?;
    let now = jiff::Timestamp::now().as_millisecond();
    let logs = dir.join("logs/runs");
    let total = (owed.running + owed.interrupted) as i64;
    {
        let mut insert = tx.prepare(
            "INSERT INTO runs (id, job_id, job, trigger, scheduled_at_ms, idempotency_key,
                 attempt, machine_id, boot_id, monitor_pid, monitor_start_identity, status,
                 reason, created_at_ms, started_at_ms, ended_at_ms, log_path, plan, epoch)
             VALUES (?1, ?2, ?3, 'on_demand', NULL, ?4, 1, ?5, ?6, ?7, 'linux:gone:1', ?8,
                 ?9, ?10, ?11, ?12, ?13, '{}', ?14)",
        )?;
        for i in 0..total {
            let id = first + i;
            let created = now - 60_000 + i;
            let running = i < owed.running as i64;
            let (job_id, job) = if running {
                (job_id, owed.job)
            } else {
                (owed.removed_job_id, owed.removed_job)
            };
            let (status, reason, ended) = if running {
                ("running", None, None)
            } else {
                (
                    "interrupted",
                    Some(format!(
                        "interrupted: its monitor (pid {}) is gone",
                        owed.dead_pid
                    )),
                    Some(created + 10),
                )
            };
            insert.execute(params![
                id,
                job_id,
                job,
                format!("{job}#{id}"),
                owed.machine_id,
                owed.boot_id,
                owed.dead_pid,
                status,
                reason,
                created,
                created + 3,
                ended,
                logs.join(format!("{id}.log")).to_string_lossy(),
                epoch,
            ])?;
        }
    }
    tx.commit()?;
    Ok((first, first + total - 1))
}
