//! Durations as written on the command line (`30s`, `15m`, `1h30m`, `2h`,
//! `1d`), shared by `--every` and `--timeout`.
//!
//! jiff's friendly format is not used: its `SignedDuration` rejects days, and
//! its `Span` accepts calendar units such as months whose length varies, which
//! have no place in a fixed interval.

use std::fmt::Write as _;
use std::time::Duration;

use crate::schedule::ScheduleError;

/// Units from largest to smallest; a duration names each at most once, in
/// this order, which keeps one spelling per duration.
const UNITS: [(&str, u64); 4] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)];

const HOW: &str = "write numbers with units d, h, m or s, like 30s, 15m, 1h30m or 1d";

/// Parses a duration such as `30s`, `15m`, `1h30m`, `2h` or `1d`.
///
/// Units are `d` (24 hours), `h`, `m` and `s`, largest first, each at most
/// once, with no spaces. Zero, negative, fractional and sub-second durations
/// are rejected.
pub fn parse_duration(s: &str) -> Result<Duration, ScheduleError> {
    let fail = |reason: String| ScheduleError::InvalidDuration {
        value: s.to_string(),
        reason,
    };
    let text = s.trim();
    if text.is_empty() {
        return Err(fail(format!("it is empty; {HOW}")));
    }
    if text.starts_with('-') {
        return Err(fail(
            "it is negative; a duration must be at least 1s".into(),
        ));
    }
    if text.contains(['.', ',']) {
        return Err(fail(
            "fractions are not supported; write 1h30m rather than 1.5h".into(),
        ));
    }

    let mut total: u64 = 0;
    // Index into UNITS of the smallest unit still allowed.
    let mut allowed = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let (number, tail) = rest.split_at(prefix_len(rest, |c| c.is_ascii_digit()));
        let (unit, tail) = tail.split_at(prefix_len(tail, |c| c.is_ascii_alphabetic()));
        rest = tail;
        if number.is_empty() {
            return Err(fail(format!(
                "expected a number at {:?}; {HOW}",
                unit_or(unit, tail)
            )));
        }
        if unit.is_empty() {
            return Err(fail(format!("{number} has no unit; {HOW}")));
        }
        let Some(index) = UNITS.iter().position(|(name, _)| *name == unit) else {
            return Err(fail(if matches!(unit, "ms" | "us" | "ns") {
                "units below a second are not supported; a duration must be at least 1s".into()
            } else {
                format!("unknown unit {unit:?}; {HOW}")
            }));
        };
        if index < allowed {
            return Err(fail(
                "units must come largest first, each at most once (d, h, m, s)".into(),
            ));
        }
        allowed = index + 1;
        let seconds = number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(UNITS[index].1))
            .and_then(|n| n.checked_add(total));
        total = seconds.ok_or_else(|| fail("it is too large".into()))?;
    }
    if total == 0 {
        return Err(fail("it is zero; a duration must be at least 1s".into()));
    }
    Ok(Duration::from_secs(total))
}

/// Formats a duration the way [`parse_duration`] reads it, largest unit
/// first: 5400 seconds is `1h30m`, 90061 seconds is `1d1h1m1s`.
///
/// Whole seconds only: a fraction of a second is dropped, and anything under
/// one second is `0s`. So `parse_duration(&format_duration(d)) == d` for every
/// duration `parse_duration` can return.
pub fn format_duration(d: Duration) -> String {
    let mut seconds = d.as_secs();
    if seconds == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    for (name, size) in UNITS {
        let count = seconds / size;
        if count > 0 {
            let _ = write!(out, "{count}{name}");
            seconds %= size;
        }
    }
    out
}

/// Parses a delay: a duration as [`parse_duration`] reads it, or a whole number of
/// milliseconds (`200ms`), for delays shorter than a second such as a quick retry's.
pub fn parse_delay(s: &str) -> Result<Duration, ScheduleError> {
    let text = s.trim();
    match text.strip_suffix("ms") {
        Some(ms) if !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()) => {
            match ms.parse::<u64>() {
                Ok(0) => Err(ScheduleError::InvalidDuration {
                    value: s.to_string(),
                    reason: "it is zero; a delay must be at least 1ms".into(),
                }),
                Ok(n) => Ok(Duration::from_millis(n)),
                Err(_) => Err(ScheduleError::InvalidDuration {
                    value: s.to_string(),
                    reason: "it is too large".into(),
                }),
            }
        }
        _ => parse_duration(text),
    }
}

/// Formats a delay the way [`parse_delay`] reads it: whole seconds as
/// [`format_duration`] does, anything with a fraction of a second in milliseconds.
pub fn format_delay(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format_duration(d)
    } else {
        format!("{}ms", d.as_millis())
    }
}

fn prefix_len(s: &str, keep: impl Fn(char) -> bool) -> usize {
    s.len() - s.trim_start_matches(keep).len()
}

/// The text to point at when a number is missing: the stray unit, or else
/// whatever character stopped the parse.
fn unit_or<'a>(unit: &'a str, tail: &'a str) -> &'a str {
    if unit.is_empty() { tail } else { unit }
}
