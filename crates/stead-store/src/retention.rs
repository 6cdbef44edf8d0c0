//! Retention: the ledger's side of pruning old runs and their logs. Which runs may go is
//! decided here, in the SQL of each backend's steps, once; the rules are in
//! `docs/ledger.md`, "Retention". The server decides when to prune and deletes the log
//! files of its own host.
//!
//! Each batch is its own short transaction: a prune never holds the ledger for longer
//! than one batch of [`PRUNE_BATCH`] rows.

use jiff::Timestamp;

use crate::StoreError;
use crate::backend::RetentionSteps;
use crate::backend::sealed::Backend;
use crate::backend::{Guard, Steps};

/// The most rows one prune transaction removes or marks.
pub const PRUNE_BATCH: usize = 500;

/// How long a job's runs are kept: the job's own `keep_runs` / `keep_for`, or the
/// server's `runs_max_age`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepRule {
    pub job_id: i64,
    /// Keep the newest N runs; older ones may go whatever their age.
    pub keep_runs: Option<u32>,
    /// Runs created before this may go.
    pub created_before: Timestamp,
}

/// A run retention may remove (or whose log it may remove).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prunable {
    pub id: i64,
    pub job: String,
    pub machine_id: String,
    pub log_path: String,
}

/// What the ledger holds about a run whose log file is on a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogState {
    pub id: i64,
    pub job: String,
    /// When the run ended; `None` while it has not.
    pub ended_at: Option<Timestamp>,
    /// Never pruned: not ended, or interrupted and still owed.
    pub protected: bool,
    /// Retention deleted its log already (a file still there is a leftover).
    pub log_pruned: bool,
}

/// One batch of a rule: the runs removed (or that would be), and where the next batch
/// starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    pub runs: Vec<Prunable>,
    /// The largest id looked at; the next batch starts after it. `None`: the rule is done.
    pub next_after: Option<i64>,
}

/// Pruning runs and marking pruned logs. Rows are removed by the scheduler's leader
/// (fenced by its leader epoch); a host marks the logs it deleted (fenced by its lease).
pub trait Retention {
    /// The ids of every job that runs name, removed jobs' included.
    fn retention_job_ids(&self) -> Result<Vec<i64>, StoreError>;

    /// One batch of `rule`: up to [`PRUNE_BATCH`] runs after id `after` that may go,
    /// oldest first, removed in one transaction fenced by `leader_epoch` (or, with
    /// `dry_run`, only read).
    fn prune_batch(
        &self,
        rule: &KeepRule,
        after: i64,
        dry_run: bool,
        leader_epoch: i64,
    ) -> Result<Batch, StoreError>;

    /// What the ledger holds about the runs `ids` (runs without a row are left out).
    fn log_states(&self, ids: &[i64]) -> Result<Vec<LogState>, StoreError>;

    /// Records that the logs of `ids` were pruned at `now` (and drops copies shipped to a
    /// shared ledger), fenced by this host's `epoch`; answers the ids marked now.
    fn mark_logs_pruned(
        &self,
        ids: &[i64],
        now: Timestamp,
        epoch: i64,
    ) -> Result<Vec<i64>, StoreError>;

    /// Gives back the space freed by pruning (SQLite: an incremental vacuum of at most
    /// `pages` pages; PostgreSQL: nothing, autovacuum does it).
    fn reclaim(&self, pages: u32) -> Result<(), StoreError>;
}

/// The id below which `rule`'s count limit lets runs go (`i64::MIN`: no count limit).
fn below_id(tx: &mut impl Steps, rule: &KeepRule) -> Result<i64, StoreError> {
    Ok(match rule.keep_runs {
        Some(n) => tx
            .run_nth_newest(rule.job_id, n.max(1))?
            .unwrap_or(i64::MIN),
        None => i64::MIN,
    })
}

fn batch(
    tx: &mut impl Steps,
    rule: &KeepRule,
    after: i64,
    delete: bool,
) -> Result<Batch, StoreError> {
    let below = below_id(tx, rule)?;
    let (runs, last) = tx.runs_prunable(rule, below, after, PRUNE_BATCH)?;
    if delete && !runs.is_empty() {
        let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
        tx.runs_delete(&ids)?;
    }
    Ok(Batch {
        runs,
        next_after: last,
    })
}

impl<B: Backend> Retention for B {
    fn retention_job_ids(&self) -> Result<Vec<i64>, StoreError> {
        self.read(&mut |tx| tx.run_job_ids())
    }

    fn prune_batch(
        &self,
        rule: &KeepRule,
        after: i64,
        dry_run: bool,
        leader_epoch: i64,
    ) -> Result<Batch, StoreError> {
        if dry_run {
            self.read(&mut |tx| batch(tx, rule, after, false))
        } else {
            self.write(Guard::Leader(leader_epoch), &mut |tx| {
                batch(tx, rule, after, true)
            })
        }
    }

    fn log_states(&self, ids: &[i64]) -> Result<Vec<LogState>, StoreError> {
        let mut states = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(PRUNE_BATCH) {
            states.extend(self.read(&mut |tx| tx.runs_log_state(chunk))?);
        }
        Ok(states)
    }

    fn mark_logs_pruned(
        &self,
        ids: &[i64],
        now: Timestamp,
        epoch: i64,
    ) -> Result<Vec<i64>, StoreError> {
        let mut marked = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(PRUNE_BATCH) {
            marked.extend(self.write(Guard::Host(epoch), &mut |tx| {
                tx.runs_mark_log_pruned(chunk, now)
            })?);
        }
        Ok(marked)
    }

    fn reclaim(&self, pages: u32) -> Result<(), StoreError> {
        self.reclaim_space(pages)
    }
}

/// The one place that says which runs are never pruned, as the condition a run `r` must
/// meet to be removed, in SQL both backends read alike:
///
/// - it has ended (not `queued` or `running`);
/// - it is not owed: an `interrupted` run goes only once its `resolution` is written;
/// - it is not the latest run of its job (by id), so every job keeps its last outcome;
/// - no run names it as its parent (`parent_id`, a foreign key): a resumed run stays
///   while its resume does, and goes in a later prune once the resume is gone.
///
/// A later rule (a run a retry or a notification still refers to) is one more line here.
pub(crate) const PRUNABLE: &str = "r.status NOT IN ('queued', 'running')
    AND (r.status <> 'interrupted' OR r.resolution IS NOT NULL)
    AND r.id < (SELECT max(l.id) FROM runs l WHERE l.job_id = r.job_id)
    AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.parent_id = r.id)";

/// Whether a run's log is never pruned, as a column of a `SELECT` over `runs`: while the
/// run has not ended, or is owed.
pub(crate) const LOG_PROTECTED: &str =
    "(status IN ('queued', 'running') OR (status = 'interrupted' AND resolution IS NULL))";

/// Ids as a SQL list (`1, 2, 3`): integers, so nothing to escape.
pub(crate) fn id_list(ids: &[i64]) -> String {
    ids.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
