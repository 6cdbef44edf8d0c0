//! A sleep told from a wall-clock change: the decision the server makes on each pair of
//! readings of its three clocks (the wall clock, the awake clock and the clock since
//! boot, which `stead_sys::clock` reads).
//!
//! Between two readings the clock since boot grows by the time that passed, asleep or
//! not; the awake clock by the time awake; the wall clock by the time that passed plus
//! whatever it was set by. So `Δsince_boot - Δawake` is how long the machine slept, and
//! `Δwall - Δsince_boot` how far the wall clock was set, forward or back. A sleep and a
//! setting can come together (a laptop that wakes and corrects its clock by NTP): the
//! verdict carries both.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// Shorter gaps between the two clocks are noise, not a sleep (no suspend and resume
/// takes less).
pub const MIN_SLEEP: Duration = Duration::from_secs(1);

/// Smaller disagreements between the wall clock and the clock since boot are the wall
/// clock being slewed, not set.
pub const MIN_STEP: Duration = Duration::from_secs(1);

/// One reading of the three clocks, taken together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Readings {
    pub wall: Timestamp,
    /// Time awake since boot (Linux `CLOCK_MONOTONIC`, macOS `mach_absolute_time`).
    pub awake: Duration,
    /// Time since boot, asleep included (Linux `CLOCK_BOOTTIME`, macOS
    /// `mach_continuous_time`).
    pub since_boot: Duration,
}

/// A sleep the machine woke from, placed on the wall clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slept {
    /// When it began: `ended_at` less how long it lasted.
    pub started_at: Timestamp,
    /// When it was noticed: the later reading's wall time. A sleep is placed as ending
    /// there, so where it really ended is known to the time between two readings.
    pub ended_at: Timestamp,
    pub duration: Duration,
}

/// How far the wall clock was set between two readings, beyond the time that passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Forward(Duration),
    Back(Duration),
}

/// What happened between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing but time passing.
    Nothing,
    /// The machine slept (and its wall clock may have been set too).
    Slept { slept: Slept, step: Option<Step> },
    /// The wall clock was set while the machine stayed awake.
    Set(Step),
    /// The readings cannot follow one another (a clock went back that never does, as
    /// when readings of two boots are compared): nothing is concluded.
    Unrelated,
}

/// Judges what happened between the readings `before` and `after`.
pub fn judge(before: &Readings, after: &Readings) -> Verdict {
    let (Some(awake), Some(passed)) = (
        after.awake.checked_sub(before.awake),
        after.since_boot.checked_sub(before.since_boot),
    ) else {
        return Verdict::Unrelated;
    };
    let Some(asleep) = passed.checked_sub(awake) else {
        // Awake longer than time passed: not two readings of one boot's clocks.
        return Verdict::Unrelated;
    };
    // To the millisecond, the ledger's unit: the clocks are read one after the other,
    // so below that the difference is the reads', not the machine's.
    let rounded_ms = (asleep.as_micros() + 500) / 1000;
    let asleep = Duration::from_millis(u64::try_from(rounded_ms).unwrap_or(u64::MAX));
    let walled = after.wall.duration_since(before.wall);
    let set = walled - crate::clock::span(passed);
    let step = (set.unsigned_abs() >= MIN_STEP).then(|| {
        if set > SignedDuration::ZERO {
            Step::Forward(set.unsigned_abs())
        } else {
            Step::Back(set.unsigned_abs())
        }
    });
    if asleep >= MIN_SLEEP {
        let started_at = after
            .wall
            .checked_sub(crate::clock::span(asleep))
            .unwrap_or(Timestamp::MIN);
        return Verdict::Slept {
            slept: Slept {
                started_at,
                ended_at: after.wall,
                duration: asleep,
            },
            step,
        };
    }
    match step {
        Some(step) => Verdict::Set(step),
        None => Verdict::Nothing,
    }
}

