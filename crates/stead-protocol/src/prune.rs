//! Retention on the wire: `prune` asks the server to apply its retention rules now (or to
//! say what they would remove) and answers what went, by job. The rules are in
//! `docs/ledger.md`, "Retention".

use serde::{Deserialize, Serialize};

/// Parameters of `prune`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PruneParams {
    /// Decide and answer, delete nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// What one job lost to a prune.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrunedJob {
    pub job: String,
    /// Run rows removed (each with its log).
    pub runs: u64,
    /// Log files removed whose rows are kept (`logs_max_age`, `logs_max_total`).
    pub logs: u64,
    /// Bytes of log files removed, of both kinds.
    pub log_bytes: u64,
}

/// What a prune removed, or with `dry_run` would remove.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PruneResult {
    pub dry_run: bool,
    /// By job name, only jobs that lost something.
    pub jobs: Vec<PrunedJob>,
    /// Run rows removed, in total.
    pub runs: u64,
    /// Log files removed whose rows are kept, in total.
    pub logs: u64,
    /// Bytes of log files removed on this host, in total.
    pub log_bytes: u64,
    /// The ids of the runs removed, oldest first (at most
    /// [`MAX_PRUNE_IDS`](crate::limits::MAX_PRUNE_IDS)).
    pub run_ids: Vec<i64>,
    /// The ids of the runs whose log alone was removed, oldest first (at most as many).
    pub log_ids: Vec<i64>,
    /// The longest one batch held the ledger (its write transaction and the space given
    /// back after it), in milliseconds.
    #[serde(default)]
    pub longest_batch_ms: u64,
    /// More went than the id lists hold: they are the oldest ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ids_truncated: bool,
}
