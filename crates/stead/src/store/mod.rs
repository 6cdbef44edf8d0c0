//! The ledger: durable server state behind the [`Store`] trait.
//!
//! SQLite ([`sqlite::SqliteStore`]) is the embedded default. The trait exists because a
//! PostgreSQL backend for several hosts follows; the lease methods take the time as an
//! argument so the rules can be tested with any clock. The schema is documented in
//! `docs/ledger.md`.

pub mod sqlite;

use std::path::PathBuf;

use jiff::{SignedDuration, Timestamp};

use crate::lifecycle::lease::{ClaimOutcome, Claimant, HeldLease, LeaseRow, RenewOutcome};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
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
    #[error("failed to open ledger {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("failed to migrate ledger {path}: {detail}")]
    Migrate { path: PathBuf, detail: String },
    #[error("ledger query failed: {0}")]
    Query(#[from] rusqlite::Error),
}

/// Durable server state.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Claims the lease for `claimant` if it is released or expired at `now`, or, when
    /// `dead_owner` is given, if the row is still exactly that row (its owner has been
    /// proven dead by the caller, so it can write nothing more).
    fn claim_lease(
        &self,
        claimant: &Claimant,
        now: Timestamp,
        ttl: SignedDuration,
        dead_owner: Option<&LeaseRow>,
    ) -> Result<ClaimOutcome, StoreError>;

    /// Re-arms `lease` until `now + ttl` if the row still carries its epoch and identity,
    /// even when it has expired.
    fn renew_lease(
        &self,
        lease: &HeldLease,
        now: Timestamp,
        ttl: SignedDuration,
    ) -> Result<RenewOutcome, StoreError>;

    /// Clears the owner if `lease` still owns the row; returns whether it did.
    fn release_lease(&self, lease: &HeldLease, now: Timestamp) -> Result<bool, StoreError>;

    /// The lease row as stored.
    fn lease_row(&self) -> Result<LeaseRow, StoreError>;
}
