//! Retention: the server prunes old runs and run logs by itself, once when it starts and
//! then every `[retention] interval`, and when asked (`stead prune`). The rules are in
//! `docs/ledger.md`, "Retention"; which rows may go is decided by the store.
//!
//! A prune has two parts:
//!
//! 1. **Rows.** For each job that runs name (removed jobs' included), batches of at most
//!    [`stead_store::PRUNE_BATCH`] runs are removed, each in its own transaction, fenced by the
//!    scheduler's leader epoch: on a shared ledger only the leader removes rows. The
//!    server pauses between batches as long as the last one held the ledger, so a prune never holds the ledger for longer than
//!    one batch, and gives the freed pages back after each (`reclaim`). The log file of a
//!    removed run of this host goes with it.
//! 2. **Logs of this host.** The files in `logs/runs/` are read against the ledger: a
//!    file whose run is gone (removed by another host's leader) or whose log was pruned
//!    already is a leftover and goes; the logs of runs ended longer than `logs_max_age`
//!    ago go; then, oldest first, logs go until all of them take at most
//!    `logs_max_total`; then, while the disk holding the logs is below its reserve
//!    (`[logs] keep_free`, below which monitors drop their runs' output), the largest
//!    logs first (the oldest first among equals), until it is back above the reserve
//!    and a tenth of it. The rows stay, marked (`log_pruned_at`) before the file is
//!    deleted, so `stead logs` can say what happened. Runs not ended and owed runs keep
//!    their logs.
//!
//! A disk below its reserve is not left until the next interval: each run's end that
//! comes through this server checks the disk (one statvfs), and when it is below the
//! reserve this task prunes the logs at once ([`after_run_end`]). The end of a run is
//! when room can be made: only the logs of ended runs may go, and a run that ended is
//! no longer writing, so what goes is not eaten again by the output that filled the
//! disk. A check at the heartbeat would find the disk low while the run flooding it
//! still writes, and hand it older logs, one beat after another.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use stead_protocol::limits::MAX_PRUNE_IDS;
use stead_protocol::{ErrorBody, PruneResult, PrunedJob};
use stead_store::{KeepRule, StoreError};
use tracing::{debug, info, warn};

use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

/// Pages an incremental vacuum gives back after each batch (4 KiB pages: 8 MiB).
const RECLAIM_PAGES: u32 = 2048;

/// The shortest and longest pause between two batches.
const MIN_PAUSE: Duration = Duration::from_millis(1);
const MAX_PAUSE: Duration = Duration::from_millis(100);

/// The longest one sleep between prunes, so a wall-clock jump or a sleep of the machine
/// is noticed within it (monotonic timers do not count time asleep).
const MAX_SLEEP: Duration = Duration::from_secs(60);

/// The least time between two passes made for room on the disk, however many runs end
/// meanwhile while it stays low.
const ROOM_PASS_GAP: Duration = Duration::from_secs(1);

/// Prunes once at start, then every interval (in wall time), until the server stops;
/// between, the logs whenever a run's end finds the disk below its reserve.
pub async fn run(shared: Arc<Shared>) {
    let interval = shared.world.config.retention.interval;
    loop {
        match prune(&shared, false).await {
            Ok(result) if result.runs > 0 || result.logs > 0 => info!(
                runs = result.runs,
                logs = result.logs,
                log_bytes = result.log_bytes,
                "pruned by retention"
            ),
            Ok(_) => {}
            Err(e) => warn!(cause = %e.message, "failed to prune by retention"),
        }
        crate::tasks::notify::prune(&shared).await;
        let next = Timestamp::now()
            .checked_add(SignedDuration::try_from(interval).unwrap_or(SignedDuration::MAX))
            .unwrap_or(Timestamp::MAX);
        loop {
            let left = next.duration_since(Timestamp::now());
            let Ok(left) = Duration::try_from(left) else {
                break;
            };
            if left.is_zero() {
                break;
            }
            tokio::select! {
                () = shared.stop.cancelled() => return,
                () = tokio::time::sleep(left.min(MAX_SLEEP)) => {}
                () = shared.wake.disk_low.notified() => {
                    make_room(&shared).await;
                    tokio::select! {
                        () = shared.stop.cancelled() => return,
                        () = tokio::time::sleep(ROOM_PASS_GAP) => {}
                    }
                }
            }
        }
    }
}

