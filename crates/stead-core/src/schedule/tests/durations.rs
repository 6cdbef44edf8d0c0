//! Duration parsing and formatting, and interval schedules.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;
use serde::de::value::{Error as ValueError, StrDeserializer};

use super::support::ts;
use crate::schedule::{IntervalSchedule, ScheduleError, format_duration, parse_duration};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn parses_the_documented_forms() {
    let cases = [
        ("30s", 30),
        ("15m", 900),
        ("1h30m", 5_400),
        ("2h", 7_200),
        ("1d", 86_400),
        ("1d2h3m4s", 93_784),
        ("90m", 5_400),
        (" 5m ", 300),
        ("007s", 7),
    ];
    for (text, seconds) in cases {
        assert_eq!(parse_duration(text), Ok(secs(seconds)), "{text}");
    }
}

#[test]
fn rejects_bad_durations_naming_the_value() {
    let how = "write numbers with units d, h, m or s, like 30s, 15m, 1h30m or 1d";
    let cases = [
        ("", format!("it is empty; {how}")),
        (
            "0s",
            "it is zero; a duration must be at least 1s".to_string(),
        ),
        (
            "0h0m",
            "it is zero; a duration must be at least 1s".to_string(),
        ),
        (
            "-5m",
            "it is negative; a duration must be at least 1s".to_string(),
        ),
        (
            "1.5h",
            "fractions are not supported; write 1h30m rather than 1.5h".to_string(),
        ),
        (
            "500ms",
            "units below a second are not supported; a duration must be at least 1s".to_string(),
        ),
        ("30", format!("30 has no unit; {how}")),
        ("h", format!("expected a number at \"h\"; {how}")),
        ("1h 30m", format!("expected a number at \" 30m\"; {how}")),
        ("5x", format!("unknown unit \"x\"; {how}")),
        ("1y", format!("unknown unit \"y\"; {how}")),
        ("1H", format!("unknown unit \"H\"; {how}")),
        (
            "30m1h",
            "units must come largest first, each at most once (d, h, m, s)".to_string(),
        ),
        (
            "1h1h",
            "units must come largest first, each at most once (d, h, m, s)".to_string(),
        ),
        ("99999999999999999999s", "it is too large".to_string()),
        ("999999999999999999d", "it is too large".to_string()),
    ];
    for (text, reason) in cases {
        let err = parse_duration(text).unwrap_err();
        assert_eq!(
            err,
            ScheduleError::InvalidDuration {
                value: text.to_string(),
                reason: reason.clone(),
            }
        );
        assert_eq!(
            err.to_string(),
            format!("invalid duration {text:?}: {reason}")
        );
    }
}

#[test]
fn formats_largest_unit_first_and_round_trips() {
    let cases = [
        (0, "0s"),
        (1, "1s"),
        (60, "1m"),
        (5_400, "1h30m"),
        (86_400, "1d"),
        (90_061, "1d1h1m1s"),
        (172_800, "2d"),
    ];
    for (seconds, text) in cases {
        assert_eq!(format_duration(secs(seconds)), text);
    }
    assert_eq!(format_duration(Duration::from_millis(1_500)), "1s");
    assert_eq!(format_duration(Duration::from_millis(999)), "0s");
    for seconds in (1..200_000).step_by(997).chain([u64::MAX / 2, u64::MAX]) {
        let text = format_duration(secs(seconds));
        assert_eq!(parse_duration(&text), Ok(secs(seconds)), "{text}");
    }
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
