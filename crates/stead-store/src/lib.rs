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
mod cluster;
#[cfg(test)]
mod contract;
mod error;
mod lease;
mod ledger;
mod notices;
mod outcomes;
#[cfg(feature = "postgres")]
pub mod postgres;
mod recorder;
mod retention;
mod rows;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod together;

use std::sync::Arc;

use stead_core::locator::{LedgerRef, StoreLocator};

pub use catalog::Catalog;
pub use cluster::{Claimed, ClaimingHost, Cluster, LOG_CHUNK_BYTES};
pub use error::{BackendError, StoreError};
pub use lease::Lease;
pub use ledger::{BatchPlanFn, PlanFn, RunLedger};
pub use notices::Notices;
pub use recorder::{Mark, RunRecorder};
pub use retention::{Batch, KeepRule, LogState, PRUNE_BATCH, Prunable, Retention};
pub use together::{JobPlanFn, NewRunFn, RunWrite, RunWrites, RunWritten};

/// A ledger as a server uses it.
pub trait Store:
    Lease + Catalog + RunLedger + RunWrites + Retention + Notices + Send + Sync + std::fmt::Debug
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