/// Called when a run's end was recorded through this server: wakes the pass that makes
/// room when the disk holding the logs is below its reserve (see the module docs).
pub fn after_run_end(shared: &Shared) {
    if shortfall(shared).is_some() {
        shared.wake.disk_low.notify_one();
    }
}

/// How many bytes must go for the disk holding the logs to be back above its reserve
/// with a tenth of it to spare (so that a few bytes written next do not take it below
/// at once); `None` while it is not below the reserve, or cannot say.
fn shortfall(shared: &Shared) -> Option<u64> {
    let logs = shared.world.paths.logs_dir();
    let (free, total) = stead_sys::disk::space(&logs).ok()?;
    let reserve = shared.world.config.logs.keep_free.bytes_of(total);
    (free < reserve).then(|| reserve + reserve / 10 - free)
}

/// Prunes the logs now, for room on the disk.
async fn make_room(shared: &Arc<Shared>) {
    let _one_at_a_time = shared.pruning.lock().await;
    match blocking(shared, |s| prune_logs(s, false, &[])).await {
        // Nothing of ended runs left to prune: what fills the disk is not theirs.
        Ok(logs) if logs.pruned.is_empty() && logs.leftover_bytes == 0 => {
            debug!("the disk holding the logs is below its reserve; no log may go");
        }
        Ok(logs) => info!(
            logs = logs.pruned.len(),
            log_bytes =
                logs.pruned.iter().map(|(.., bytes)| bytes).sum::<u64>() + logs.leftover_bytes,
            "pruned logs: the disk holding them was below its reserve"
        ),
        Err(e) => warn!(cause = %e.message, "failed to prune logs for room on the disk"),
    }
}

/// Applies the retention rules now (or, with `dry_run`, says what they would remove).
/// One prune at a time: a request waits for the periodic one and the other way round.
pub async fn prune(shared: &Arc<Shared>, dry_run: bool) -> Result<PruneResult, ErrorBody> {
    let _one_at_a_time = shared.pruning.lock().await;
    let mut tally = Tally::default();
    prune_rows(shared, dry_run, &mut tally).await?;
    let mut pruned = std::mem::take(&mut tally.gone);
    pruned.sort_unstable();
    let logs = {
        let dry = dry_run;
        blocking(shared, move |s| prune_logs(s, dry, &pruned)).await?
    };
    tally.logs = logs;
    Ok(tally.finish(dry_run))
}

#[derive(Debug, Default)]
struct Tally {
    jobs: BTreeMap<String, PrunedJob>,
    run_ids: Vec<i64>,
    log_ids: Vec<i64>,
    log_bytes: u64,
    longest_batch: Duration,
    /// Ids whose rows went (or would), in the order the jobs were pruned: their files are
    /// not counted again.
    gone: Vec<i64>,
    logs: LogTally,
}

#[derive(Debug, Default)]
struct LogTally {
    /// (id, job, bytes) of logs removed whose rows stay.
    pruned: Vec<(i64, String, u64)>,
    /// Bytes of leftovers removed (runs gone, logs pruned already).
    leftover_bytes: u64,
}

impl Tally {
    fn job(&mut self, name: &str) -> &mut PrunedJob {
        self.jobs
            .entry(name.to_string())
            .or_insert_with(|| PrunedJob {
                job: name.to_string(),
                ..PrunedJob::default()
            })
    }

