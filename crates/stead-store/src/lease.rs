//! The epoch lease's statements. Each backend writes them itself: SQLite keeps one lease
//! row for its one host, PostgreSQL one row per host. The rules are in
//! `stead_core::lease`; the lease methods take the time as an argument so they can be
//! tested with any clock.

use jiff::{SignedDuration, Timestamp};
use stead_core::lease::{ClaimOutcome, Claimant, HeldLease, LeaseRow, RenewOutcome};

use crate::StoreError;

/// The lease of the host a store was opened for.
///
/// Time: on a ledger of one host `now` is the one clock there is. On a shared ledger the
/// database's clock decides every expiry (a claim's "expired", a renewal's new expiry, a
/// release), in the statement that writes it, so hosts whose clocks disagree still agree
/// on who holds what; `now` is then only this host's reading, kept beside the row to
/// report how far the host's clock is from the database's. Expiries returned are in the
/// ledger's time.
pub trait Lease {
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
