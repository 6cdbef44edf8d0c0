//! Job schedules: cron expressions in an IANA time zone, fixed intervals,
//! and the durations they are written with (read by `stead_protocol::units`).
//!
//! Cron expressions are read as Debian's cron reads them, and fire times
//! follow its daylight-saving rules (`docs/scheduling.md` has the user's
//! view). Everything here is a pure function of its
//! arguments and the time zone database, except [`machine_zone`], which
//! reads the machine's zone setting.

mod cron;
mod error;
mod expr;
mod fire;
mod interval;
mod zone;

#[cfg(test)]
mod tests;

use jiff::{Timestamp, Zoned};

pub use cron::CronSchedule;
pub use error::ScheduleError;
pub use interval::IntervalSchedule;
pub use zone::machine_zone;
// Read in stead-protocol so that the client library reads its config with them too.
pub use stead_protocol::units::{format_delay, format_duration, parse_delay, parse_duration};

/// The first `count` fires of `expr` in `zone` strictly after `after`, for
/// previewing a schedule (`stead cron next`). Fewer when the schedule ends
/// by the year 5000.
pub fn next_fires(
    expr: &str,
    zone: &str,
    after: Timestamp,
    count: usize,
) -> Result<Vec<Zoned>, ScheduleError> {
    let schedule = CronSchedule::parse(expr, zone)?;
    Ok(std::iter::successors(schedule.next_after(after), |fire| {
        schedule.next_after(fire.timestamp())
    })
    .take(count)
    .collect())
}
