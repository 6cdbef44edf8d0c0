//! Daylight-saving behaviour, checked against Debian's cron rules on exact
//! instants, and croner's own results where the module relies on or
//! corrects them.

use std::str::FromStr;

use croner::Cron;
use jiff::Timestamp;

use super::support::{fires, rfc3339, ts};

/// (zone, expression, search start, the fires expected after it).
const CASES: &[(&str, &str, &str, &[&str])] = &[
    // Europe/Berlin, spring forward 2026-03-29: 02:00 CET becomes 03:00 CEST.
    (
        "Europe/Berlin",
        "30 2 * * *",
        "2026-03-28T12:00:00+01:00",
        &["2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"],
    ),
    (
        "Europe/Berlin",
        "*/15 * * * *",
        "2026-03-29T01:40:00+01:00",
        &[
            "2026-03-29T01:45:00+01:00",
            "2026-03-29T03:00:00+02:00",
            "2026-03-29T03:15:00+02:00",
        ],
    ),
    (
        "Europe/Berlin",
        "30 * * * *",
        "2026-03-29T01:00:00+01:00",
        &["2026-03-29T01:30:00+01:00", "2026-03-29T03:30:00+02:00"],
    ),
    // Fixed-time by Debian's rule (no field starts with `*`): the two times
    // in the gap run once, at its end.
    (
        "Europe/Berlin",
        "0,30 2 * * *",
        "2026-03-28T12:00:00+01:00",
        &["2026-03-29T03:00:00+02:00", "2026-03-30T02:00:00+02:00"],
    ),
    (
        "Europe/Berlin",
        "30 1-3 * * *",
        "2026-03-29T00:00:00+01:00",
        &[
            "2026-03-29T01:30:00+01:00",
            "2026-03-29T03:00:00+02:00",
            "2026-03-29T03:30:00+02:00",
        ],
    ),
    // Europe/Berlin, fall back 2026-10-25: 03:00 CEST becomes 02:00 CET.
    (
        "Europe/Berlin",
        "30 2 * * *",
        "2026-10-24T12:00:00+02:00",
        &["2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"],
    ),
    (
        "Europe/Berlin",
        "*/15 * * * *",
        "2026-10-25T01:50:00+02:00",
        &[
            "2026-10-25T02:00:00+02:00",
            "2026-10-25T02:15:00+02:00",
            "2026-10-25T02:30:00+02:00",
            "2026-10-25T02:45:00+02:00",
            "2026-10-25T02:00:00+01:00",
            "2026-10-25T02:15:00+01:00",
            "2026-10-25T02:30:00+01:00",
            "2026-10-25T02:45:00+01:00",
            "2026-10-25T03:00:00+01:00",
        ],
    ),
    (
        "Europe/Berlin",
        "30 * * * *",
        "2026-10-25T01:00:00+02:00",
        &[
            "2026-10-25T01:30:00+02:00",
            "2026-10-25T02:30:00+02:00",
            "2026-10-25T02:30:00+01:00",
            "2026-10-25T03:30:00+01:00",
        ],
    ),
    (
        "Europe/Berlin",
        "0,30 2 * * *",
        "2026-10-24T12:00:00+02:00",
        &[
            "2026-10-25T02:00:00+02:00",
            "2026-10-25T02:30:00+02:00",
            "2026-10-26T02:00:00+01:00",
        ],
    ),
    // Starting on the second pass: the fixed-time job is done for the day,
    // the wildcard job carries on through the second pass.
    (
        "Europe/Berlin",
        "30 2 * * *",
        "2026-10-25T02:10:00+01:00",
        &["2026-10-26T02:30:00+01:00"],
    ),
    (
        "Europe/Berlin",
        "*/15 * * * *",
        "2026-10-25T02:10:00+01:00",
        &["2026-10-25T02:15:00+01:00"],
    ),
    // Starting late on the first pass: the second pass follows.
    (
        "Europe/Berlin",
        "*/15 * * * *",
        "2026-10-25T02:50:00+02:00",
        &["2026-10-25T02:00:00+01:00"],
    ),
    // America/New_York, spring forward 2026-03-08: 02:00 EST becomes 03:00 EDT.
    (
        "America/New_York",
        "30 2 * * *",
        "2026-03-07T12:00:00-05:00",
        &["2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"],
    ),
    (
        "America/New_York",
        "*/20 * * * *",
        "2026-03-08T01:30:00-05:00",
        &[
            "2026-03-08T01:40:00-05:00",
            "2026-03-08T03:00:00-04:00",
            "2026-03-08T03:20:00-04:00",
        ],
    ),
    // America/New_York, fall back 2026-11-01: 02:00 EDT becomes 01:00 EST.
    (
        "America/New_York",
        "30 1 * * *",
        "2026-10-31T12:00:00-04:00",
        &["2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"],
    ),
    (
        "America/New_York",
        "*/30 * * * *",
        "2026-11-01T00:50:00-04:00",
        &[
            "2026-11-01T01:00:00-04:00",
            "2026-11-01T01:30:00-04:00",
            "2026-11-01T01:00:00-05:00",
            "2026-11-01T01:30:00-05:00",
            "2026-11-01T02:00:00-05:00",
        ],
    ),
    // Australia/Lord_Howe shifts by 30 minutes. Spring forward 2026-10-04:
    // 02:00 +10:30 becomes 02:30 +11:00.
    (
        "Australia/Lord_Howe",
        "15 2 * * *",
        "2026-10-03T12:00:00+10:30",
        &["2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"],
    ),
    (
        "Australia/Lord_Howe",
        "*/15 * * * *",
        "2026-10-04T01:50:00+10:30",
        &["2026-10-04T02:30:00+11:00", "2026-10-04T02:45:00+11:00"],
    ),
    // Fall back 2026-04-05: 02:00 +11:00 becomes 01:30 +10:30.
    (
        "Australia/Lord_Howe",
        "45 1 * * *",
        "2026-04-04T12:00:00+11:00",
        &["2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"],
    ),
    (
        "Australia/Lord_Howe",
        "*/15 * * * *",
        "2026-04-05T01:20:00+11:00",
        &[
            "2026-04-05T01:30:00+11:00",
            "2026-04-05T01:45:00+11:00",
            "2026-04-05T01:30:00+10:30",
            "2026-04-05T01:45:00+10:30",
            "2026-04-05T02:00:00+10:30",
        ],
    ),
    // America/Santiago changes at midnight. Spring forward 2026-09-06:
    // 00:00 -04:00 becomes 01:00 -03:00, so midnight itself is skipped.
    (
        "America/Santiago",
        "@daily",
        "2026-09-05T12:00:00-04:00",
        &["2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"],
    ),
    // Fall back 2026-04-04: 24:00 -03:00 becomes 23:00 -04:00.
    (
        "America/Santiago",
        "30 23 * * *",
        "2026-04-04T12:00:00-03:00",
        &["2026-04-04T23:30:00-03:00", "2026-04-05T23:30:00-04:00"],
    ),
];

