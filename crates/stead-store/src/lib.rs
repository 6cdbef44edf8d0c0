//! The ledger: every job, service, hold and run stead keeps, durably, behind traits split
//! by concern. The schema is documented in `docs/ledger.md`.
//!
//! - [`Lease`]: the epoch lease of the host a store was opened for;
//! - [`Catalog`]: jobs, services and holds;
//! - [`RunLedger`]: runs, admitted under their job's concurrency policy and settled once;
//! - [`RunRecorder`]: a run's monitor records its own run;
//! - [`RunWrites`]: admissions, marks and ends that reach a server at once, committed
//!   together;
//! - [`Retention`]: pruning old runs and recording pruned logs;
//! - [`Notices`]: notifiers and the outbox of events about runs;
//! - [`RunCheckpoints`]: the checkpoints and completed steps of a run's idempotency key;
//! - [`Cluster`]: what only a ledger shared by several hosts does (leadership, claims,
//!   lost hosts, shipped run logs), reached through [`Store::cluster`];
//! - [`open`] and [`open_recorder`]: the ledger a [`StoreLocator`] names.
//!
//! Two backends: [`sqlite`] (the embedded default, feature `sqlite`) and [`postgres`]
//! (several hosts, feature `postgres`). Each transaction is written once, over the small
//! abstraction in `backend.rs`; each backend keeps only its SQL. One contract test suite
//! (`contract/`) runs against both. The feature `testing` adds scratch PostgreSQL
//! databases for the tests of other crates.

mod backend;
mod catalog;
mod checkpoints;
mod cluster;
#[cfg(test)]
mod contract;
mod error;
mod lease;
mod notices;
mod outcomes;
mod overdue;
#[cfg(feature = "postgres")]
pub mod postgres;
mod recorder;
mod retention;
mod rows;
mod run_ledger;
mod run_writes;
mod sleeps;
#[cfg(feature = "sqlite")]
pub mod sqlite;

use std::sync::Arc;

use stead_core::locator::{LedgerRef, StoreLocator};

pub use catalog::Catalog;
pub use checkpoints::RunCheckpoints;
pub use cluster::{Claimed, ClaimingHost, Cluster, LOG_CHUNK_BYTES};
pub use error::{BackendError, Refusal, StoreError};
pub use lease::Lease;
pub use notices::Notices;
pub use overdue::{Overdues, expect_within};
pub use recorder::{Mark, RunRecorder};
pub use retention::{Batch, KeepRule, LogState, PRUNE_BATCH, Prunable, Retention};
pub use run_ledger::RunLedger;
pub use run_writes::{RunWrite, RunWrites, RunWritten};
pub use sleeps::{DEFAULT_SLEEP_LIST, NewSleep, Sleeps};

/// A ledger as a server uses it.
pub trait Store:
    Lease
    + Catalog
    + RunLedger
    + RunWrites
    + Retention
    + Notices
    + Sleeps
    + Overdues
    + RunCheckpoints
    + Send
    + Sync
    + std::fmt::Debug
{
    /// Which ledger this is, as a run's plan names it (nothing secret).
    fn ledger_ref(&self) -> LedgerRef;

    /// The same ledger as a run's monitor records into it: a server records for the
    /// monitors of a shared ledger, which reach the database through it.
    fn recorder(&self) -> &dyn RunRecorder;

    /// What a ledger shared by several hosts does; `None` on a ledger of one host, whose
    /// one server leads the scheduler with its own epoch and starts what it admits.
    fn cluster(&self) -> Option<&dyn Cluster> {
        None
    }

    /// Whether several hosts may share this ledger.
    fn is_shared(&self) -> bool {
        self.cluster().is_some()
    }

    /// Whether the ledger this store has open is still the one its locator names: a
    /// SQLite file removed or replaced under a running server (its state directory
    /// deleted, say) is not, and everything written to it is lost to every later
    /// server. A database server's ledger always is.
    fn in_place(&self) -> bool {
        true
    }
}

