//! When a job fires, and which fires are due now.
//!
//! [`due_fires`] is the scheduler's one decision, a pure function of the job's timing,
//! the instant up to which its fires were handled, the time now, and since when the
//! scheduler has been awake and waiting. A fire the scheduler waited for runs as
//! `scheduled`; a fire it could not have waited for (stead was stopped, asleep, or the
//! wall clock jumped over it) was missed, and missed fires inside the catch-up window
//! are coalesced into one `catch_up` run. Fires older than the window are history.

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{CatchUp, JobSpec, Trigger};

use crate::schedule::{CronSchedule, IntervalSchedule, ScheduleError};

/// How late a fire the scheduler waited for may be noticed and still count as on time
/// (a loaded machine, a slow ledger write).
pub const LATE_TOLERANCE: SignedDuration = SignedDuration::from_secs(5);

/// Missed fires older than this are not made up for, unless a job sets its own window.
pub const CATCH_UP_WINDOW: SignedDuration = SignedDuration::from_hours(6);

/// The most fires one scheduler pass looks at for one job (a minutely job missed for a
/// week is 10,080 fires; only the latest ones can matter).
const MAX_FIRES: usize = 10_000;

/// A job's schedule.
#[derive(Debug, Clone)]
pub enum JobTiming {
    Manual,
    Cron(Box<CronSchedule>),
    Every {
        interval: IntervalSchedule,
        anchor: Timestamp,
    },
}

impl JobTiming {
    /// The timing of a validated spec; `anchor` is where interval schedules count from.
    pub fn of(spec: &JobSpec, anchor: Timestamp) -> Result<Self, ScheduleError> {
        Ok(match (&spec.cron, &spec.every) {
            (Some(expr), _) => JobTiming::Cron(Box::new(CronSchedule::parse(
                expr,
                spec.tz.as_deref().unwrap_or("UTC"),
            )?)),
            (None, Some(every)) => JobTiming::Every {
                interval: IntervalSchedule::parse(every)?,
                anchor,
            },
            (None, None) => JobTiming::Manual,
        })
    }

    pub fn kind(&self) -> &'static str {
        match self {
            JobTiming::Manual => "manual",
            JobTiming::Cron(_) => "cron",
            JobTiming::Every { .. } => "every",
        }
    }

    /// The first fire strictly after `after`.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        match self {
            JobTiming::Manual => None,
            JobTiming::Cron(cron) => cron.next_after(after).map(|z| z.timestamp()),
            JobTiming::Every { interval, anchor } => Some(interval.next_after(*anchor, after)),
        }
    }

    /// The next fire after `after` as RFC 3339 with the job's own UTC offset.
    pub fn next_after_display(&self, after: Timestamp) -> Option<String> {
        match self {
            JobTiming::Manual => None,
            JobTiming::Cron(cron) => cron
                .next_after(after)
                .map(|z| z.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()),
            JobTiming::Every { .. } => self.next_after(after).map(crate::clock::rfc3339),
        }
    }

    /// Fires in `(after, until]`, in real-time order, at most [`MAX_FIRES`] (the latest
    /// of them when there are more).
    fn fires_between(&self, after: Timestamp, until: Timestamp) -> Vec<Timestamp> {
        let mut fires = std::collections::VecDeque::new();
        let mut cursor = after;
        while let Some(fire) = self.next_after(cursor).filter(|f| *f <= until) {
            if fires.len() == MAX_FIRES {
                fires.pop_front();
            }
            fires.push_back(fire);
            cursor = fire;
        }
        fires.into()
    }
}

/// What the scheduler should do for one job now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueFires {
    /// Runs to start: each fire's scheduled time and trigger, in order.
    pub runs: Vec<(Timestamp, Trigger)>,
    /// Missed fires inside the window folded into one catch-up run (policy `once`).
    pub coalesced: usize,
    /// Missed fires not run, recorded as one skipped run at the latest of them.
    pub passed_over: Option<PassedOver>,
    /// Every fire at or before this instant is handled once these runs are recorded.
    pub handled_through: Timestamp,
}

/// Fires a catch-up policy did not run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    pub latest: Timestamp,
    pub count: usize,
    pub reason: String,
}

/// With catch-up `all`, at most this many missed fires run; older ones are passed over.
pub const CATCH_UP_ALL_CAP: usize = 100;

