//! Figure: what many runs in flight on one host hold of the ledger, SQLite beside
//! PostgreSQL. On SQLite each run's monitor opens the ledger file itself (processes
//! holding it are counted); on PostgreSQL monitors record through their server, and
//! stead's connections to the database are counted (`pg_stat_activity`).

use std::time::{Duration, Instant};

use anyhow::bail;

use crate::raw_ledger::Backend;
use crate::stead::Stead;

/// How long the runs may take to be all running, or all ended.
const PATIENCE: Duration = Duration::from_secs(120);

#[derive(Debug, Clone)]
pub struct Wide {
    pub runs: u64,
    /// The most the host held of the ledger at once: connections on PostgreSQL,
    /// processes with the file open on SQLite.
    pub peak_held: u64,
    /// From the first `stead run` to all of them running, in milliseconds.
    pub all_running_ms: f64,
}

impl Wide {
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "runs": self.runs,
            "peak_held": self.peak_held,
            "all_running_ms": self.all_running_ms,
        })
    }
}

/// Starts `n` runs that wait for a file, samples what they hold until all run and a
/// little longer, then lets them end.
pub fn wide(stead: &Stead, backend: Backend, n: u64) -> anyhow::Result<Wide> {
    let dir = stead.dir(&backend.dir_name("w"));
    stead.status(&dir, &backend.server_env())?;
    let release = dir.join("release");
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done",
        release.display()
    );
    stead.call(
        &dir,
        &[
            "job",
            "add",
            "w",
            "--concurrency",
            "allow",
            "--shell",
            "--",
            &script,
        ],
    )?;
    let mut reader = backend.reader(&dir)?;
    let started = Instant::now();
    for _ in 0..n {
        stead.call(&dir, &["run", "w"])?;
    }
    let mut peak = 0;
    while reader.running()? < n {
        peak = peak.max(reader.held(&dir)?);
        if started.elapsed() > PATIENCE {
            bail!("{n} runs were not all running after {PATIENCE:?}");
        }
    }
    let all_running = started.elapsed();
    for _ in 0..20 {
        peak = peak.max(reader.held(&dir)?);
    }
    std::fs::write(&release, b"")?;
    let ending = Instant::now();
    while reader.ended()?.0 < n {
        if ending.elapsed() > PATIENCE {
            bail!("{n} runs had not all ended after {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(reader);
    stead.stop(&dir)?;
    Ok(Wide {
        runs: n,
        peak_held: peak,
        all_running_ms: all_running.as_secs_f64() * 1000.0,
    })
}