    fn finish(mut self, dry_run: bool) -> PruneResult {
        for (id, job, bytes) in std::mem::take(&mut self.logs.pruned) {
            let entry = self.job(&job);
            entry.logs += 1;
            entry.log_bytes += bytes;
            self.log_ids.push(id);
            self.log_bytes += bytes;
        }
        self.log_bytes += self.logs.leftover_bytes;
        self.run_ids.sort_unstable();
        self.log_ids.sort_unstable();
        let (runs, logs) = (self.run_ids.len() as u64, self.log_ids.len() as u64);
        let ids_truncated =
            self.run_ids.len() > MAX_PRUNE_IDS || self.log_ids.len() > MAX_PRUNE_IDS;
        self.run_ids.truncate(MAX_PRUNE_IDS);
        self.log_ids.truncate(MAX_PRUNE_IDS);
        PruneResult {
            dry_run,
            ids_truncated,
            longest_batch_ms: u64::try_from(self.longest_batch.as_millis()).unwrap_or(u64::MAX),
            runs,
            logs,
            log_bytes: self.log_bytes,
            jobs: self.jobs.into_values().collect(),
            run_ids: self.run_ids,
            log_ids: self.log_ids,
        }
    }
}

/// The rule of each job that runs name: its own `keep_runs`/`keep_for`, else the
/// server's `runs_max_age` (a removed job's runs: that alone).
fn rules(shared: &Shared) -> Result<Vec<KeepRule>, StoreError> {
    let store = &shared.world.store;
    let now = shared.world.clock.now();
    let specs: BTreeMap<i64, _> = store
        .job_list()?
        .into_iter()
        .map(|job| (job.id, job.spec))
        .collect();
    let default_age = shared.world.config.retention.runs_max_age;
    let rules = store
        .retention_job_ids()?
        .into_iter()
        .map(|job_id| {
            let spec = specs.get(&job_id);
            let age = spec
                .and_then(|s| s.keep_for.as_deref())
                .and_then(|d| stead_core::schedule::parse_duration(d).ok())
                .unwrap_or(default_age);
            KeepRule {
                job_id,
                keep_runs: spec.and_then(|s| s.keep_runs),
                created_before: before(now, age),
            }
        })
        .collect();
    Ok(rules)
}

fn before(now: Timestamp, age: Duration) -> Timestamp {
    SignedDuration::try_from(age)
        .ok()
        .and_then(|age| now.checked_sub(age).ok())
        .unwrap_or(Timestamp::MIN)
}

/// Removes rows, batch by batch, yielding between them; only the leader does (a dry run
/// says what would go wherever it is asked).
async fn prune_rows(
    shared: &Arc<Shared>,
    dry_run: bool,
    tally: &mut Tally,
) -> Result<(), ErrorBody> {
    let leader = *shared.leader.borrow();
    let Some(leader) = leader.or(dry_run.then_some(0)) else {
        return Ok(());
    };
    let rules = blocking(shared, rules).await?;
    for rule in rules {
        let mut after = 0;
        loop {
            let (batch, held) = blocking(shared, move |s| {
                let start = Instant::now();
                let batch = s.world.store.prune_batch(&rule, after, dry_run, leader)?;
                if !dry_run && !batch.runs.is_empty() {
                    s.world.store.reclaim(RECLAIM_PAGES)?;
                }
                Ok((batch, start.elapsed()))
            })
            .await?;
            tally.longest_batch = tally.longest_batch.max(held);
            for run in &batch.runs {
                let bytes = if run.machine_id == shared.world.machine_id {
                    remove_log(Path::new(&run.log_path), dry_run)
                } else {
                    0
                };
                let entry = tally.job(&run.job);
                entry.runs += 1;
                entry.log_bytes += bytes;
                tally.log_bytes += bytes;
                tally.run_ids.push(run.id);
                tally.gone.push(run.id);
            }
            match batch.next_after {
                Some(next) => after = next,
                None => break,
            }
            // Let the runs' own writes through between two batches: a writer waiting
            // in SQLite's busy handler polls at intervals, so the ledger is left free
            // for as long as the batch held it (at most the ledger's half of the time).
            tokio::time::sleep(held.clamp(MIN_PAUSE, MAX_PAUSE)).await;
        }
    }
    Ok(())
}