/// The words a fire missed in a sleep carries: `missed while the machine slept
/// 02:10-07:45` (UTC; with the dates when it spans days).
pub fn slept_words(started_at: Timestamp, ended_at: Timestamp) -> String {
    let from = started_at.to_zoned(jiff::tz::TimeZone::UTC);
    let to = ended_at.to_zoned(jiff::tz::TimeZone::UTC);
    let format = if from.date() == to.date() {
        "%H:%M"
    } else {
        "%Y-%m-%d %H:%M"
    };
    format!(
        "missed while the machine slept {}-{} UTC",
        from.strftime(format),
        to.strftime(format)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_800_000_000;

    fn reading(wall_ms: i64, awake_ms: u64, boot_ms: u64) -> Readings {
        Readings {
            wall: Timestamp::from_millisecond(T0 * 1000 + wall_ms).unwrap(),
            awake: Duration::from_millis(awake_ms),
            since_boot: Duration::from_millis(boot_ms),
        }
    }

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_millisecond(T0 * 1000 + ms).unwrap()
    }

    const HOUR: i64 = 3_600_000;

    /// Every combination of how long the machine slept (none, noise, the threshold, two
    /// hours) and how far the wall clock was set (not at all, slewed either way, set
    /// forward or back by hours), over a 10 s heartbeat, against the verdict.
    #[test]
    fn every_combination_of_sleep_and_wall_setting() {
        let sleeps: [i64; 4] = [0, 500, 1_000, 2 * HOUR];
        let sets: [i64; 5] = [0, 400, -400, 3 * HOUR, -3 * HOUR];
        let beat: i64 = 10_000;
        for slept in sleeps {
            for set in sets {
                let before = reading(0, 100_000, 150_000);
                let passed = beat + slept;
                let after = reading(passed + set, 100_000 + beat as u64, 150_000 + passed as u64);
                let step = match set {
                    s if s.abs() < 1_000 => None,
                    s if s > 0 => Some(Step::Forward(Duration::from_millis(s as u64))),
                    s => Some(Step::Back(Duration::from_millis(s.unsigned_abs()))),
                };
                let expected = if slept >= 1_000 {
                    Verdict::Slept {
                        slept: Slept {
                            started_at: at(passed + set - slept),
                            ended_at: at(passed + set),
                            duration: Duration::from_millis(slept as u64),
                        },
                        step,
                    }
                } else {
                    match step {
                        Some(step) => Verdict::Set(step),
                        None => Verdict::Nothing,
                    }
                };
                assert_eq!(
                    judge(&before, &after),
                    expected,
                    "slept {slept} ms, wall set by {set} ms"
                );
            }
        }
    }

    /// A lid close as stead's tests make it: the wall clock moved two hours while the
    /// awake clock stood still, and the clock since boot counted the two hours.
    #[test]
    fn a_lid_close_is_a_sleep_and_no_setting() {
        let before = reading(0, 5_000, 5_000);
        let after = reading(2 * HOUR + 1_000, 6_000, 5_000 + 2 * HOUR as u64 + 1_000);
        assert_eq!(
            judge(&before, &after),
            Verdict::Slept {
                slept: Slept {
                    started_at: at(1_000),
                    ended_at: at(2 * HOUR + 1_000),
                    duration: Duration::from_millis(2 * HOUR as u64),
                },
                step: None,
            }
        );
        // The clocks are read one after the other: a sleep is kept to the millisecond.
        let mut late = after;
        late.since_boot += Duration::from_micros(400);
        assert!(matches!(
            judge(&before, &late),
            Verdict::Slept { slept, .. } if slept.duration == Duration::from_millis(2 * HOUR as u64)
        ));
        // The same wall jump with both clocks ticking together is the clock being set.
        let set = reading(2 * HOUR + 1_000, 6_000, 6_000);
        assert_eq!(
            judge(&before, &set),
            Verdict::Set(Step::Forward(Duration::from_millis(2 * HOUR as u64)))
        );
    }

    #[test]
    fn readings_that_cannot_follow_one_another_conclude_nothing() {
        let before = reading(0, 10_000, 20_000);
        for after in [
            // The awake clock went back.
            reading(1_000, 9_000, 21_000),
            // The clock since boot went back.
            reading(1_000, 11_000, 19_000),
            // Awake longer than time passed.
            reading(1_000, 15_000, 21_000),
        ] {
            assert_eq!(judge(&before, &after), Verdict::Unrelated, "{after:?}");
        }
        // The same reading twice: nothing happened.
        assert_eq!(judge(&before, &before), Verdict::Nothing);
    }

    #[test]
    fn a_sleep_is_named_by_its_hours_or_its_dates() {
        let from = "2026-12-06T02:10:00Z".parse().unwrap();
        let to = "2026-12-06T07:45:30Z".parse().unwrap();
        assert_eq!(
            slept_words(from, to),
            "missed while the machine slept 02:10-07:45 UTC"
        );
        let next_day = "2026-12-07T07:45:00Z".parse().unwrap();
        assert_eq!(
            slept_words(from, next_day),
            "missed while the machine slept 2026-12-06 02:10-2026-12-07 07:45 UTC"
        );
    }
}
