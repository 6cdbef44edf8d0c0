//! What can go wrong with a ledger, in two kinds a caller tells apart: refusals
//! ([`Refusal`]: a name taken, a run gone, a lease superseded; nothing was written, and
//! the caller can act on why), and failures (a ledger that cannot be used as it is, or
//! its backend failing, wrapped with the ledger it happened on).

use std::path::PathBuf;

/// Why the ledger did not do what it was asked: it refused (nothing was written, and
/// the caller can act on why), it cannot be used as it is, or its backend failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The ledger refused the request; nothing of it was written.
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(
        "ledger {path} is not a readable SQLite database ({detail}); stead changed nothing. \
         Move it aside (mv {path} {path}.broken) to start a fresh ledger, or restore it from a backup"
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "ledger {path} was written by a newer stead (schema {found}, this build knows up to {known})"
    )]
    TooNew {
        path: PathBuf,
        found: usize,
        known: usize,
    },
    #[error("failed to open ledger {path}: {detail}")]
    Open { path: PathBuf, detail: String },
    #[error("failed to migrate ledger {path}: {detail}")]
    Migrate { path: PathBuf, detail: String },
    #[error("corrupt ledger row: {0}")]
    Row(String),
    /// The PostgreSQL ledger cannot be reached (`ledger` is `HOST:PORT/DB`, never the
    /// URL, which may carry a password).
    #[error("the PostgreSQL ledger at {ledger} is unreachable: {detail}")]
    Unavailable { ledger: String, detail: String },
    /// `url` has its password redacted.
    #[error("{url} is not a usable PostgreSQL ledger URL: {detail}")]
    LedgerUrl { url: String, detail: String },
    /// The URL this host was given leads to another ledger than the run's.
    #[error("this host's store URL leads to {found}, but the run belongs to {expected}")]
    OtherLedger { expected: String, found: String },
    /// This build cannot open a ledger of this kind.
    #[error("this stead was built without {kind} support (cargo feature `{feature}`)")]
    Unsupported {
        kind: &'static str,
        feature: &'static str,
    },
    /// A statement failed in the backend. `ledger` names it (a path, or `HOST:PORT/DB`).
    #[error("ledger query failed: {source}")]
    Backend {
        ledger: String,
        source: BackendError,
    },
}

/// What the ledger refuses, with nothing written: a name taken, something named that
/// does not exist, a lease superseded, a rule a change would break.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("this server's lease (epoch {epoch}) has been superseded; it may write nothing more")]
    Fenced { epoch: i64 },
    #[error("a job named {0:?} already exists")]
    JobExists(String),
    #[error("no job named {0:?}")]
    NoSuchJob(String),
    #[error("no run {0}")]
    NoSuchRun(i64),
    #[error("run {0} was already resumed or resolved")]
    AlreadyResolved(i64),
    #[error("run {0} of the same job is in flight (concurrency = forbid)")]
    Overlap(i64),
    #[error("a service named {0:?} already exists")]
    ServiceExists(String),
    #[error("no service named {0:?}")]
    NoSuchService(String),
    #[error("service {service:?} is still named in depends_on by: {}", jobs.join(", "))]
    ServiceInUse { service: String, jobs: Vec<String> },
    #[error("no hold named {0:?}")]
    NoSuchHold(String),
    #[error(
        "job {job:?}: no queue named {queue:?}; create it first with `stead queue set {queue} --parallel N`"
    )]
    UnknownQueue { job: String, queue: String },
    #[error("no queue named {0:?}")]
    NoSuchQueue(String),
    #[error("queue {queue:?} is still named by: {}", jobs.join(", "))]
    QueueInUse { queue: String, jobs: Vec<String> },
    #[error("job {job:?}: after names {after:?}, which is not a job")]
    NoSuchUpstream { job: String, after: String },
    #[error("job {job:?}: after would make a cycle: {}", cycle.join(" -> "))]
    AfterCycle { job: String, cycle: Vec<String> },
    #[error("job {job:?} is still named in after by: {}", jobs.join(", "))]
    JobInChain { job: String, jobs: Vec<String> },
    #[error("no notifier named {0:?}")]
    NoSuchNotifier(String),
    #[error("the token given for run {0} is not its own (STEAD_RUN_TOKEN); nothing was written")]
    WrongRunToken(i64),
    #[error(
        "run {run} no longer holds its idempotency key ({}); nothing was written",
        match holder { Some(h) => format!("run {h} holds it now"), None => "it has ended".to_string() }
    )]
    NotKeyHolder { run: i64, holder: Option<i64> },
    #[error("invalid {what} {name:?}: 1 to 128 letters, digits, '-', '_', '.', ':' or '/'")]
    CheckpointName { what: &'static str, name: String },
    #[error("limit reached: {0}; nothing was written")]
    CheckpointLimit(String),
    /// A cluster operation on a ledger of one host.
    #[error("this ledger is not shared by several hosts")]
    NotShared,
}

/// A failure of the database library itself.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[cfg(feature = "sqlite")]
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[cfg(feature = "postgres")]
    #[error("{}", crate::postgres::describe(.0))]
    Postgres(#[from] ::postgres::Error),
}

impl StoreError {
    /// Names the ledger a backend failure happened on, where the failure does not yet.
    pub(crate) fn on(self, ledger: &str) -> Self {
        match self {
            StoreError::Backend {
                ledger: named,
                source,
            } if named.is_empty() => StoreError::Backend {
                ledger: ledger.to_string(),
                source,
            },
            other => other,
        }
    }

    /// Whether the ledger's disk is full: the write may succeed once space is freed, so
    /// it is worth waiting for rather than giving up.
    pub fn is_disk_full(&self) -> bool {
        let StoreError::Backend { source, .. } = self else {
            return false;
        };
        match source {
            #[cfg(feature = "sqlite")]
            BackendError::Sqlite(e) => e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull),
            #[cfg(feature = "postgres")]
            BackendError::Postgres(e) => e.code() == Some(&::postgres::error::SqlState::DISK_FULL),
        }
    }
}

#[cfg(feature = "sqlite")]
impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Backend {
            ledger: String::new(),
            source: e.into(),
        }
    }
}

#[cfg(feature = "postgres")]
impl From<::postgres::Error> for StoreError {
    fn from(e: ::postgres::Error) -> Self {
        StoreError::Backend {
            ledger: String::new(),
            source: e.into(),
        }
    }
}