/// Opens the ledger `locator` names for a server of `machine_id` whose leases last
/// `lease`, migrating its schema.
#[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
pub fn open(
    locator: &StoreLocator,
    machine_id: &str,
    lease: std::time::Duration,
) -> Result<Arc<dyn Store>, StoreError> {
    match locator {
        #[cfg(feature = "sqlite")]
        StoreLocator::Sqlite { path } => Ok(Arc::new(sqlite::SqliteStore::open(path)?)),
        #[cfg(feature = "postgres")]
        StoreLocator::Postgres { url } => Ok(Arc::new(postgres::PgStore::connect_with(
            url,
            machine_id,
            postgres::LinkTimeouts::for_lease(lease),
        )?)),
        // Reached only in a build without one of the backends.
        #[allow(unreachable_patterns)]
        other => Err(unsupported(other)),
    }
}

/// Opens the ledger `locator` names for a run's monitor, which only records its run (the
/// server that started it migrated the schema already), and checks that it is the ledger
/// the run belongs to (`run_ledger`, from the run's plan): a host whose URL leads
/// elsewhere must not record the run there.
#[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
pub fn open_recorder(
    locator: &StoreLocator,
    run_ledger: &LedgerRef,
    machine_id: &str,
    lease: std::time::Duration,
) -> Result<Box<dyn RunRecorder>, StoreError> {
    match locator {
        #[cfg(feature = "sqlite")]
        StoreLocator::Sqlite { path } => same_ledger(sqlite::SqliteStore::open(path)?, run_ledger),
        #[cfg(feature = "postgres")]
        StoreLocator::Postgres { url } => same_ledger(
            postgres::PgStore::connect_recorder(
                url,
                machine_id,
                postgres::LinkTimeouts::for_lease(lease),
            )?,
            run_ledger,
        ),
        // Reached only in a build without one of the backends.
        #[allow(unreachable_patterns)]
        other => Err(unsupported(other)),
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn same_ledger<S: Store + RunRecorder + 'static>(
    store: S,
    run_ledger: &LedgerRef,
) -> Result<Box<dyn RunRecorder>, StoreError> {
    let found = store.ledger_ref();
    if &found == run_ledger {
        Ok(Box::new(store))
    } else {
        Err(StoreError::OtherLedger {
            expected: run_ledger.describe(),
            found: found.describe(),
        })
    }
}

#[cfg_attr(all(feature = "sqlite", feature = "postgres"), allow(dead_code))]
fn unsupported(locator: &StoreLocator) -> StoreError {
    match locator {
        StoreLocator::Sqlite { .. } => StoreError::Unsupported {
            kind: "SQLite",
            feature: "sqlite",
        },
        StoreLocator::Postgres { .. } => StoreError::Unsupported {
            kind: "PostgreSQL",
            feature: "postgres",
        },
    }
}

#[cfg(all(test, feature = "sqlite", feature = "postgres"))]
mod migrations {
    //! Both backends number their migrations alike: from 9 on, one number and one name
    //! per change of the schema, each in its backend's SQL (before that the PostgreSQL
    //! schema folded SQLite's first steps together).

    use std::path::Path;

    /// The migration files of a backend, in order.
    fn files(backend: &str) -> Vec<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src")
            .join(backend)
            .join("migrations");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn both_backends_number_their_migrations_alike() {
        let (sqlite, postgres) = (files("sqlite"), files("postgres"));
        assert_eq!(sqlite.len(), crate::sqlite::schema_version_count());
        assert_eq!(postgres.len(), crate::postgres::schema_version_count());
        for (names, backend) in [(&sqlite, "sqlite"), (&postgres, "postgres")] {
            for (i, name) in names.iter().enumerate() {
                assert!(
                    name.starts_with(&format!("{:03}_", i + 1)),
                    "{backend}: {name} is not number {}",
                    i + 1
                );
            }
        }
        assert_eq!(
            sqlite[8..],
            postgres[8..],
            "from 9 on, each migration has one number and one name on both"
        );
    }
}