#[test]
fn dst_transitions_follow_debian_cron() {
    for (zone, expr, after, expected) in CASES {
        let got = fires(expr, zone, after, expected.len());
        assert_eq!(got, *expected, "{expr:?} in {zone} after {after}");
    }
}

/// croner's own zoned search, as stead would get it without correction.
fn croner_fires(pattern: &str, zone: &str, after: &str, count: usize) -> Vec<String> {
    let cron = Cron::from_str(pattern).unwrap();
    let start = ts(after).in_tz(zone).unwrap();
    cron.iter_after(start)
        .take(count)
        .map(|z| rfc3339(&z))
        .collect()
}

/// The behaviour stead relies on croner to share with Debian's cron, for
/// jobs that both call fixed-time (single minute and hour) or wildcard.
#[test]
fn croner_agrees_with_debian_for_single_value_and_wildcard_jobs() {
    let mut checked = 0;
    for (zone, expr, after, expected) in CASES {
        let fields: Vec<&str> = expr.split(' ').collect();
        let (minute, hour) = match fields[..] {
            [minute, hour, ..] => (minute, hour),
            // Macros: only @hourly has a wildcard field.
            _ => ("0", if *expr == "@hourly" { "*" } else { "0" }),
        };
        let single = |field: &str| !field.contains([',', '-', '*', '/']);
        let fixed_by_croner = single(minute) && single(hour);
        let wildcard = minute.starts_with('*') || hour.starts_with('*');
        if fixed_by_croner || wildcard {
            assert_eq!(
                croner_fires(expr, zone, after, expected.len()),
                *expected,
                "croner on {expr:?} in {zone} after {after}"
            );
            checked += 1;
        }
    }
    // All but the list and range jobs, where croner deviates.
    assert_eq!(checked, CASES.len() - 3);
}

/// croner calls a job fixed-time only when minute and hour are single
/// values; Debian's cron whenever neither field starts with `*`. For a list
/// or range croner skips the gap and runs the overlap twice; stead corrects
/// both.
#[test]
fn croner_deviates_for_lists_and_ranges_and_stead_corrects_it() {
    let gap = "2026-03-28T12:00:00+01:00";
    assert_eq!(
        croner_fires("0,30 2 * * *", "Europe/Berlin", gap, 1),
        ["2026-03-30T02:00:00+02:00"],
    );
    assert_eq!(
        fires("0,30 2 * * *", "Europe/Berlin", gap, 1),
        ["2026-03-29T03:00:00+02:00"],
    );

    let overlap = "2026-10-24T12:00:00+02:00";
    assert_eq!(
        croner_fires("0,30 2 * * *", "Europe/Berlin", overlap, 4),
        [
            "2026-10-25T02:00:00+02:00",
            "2026-10-25T02:30:00+02:00",
            "2026-10-25T02:00:00+01:00",
            "2026-10-25T02:30:00+01:00",
        ],
    );
    assert_eq!(
        fires("0,30 2 * * *", "Europe/Berlin", overlap, 3),
        [
            "2026-10-25T02:00:00+02:00",
            "2026-10-25T02:30:00+02:00",
            "2026-10-26T02:00:00+01:00",
        ],
    );
}

/// `fires_between` covers `(after, until]` exactly, including both passes
/// of an overlap.
#[test]
fn fires_between_is_half_open() {
    let schedule = super::support::schedule("*/30 * * * *", "America/New_York");
    let got: Vec<String> = schedule
        .fires_between(
            ts("2026-11-01T01:00:00-04:00"),
            ts("2026-11-01T01:30:00-05:00"),
        )
        .map(|z| rfc3339(&z))
        .collect();
    assert_eq!(
        got,
        [
            "2026-11-01T01:30:00-04:00",
            "2026-11-01T01:00:00-05:00",
            "2026-11-01T01:30:00-05:00",
        ]
    );
    let empty = schedule.fires_between(Timestamp::UNIX_EPOCH, Timestamp::UNIX_EPOCH);
    assert_eq!(empty.count(), 0);
}