/// A job's catch-up policy and window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatchUpPolicy {
    pub mode: CatchUp,
    pub window: SignedDuration,
}

impl CatchUpPolicy {
    /// The policy a (validated) spec declares.
    pub fn of(spec: &JobSpec) -> Self {
        let window = spec
            .catch_up_window
            .as_deref()
            .and_then(|w| crate::schedule::parse_duration(w).ok())
            .and_then(|d| SignedDuration::try_from(d).ok())
            .unwrap_or(CATCH_UP_WINDOW);
        Self {
            mode: spec.catch_up,
            window,
        }
    }
}

impl Default for CatchUpPolicy {
    fn default() -> Self {
        Self {
            mode: CatchUp::Once,
            window: CATCH_UP_WINDOW,
        }
    }
}

/// Which of the job's fires in `(handled_through, now]` to run, and how.
///
/// `awake_since` is when the scheduler last looked at the clock before now: fires after
/// it were waited for. A fire found more than [`LATE_TOLERANCE`] late was slept through.
pub fn due_fires(
    timing: &JobTiming,
    handled_through: Timestamp,
    now: Timestamp,
    awake_since: Timestamp,
    policy: CatchUpPolicy,
) -> DueFires {
    let window_start = now.checked_sub(policy.window).unwrap_or(Timestamp::MIN);
    // Fires before the window are history: only their number and the latest matter, so
    // the work stays bounded even after months away.
    let expired = timing.fires_between(handled_through, window_start.min(now));
    let from = handled_through.max(window_start);
    let fires = timing.fires_between(from, now);
    let on_time = |f: &Timestamp| *f > awake_since && now.duration_since(*f) <= LATE_TOLERANCE;
    let (punctual, missed): (Vec<Timestamp>, Vec<Timestamp>) = fires.into_iter().partition(on_time);
    let mut runs = Vec::new();
    let mut coalesced = 0;
    // Fires not run, and why, gathered into one skipped row so none is lost silently.
    let mut not_run: Vec<Timestamp> = Vec::new();
    let mut why: Vec<String> = Vec::new();
    if !expired.is_empty() {
        why.push(format!(
            "{} missed more than {} ago: history, not debt",
            expired.len(),
            format_window(policy.window)
        ));
        not_run.extend(&expired);
    }
    match policy.mode {
        CatchUp::Skip => {
            if !missed.is_empty() {
                why.push(format!(
                    "{} missed while stead was not running or the machine slept (catch_up = skip)",
                    missed.len()
                ));
                not_run.extend(&missed);
            }
        }
        CatchUp::Once => {
            if let Some(latest) = missed.last() {
                runs.push((*latest, Trigger::CatchUp));
                coalesced = missed.len() - 1;
            }
        }
        CatchUp::All => {
            let cut = missed.len().saturating_sub(CATCH_UP_ALL_CAP);
            if cut > 0 {
                why.push(format!(
                    "{cut} over the catch-up cap of {CATCH_UP_ALL_CAP} (catch_up = all)"
                ));
                not_run.extend(&missed[..cut]);
            }
            runs.extend(missed[cut..].iter().map(|f| (*f, Trigger::CatchUp)));
        }
    }
    let passed_over = not_run.iter().max().map(|latest| PassedOver {
        latest: *latest,
        count: not_run.len(),
        reason: format!("fires not run: {}", why.join("; ")),
    });
    runs.extend(punctual.into_iter().map(|f| (f, Trigger::Scheduled)));
    DueFires {
        runs,
        coalesced,
        passed_over,
        handled_through: now,
    }
}

