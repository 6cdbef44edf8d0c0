//! `CronSchedule`: a checked cron expression bound to a time zone, with its
//! next-fire queries.

use std::fmt;

use croner::Cron;
use croner::parser::CronParser;
use jiff::civil::{Date, date};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use serde::{Deserialize, Serialize};

use crate::schedule::{ScheduleError, expr, fire, zone};

/// A five-field cron expression evaluated in an IANA time zone.
///
/// Serialized as `{"expr": ..., "zone": ...}`; deserializing checks both
/// again, so a stored schedule that no longer parses is an error, not a
/// silent default.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "Stored", into = "Stored")]
pub struct CronSchedule {
    expr: String,
    zone_name: String,
    tz: TimeZone,
    cron: Cron,
    wildcard: bool,
}

impl CronSchedule {
    /// Parses `expr` (five fields or an `@` macro) for the zone named `zone`.
    pub fn parse(expr: &str, zone: &str) -> Result<CronSchedule, ScheduleError> {
        let invalid = |reason: String| ScheduleError::InvalidCron {
            expr: expr.to_string(),
            reason,
        };
        let parsed = expr::parse(expr).map_err(invalid)?;
        // The pattern is built from checked fields, so croner refusing it
        // would be a bug here; say so rather than blame the user's input.
        let cron = CronParser::new().parse(&parsed.pattern).map_err(|e| {
            invalid(format!(
                "internal pattern {:?} rejected: {e}",
                parsed.pattern
            ))
        })?;
        if !ever_fires(&cron, &parsed) {
            return Err(invalid(never_fires_reason(&parsed)));
        }
        let (tz, zone_name) = zone::load(zone)?;
        Ok(CronSchedule {
            expr: expr.trim().to_string(),
            zone_name,
            tz,
            cron,
            wildcard: parsed.wildcard,
        })
    }

    /// The expression, as given less surrounding whitespace.
    pub fn expr(&self) -> &str {
        &self.expr
    }

    /// The zone's canonical IANA name, such as `Europe/Berlin`.
    pub fn zone_name(&self) -> &str {
        &self.zone_name
    }

    /// The first fire strictly after `after`, in the schedule's zone.
    ///
    /// `None` only when nothing fires up to the year 5000, where croner stops.
    pub fn next_after(&self, after: Timestamp) -> Option<Zoned> {
        fire::next_after(&self.cron, self.wildcard, &self.tz, after)
    }

    /// Every fire in `(after, until]`, earliest first in real time.
    pub fn fires_between(&self, after: Timestamp, until: Timestamp) -> impl Iterator<Item = Zoned> {
        std::iter::successors(self.next_after(after), |fire| {
            self.next_after(fire.timestamp())
        })
        .take_while(move |fire| fire.timestamp() <= until)
    }
}

impl fmt::Display for CronSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.expr)
    }
}

/// Equal when the expression text and the zone are; `@daily` and
/// `0 0 * * *` fire alike but are different schedules as written.
impl PartialEq for CronSchedule {
    fn eq(&self, other: &Self) -> bool {
        self.expr == other.expr && self.zone_name == other.zone_name
    }
}

impl Eq for CronSchedule {}

/// Whether some day matches the day and month fields. Only expressions
/// where a day must match both day fields can fail; Debian's cron accepts
/// those silently and never runs them (`0 0 30 2 *`), stead refuses them.
fn ever_fires(cron: &Cron, parsed: &expr::Parsed) -> bool {
    let (start, days) = if !parsed.days_and || parsed.dom_all {
        return true;
    } else if parsed.dow_all {
        // Weekdays play no part, so one leap year holds every month and day.
        (date(2028, 1, 1), 366)
    } else {
        // The calendar's weekdays and leap years repeat every 28 years
        // within 1901-2099, so these cover every combination.
        (date(2001, 1, 1), 28 * 365 + 7)
    };
    let probe = |day: Date| day.at(parsed.first_hour, parsed.first_minute, 0, 0);
    std::iter::successors(Some(start), |day| day.tomorrow().ok())
        .take(days)
        .any(|day| cron.is_time_matching(&probe(day)).unwrap_or(false))
}

fn never_fires_reason(parsed: &expr::Parsed) -> String {
    let [_, _, dom, month, dow] = &parsed.fields;
    if parsed.dow_all {
        format!("it never fires: no month {month:?} has a day matching day-of-month {dom:?}")
    } else {
        format!(
            "it never fires: no day in month {month:?} matches both day-of-month {dom:?} \
             and day-of-week {dow:?}"
        )
    }
}

/// The stored form of a [`CronSchedule`].
#[derive(Serialize, Deserialize)]
struct Stored {
    expr: String,
    zone: String,
}

impl TryFrom<Stored> for CronSchedule {
    type Error = ScheduleError;

    fn try_from(stored: Stored) -> Result<Self, Self::Error> {
        CronSchedule::parse(&stored.expr, &stored.zone)
    }
}

impl From<CronSchedule> for Stored {
    fn from(schedule: CronSchedule) -> Stored {
        Stored {
            expr: schedule.expr,
            zone: schedule.zone_name,
        }
    }
}
