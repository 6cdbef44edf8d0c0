//! Helpers shared by the schedule tests.

use jiff::{Timestamp, Zoned};

use crate::schedule::{CronSchedule, next_fires};

/// An instant from RFC 3339 text with an offset.
pub(crate) fn ts(text: &str) -> Timestamp {
    text.parse()
        .unwrap_or_else(|e| panic!("bad test instant {text:?}: {e}"))
}

/// RFC 3339 with the zone's offset at that instant, such as
/// `2026-03-29T03:00:00+02:00`.
pub(crate) fn rfc3339(fire: &Zoned) -> String {
    fire.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

/// The next `count` fires after `after`, as RFC 3339 text.
pub(crate) fn fires(expr: &str, zone: &str, after: &str, count: usize) -> Vec<String> {
    next_fires(expr, zone, ts(after), count)
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(rfc3339)
        .collect()
}

pub(crate) fn schedule(expr: &str, zone: &str) -> CronSchedule {
    CronSchedule::parse(expr, zone).unwrap_or_else(|e| panic!("{e}"))
}
