//! Every field form the grammar accepts, checked on the fires it produces.

use super::support::{fires, schedule};

const NEW_YEAR: &str = "2026-01-01T00:00:00Z";

fn utc(expr: &str, after: &str, count: usize) -> Vec<String> {
    fires(expr, "UTC", after, count)
}

#[test]
fn names_are_case_insensitive_and_equal_their_numbers() {
    let expected = [
        "2026-01-05T09:00:00+00:00",
        "2026-01-12T09:00:00+00:00",
        "2026-01-19T09:00:00+00:00",
        "2026-01-26T09:00:00+00:00",
        "2026-07-06T09:00:00+00:00",
    ];
    for expr in ["0 9 * jan,Jul mon", "0 9 * JAN,JUL MON", "0 9 * 1,7 1"] {
        assert_eq!(utc(expr, NEW_YEAR, 5), expected, "{expr}");
    }
    assert_eq!(
        utc("0 0 1 feb-Apr *", NEW_YEAR, 4),
        [
            "2026-02-01T00:00:00+00:00",
            "2026-03-01T00:00:00+00:00",
            "2026-04-01T00:00:00+00:00",
            "2027-02-01T00:00:00+00:00",
        ]
    );
}

#[test]
fn ranges_steps_and_lists() {
    assert_eq!(
        utc("0 9-11 * * *", NEW_YEAR, 4),
        [
            "2026-01-01T09:00:00+00:00",
            "2026-01-01T10:00:00+00:00",
            "2026-01-01T11:00:00+00:00",
            "2026-01-02T09:00:00+00:00",
        ]
    );
    assert_eq!(
        utc("*/15 * * * *", "2026-01-01T10:07:00Z", 4),
        [
            "2026-01-01T10:15:00+00:00",
            "2026-01-01T10:30:00+00:00",
            "2026-01-01T10:45:00+00:00",
            "2026-01-01T11:00:00+00:00",
        ]
    );
    let minutes: Vec<String> = utc("1-30/5 10 * * *", NEW_YEAR, 7)
        .iter()
        .map(|fire| fire[14..16].to_string())
        .collect();
    assert_eq!(minutes, ["01", "06", "11", "16", "21", "26", "01"]);
    assert_eq!(
        utc("0 */6 * * *", NEW_YEAR, 4),
        [
            "2026-01-01T06:00:00+00:00",
            "2026-01-01T12:00:00+00:00",
            "2026-01-01T18:00:00+00:00",
            "2026-01-02T00:00:00+00:00",
        ]
    );
    let hours: Vec<String> = utc("0 1,3-5,*/12 * * *", NEW_YEAR, 6)
        .iter()
        .map(|fire| fire[11..13].to_string())
        .collect();
    assert_eq!(hours, ["01", "03", "04", "05", "12", "00"]);
    // Steps longer than the field select only its start, as in Debian's cron.
    assert_eq!(
        utc("*/90 * * * *", NEW_YEAR, 2),
        ["2026-01-01T01:00:00+00:00", "2026-01-01T02:00:00+00:00"]
    );
}

#[test]
fn sunday_is_both_0_and_7() {
    let sundays = ["2026-01-04T00:00:00+00:00", "2026-01-11T00:00:00+00:00"];
    for expr in ["0 0 * * 0", "0 0 * * 7", "0 0 * * SUN", "0 0 * * sun"] {
        assert_eq!(utc(expr, NEW_YEAR, 2), sundays, "{expr}");
    }
    assert_eq!(
        utc("0 0 * * 5-7", NEW_YEAR, 4),
        [
            "2026-01-02T00:00:00+00:00",
            "2026-01-03T00:00:00+00:00",
            "2026-01-04T00:00:00+00:00",
            "2026-01-09T00:00:00+00:00",
        ]
    );
}

#[test]
fn day_fields_or_when_both_restricted() {
    let april = "2026-04-01T00:00:00Z";
    // Every Friday and every 13th (a Monday in April 2026).
    assert_eq!(
        utc("0 0 13 * FRI", april, 6),
        [
            "2026-04-03T00:00:00+00:00",
            "2026-04-10T00:00:00+00:00",
            "2026-04-13T00:00:00+00:00",
            "2026-04-17T00:00:00+00:00",
            "2026-04-24T00:00:00+00:00",
            "2026-05-01T00:00:00+00:00",
        ]
    );
    // With one field `*`, only the other counts.
    assert_eq!(
        utc("0 0 * * FRI", april, 2),
        ["2026-04-03T00:00:00+00:00", "2026-04-10T00:00:00+00:00"]
    );
    assert_eq!(
        utc("0 0 13 * *", april, 2),
        ["2026-04-13T00:00:00+00:00", "2026-05-13T00:00:00+00:00"]
    );
}

