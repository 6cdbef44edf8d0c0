//! Reading what `stead-probe` (the command of the latency figures' jobs, `src/bin`)
//! wrote: one line per run, saying which fire it was for and when its process started.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One line the probe wrote.
pub struct Sample {
    /// The run and the fire it was for; `None` when not started by stead (cron).
    pub run_id: Option<i64>,
    pub trigger: String,
    pub scheduled_at: Option<jiff::Timestamp>,
    /// When the probe's `main` began: after the monitor's spawn and the loading of the
    /// probe.
    pub started: SystemTime,
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
            run_id: (id != "-").then(|| id.parse()).transpose()?,
            trigger: trigger.to_string(),
            scheduled_at: (at != "-").then(|| at.parse()).transpose()?,
            started: UNIX_EPOCH + Duration::from_nanos(nanos),
        });
    }
    Ok(samples)
}
