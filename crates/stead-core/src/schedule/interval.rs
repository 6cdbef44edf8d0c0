//! Fixed-interval schedules (`--every 15m`), anchored at an instant such as
//! the job's creation.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::schedule::{ScheduleError, format_duration, parse_duration};

/// Fires every `every`, counted from an anchor: at `anchor + k * every` for
/// k = 1, 2, 3, ... The anchor itself is not a fire, so a job created with
/// `--every 1h` first runs an hour after it was created.
///
/// Intervals are exact elapsed time, unaffected by time zones and daylight
/// saving. Serialized as the duration text, e.g. `"1h30m"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IntervalSchedule {
    every: Duration,
}

impl IntervalSchedule {
    /// A schedule firing every `every`: whole seconds, at least one.
    ///
    /// Whole seconds keep the interval's text form exact, which is how it is
    /// stored and shown.
    pub fn new(every: Duration) -> Result<Self, ScheduleError> {
        if every < Duration::from_secs(1) || every.subsec_nanos() != 0 {
            return Err(ScheduleError::InvalidDuration {
                value: format!("{every:?}"),
                reason: "an interval must be a whole number of seconds, at least 1s".into(),
            });
        }
        Ok(IntervalSchedule { every })
    }

    /// Parses the `--every` argument, such as `15m` or `1h30m`.
    pub fn parse(s: &str) -> Result<Self, ScheduleError> {
        IntervalSchedule::new(parse_duration(s)?)
    }

    /// The interval between fires.
    pub fn every(&self) -> Duration {
        self.every
    }

    /// The first fire strictly after `after`, counting from `anchor`.
    ///
    /// Before the anchor the answer is the first fire, `anchor + every`. A
    /// fire past the end of jiff's range (year 9999) saturates to
    /// [`Timestamp::MAX`].
    pub fn next_after(&self, anchor: Timestamp, after: Timestamp) -> Timestamp {
        let every = self.every.as_nanos() as i128;
        let elapsed = after.as_nanosecond() - anchor.as_nanosecond();
        let k = if elapsed < 0 { 1 } else { elapsed / every + 1 };
        Timestamp::from_nanosecond(anchor.as_nanosecond() + k * every).unwrap_or(Timestamp::MAX)
    }
}

impl fmt::Display for IntervalSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration(self.every))
    }
}

impl FromStr for IntervalSchedule {
    type Err = ScheduleError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        IntervalSchedule::parse(s)
    }
}

impl TryFrom<String> for IntervalSchedule {
    type Error = ScheduleError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        IntervalSchedule::parse(&s)
    }
}

impl From<IntervalSchedule> for String {
    fn from(schedule: IntervalSchedule) -> String {
        schedule.to_string()
    }
}