/// Removes (or, dry, measures) a log file; answers its size, 0 when there was none.
fn remove_log(path: &Path, dry_run: bool) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_file() {
        return 0;
    }
    if !dry_run && let Err(e) = std::fs::remove_file(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            warn!(path = %path.display(), cause = %e, "failed to remove a pruned run's log");
        }
        return 0;
    }
    meta.len()
}

/// The run log files of this host: (id, path, bytes), by id.
fn log_files(dir: &Path) -> Vec<(i64, PathBuf, u64)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let id: i64 = name.to_str()?.strip_suffix(".log")?.parse().ok()?;
            let meta = entry.metadata().ok()?;
            meta.is_file().then(|| (id, entry.path(), meta.len()))
        })
        .collect();
    files.sort_unstable_by_key(|(id, _, _)| *id);
    files
}

/// The log-only part of a prune, on this host's files (see the module docs); `gone`
/// (sorted) are the runs whose rows this prune removed, or would.
fn prune_logs(shared: &Shared, dry_run: bool, gone: &[i64]) -> Result<LogTally, StoreError> {
    let retention = shared.world.config.retention;
    let store = &shared.world.store;
    let files: Vec<_> = log_files(&shared.world.paths.logs_dir().join("runs"))
        .into_iter()
        .filter(|(id, _, _)| gone.binary_search(id).is_err())
        .collect();
    let ids: Vec<i64> = files.iter().map(|(id, _, _)| *id).collect();
    let states: BTreeMap<i64, _> = store
        .log_states(&ids)?
        .into_iter()
        .map(|s| (s.id, s))
        .collect();
    let old = before(shared.world.clock.now(), retention.logs_max_age);
    let mut tally = LogTally::default();
    let mut leftovers = Vec::new();
    // Candidates by id (oldest first), and what all kept logs add up to.
    let mut prune = Vec::new();
    let mut kept: Vec<(i64, &str, &PathBuf, u64)> = Vec::new();
    let mut total: u64 = 0;
    for (id, path, bytes) in &files {
        match states.get(id) {
            None => leftovers.push((path, *bytes)),
            Some(state) if state.log_pruned => leftovers.push((path, *bytes)),
            Some(state) if state.protected => total += bytes,
            Some(state) if state.ended_at.is_some_and(|ended| ended < old) => {
                prune.push((*id, state.job.as_str(), path, *bytes));
            }
            Some(state) => {
                total += bytes;
                kept.push((*id, state.job.as_str(), path, *bytes));
            }
        }
    }
    let mut kept = kept.into_iter();
    while total > retention.logs_max_total {
        let Some(oldest) = kept.next() else { break };
        total -= oldest.3;
        prune.push(oldest);
    }
    if let Some(short) = shortfall(shared) {
        let going = leftovers.iter().map(|(_, bytes)| bytes).sum::<u64>()
            + prune.iter().map(|(.., bytes)| bytes).sum::<u64>();
        let mut short = short.saturating_sub(going);
        let mut largest: Vec<_> = kept.collect();
        largest.sort_by_key(|&(id, .., bytes)| (std::cmp::Reverse(bytes), id));
        for log in largest {
            if short == 0 {
                break;
            }
            short = short.saturating_sub(log.3);
            prune.push(log);
        }
    }
    prune.sort_unstable_by_key(|(id, ..)| *id);
    for (path, _) in leftovers {
        tally.leftover_bytes += remove_log(path, dry_run);
    }
    if dry_run {
        tally.pruned = prune
            .into_iter()
            .map(|(id, job, _, bytes)| (id, job.to_string(), bytes))
            .collect();
        return Ok(tally);
    }
    // Marked first, then deleted: a file whose deletion is cut short is a leftover the
    // next prune removes, never a row that claims a log it lost without saying so.
    let now = shared.world.clock.now();
    let ids: Vec<i64> = prune.iter().map(|(id, ..)| *id).collect();
    let marked = store.mark_logs_pruned(&ids, now, shared.epoch())?;
    for (id, job, path, _) in prune {
        if marked.binary_search(&id).is_ok() {
            let bytes = remove_log(path, false);
            tally.pruned.push((id, job.to_string(), bytes));
        }
    }
    Ok(tally)
}
