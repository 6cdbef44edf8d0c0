//! PostgreSQL for the cluster figures: throwaway databases, and reading their ledgers as
//! no stead command does.
//!
//! Databases are created through an admin URL, `STEAD_TEST_PG_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`, as stead's own tests use), each named
//! [`PREFIX`]`PID_LABEL`. The bench's [`crate::proc::Guard`] drops them, connections and
//! all, after it killed every process it started; the watchdog does so when the bench
//! died without dropping the guard.

use anyhow::Context;
use postgres::Client;

/// The variable naming the admin URL, shared with stead's tests.
pub const ADMIN_URL_ENV: &str = "STEAD_TEST_PG_URL";
const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
/// What every database the bench creates is named with; the watchdog drops no other.
pub const PREFIX: &str = "stead_bench_";

/// The statuses a run never leaves (`docs/ledger.md`).
const TERMINAL: &str = "('succeeded', 'failed', 'cancelled', 'interrupted', 'skipped')";

/// The admin URL databases are created and dropped through.
pub fn admin_url() -> String {
    std::env::var(ADMIN_URL_ENV).unwrap_or_else(|_| DEFAULT_ADMIN_URL.to_string())
}

/// `url` without its password, for messages.
fn redacted(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = match authority.rsplit_once('@') {
                Some((user, host)) => {
                    let user = user.split_once(':').map_or(user, |(u, _)| u);
                    format!("{user}@{host}")
                }
                None => authority.to_string(),
            };
            format!("{scheme}://{host}/{path}")
        }
        None => "(a key/value connection string)".to_string(),
    }
}

/// A connection to `url`.
pub fn connect(url: &str) -> anyhow::Result<Client> {
    stead_store::postgres::connect_url(url).with_context(|| {
        format!(
            "connecting to PostgreSQL at {} (start it with `pg_ctlcluster 15 main start` or \
             scripts/ensure-postgres, or set {ADMIN_URL_ENV})",
            redacted(url)
        )
    })
}

/// The server's version, which also checks that the admin URL works.
pub fn server_version(admin: &str) -> anyhow::Result<String> {
    let mut client = connect(admin)?;
    let row = client.query_one("SHOW server_version", &[])?;
    Ok(row.try_get(0)?)
}

/// The name of the database `label` of this bench process.
pub fn database_name(label: &str) -> String {
    format!("{PREFIX}{}_{label}", std::process::id())
}

/// Creates the database `name` through `admin`; returns its URL.
pub fn create(admin: &str, name: &str) -> anyhow::Result<String> {
    connect(admin)?
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .with_context(|| format!("creating database {name}"))?;
    Ok(with_dbname(admin, name))
}

/// Drops the database `name` (if it exists), cutting its connections. Only names with
/// [`PREFIX`] are dropped.
pub fn drop_database(admin: &str, name: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        name.starts_with(PREFIX) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
        "not a database of the bench: {name:?}"
    );
    connect(admin)?
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .with_context(|| format!("dropping database {name}"))
}

/// `url` naming database `db` instead (URL or key/value form).
fn with_dbname(url: &str, db: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (rest, query) = match rest.split_once('?') {
                Some((rest, query)) => (rest, format!("?{query}")),
                None => (rest, String::new()),
            };
            let authority = rest.split_once('/').map_or(rest, |(a, _)| a);
            format!("{scheme}://{authority}/{db}{query}")
        }
        None => format!("{url} dbname={db}"),
    }
}

/// Runs that have ended, and how many of them succeeded.
pub fn ended(client: &mut Client) -> anyhow::Result<(u64, u64)> {
    let row = client.query_one(
        &format!(
            "SELECT count(*), count(*) FILTER (WHERE status = 'succeeded')
             FROM runs WHERE status IN {TERMINAL}"
        ),
        &[],
    )?;
    let (ended, succeeded): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
    Ok((u64::try_from(ended)?, u64::try_from(succeeded)?))
}

/// Runs running now.
pub fn running(client: &mut Client) -> anyhow::Result<u64> {
    let row = client.query_one("SELECT count(*) FROM runs WHERE status = 'running'", &[])?;
    Ok(u64::try_from(row.try_get::<_, i64>(0)?)?)
}

/// stead's connections to the database now (every one names itself `stead`).
pub fn stead_connections(client: &mut Client) -> anyhow::Result<u64> {
    let row = client.query_one(
        "SELECT count(*) FROM pg_stat_activity
         WHERE application_name = 'stead' AND datname = current_database()",
        &[],
    )?;
    Ok(u64::try_from(row.try_get::<_, i64>(0)?)?)
}

/// A run's `created_at_ms` and `started_at_ms`, if it has started.
pub fn run_times(client: &mut Client, id: i64) -> anyhow::Result<Option<(i64, i64)>> {
    let row = client.query_opt(
        "SELECT created_at_ms, started_at_ms FROM runs
         WHERE id = $1 AND started_at_ms IS NOT NULL",
        &[&id],
    )?;
    row.map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).transpose()
}

/// The scheduler's leadership: the machine id holding it (if any) and when it expires.
pub fn leader(client: &mut Client) -> anyhow::Result<(Option<String>, i64)> {
    let row = client.query_one(
        "SELECT machine_id, expires_at_ms FROM leader WHERE id = 1",
        &[],
    )?;
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// One row of the runs table, as the host-death figure reads it.
pub struct RunRow {
    pub id: i64,
    pub machine_id: String,
    pub status: String,
    pub created_ms: i64,
    pub started_ms: Option<i64>,
    pub ended_ms: Option<i64>,
}

const RUN_COLUMNS: &str = "id, machine_id, status, created_at_ms, started_at_ms, ended_at_ms";

fn run_row(row: &postgres::Row) -> anyhow::Result<RunRow> {
    Ok(RunRow {
        id: row.try_get(0)?,
        machine_id: row.try_get(1)?,
        status: row.try_get(2)?,
        created_ms: row.try_get(3)?,
        started_ms: row.try_get(4)?,
        ended_ms: row.try_get(5)?,
    })
}

/// The run `id`.
pub fn run(client: &mut Client, id: i64) -> anyhow::Result<Option<RunRow>> {
    let row = client.query_opt(
        &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"),
        &[&id],
    )?;
    row.as_ref().map(run_row).transpose()
}

/// The runs that resume `parent`, oldest first.
pub fn resumes_of(client: &mut Client, parent: i64) -> anyhow::Result<Vec<RunRow>> {
    client
        .query(
            &format!("SELECT {RUN_COLUMNS} FROM runs WHERE parent_id = $1 ORDER BY id"),
            &[&parent],
        )?
        .iter()
        .map(run_row)
        .collect()
}

/// Whether `status` is one a run never leaves (one of [`TERMINAL`]).
pub fn is_terminal(status: &str) -> bool {
    matches!(
        status,
        "succeeded" | "failed" | "cancelled" | "interrupted" | "skipped"
    )
}
