//! The `retention` suite: what pruning buys and what it costs on a large SQLite ledger.
//!
//! One job's ledger is filled with [`ROWS`] finished runs (inserted directly, in one
//! transaction, while the server is stopped), then the job is told to keep its newest
//! [`KEEP`] (`keep_runs` through `stead apply`) and `stead prune` removes the rest. The
//! figures: the ledger's files and `stead runs --limit 50` before and after, the prune's
//! throughput, and the longest another writer waited for the ledger while it ran (a
//! thread that takes and drops the write lock, `BEGIN IMMEDIATE`, over and over): how
//! long one batch held it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rusqlite::{Connection, TransactionBehavior};
use serde_json::{Value, json};

use crate::figures::{Stats, series, timed};
use crate::raw_ledger;
use crate::stead::Stead;

/// Runs in the ledger before the prune.
pub const ROWS: u64 = 1_000_000;
/// Runs the job keeps.
pub const KEEP: u64 = 100_000;
/// A year of a minutely job.
pub const YEAR: u64 = 365 * 24 * 60;

/// The ledger's files, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Files {
    pub db: u64,
    pub wal: u64,
}

impl Files {
    fn of(dir: &Path) -> Self {
        let size = |suffix: &str| {
            std::fs::metadata(dir.join(format!("stead.db{suffix}"))).map_or(0, |m| m.len())
        };
        Self {
            db: size(""),
            wal: size("-wal"),
        }
    }
}

pub struct RetentionReport {
    pub stead: String,
    pub rows: u64,
    pub kept: u64,
    pub before: Files,
    pub after: Files,
    pub listing_before: Stats,
    pub listing_after: Stats,
    pub removed: u64,
    pub prune: Duration,
    /// The longest one batch held the ledger, as the server measured it.
    pub longest_batch_ms: u64,
    /// The longest wait for the write lock while the prune ran, and how many waits.
    pub longest_hold: Duration,
    pub probes: u64,
    /// The server's resident memory (VmRSS, MiB) with a ledger of one run, then with a
    /// year of a minutely job's runs, each after `status` and `runs --limit 50`.
    pub memory_fresh_mib: f64,
    pub memory_year_mib: f64,
}

/// The server's resident memory once it has served `status` and `runs --limit 50`.
fn served_memory(stead: &Stead, dir: &Path, env: &[(&str, &str)]) -> anyhow::Result<f64> {
    let pid = stead.status(dir, env)?.pid;
    stead.call(dir, &["runs", "--limit", "50", "--json"])?;
    stead.status(dir, env)?;
    Ok(crate::proc::memory_mib(pid)?.0)
}

/// Memory with a fresh ledger, then with a year of a minutely job (`YEAR` runs).
fn year_of_memory(stead: &Stead, env: &[(&str, &str)]) -> anyhow::Result<(f64, f64)> {
    let dir = stead.dir("year");
    raw_ledger::with_one_run(stead, &dir, env, "m")?;
    let fresh = served_memory(stead, &dir, env)?;
    crate::progress(&format!("retention: a year of a minutely job, {YEAR} runs"));
    raw_ledger::refill(stead, &dir, env, "m", YEAR - 1)?;
    let year = served_memory(stead, &dir, env)?;
    stead.stop(&dir)?;
    Ok((fresh, year))
}

/// Takes and drops the ledger's write lock until told to stop; answers the longest wait
/// and the number of waits.
fn probe_writer(path: &Path, stop: &AtomicBool) -> anyhow::Result<(Duration, u64)> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(60))?;
    let (mut longest, mut n) = (Duration::ZERO, 0);
    while !stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        longest = longest.max(start.elapsed());
        tx.rollback()?;
        n += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok((longest, n))
}

fn listing(stead: &Stead, dir: &Path, n: usize) -> anyhow::Result<Stats> {
    series(n, || {
        let got = stead
            .json(dir, &["runs", "--limit", "50", "--json"])?
            .as_array()
            .map_or(0, Vec::len);
        if got != 50 {
            bail!("stead runs listed {got} runs, not 50");
        }
        Ok(())
    })
}

