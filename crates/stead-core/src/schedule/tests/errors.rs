//! Rejected expressions and zones, with the exact messages users see.

use crate::schedule::{CronSchedule, ScheduleError};

const FIELDS: &str = "(minute hour day-of-month month day-of-week)";

#[test]
fn bad_expressions_name_the_field_and_value() {
    let cases: &[(&str, &str)] = &[
        ("61 * * * *", r#"minute field "61" is out of range 0-59"#),
        ("* 24 * * *", r#"hour field "24" is out of range 0-23"#),
        (
            "* * 0 * *",
            r#"day-of-month field "0" is out of range 1-31"#,
        ),
        (
            "* * 32 * *",
            r#"day-of-month field "32" is out of range 1-31"#,
        ),
        ("* * * 13 *", r#"month field "13" is out of range 1-12"#),
        ("* * * * 8", r#"day-of-week field "8" is out of range 0-7"#),
        (
            "1,61 * * * *",
            r#"minute field "1,61": "61" is out of range 0-59"#,
        ),
        (
            "50-61 * * * *",
            r#"minute field "50-61": "61" is out of range 0-59"#,
        ),
        (
            "99999999999 * * * *",
            r#"minute field "99999999999" is out of range 0-59"#,
        ),
        (
            "*/0 * * * *",
            r#"minute field "*/0" has a step of 0; the step must be at least 1"#,
        ),
        (
            "*/x * * * *",
            r#"minute field "*/x" has a step that is not a number"#,
        ),
        (
            "5/15 * * * *",
            r#"minute field "5/15" has a step but no range; write */15 or 5-59/15"#,
        ),
        (
            "5-2 * * * *",
            r#"minute field "5-2" runs backwards; write the smaller value first"#,
        ),
        (
            "* * * * FRI-SUN",
            r#"day-of-week field "FRI-SUN" runs backwards; to end a range on Sunday use 7, as in FRI-7"#,
        ),
        ("x * * * *", r#"minute field "x" is not a number"#),
        (
            "* * * FOO *",
            r#"month field "FOO" is not a number or a month name (JAN-DEC)"#,
        ),
        (
            "* * * * MONDAY",
            r#"day-of-week field "MONDAY" is not a number or a day name (SUN-SAT)"#,
        ),
        (
            "1,,2 * * * *",
            r#"minute field "1,,2" has an empty list entry"#,
        ),
        (
            "* * ? * *",
            r#"day-of-month field "?" is not supported; use * instead"#,
        ),
        (
            "L * * * *",
            r#"minute field "L" uses L, W or #, which only the day fields allow"#,
        ),
        (
            "* * 1#2 * *",
            r#"day-of-month field "1#2" uses #, which only the day-of-week field allows"#,
        ),
        (
            "* * * * 15W",
            r#"day-of-week field "15W" uses W, which only the day-of-month field allows"#,
        ),
        (
            "* * 32W * *",
            r#"day-of-month field "32W": "32" is out of range 1-31"#,
        ),
        (
            "* * * * 5#6",
            r#"day-of-week field "5#6" asks for occurrence "6"; use 1-5, or L for the last"#,
        ),
        (
            "* * * * L",
            r#"day-of-week field "L" needs a weekday before it, as in 5L or FRI#L for the last Friday"#,
        ),
        (
            "* * * * *#2",
            r#"day-of-week field "*#2" needs a weekday or a range of them before # or L"#,
        ),
        (
            "",
            "it is empty; expected five fields: minute hour day-of-month month day-of-week",
        ),
        ("* * *", &format!("3 fields given, 5 expected {FIELDS}")),
        ("*", &format!("1 field given, 5 expected {FIELDS}")),
        (
            "0 * * * * *",
            &format!("6 fields given, 5 expected {FIELDS}; stead has no seconds field"),
        ),
        (
            "0 0 0 * * * 2026",
            &format!("7 fields given, 5 expected {FIELDS}; stead has no seconds or year fields"),
        ),
        (
            "@reboot",
            "@reboot is not supported; stead runs jobs on time schedules only",
        ),
        (
            "@fortnightly",
            r#"unknown macro "@fortnightly"; expected @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually"#,
        ),
        ("@daily 5", "@daily takes no further fields"),
        (
            "0 0 30 2 *",
            r#"it never fires: no month "2" has a day matching day-of-month "30""#,
        ),
        (
            "0 0 31 4,6,9,11 *",
            r#"it never fires: no month "4,6,9,11" has a day matching day-of-month "31""#,
        ),
        (
            "0 0 30W 2 *",
            r#"it never fires: no month "2" has a day matching day-of-month "30W""#,
        ),
        (
            "0 0 */31 2 5#5",
            r#"it never fires: no day in month "2" matches both day-of-month "*/31" and day-of-week "5#5""#,
        ),
    ];
    for (expr, reason) in cases {
        let err = CronSchedule::parse(expr, "UTC").expect_err(expr);
        assert_eq!(
            err,
            ScheduleError::InvalidCron {
                expr: expr.to_string(),
                reason: reason.to_string(),
            },
        );
        assert_eq!(
            err.to_string(),
            format!("invalid cron expression {expr:?}: {reason}")
        );
    }
    assert_eq!(
        CronSchedule::parse("61 * * * *", "UTC")
            .unwrap_err()
            .to_string(),
        r#"invalid cron expression "61 * * * *": minute field "61" is out of range 0-59"#
    );
}

#[test]
fn unknown_zone_is_named() {
    for zone in [
        "Mars/Olympus",
        "",
        "Europe/Berlin/Mitte",
        "../../etc/passwd",
    ] {
        let err = CronSchedule::parse("0 0 * * *", zone).unwrap_err();
        assert_eq!(err.to_string(), format!("unknown time zone {zone:?}"));
    }
}

#[test]
fn rare_but_possible_days_are_accepted() {
    for expr in ["0 0 29 2 *", "0 0 31 * *", "0 0 */30 2 SUN", "0 0 L 2 *"] {
        assert!(CronSchedule::parse(expr, "UTC").is_ok(), "{expr}");
    }
}
