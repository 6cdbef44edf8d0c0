//! The `sleep` suite: what telling a sleep from a wall-clock change costs the server at
//! each heartbeat (and each pass of its scheduler): reading the wall clock, the awake
//! clock and the clock since boot, and judging the readings against the last ones
//! (`stead_core::sleep::judge`), as the server's sleep watch does. In process: the
//! figure is the work itself, which a whole server's noise would hide.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use stead_core::sleep::{Readings, Verdict, judge};

use crate::figures::Stats;

/// Samples per timed batch: one sample takes well under a microsecond, so a batch is
/// what the clock can time.
const BATCH: u32 = 10_000;

pub struct SleepReport {
    /// Nanoseconds per sample, over the batches.
    pub per_sample_ns: Stats,
    pub batches: usize,
}

fn read() -> Readings {
    let clocks = stead_sys::clock::Readings::now();
    Readings {
        wall: jiff::Timestamp::now(),
        awake: clocks.awake,
        since_boot: clocks.since_boot,
    }
}

pub fn run(batches: usize) -> anyhow::Result<SleepReport> {
    let mut last = read();
    let mut per_sample = Vec::with_capacity(batches);
    let mut slept = 0u32;
    for _ in 0..batches {
        let started = Instant::now();
        for _ in 0..BATCH {
            let now = read();
            if matches!(black_box(judge(&last, &now)), Verdict::Slept { .. }) {
                slept += 1;
            }
            last = now;
        }
        per_sample.push(started.elapsed() / BATCH);
    }
    if slept > 0 {
        anyhow::bail!("the machine slept during the measurement: run it again");
    }
    Ok(SleepReport {
        per_sample_ns: Stats::of_ms(
            per_sample
                .iter()
                .map(|d: &Duration| d.as_secs_f64() * 1e9)
                .collect(),
        ),
        batches,
    })
}

impl SleepReport {
    pub fn json(&self) -> Value {
        let s = self.per_sample_ns;
        json!({
            "detector_per_heartbeat_ns": {
                "median": s.median, "p90": s.p90, "min": s.min, "max": s.max,
                "batches": self.batches, "samples_per_batch": BATCH,
            },
        })
    }

    pub fn table(&self) -> String {
        let s = self.per_sample_ns;
        format!(
            "sleep detector, per heartbeat (three clocks read, judged against the last reading)\n  median {:.0} ns, p90 {:.0} ns, min {:.0} ns, max {:.0} ns ({} batches of {BATCH})\n",
            s.median, s.p90, s.min, s.max, self.batches
        )
    }
}
