//! Retries of a genuinely failed run: how many are left, and how long each waits.
//!
//! A run's plan carries its retry budget ([`RetryPlan`]), fixed when the first attempt
//! was admitted, so a later edit of the job never changes a chain under way. When an
//! attempt fails (the whole alternatives chain failed; a cut is never a failure), the
//! ledger writes the next attempt in the same transaction as the failure: `queued`,
//! waiting until [`RetryPlan::delay`] has passed. A resume keeps the budget it resumes;
//! only a retry spends one.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use stead_protocol::JobSpec;

use crate::jobs::validate::{DEFAULT_RETRY_DELAY, DEFAULT_RETRY_MAX_DELAY};
use crate::schedule;

/// A run's retry budget and backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryPlan {
    /// Retries left after this attempt fails.
    pub left: u32,
    /// Retries already made before this attempt (0 for a first attempt).
    pub made: u32,
    /// The first retry's delay.
    pub delay_ms: u64,
    /// The longest delay.
    pub max_delay_ms: u64,
}

/// The jitter either side of a delay, in percent: retries of many runs that failed
/// together (a network outage) do not all come back at the same instant.
pub const JITTER_PERCENT: u64 = 20;

impl RetryPlan {
    /// The budget of a first attempt of a (validated) job; `None` when it never retries.
    pub fn of(spec: &JobSpec) -> Option<Self> {
        if spec.retries == 0 {
            return None;
        }
        let delay = |given: &Option<String>, default: &str| {
            schedule::parse_delay(given.as_deref().unwrap_or(default))
                .unwrap_or(Duration::from_secs(30))
        };
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Some(Self {
            left: spec.retries,
            made: 0,
            delay_ms: ms(delay(&spec.retry_delay, DEFAULT_RETRY_DELAY)),
            max_delay_ms: ms(delay(&spec.retry_max_delay, DEFAULT_RETRY_MAX_DELAY)),
        })
    }

    /// The budget of the retry that follows a failure of this attempt; `None` when
    /// none is left.
    pub fn next(self) -> Option<Self> {
        (self.left > 0).then(|| Self {
            left: self.left - 1,
            made: self.made + 1,
            ..self
        })
    }

    /// How long the retry that follows this attempt waits: the first delay doubled for
    /// each retry already made, at most the longest delay, then moved by up to
    /// ±[`JITTER_PERCENT`] by `seed` (the failed run's id, so the same failure always
    /// waits the same, and neighbours differ).
    pub fn delay(self, seed: i64) -> Duration {
        let base = self
            .delay_ms
            .saturating_mul(1u64 << self.made.min(40))
            .min(self.max_delay_ms);
        // A spread of 2 * JITTER_PERCENT + 1 points around 100 %.
        let points = splitmix(seed as u64) % (2 * JITTER_PERCENT + 1);
        let percent = 100 - JITTER_PERCENT + points;
        Duration::from_millis(base.saturating_mul(percent) / 100)
    }
}

/// A well-mixed 64-bit hash of `x` (SplitMix64's finalizer), so consecutive run ids get
/// unrelated jitter.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(retries: u32, delay: &str, max: &str) -> RetryPlan {
        RetryPlan::of(&JobSpec {
            retries,
            retry_delay: Some(delay.into()),
            retry_max_delay: Some(max.into()),
            ..JobSpec::default()
        })
        .unwrap()
    }

    #[test]
    fn a_job_without_retries_has_no_budget_and_defaults_fill_in_the_delays() {
        assert_eq!(RetryPlan::of(&JobSpec::default()), None);
        let p = RetryPlan::of(&JobSpec {
            retries: 2,
            ..JobSpec::default()
        })
        .unwrap();
        assert_eq!(
            (p.left, p.made, p.delay_ms, p.max_delay_ms),
            (2, 0, 30_000, 3_600_000)
        );
    }

    #[test]
    fn each_retry_spends_one_and_the_last_has_none_left() {
        let first = plan(2, "1s", "1h");
        let second = first.next().unwrap();
        let third = second.next().unwrap();
        assert_eq!((second.left, second.made), (1, 1));
        assert_eq!((third.left, third.made), (0, 2));
        assert_eq!(third.next(), None);
    }

    #[test]
    fn delays_double_up_to_the_cap_within_the_jitter() {
        let mut p = plan(30, "1s", "1m");
        for made in 0..30u32 {
            let base = (1000u64 << made.min(40)).min(60_000);
            for seed in 0..200 {
                let d = p.delay(seed).as_millis() as u64;
                assert!(
                    d >= base * 80 / 100 && d <= base * 120 / 100,
                    "{made}: {d} vs {base}"
                );
            }
            p = p.next().unwrap();
        }
    }

    #[test]
    fn jitter_is_spread_and_stable_per_run() {
        let p = plan(1, "10s", "1h");
        let delays: std::collections::BTreeSet<_> = (0..100).map(|seed| p.delay(seed)).collect();
        assert!(delays.len() > 20, "jitter hardly varies: {delays:?}");
        assert_eq!(p.delay(42), p.delay(42));
    }
}
