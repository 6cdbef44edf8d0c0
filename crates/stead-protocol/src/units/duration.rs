//! Durations as a person writes them (`30s`, `15m`, `1h30m`, `2h`, `1d`, and `200ms` for
//! a delay): `--every`, `--timeout` and a job's other durations, and `config.toml`'s.
//!
//! jiff's friendly format is not used: its `SignedDuration` rejects days, and
//! its `Span` accepts calendar units such as months whose length varies, which
//! have no place in a fixed interval.

use std::fmt::Write as _;
use std::time::Duration;

/// Why a duration was rejected; the message quotes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {value:?}: {reason}")]
pub struct DurationError {
    /// The duration as given.
    pub value: String,
    /// What is wrong.
    pub reason: String,
}

/// Units from largest to smallest; a duration names each at most once, in
/// this order, which keeps one spelling per duration.
const UNITS: [(&str, u64); 4] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)];

const HOW: &str = "write numbers with units d, h, m or s, like 30s, 15m, 1h30m or 1d";

/// Parses a duration such as `30s`, `15m`, `1h30m`, `2h` or `1d`.
///
/// Units are `d` (24 hours), `h`, `m` and `s`, largest first, each at most
/// once, with no spaces. Zero, negative, fractional and sub-second durations
/// are rejected.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let fail = |reason: String| DurationError {
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
pub fn parse_delay(s: &str) -> Result<Duration, DurationError> {
    let text = s.trim();
    match text.strip_suffix("ms") {
        Some(ms) if !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()) => {
            match ms.parse::<u64>() {
                Ok(0) => Err(DurationError {
                    value: s.to_string(),
                    reason: "it is zero; a delay must be at least 1ms".into(),
                }),
                Ok(n) => Ok(Duration::from_millis(n)),
                Err(_) => Err(DurationError {
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

#[cfg(test)]
mod tests {
    use super::*;

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
                "units below a second are not supported; a duration must be at least 1s"
                    .to_string(),
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
                DurationError {
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
}