pub fn run(stead: &Stead, n: usize) -> anyhow::Result<RetentionReport> {
    let dir = stead.dir("ret");
    // No periodic prune during the figures; the one at start finds nothing to do.
    let env = [("STEAD_RETENTION_INTERVAL_MS", "86400000")];
    raw_ledger::with_one_run(stead, &dir, &env, "q")?;
    crate::progress(&format!("retention: inserting {ROWS} runs"));
    raw_ledger::refill(stead, &dir, &env, "q", ROWS - 1)?;
    let before = Files::of(&dir);
    let listing_before = listing(stead, &dir, n)?;

    let file = dir.join("keep.toml");
    std::fs::write(
        &file,
        format!(
            "[[job]]\nname = \"q\"\ncommand = [\"true\"]\nconcurrency = \"allow\"\nkeep_runs = {KEEP}\n"
        ),
    )?;
    stead.call(&dir, &["apply", &file.to_string_lossy()])?;

    crate::progress(&format!("retention: pruning to {KEEP} runs"));
    let stop = Arc::new(AtomicBool::new(false));
    let prober = {
        let (path, stop) = (raw_ledger::ledger(&dir), stop.clone());
        std::thread::spawn(move || probe_writer(&path, &stop))
    };
    let pruned = timed(|| stead.json(&dir, &["prune", "--json"]));
    stop.store(true, Ordering::Relaxed);
    let (longest_hold, probes) = prober
        .join()
        .map_err(|_| anyhow::anyhow!("the lock probe panicked"))??;
    let (prune, result) = pruned?;
    let removed = result["runs"]
        .as_u64()
        .context("no runs in prune's answer")?;
    let longest_batch_ms = result["longest_batch_ms"].as_u64().unwrap_or(0);
    let after = Files::of(&dir);
    let listing_after = listing(stead, &dir, n)?;
    let kept = raw_ledger::read_only(&dir)?
        .query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))? as u64;
    stead.stop(&dir)?;
    let (memory_fresh_mib, memory_year_mib) = year_of_memory(stead, &env)?;
    Ok(RetentionReport {
        stead: stead.exe().display().to_string(),
        rows: ROWS,
        kept,
        before,
        after,
        listing_before,
        listing_after,
        removed,
        prune,
        longest_batch_ms,
        longest_hold,
        probes,
        memory_fresh_mib,
        memory_year_mib,
    })
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

impl RetentionReport {
    fn per_second(&self) -> f64 {
        self.removed as f64 / self.prune.as_secs_f64()
    }

    pub fn table(&self) -> String {
        let stats =
            |s: &Stats| format!("median {:.2} ms, p90 {:.2} ms (n={})", s.median, s.p90, s.n);
        format!(
            "retention ({})\n\
             ledger with {} runs: stead.db {:.1} MiB, WAL {:.1} MiB\n\
             stead runs --limit 50: {}\n\
             stead prune: removed {} runs in {:.2} s ({:.0} runs/s), {} kept\n\
             longest batch (held the ledger): {} ms\n\
             longest wait of another writer for the write lock during the prune: {:.1} ms ({} waits)\n\
             after: stead.db {:.1} MiB, WAL {:.1} MiB\n\
             stead runs --limit 50: {}\n\
             server memory (VmRSS) after status and runs --limit 50: {:.1} MiB with one run, {:.1} MiB with a year of a minutely job ({} runs)\n",
            self.stead,
            self.rows,
            mib(self.before.db),
            mib(self.before.wal),
            stats(&self.listing_before),
            self.removed,
            self.prune.as_secs_f64(),
            self.per_second(),
            self.kept,
            self.longest_batch_ms,
            self.longest_hold.as_secs_f64() * 1e3,
            self.probes,
            mib(self.after.db),
            mib(self.after.wal),
            stats(&self.listing_after),
            self.memory_fresh_mib,
            self.memory_year_mib,
            YEAR,
        )
    }

    pub fn json(&self) -> Value {
        let stats = |s: &Stats| json!({"n": s.n, "median_ms": s.median, "p90_ms": s.p90, "min_ms": s.min, "max_ms": s.max});
        json!({
            "rows": self.rows,
            "kept": self.kept,
            "db_bytes_before": self.before.db,
            "wal_bytes_before": self.before.wal,
            "db_bytes_after": self.after.db,
            "wal_bytes_after": self.after.wal,
            "runs_limit_50_before": stats(&self.listing_before),
            "runs_limit_50_after": stats(&self.listing_after),
            "removed": self.removed,
            "prune_s": self.prune.as_secs_f64(),
            "runs_per_s": self.per_second(),
            "longest_batch_ms": self.longest_batch_ms,
            "longest_lock_wait_ms": self.longest_hold.as_secs_f64() * 1e3,
            "lock_waits": self.probes,
            "memory_fresh_mib": self.memory_fresh_mib,
            "memory_year_mib": self.memory_year_mib,
            "year_runs": YEAR,
        })
    }
}
