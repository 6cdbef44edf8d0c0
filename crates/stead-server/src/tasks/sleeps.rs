//! The sleep watch: reads the machine's clocks (wall, awake, since boot) at every
//! heartbeat and every pass of the scheduler, and puts each sleep it notices on the
//! ledger, with the time it adds to the runs it fell into (`stead_core::sleep` decides,
//! from two readings, between a sleep, a wall clock set forward or back, and nothing).
//!
//! The scheduler samples too: after a wake it is the first to run (it re-reads the wall
//! clock every second, while the heartbeat's timer, on the awake clock, still waits out
//! its interval), and the fires it records as missed name the sleep they fell into.
//!
//! The clock since boot of a real suspend cannot be moved by a test (libfaketime moves
//! the wall clock; SIGSTOP stops no clock): `STEAD_TEST_ASLEEP_FILE` names a file whose
//! number of milliseconds is added to the clock since boot as read, so a test can show
//! the server a sleep as a suspend would. Unset, the clocks are read as they are.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use stead_core::clock::rfc3339;
use stead_core::sleep::{Readings, Slept, Step, Verdict, judge, slept_words};
use stead_store::NewSleep;
use tracing::{info, warn};

use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

/// The variable naming the file a test moves the clock since boot by.
pub const ASLEEP_FILE_VAR: &str = "STEAD_TEST_ASLEEP_FILE";

/// How many of the latest sleeps the scheduler can name.
const RECENT: usize = 16;

/// The last reading, the sleeps lately noticed, and those not yet on the ledger.
#[derive(Debug)]
pub struct SleepWatch {
    last: Mutex<Option<Readings>>,
    recent: Mutex<VecDeque<Slept>>,
    /// Sleeps whose recording failed (a shared ledger out of reach just after a wake),
    /// written at the next sample.
    unrecorded: Mutex<Vec<NewSleep>>,
    asleep_file: Option<PathBuf>,
}

impl Default for SleepWatch {
    fn default() -> Self {
        Self {
            last: Mutex::new(None),
            recent: Mutex::new(VecDeque::new()),
            unrecorded: Mutex::new(Vec::new()),
            asleep_file: std::env::var_os(ASLEEP_FILE_VAR).map(PathBuf::from),
        }
    }
}

impl SleepWatch {
    /// Reads the clocks, with `wall` as the wall clock's reading.
    fn read(&self, wall: Timestamp) -> Readings {
        let clocks = stead_sys::clock::Readings::now();
        let extra = self
            .asleep_file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map_or(Duration::ZERO, Duration::from_millis);
        Readings {
            wall,
            awake: clocks.awake,
            since_boot: clocks.since_boot + extra,
        }
    }

    /// Reads the clocks and judges what happened since the last reading.
    pub fn sample(&self, wall: Timestamp) -> Verdict {
        let now = self.read(wall);
        let mut last = lock(&self.last);
        let verdict = match last.as_ref() {
            Some(before) => judge(before, &now),
            None => Verdict::Nothing,
        };
        *last = Some(now);
        if let Verdict::Slept { slept, .. } = verdict {
            let mut recent = lock(&self.recent);
            if recent.len() == RECENT {
                recent.pop_front();
            }
            recent.push_back(slept);
        }
        verdict
    }

    /// The words naming the sleep lately noticed that `at` fell into, if one did.
    pub fn during(&self, at: Timestamp) -> Option<String> {
        let recent = lock(&self.recent);
        recent
            .iter()
            .rev()
            .find(|s| s.started_at <= at && at <= s.ended_at)
            .map(|s| slept_words(s.started_at, s.ended_at))
    }
}

/// Samples the clocks; a sleep noticed is logged and put on the ledger (with any whose
/// recording failed before).
pub async fn observe(shared: &Arc<Shared>) {
    match shared.sleeps.sample(shared.world.clock.now()) {
        Verdict::Nothing | Verdict::Unrelated => {}
        Verdict::Set(step) => {
            info!(set = %step_words(step), "the wall clock was set");
        }
        Verdict::Slept { slept, step } => {
            info!(
                started_at = %rfc3339(slept.started_at),
                ended_at = %rfc3339(slept.ended_at),
                slept_ms = slept.duration.as_millis() as u64,
                set = step.map(step_words).unwrap_or_default(),
                "the machine slept"
            );
            let new = NewSleep::of(&shared.world.machine_id, &shared.me.host_name, &slept, step);
            lock(&shared.sleeps.unrecorded).push(new);
        }
    }
    let due = std::mem::take(&mut *lock(&shared.sleeps.unrecorded));
    if due.is_empty() {
        return;
    }
    let recorded = blocking(shared, move |s| {
        for (i, sleep) in due.iter().enumerate() {
            match s.world.store.sleep_record(sleep, s.epoch()) {
                Ok((id, runs)) => info!(sleep = id, runs, "recorded the sleep"),
                Err(e) => {
                    warn!(cause = %e, "failed to record a sleep; trying again at the next heartbeat");
                    return Ok(due[i..].to_vec());
                }
            }
        }
        Ok(Vec::new())
    })
    .await;
    match recorded {
        Ok(left) if left.is_empty() => {
            // Holds' expiries moved, and the dashboard draws the sleep.
            shared.changed();
        }
        Ok(left) => {
            lock(&shared.sleeps.unrecorded).splice(0..0, left);
        }
        Err(e) => warn!(cause = %e.message, "failed to record a sleep"),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn step_words(step: Step) -> String {
    match step {
        Step::Forward(d) => format!("forward by {} ms", d.as_millis()),
        Step::Back(d) => format!("back by {} ms", d.as_millis()),
    }
}