fn format_window(window: SignedDuration) -> String {
    crate::schedule::format_duration(std::time::Duration::try_from(window).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn every_minute() -> JobTiming {
        JobTiming::Cron(Box::new(CronSchedule::parse("* * * * *", "UTC").unwrap()))
    }

    #[test]
    fn a_fire_waited_for_runs_scheduled() {
        let due = due_fires(
            &every_minute(),
            t("2026-11-30T10:00:00Z"),
            t("2026-11-30T10:01:00.004Z"),
            t("2026-11-30T10:00:00.001Z"),
            CatchUpPolicy::default(),
        );
        assert_eq!(
            due.runs,
            vec![(t("2026-11-30T10:01:00Z"), Trigger::Scheduled)]
        );
        assert_eq!(due.coalesced, 0);
    }

    #[test]
    fn fires_missed_while_down_coalesce_into_one_catch_up() {
        // Down from 10:00 to 10:05:30; the server just started (awake since now).
        let now = t("2026-11-30T10:05:30Z");
        let due = due_fires(
            &every_minute(),
            t("2026-11-30T10:00:00Z"),
            now,
            now,
            CatchUpPolicy::default(),
        );
        assert_eq!(
            due.runs,
            vec![(t("2026-11-30T10:05:00Z"), Trigger::CatchUp)]
        );
        assert_eq!(due.coalesced, 4);
        assert_eq!(due.passed_over, None);
        assert_eq!(due.handled_through, now);
    }

    #[test]
    fn a_wall_clock_jump_over_a_fire_is_a_missed_fire() {
        // Waiting since 10:00:10 for 10:01; the clock jumped to 11:00.
        let due = due_fires(
            &JobTiming::Cron(Box::new(CronSchedule::parse("1 10 * * *", "UTC").unwrap())),
            t("2026-11-30T10:00:10Z"),
            t("2026-11-30T11:00:00Z"),
            t("2026-11-30T10:00:10Z"),
            CatchUpPolicy::default(),
        );
        assert_eq!(
            due.runs,
            vec![(t("2026-11-30T10:01:00Z"), Trigger::CatchUp)]
        );
    }

    #[test]
    fn fires_before_the_window_are_history() {
        let now = t("2026-11-30T20:00:30Z");
        let due = due_fires(
            &JobTiming::Cron(Box::new(CronSchedule::parse("0 8 * * *", "UTC").unwrap())),
            t("2026-11-29T00:00:00Z"),
            now,
            now,
            CatchUpPolicy::default(),
        );
        assert!(due.runs.is_empty(), "{due:?}");
        let passed = due.passed_over.unwrap();
        assert_eq!(passed.latest, t("2026-11-30T08:00:00Z"));
        assert_eq!(passed.count, 2);
        assert!(
            passed.reason.contains("more than 6h ago"),
            "{}",
            passed.reason
        );
        assert_eq!(due.handled_through, now);
    }

    #[test]
    fn nothing_due_is_nothing_to_do() {
        let due = due_fires(
            &every_minute(),
            t("2026-11-30T10:00:00Z"),
            t("2026-11-30T10:00:59Z"),
            t("2026-11-30T10:00:00Z"),
            CatchUpPolicy::default(),
        );
        assert!(due.runs.is_empty());
        assert_eq!(due.passed_over, None);
        let manual = due_fires(
            &JobTiming::Manual,
            t("2026-11-30T10:00:00Z"),
            t("2026-12-30T10:00:00Z"),
            t("2026-11-30T10:00:00Z"),
            CatchUpPolicy::default(),
        );
        assert!(manual.runs.is_empty() && manual.passed_over.is_none());
    }

    #[test]
    fn catch_up_skip_runs_nothing_and_says_so() {
        let now = t("2026-11-30T10:05:30Z");
        let policy = CatchUpPolicy {
            mode: CatchUp::Skip,
            window: CATCH_UP_WINDOW,
        };
        let due = due_fires(&every_minute(), t("2026-11-30T10:00:00Z"), now, now, policy);
        assert!(due.runs.is_empty());
        let passed = due.passed_over.unwrap();
        assert_eq!(
            (passed.latest, passed.count),
            (t("2026-11-30T10:05:00Z"), 5)
        );
        assert!(passed.reason.contains("catch_up = skip"));
    }

    #[test]
    fn catch_up_all_runs_each_missed_fire_up_to_the_cap() {
        let now = t("2026-11-30T10:05:30Z");
        let policy = CatchUpPolicy {
            mode: CatchUp::All,
            window: CATCH_UP_WINDOW,
        };
        let due = due_fires(&every_minute(), t("2026-11-30T10:00:00Z"), now, now, policy);
        let times: Vec<_> = due.runs.iter().map(|(at, _)| at.to_string()).collect();
        assert_eq!(
            times,
            [
                "2026-11-30T10:01:00Z",
                "2026-11-30T10:02:00Z",
                "2026-11-30T10:03:00Z",
                "2026-11-30T10:04:00Z",
                "2026-11-30T10:05:00Z"
            ]
        );
        assert!(due.runs.iter().all(|(_, tr)| *tr == Trigger::CatchUp));
        assert_eq!(due.passed_over, None);

        // Three hours of minutely fires: the latest 100 run, the rest are passed over.
        let now = t("2026-11-30T13:00:30Z");
        let due = due_fires(&every_minute(), t("2026-11-30T10:00:00Z"), now, now, policy);
        assert_eq!(due.runs.len(), CATCH_UP_ALL_CAP);
        assert_eq!(due.runs[0].0, t("2026-11-30T11:21:00Z"));
        let passed = due.passed_over.unwrap();
        assert_eq!(passed.count, 180 - CATCH_UP_ALL_CAP);
        assert_eq!(passed.latest, t("2026-11-30T11:20:00Z"));
        assert!(passed.reason.contains("cap of 100"), "{}", passed.reason);
    }

    #[test]
    fn a_job_window_narrows_what_is_made_up_for() {
        let now = t("2026-11-30T10:30:30Z");
        let policy = CatchUpPolicy {
            mode: CatchUp::Once,
            window: SignedDuration::from_mins(10),
        };
        let due = due_fires(&every_minute(), t("2026-11-30T10:00:00Z"), now, now, policy);
        assert_eq!(due.runs, [(t("2026-11-30T10:30:00Z"), Trigger::CatchUp)]);
        assert_eq!(due.coalesced, 9);
        let passed = due.passed_over.unwrap();
        assert_eq!(passed.count, 20);
        assert!(
            passed.reason.contains("more than 10m ago"),
            "{}",
            passed.reason
        );
    }

    proptest::proptest! {
        /// Whatever the times and policy: no fire runs twice, runs are in order, every
        /// run is a real fire inside (handled, now], and nothing after `now` is touched.
        #[test]
        fn fires_are_run_at_most_once_and_in_order(
            handled_offset in 0i64..20_000,
            gap in 0i64..30_000,
            awake_back in 0i64..30_000,
            mode in proptest::sample::select(vec![CatchUp::Skip, CatchUp::Once, CatchUp::All]),
            window_mins in 1i64..600,
        ) {
            let base = t("2026-11-30T00:00:00Z");
            let handled = base + SignedDuration::from_secs(handled_offset);
            let now = handled + SignedDuration::from_secs(gap);
            let awake = now - SignedDuration::from_secs(awake_back);
            let timing = JobTiming::Cron(Box::new(CronSchedule::parse("*/7 * * * *", "UTC").unwrap()));
            let policy = CatchUpPolicy { mode, window: SignedDuration::from_mins(window_mins) };
            let due = due_fires(&timing, handled, now, awake, policy);
            let times: Vec<Timestamp> = due.runs.iter().map(|(at, _)| *at).collect();
            let mut sorted = times.clone();
            sorted.sort();
            sorted.dedup();
            proptest::prop_assert_eq!(&sorted, &times);
            for at in &times {
                proptest::prop_assert!(*at > handled && *at <= now);
                proptest::prop_assert_eq!(timing.next_after(*at - SignedDuration::from_secs(1)), Some(*at));
            }
            if let Some(p) = &due.passed_over {
                proptest::prop_assert!(!times.contains(&p.latest));
                proptest::prop_assert!(p.latest > handled && p.latest <= now);
            }
            proptest::prop_assert_eq!(due.handled_through, now);
        }
    }

    #[test]
    fn a_window_reaching_before_any_representable_time_does_not_panic() {
        let policy = CatchUpPolicy {
            mode: CatchUp::Once,
            window: SignedDuration::MAX,
        };
        let now = t("2026-11-30T10:05:30Z");
        let due = due_fires(&every_minute(), t("2026-11-30T10:00:00Z"), now, now, policy);
        assert_eq!(due.runs.len(), 1);
    }

    #[test]
    fn intervals_count_from_their_anchor() {
        let anchor = t("2026-11-30T10:00:00Z");
        let timing = JobTiming::Every {
            interval: IntervalSchedule::parse("15m").unwrap(),
            anchor,
        };
        assert_eq!(timing.next_after(anchor), Some(t("2026-11-30T10:15:00Z")));
        assert_eq!(
            timing.next_after(t("2026-11-30T10:20:00Z")),
            Some(t("2026-11-30T10:30:00Z"))
        );
    }
}
