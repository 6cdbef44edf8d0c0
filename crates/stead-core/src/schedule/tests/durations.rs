//! Interval schedules.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;
use serde::de::value::{Error as ValueError, StrDeserializer};

use super::support::ts;
use crate::schedule::IntervalSchedule;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn interval_fires_at_anchor_plus_whole_intervals() {
    let every = IntervalSchedule::parse("15m").unwrap();
    assert_eq!(every.every(), secs(900));
    assert_eq!(every.to_string(), "15m");
    assert_eq!(
        "1h30m".parse::<IntervalSchedule>().unwrap().to_string(),
        "1h30m"
    );

    let anchor = ts("2026-03-29T00:50:00+01:00");
    let minutes = |n: i64| anchor + SignedDuration::from_mins(n);
    let nano = SignedDuration::from_nanos(1);
    // The anchor is the job's creation, not a fire.
    assert_eq!(every.next_after(anchor, anchor), minutes(15));
    assert_eq!(every.next_after(anchor, minutes(-600)), minutes(15));
    assert_eq!(every.next_after(anchor, minutes(15) - nano), minutes(15));
    assert_eq!(every.next_after(anchor, minutes(15)), minutes(30));
    // Elapsed time, so the spring-forward gap at 02:00 changes nothing.
    assert_eq!(every.next_after(anchor, minutes(70)), minutes(75));
    assert_eq!(
        every.next_after(anchor, ts("2026-03-29T03:01:00+02:00")),
        ts("2026-03-29T03:05:00+02:00")
    );
    assert_eq!(
        every.next_after(
            Timestamp::MAX - SignedDuration::from_secs(1),
            Timestamp::MAX
        ),
        Timestamp::MAX
    );
}

#[test]
fn interval_rejects_short_and_fractional_durations() {
    for every in [
        Duration::ZERO,
        Duration::from_millis(500),
        Duration::from_millis(1_500),
    ] {
        let err = IntervalSchedule::new(every).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid duration {:?}: an interval must be a whole number of seconds, at least 1s",
                format!("{every:?}")
            )
        );
    }
    assert_eq!(
        IntervalSchedule::parse("0m").unwrap_err().to_string(),
        r#"invalid duration "0m": it is zero; a duration must be at least 1s"#
    );
}

#[test]
fn interval_serializes_as_its_text() {
    let parsed = IntervalSchedule::deserialize(StrDeserializer::<ValueError>::new("90m")).unwrap();
    assert_eq!(String::from(parsed), "1h30m");
    let err = IntervalSchedule::deserialize(StrDeserializer::<ValueError>::new("0s")).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid duration "0s": it is zero; a duration must be at least 1s"#
    );
}
