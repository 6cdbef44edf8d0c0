//! What only a ledger shared by several hosts does: the scheduler's leadership, claims
//! of runs queued for any host, settling the runs of hosts gone silent, and the
//! notifications that wake every server, and the run logs each host ships so that every
//! host can read them. A store offers it through
//! [`Store::cluster`](crate::Store::cluster); a ledger of one host has none of it.

use std::path::Path;

use jiff::{SignedDuration, Timestamp};
use stead_core::lease::HeldLease;
use stead_core::records::{HostRow, LeaderRow, LogShipment, ShippedLog, Wake};
use stead_core::runs::MonitorPlan;
use stead_protocol::Run;

use crate::StoreError;

/// The most bytes of a run's log one row of a shared ledger holds, and the most one
/// [`Cluster::log_ship`] or [`Cluster::log_read`] moves.
pub const LOG_CHUNK_BYTES: usize = 256 * 1024;

/// The host claiming runs: who it is, and how it rewrites a claimed run's plan for
/// itself (its log directory, its state directory).
pub struct ClaimingHost<'a> {
    pub machine_id: &'a str,
    pub name: &'a str,
    pub boot_id: &'a str,
    pub log_dir: &'a Path,
    pub state_dir: &'a Path,
}

/// What a claim took.
#[derive(Debug, Default)]
pub struct Claimed {
    /// The plans of the runs to start now.
    pub plans: Vec<MonitorPlan>,
    /// How many claimed runs wait for a place in their queue on this host (its starter
    /// hands them to monitors).
    pub waiting: usize,
}

impl Claimed {
    /// How many runs the claim took.
    pub fn len(&self) -> usize {
        self.plans.len() + self.waiting
    }

    /// Whether it took none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
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
    /// this host (fenced by its `epoch`), with their plans' logs under `log_dir`. Runs
    /// are taken with `FOR UPDATE SKIP LOCKED`: two hosts never claim one. A claimed run
    /// that waits for a place in a queue goes on waiting, on this host.
    fn runs_claim(
        &self,
        host: &ClaimingHost<'_>,
        limit: u32,
        epoch: i64,
    ) -> Result<Claimed, StoreError>;

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

    /// This host's runs whose logs are still to ship: every one running, and those of
    /// `ended` that have ended (with `None`: every ended run of this host) whose shipped
    /// log is not complete yet.
    fn logs_to_ship(&self, ended: Option<&[i64]>) -> Result<Vec<LogShipment>, StoreError>;

    /// Appends `data` (at most [`LOG_CHUNK_BYTES`]) to the shipped log of run `id`, a run
    /// of this host, at `offset`, and with `complete` marks the log complete; fenced by
    /// this host's `epoch`. Writes nothing when `offset` is not what the ledger holds.
    /// Returns how many bytes the ledger holds afterwards.
    fn log_ship(
        &self,
        id: i64,
        offset: u64,
        data: &[u8],
        complete: bool,
        epoch: i64,
    ) -> Result<u64, StoreError>;

    /// Up to `max` bytes (at most [`LOG_CHUNK_BYTES`]) of run `id`'s shipped log from
    /// `offset`, with how much is shipped and whether that is all.
    fn log_read(&self, id: i64, offset: u64, max: usize) -> Result<ShippedLog, StoreError>;

    /// Which of `ids` have ended (their status is terminal): the runs a server's
    /// monitors asked about, confirmed in one query per heartbeat.
    fn runs_ended(&self, ids: &[i64]) -> Result<Vec<i64>, StoreError>;

    /// Calls `wake` for every notification the ledger sends, from a thread of its own,
    /// reconnecting after a lost connection, until `wake` returns false.
    fn listen(&self, wake: Box<dyn Fn(Wake) -> bool + Send>) -> Result<(), StoreError>;
}
