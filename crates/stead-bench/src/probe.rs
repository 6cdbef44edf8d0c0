//! The probe a scheduled job runs in the latency figure: it appends one line to a file
//! saying which fire it was for and when its process started.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One line the probe wrote.
pub struct Sample {
    pub run_id: i64,
    pub trigger: String,
    pub scheduled_at: jiff::Timestamp,
    /// When the probe's `main` began: after the monitor's fork and exec and the loading
    /// of this executable.
    pub started: SystemTime,
}

/// Entry point of `stead-bench probe FILE`: `started` is the first thing `main` took.
/// Appends `RUN_ID TRIGGER STEAD_SCHEDULED_AT START_NANOS` in one write.
pub fn main(file: &Path, started: SystemTime) -> anyhow::Result<()> {
    let nanos = started.duration_since(UNIX_EPOCH)?.as_nanos();
    let var = |name| std::env::var(name).unwrap_or_else(|_| "-".to_string());
    let line = format!(
        "{} {} {} {nanos}\n",
        var("STEAD_RUN_ID"),
        var("STEAD_TRIGGER"),
        var("STEAD_SCHEDULED_AT")
    );
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?
        .write_all(line.as_bytes())?;
    Ok(())
}

/// The lines written so far (a missing file has none).
pub fn read(file: &Path) -> anyhow::Result<Vec<Sample>> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut samples = Vec::new();
    // Only whole lines: a probe may be writing the last one.
    for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [id, trigger, at, nanos] = fields[..] else {
            anyhow::bail!("a probe wrote {line:?}");
        };
        let nanos: u64 = nanos.parse()?;
        samples.push(Sample {
            run_id: id.parse()?,
            trigger: trigger.to_string(),
            scheduled_at: at.parse()?,
            started: UNIX_EPOCH + Duration::from_nanos(nanos),
        });
    }
    Ok(samples)
}