#[test]
fn day_field_starting_with_star_counts_as_unrestricted() {
    // Debian's cron tests the first character: `*/2` makes the day rule
    // AND, so this fires on Mondays that fall on odd days only.
    assert_eq!(
        utc("0 0 */2 * MON", "2026-04-01T00:00:00Z", 3),
        [
            "2026-04-13T00:00:00+00:00",
            "2026-04-27T00:00:00+00:00",
            "2026-05-11T00:00:00+00:00",
        ]
    );
    // The same days written as a range are restricted: every odd day OR Monday.
    assert_eq!(
        utc("0 0 1-31/2 * MON", "2026-03-31T12:00:00Z", 5),
        [
            "2026-04-01T00:00:00+00:00",
            "2026-04-03T00:00:00+00:00",
            "2026-04-05T00:00:00+00:00",
            "2026-04-06T00:00:00+00:00",
            "2026-04-07T00:00:00+00:00",
        ]
    );
}

#[test]
fn macros() {
    let after = "2026-01-07T10:07:00Z"; // a Wednesday
    let cases = [
        ("@hourly", "2026-01-07T11:00:00+00:00"),
        ("@daily", "2026-01-08T00:00:00+00:00"),
        ("@midnight", "2026-01-08T00:00:00+00:00"),
        ("@weekly", "2026-01-11T00:00:00+00:00"),
        ("@monthly", "2026-02-01T00:00:00+00:00"),
        ("@yearly", "2027-01-01T00:00:00+00:00"),
        ("@annually", "2027-01-01T00:00:00+00:00"),
        ("@DAILY", "2026-01-08T00:00:00+00:00"),
    ];
    for (expr, expected) in cases {
        assert_eq!(utc(expr, after, 1), [expected], "{expr}");
    }
    // @hourly has a wildcard hour, so it runs in both passes of an overlap;
    // @daily is fixed-time.
    assert_eq!(
        fires("@hourly", "Europe/Berlin", "2026-10-25T01:30:00+02:00", 3),
        [
            "2026-10-25T02:00:00+02:00",
            "2026-10-25T02:00:00+01:00",
            "2026-10-25T03:00:00+01:00",
        ]
    );
    assert_eq!(schedule("@daily", "UTC").expr(), "@daily");
}

#[test]
fn last_day_and_nearest_weekday() {
    assert_eq!(
        utc("0 0 L * *", NEW_YEAR, 3),
        [
            "2026-01-31T00:00:00+00:00",
            "2026-02-28T00:00:00+00:00",
            "2026-03-31T00:00:00+00:00",
        ]
    );
    assert_eq!(
        utc("0 0 L 2 *", "2027-06-01T00:00:00Z", 1),
        ["2028-02-29T00:00:00+00:00"]
    );
    // Last weekday: January and February 2026 end on a Saturday.
    assert_eq!(
        utc("0 0 LW * *", NEW_YEAR, 3),
        [
            "2026-01-30T00:00:00+00:00",
            "2026-02-27T00:00:00+00:00",
            "2026-03-31T00:00:00+00:00",
        ]
    );
    // The 15th of February and March 2026 is a Sunday: Monday the 16th.
    assert_eq!(
        utc("0 0 15W * *", NEW_YEAR, 3),
        [
            "2026-01-15T00:00:00+00:00",
            "2026-02-16T00:00:00+00:00",
            "2026-03-16T00:00:00+00:00",
        ]
    );
    // Both day fields restricted: the last day OR any Friday.
    assert_eq!(
        utc("0 0 L * FRI", "2026-01-28T00:00:00Z", 3),
        [
            "2026-01-30T00:00:00+00:00",
            "2026-01-31T00:00:00+00:00",
            "2026-02-06T00:00:00+00:00",
        ]
    );
    // 1 August 2026 is a Saturday; W stays inside the month.
    assert_eq!(
        utc("0 0 1W * *", "2026-07-15T00:00:00Z", 1),
        ["2026-08-03T00:00:00+00:00"]
    );
}

#[test]
fn nth_and_last_weekday() {
    assert_eq!(
        utc("0 0 * * FRI#2", NEW_YEAR, 3),
        [
            "2026-01-09T00:00:00+00:00",
            "2026-02-13T00:00:00+00:00",
            "2026-03-13T00:00:00+00:00",
        ]
    );
    let last_fridays = [
        "2026-01-30T00:00:00+00:00",
        "2026-02-27T00:00:00+00:00",
        "2026-03-27T00:00:00+00:00",
    ];
    for expr in ["0 0 * * 5L", "0 0 * * 5#L", "0 0 * * fri#l"] {
        assert_eq!(utc(expr, NEW_YEAR, 3), last_fridays, "{expr}");
    }
    assert_eq!(
        utc("0 0 * * MON-FRI#1", "2025-12-31T12:00:00Z", 5),
        [
            "2026-01-01T00:00:00+00:00",
            "2026-01-02T00:00:00+00:00",
            "2026-01-05T00:00:00+00:00",
            "2026-01-06T00:00:00+00:00",
            "2026-01-07T00:00:00+00:00",
        ]
    );
}

#[test]
fn whitespace_and_leading_zeros() {
    assert_eq!(
        utc("  05\t09  *  * *  ", NEW_YEAR, 1),
        ["2026-01-01T09:05:00+00:00"]
    );
    assert_eq!(schedule(" 5 9 * * * ", "UTC").expr(), "5 9 * * *");
}
