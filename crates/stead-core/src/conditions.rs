//! Conditions: what a job's runs need of the machine before their command starts (the
//! network, mains power), whether they keep it awake, and when its fires start (jitter,
//! and the spread of catch-ups that come due at one wake).
//!
//! The plan carries a run's [`Conditions`], made here from its job; the monitor waits
//! for them (it asks the platform layer for a route out and the power source) between
//! taking the run and starting its command, so the run is on the ledger the whole time.
//! The delays ([`jitter_delay`], [`wake_spread`]) are pure functions of their seeds, and
//! [`not_before`] the decision built on them.

use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use stead_protocol::{JobSpec, OnBattery, Trigger};

use crate::runs::Millis;
use crate::schedule;

/// How long a run of a job that needs the network waits for it when the job gives no
/// `network_wait`.
pub const DEFAULT_NETWORK_WAIT: &str = "2m";

/// What a run needs before its command starts, and while it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conditions {
    /// A route out (and, if given, a host that answers), waited for at most a while.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkNeed>,
    /// Mains power: a fire on battery is deferred or skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerNeed>,
    /// Hold a sleep inhibitor while the run is live.
    #[serde(default)]
    pub keep_awake: bool,
}

impl Conditions {
    /// Whether the run waits for nothing and holds nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// A run's need of the network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkNeed {
    /// A `host:port` that must accept a TCP connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// The longest wait, after which the command starts without the network.
    pub wait_ms: u64,
}

/// A fire's need of mains power.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerNeed {
    /// On battery: `Defer` (wait for mains until `until`) or `Skip`.
    pub on_battery: OnBattery,
    /// The end of the fire's catch-up window: a deferred fire still on battery then is
    /// skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Millis>,
    /// Where the power supplies are read (`[power] supplies`; the platform's own when
    /// absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supplies: Option<PathBuf>,
}

/// The conditions of a run of (validated) `spec` with `trigger` (for a resume, the
/// trigger of the run first cut), for a fire scheduled at `scheduled_at`; `supplies`:
/// where this host reads its power supplies. Only fires (scheduled, caught up, and
/// their resumes) heed `on_battery`: a run asked for by hand runs.
pub fn of(
    spec: &JobSpec,
    trigger: Trigger,
    scheduled_at: Option<Timestamp>,
    supplies: Option<&std::path::Path>,
) -> Conditions {
    let network = spec.needs_network.then(|| NetworkNeed {
        check: spec.network_check.clone(),
        wait_ms: millis(spec.network_wait.as_deref().unwrap_or(DEFAULT_NETWORK_WAIT)),
    });
    let fire = matches!(trigger, Trigger::Scheduled | Trigger::CatchUp);
    let power = (fire && spec.on_battery != OnBattery::Run).then(|| {
        let window = crate::jobs::timing::CatchUpPolicy::of(spec).window;
        PowerNeed {
            on_battery: spec.on_battery,
            until: scheduled_at
                .and_then(|at| at.checked_add(window).ok())
                .map(Millis::from),
            supplies: supplies.map(std::path::Path::to_path_buf),
        }
    });
    Conditions {
        network,
        power,
        keep_awake: spec.keep_awake,
    }
}

fn millis(text: &str) -> u64 {
    schedule::parse_duration(text)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(120_000)
}

/// The seed of a fire's jitter: for `jitter_fixed`, a hash of the job's name and the host
/// (the same offset on every fire of the job on that host, like systemd's
/// `FixedRandomDelay`); otherwise a fresh random number.
pub fn jitter_seed(fixed: bool, job: &str, host: &str) -> u64 {
    if fixed {
        hash(&[job.as_bytes(), host.as_bytes()])
    } else {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("the OS random source is available");
        u64::from_le_bytes(bytes)
    }
}

