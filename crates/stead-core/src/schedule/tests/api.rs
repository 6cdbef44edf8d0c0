//! Accessors, zone handling, serialization and `next_fires`.

use jiff::Timestamp;
use serde::Deserialize;
use serde::de::value::{Error as ValueError, MapDeserializer};

use super::support::{fires, schedule, ts};
use crate::schedule::{CronSchedule, machine_zone, next_fires};

#[test]
fn accessors_and_display() {
    let s = schedule("*/5 9-17 * * MON-FRI", "europe/berlin");
    assert_eq!(s.expr(), "*/5 9-17 * * MON-FRI");
    assert_eq!(s.zone_name(), "Europe/Berlin");
    assert_eq!(s.to_string(), "*/5 9-17 * * MON-FRI");
    assert_eq!(schedule("@daily", "utc").zone_name(), "UTC");
    assert_eq!(s, schedule("*/5 9-17 * * MON-FRI", "Europe/Berlin"));
    assert_ne!(s, schedule("*/5 9-17 * * MON-FRI", "Europe/Paris"));
}

#[test]
fn machine_zone_is_a_loadable_name() {
    let zone = machine_zone();
    assert!(CronSchedule::parse("* * * * *", &zone).is_ok(), "{zone}");
}

#[test]
fn next_after_is_in_the_schedule_zone() {
    let fire = schedule("0 9 * * *", "Asia/Kolkata")
        .next_after(ts("2026-01-01T00:00:00Z"))
        .unwrap();
    assert_eq!(fire.time_zone().iana_name(), Some("Asia/Kolkata"));
    assert_eq!(fire.to_string(), "2026-01-01T09:00:00+05:30[Asia/Kolkata]");
    // Strictly after: a fire at exactly `after` is not returned.
    let again = schedule("0 9 * * *", "Asia/Kolkata").next_after(fire.timestamp());
    assert_eq!(
        again.unwrap().to_string(),
        "2026-01-02T09:00:00+05:30[Asia/Kolkata]"
    );
}

#[test]
fn sub_second_starts() {
    let after = ts("2026-01-01T09:00:00.5Z");
    assert_eq!(
        schedule("* * * * *", "UTC")
            .next_after(after)
            .unwrap()
            .to_string(),
        "2026-01-01T09:01:00+00:00[UTC]"
    );
}

#[test]
fn next_fires_previews_a_schedule() {
    assert_eq!(
        fires("0 12 1 * *", "America/New_York", "2026-01-15T00:00:00Z", 3),
        [
            "2026-02-01T12:00:00-05:00",
            "2026-03-01T12:00:00-05:00",
            "2026-04-01T12:00:00-04:00",
        ]
    );
    assert!(
        next_fires("* * * * *", "UTC", Timestamp::UNIX_EPOCH, 0)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        next_fires("* * * * *", "Mars/Olympus", Timestamp::UNIX_EPOCH, 1)
            .unwrap_err()
            .to_string(),
        r#"unknown time zone "Mars/Olympus""#
    );
}

#[test]
fn schedules_end_at_the_search_limit() {
    let s = schedule("0 0 1 1 *", "UTC");
    assert_eq!(s.next_after(ts("5000-06-01T00:00:00Z")), None);
    assert_eq!(
        s.fires_between(ts("4998-06-01T00:00:00Z"), Timestamp::MAX)
            .count(),
        2
    );
}

fn stored(expr: &str, zone: &str) -> Result<CronSchedule, ValueError> {
    CronSchedule::deserialize(MapDeserializer::<_, ValueError>::new(
        [("expr", expr), ("zone", zone)].into_iter(),
    ))
}

#[test]
fn cron_schedule_deserializes_and_checks_again() {
    assert_eq!(
        stored("0 0 * * *", "UTC").unwrap(),
        schedule("0 0 * * *", "UTC")
    );
    assert_eq!(
        stored("61 * * * *", "UTC").unwrap_err().to_string(),
        r#"invalid cron expression "61 * * * *": minute field "61" is out of range 0-59"#
    );
    assert_eq!(
        stored("0 0 * * *", "Mars/Olympus").unwrap_err().to_string(),
        r#"unknown time zone "Mars/Olympus""#
    );
}
