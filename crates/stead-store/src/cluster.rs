//! What only a ledger shared by several hosts does: the scheduler's leadership, claims
//! of runs queued for any host, settling the runs of hosts gone silent, and the
//! notifications that wake every server. A store offers it through
//! [`Store::cluster`](crate::Store::cluster); a ledger of one host has none of it.

use std::path::Path;

use jiff::{SignedDuration, Timestamp};
use stead_core::lease::HeldLease;
use stead_core::records::{HostRow, LeaderRow, Wake};
use stead_core::runs::MonitorPlan;
use stead_protocol::Run;

use crate::StoreError;

/// The host claiming runs: who it is, and how it rewrites a claimed run's plan for
/// itself (its log directory, its state directory).
pub struct ClaimingHost<'a> {
    pub machine_id: &'a str,
    pub name: &'a str,
    pub boot_id: &'a str,
    pub log_dir: &'a Path,
    pub state_dir: &'a Path,
}

pub trait Cluster: Send + Sync {
    /// Claims or renews the scheduler's leadership for the server holding `lease`, until
    /// `ttl` past the database's now; returns the leader epoch while it leads.
    fn lead(&self, lease: &HeldLease, ttl: SignedDuration) -> Result<Option<i64>, StoreError>;

    /// The database's clock, read now: what every expiry on this ledger is judged by.
    fn ledger_time(&self) -> Result<Timestamp, StoreError>;

    /// Gives the leadership up (a server on its way down).
    fn resign(&self, lease: &HeldLease, epoch: i64) -> Result<(), StoreError>;

    /// The leadership row.
    fn leader(&self) -> Result<Option<LeaderRow>, StoreError>;

    /// The hosts sharing the ledger.
    fn hosts(&self) -> Result<Vec<HostRow>, StoreError>;

    /// Claims up to `limit` queued runs no host has claimed that `host` may run, for
    /// this host (fenced by its `epoch`), and returns their monitor plans with logs under
    /// `log_dir`. Runs are taken with `FOR UPDATE SKIP LOCKED`: two hosts never claim one.
    fn runs_claim(
        &self,
        host: &ClaimingHost<'_>,
        limit: u32,
        epoch: i64,
    ) -> Result<Vec<MonitorPlan>, StoreError>;

    /// Ends, at `now`, the runs in flight of other hosts whose servers have not renewed
    /// their lease for `silence` by the database's clock as interrupted (fenced by the
    /// leader `epoch`); returns the ids ended.
    fn settle_lost_hosts(
        &self,
        silence: SignedDuration,
        now: Timestamp,
        epoch: i64,
    ) -> Result<Vec<i64>, StoreError>;

    /// Interrupted, unsettled runs of hosts silent for `silence` (by the database's
    /// clock) whose jobs may resume on any host, oldest first.
    fn runs_owed_by_lost_hosts(&self, silence: SignedDuration) -> Result<Vec<Run>, StoreError>;

    /// Calls `wake` for every notification the ledger sends, from a thread of its own,
    /// reconnecting after a lost connection, until `wake` returns false.
    fn listen(&self, wake: Box<dyn Fn(Wake) -> bool + Send>) -> Result<(), StoreError>;
}