/// A fire's delay under `jitter = max`, from `seed`: evenly in `[0, max]`, to the
/// millisecond.
pub fn jitter_delay(max: Duration, seed: u64) -> Duration {
    let ms = u64::try_from(max.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(seed % ms.saturating_add(1))
}

/// When a fire of `spec` that runs (`trigger`, due at `scheduled_at`) may start, where
/// that is later than at once: a fire on time after its jitter, counted from its
/// instant; a catch-up after its place in the spread of the catch-ups of one wake
/// (`spread`), counted from `now`. `host`: this host's name, a fixed jitter's seed.
pub fn not_before(
    spec: &JobSpec,
    trigger: Trigger,
    scheduled_at: Option<Timestamp>,
    now: Timestamp,
    host: &str,
    spread: Duration,
) -> Option<Timestamp> {
    let delay = match trigger {
        Trigger::Scheduled => spec
            .jitter
            .as_deref()
            .and_then(|j| schedule::parse_duration(j).ok())
            .map(|max| jitter_delay(max, jitter_seed(spec.jitter_fixed, &spec.name, host))),
        Trigger::CatchUp => scheduled_at.map(|at| wake_spread(spread, &spec.name, at)),
        _ => None,
    };
    let delay = delay.filter(|d| !d.is_zero())?;
    let from = match trigger {
        Trigger::Scheduled => scheduled_at.unwrap_or(now),
        _ => now,
    };
    from.checked_add(delay).ok()
}

/// The delay of a catch-up of `job` (for its fire at `at`) that comes due at a wake,
/// within `spread`: spread evenly by a hash of both, so the catch-ups of one wake start
/// over a few seconds, not all in the same one, and one fire always gets the same.
pub fn wake_spread(spread: Duration, job: &str, at: Timestamp) -> Duration {
    if spread.is_zero() {
        return Duration::ZERO;
    }
    let seed = hash(&[job.as_bytes(), &at.as_millisecond().to_le_bytes()]);
    jitter_delay(spread, seed)
}

/// The first eight bytes of the SHA-256 of `parts`, each length-prefixed (so `("ab",
/// "c")` and `("a", "bc")` differ).
fn hash(parts: &[&[u8]]) -> u64 {
    let mut digest = Sha256::new();
    for part in parts {
        digest.update((part.len() as u64).to_le_bytes());
        digest.update(part);
    }
    let out = digest.finalize();
    u64::from_le_bytes(out[..8].try_into().expect("a SHA-256 is 32 bytes"))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const MIN: Duration = Duration::from_secs(60);

    #[test]
    fn a_jitter_delay_is_its_seed_within_the_bound() {
        for (max, seed, delay) in [
            (Duration::ZERO, 12_345, Duration::ZERO),
            (Duration::from_millis(999), 0, Duration::ZERO),
            (Duration::from_millis(999), 999, Duration::from_millis(999)),
            (Duration::from_millis(999), 1000, Duration::ZERO),
            (Duration::from_millis(999), 1001, Duration::from_millis(1)),
            (5 * MIN, 300_000, 5 * MIN),
            (5 * MIN, 300_001, Duration::ZERO),
            (5 * MIN, u64::MAX, Duration::from_millis(u64::MAX % 300_001)),
        ] {
            assert_eq!(jitter_delay(max, seed), delay, "max {max:?}, seed {seed}");
        }
    }

    #[test]
    fn a_fixed_offset_is_stable_per_job_and_host_and_differs_between_them() {
        let on = |job, host| jitter_delay(5 * MIN, jitter_seed(true, job, host));
        assert_eq!(on("sync", "laptop"), on("sync", "laptop"));
        let offsets: std::collections::BTreeSet<Duration> = ["laptop", "desk", "server", "nas"]
            .into_iter()
            .flat_map(|host| ["sync", "backup", "mail"].map(|job| on(job, host)))
            .collect();
        assert!(offsets.len() >= 11, "offsets collide: {offsets:?}");
        // The two parts are kept apart.
        assert_ne!(jitter_seed(true, "ab", "c"), jitter_seed(true, "a", "bc"));
    }

    #[test]
    fn a_random_offset_changes_from_fire_to_fire() {
        let seeds: std::collections::BTreeSet<u64> = (0..8)
            .map(|_| jitter_seed(false, "sync", "laptop"))
            .collect();
        assert!(seeds.len() > 1);
    }

    #[test]
    fn catch_ups_of_one_wake_spread_over_the_window_and_none_without_one() {
        let at = Timestamp::from_second(1_800_000_000).unwrap();
        let spread = Duration::from_secs(5);
        let delays: Vec<Duration> = (0..30)
            .map(|i| wake_spread(spread, &format!("job-{i}"), at))
            .collect();
        assert!(delays.iter().all(|d| *d <= spread));
        let (min, max) = (delays.iter().min().unwrap(), delays.iter().max().unwrap());
        assert!(*max - *min >= Duration::from_secs(3), "{delays:?}");
        assert_eq!(wake_spread(spread, "job-1", at), delays[1]);
        assert_eq!(wake_spread(Duration::ZERO, "job-1", at), Duration::ZERO);
    }

    proptest! {
        #[test]
        fn a_delay_never_passes_its_bound(max_ms in 0u64..10_000_000, seed: u64) {
            let max = Duration::from_millis(max_ms);
            prop_assert!(jitter_delay(max, seed) <= max);
        }

        #[test]
        fn a_fixed_seed_depends_on_its_job_and_host_alone(job in "[a-z]{1,12}", host in "[a-z]{1,12}") {
            prop_assert_eq!(jitter_seed(true, &job, &host), jitter_seed(true, &job, &host));
        }
    }

    fn spec() -> JobSpec {
        JobSpec {
            name: "sync".into(),
            command: vec!["true".into()],
            needs_network: true,
            network_check: Some("example.org:443".into()),
            on_battery: OnBattery::Defer,
            catch_up_window: Some("1h".into()),
            keep_awake: true,
            ..JobSpec::default()
        }
    }

    /// A fixed jitter waits from the fire's instant, a catch-up's spread from now, and
    /// nothing else waits.
    #[test]
    fn a_fire_waits_for_its_jitter_and_a_catch_up_for_its_spread() {
        let at = Timestamp::from_second(1_800_000_000).unwrap();
        let now = at.checked_add(Duration::from_secs(3_600)).unwrap();
        let spread = Duration::from_secs(5);
        let jittered = JobSpec {
            jitter: Some("30s".into()),
            jitter_fixed: true,
            ..spec()
        };
        let delay = jitter_delay(Duration::from_secs(30), jitter_seed(true, "sync", "host"));
        let fire =
            |spec: &JobSpec, trigger| not_before(spec, trigger, Some(at), now, "host", spread);
        assert_eq!(
            fire(&jittered, Trigger::Scheduled),
            at.checked_add(delay).ok().filter(|_| !delay.is_zero())
        );
        let spread_delay = wake_spread(spread, "sync", at);
        assert_eq!(
            fire(&spec(), Trigger::CatchUp),
            now.checked_add(spread_delay)
                .ok()
                .filter(|_| !spread_delay.is_zero())
        );
        assert_eq!(fire(&spec(), Trigger::Scheduled), None, "no jitter");
        assert_eq!(fire(&jittered, Trigger::OnDemand), None, "not a fire");
        assert_eq!(
            not_before(
                &spec(),
                Trigger::CatchUp,
                Some(at),
                now,
                "host",
                Duration::ZERO
            ),
            None,
            "no spread"
        );
    }

    #[test]
    fn only_fires_heed_the_battery_and_a_deferral_ends_with_the_catch_up_window() {
        let at = Timestamp::from_second(1_800_000_000).unwrap();
        let c = of(&spec(), Trigger::Scheduled, Some(at), Some("/ps".as_ref()));
        assert_eq!(
            c.network,
            Some(NetworkNeed {
                check: Some("example.org:443".into()),
                wait_ms: 120_000
            })
        );
        let power = c.power.unwrap();
        assert_eq!(power.on_battery, OnBattery::Defer);
        assert_eq!(
            power.until,
            Some(Millis::from(at + jiff::SignedDuration::from_hours(1)))
        );
        assert_eq!(power.supplies, Some(PathBuf::from("/ps")));
        assert!(c.keep_awake);
        let by_hand = of(&spec(), Trigger::OnDemand, None, None);
        assert_eq!(by_hand.power, None);
        assert!(by_hand.network.is_some());
        assert!(of(&JobSpec::default(), Trigger::Scheduled, Some(at), None).is_empty());
    }
}
