//! Sleeps on the ledger: each sleep a server lived through (told from a wall-clock
//! change by `stead_core::sleep`), written with the time it adds to every run it fell
//! into, in one transaction.

use jiff::Timestamp;
use stead_core::sleep::{Slept, Step};
use stead_protocol::Sleep;
use stead_protocol::limits::MAX_RUN_LIST;

use crate::StoreError;
use crate::backend::sealed::Backend;
use crate::backend::{Guard, SleepSteps};

/// A sleep to record: which host slept, and when and how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSleep {
    pub machine_id: String,
    pub host: String,
    pub started_at: Timestamp,
    pub ended_at: Timestamp,
    pub duration_ms: i64,
    /// How far the wall clock was set besides (positive: forward).
    pub wall_set_ms: Option<i64>,
}

impl NewSleep {
    /// The sleep `slept` of host `host` (`machine_id`), with the setting of the wall
    /// clock that came with it.
    pub fn of(machine_id: &str, host: &str, slept: &Slept, step: Option<Step>) -> Self {
        let ms = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        Self {
            machine_id: machine_id.to_string(),
            host: host.to_string(),
            started_at: slept.started_at,
            ended_at: slept.ended_at,
            duration_ms: ms(slept.duration),
            wall_set_ms: step.map(|s| match s {
                Step::Forward(d) => ms(d),
                Step::Back(d) => -ms(d),
            }),
        }
    }
}

pub trait Sleeps {
    /// Records a sleep of this host, adds it to the runs it fell into and to the holds
    /// live when it began; answers the sleep's id and how many runs.
    fn sleep_record(&self, sleep: &NewSleep, epoch: i64) -> Result<(i64, u64), StoreError>;
    /// The newest sleeps first, at most `limit` (default 50).
    fn sleep_list(&self, limit: Option<u32>) -> Result<Vec<Sleep>, StoreError>;
}

/// How many sleeps a listing gives when it says nothing.
pub const DEFAULT_SLEEP_LIST: u32 = 50;

impl<B: Backend> Sleeps for B {
    fn sleep_record(&self, sleep: &NewSleep, epoch: i64) -> Result<(i64, u64), StoreError> {
        self.write(Guard::Host(epoch), &mut |tx| {
            let id = tx.sleep_insert(sleep)?;
            let runs = tx.runs_add_slept(sleep)?;
            tx.holds_add_slept(sleep)?;
            Ok((id, runs))
        })
    }

    fn sleep_list(&self, limit: Option<u32>) -> Result<Vec<Sleep>, StoreError> {
        let limit = limit.unwrap_or(DEFAULT_SLEEP_LIST).min(MAX_RUN_LIST);
        self.read(&mut |tx| tx.sleep_list(limit))
    }
}
