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

use crate::records::{NotRun, SkippedFire};
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
    /// of them when there are more), with how many there were in all and the earliest.
    fn fires_between(&self, after: Timestamp, until: Timestamp) -> Fires {
        let mut fires = std::collections::VecDeque::new();
        let mut total = 0;
        let mut earliest = None;
        let mut cursor = after;
        while let Some(fire) = self.next_after(cursor).filter(|f| *f <= until) {
            if fires.len() == MAX_FIRES {
                fires.pop_front();
            }
            fires.push_back(fire);
            total += 1;
            earliest.get_or_insert(fire);
            cursor = fire;
        }
        Fires {
            latest: fires.into(),
            total,
            earliest,
        }
    }
}

/// Fires in a stretch: the latest of them one by one, and how many in all.
struct Fires {
    latest: Vec<Timestamp>,
    total: usize,
    earliest: Option<Timestamp>,
}

/// What the scheduler should do for one job now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueFires {
    /// Runs to start: each fire's scheduled time and trigger, in order.
    pub runs: Vec<(Timestamp, Trigger)>,
    /// Missed fires inside the window folded into one catch-up run (policy `once`).
    pub coalesced: usize,
    /// Fires not run, oldest first, each to be recorded as its own `skipped` row (at
    /// most [`MAX_SKIPPED_ROWS`]; past that the oldest share one row).
    pub skipped: Vec<SkippedFire>,
    /// Every fire at or before this instant is handled once these runs are recorded.
    pub handled_through: Timestamp,
}

impl DueFires {
    /// How many fires the skipped rows stand for.
    pub fn not_run(&self) -> usize {
        self.skipped.iter().map(|f| f.count).sum()
    }
}

/// With catch-up `all`, at most this many missed fires run; older ones are passed over.
pub const CATCH_UP_ALL_CAP: usize = 100;

/// The most `skipped` rows one pass writes for one job's gap: a machine asleep for
/// months writes this many rows, not 100,000. Past it, the oldest fires share one row
/// whose reason counts them.
pub const MAX_SKIPPED_ROWS: usize = 1_000;

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

/// Which of the job's fires in `(handled_through, now]` to run, and how; every fire not
/// run comes back in [`DueFires::skipped`] with why, so each is accounted for.
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
    // Fires before the window are history: only the latest of them are listed, so the
    // work stays bounded even after months away; all of them are counted.
    let expired = timing.fires_between(handled_through, window_start.min(now));
    let from = handled_through.max(window_start);
    let fires = timing.fires_between(from, now).latest;
    let on_time = |f: &Timestamp| *f > awake_since && now.duration_since(*f) <= LATE_TOLERANCE;
    let (punctual, missed): (Vec<Timestamp>, Vec<Timestamp>) = fires.into_iter().partition(on_time);
    let mut runs = Vec::new();
    let mut coalesced = 0;
    // Fires not run, oldest first, each with why.
    let history = NotRun::History(format_window(policy.window));
    let mut not_run: Vec<(Timestamp, NotRun)> = expired
        .latest
        .iter()
        .map(|f| (*f, history.clone()))
        .collect();
    // Expired fires too old to be listed one by one (past MAX_FIRES).
    let unlisted = expired.total - expired.latest.len();
    match policy.mode {
        CatchUp::Skip => not_run.extend(missed.iter().map(|f| (*f, NotRun::Skip))),
        CatchUp::Once => {
            if let Some((latest, earlier)) = missed.split_last() {
                runs.push((*latest, Trigger::CatchUp));
                coalesced = earlier.len();
                not_run.extend(earlier.iter().map(|f| (*f, NotRun::Coalesced)));
            }
        }
        CatchUp::All => {
            let cut = missed.len().saturating_sub(CATCH_UP_ALL_CAP);
            not_run.extend(
                missed[..cut]
                    .iter()
                    .map(|f| (*f, NotRun::OverCap(CATCH_UP_ALL_CAP))),
            );
            runs.extend(missed[cut..].iter().map(|f| (*f, Trigger::CatchUp)));
        }
    }
    let skipped = rows_for(not_run, unlisted, expired.earliest, &history);
    runs.extend(punctual.into_iter().map(|f| (f, Trigger::Scheduled)));
    DueFires {
        runs,
        coalesced,
        skipped,
        handled_through: now,
    }
}

/// The job's fires in `(handled_through, now]` that fall before `paused_until`, each a
/// `skipped` row naming the pause (bounded as [`due_fires`] bounds its rows); fires from
/// `paused_until` on are left to [`due_fires`].
pub fn paused_fires(
    timing: &JobTiming,
    handled_through: Timestamp,
    now: Timestamp,
    paused_until: Timestamp,
) -> Vec<SkippedFire> {
    let upto = now.min(
        paused_until
            .checked_sub(SignedDuration::from_millis(1))
            .unwrap_or(paused_until),
    );
    if upto <= handled_through {
        return Vec::new();
    }
    let fires = timing.fires_between(handled_through, upto);
    let why = NotRun::Paused(crate::clock::rfc3339(paused_until));
    let listed = fires.latest.iter().map(|at| (*at, why.clone())).collect();
    let unlisted = fires.total - fires.latest.len();
    rows_for(listed, unlisted, fires.earliest, &why)
        .into_iter()
        .map(|row| SkippedFire {
            trigger: Trigger::Scheduled,
            ..row
        })
        .collect()
}

/// One `skipped` row per fire not run, oldest first, at most [`MAX_SKIPPED_ROWS`]: past
/// that the oldest fires (and the `unlisted` ones before them, from `earliest`) share
/// one row, at the latest of them, whose reason counts them by why.
fn rows_for(
    not_run: Vec<(Timestamp, NotRun)>,
    unlisted: usize,
    earliest: Option<Timestamp>,
    history: &NotRun,
) -> Vec<SkippedFire> {
    let total = not_run.len() + unlisted;
    if total <= MAX_SKIPPED_ROWS {
        return not_run
            .into_iter()
            .map(|(at, why)| SkippedFire::one(at, Trigger::CatchUp, why))
            .collect();
    }
    // The summary row stands for the oldest `shared` fires; the others get a row each.
    let individual = MAX_SKIPPED_ROWS - 1;
    let listed_in_summary = not_run.len() - individual;
    let mut rest = not_run;
    let own = rest.split_off(listed_in_summary);
    let mut why: Vec<(NotRun, usize)> = Vec::new();
    if unlisted > 0 {
        why.push((history.clone(), unlisted));
    }
    for (_, reason) in &rest {
        match why.last_mut() {
            Some((last, n)) if last == reason => *n += 1,
            _ => why.push((reason.clone(), 1)),
        }
    }
    let at = rest
        .last()
        .map(|(at, _)| *at)
        .expect("the summary stands for fires");
    let summary = SkippedFire {
        at,
        trigger: Trigger::CatchUp,
        count: listed_in_summary + unlisted,
        earliest: earliest.unwrap_or(rest[0].0),
        why,
        row_cap: MAX_SKIPPED_ROWS,
        slept: None,
    };
    std::iter::once(summary)
        .chain(
            own.into_iter()
                .map(|(at, why)| SkippedFire::one(at, Trigger::CatchUp, why)),
        )
        .collect()
}

fn format_window(window: SignedDuration) -> String {
    crate::schedule::format_duration(std::time::Duration::try_from(window).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_during_a_pause_are_skipped_rows_naming_it_and_later_ones_are_not() {
        let every_second = JobTiming::of(
            &stead_protocol::JobSpec {
                every: Some("1s".into()),
                ..stead_protocol::JobSpec::default()
            },
            t("2026-12-01T00:00:00Z"),
        )
        .unwrap();
        let handled = t("2026-12-01T00:00:10Z");
        let until = t("2026-12-01T00:00:13Z");
        // While paused: the fires so far.
        let rows = paused_fires(&every_second, handled, t("2026-12-01T00:00:12.5Z"), until);
        let at: Vec<_> = rows.iter().map(|r| r.at).collect();
        assert_eq!(at, [t("2026-12-01T00:00:11Z"), t("2026-12-01T00:00:12Z")]);
        assert!(rows.iter().all(|r| r.trigger == Trigger::Scheduled));
        assert_eq!(
            rows[0].reason(None),
            "fire not run: the job is paused until 2026-12-01T00:00:13.000Z"
        );
        // After it: the fire at its end is the job's again.
        let rows = paused_fires(&every_second, handled, t("2026-12-01T00:00:20Z"), until);
        assert_eq!(rows.len(), 2);
        assert!(paused_fires(&every_second, until, t("2026-12-01T00:00:20Z"), until).is_empty());
    }

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
        // Each coalesced fire is its own skipped row, naming the catch-up run.
        let at: Vec<String> = due.skipped.iter().map(|f| f.at.to_string()).collect();
        assert_eq!(
            at,
            [
                "2026-11-30T10:01:00Z",
                "2026-11-30T10:02:00Z",
                "2026-11-30T10:03:00Z",
                "2026-11-30T10:04:00Z"
            ]
        );
        for fire in &due.skipped {
            assert_eq!((fire.count, fire.trigger), (1, Trigger::CatchUp));
            assert_eq!(
                fire.reason(Some(42)),
                "fire not run: coalesced into catch-up run 42 (catch_up = once)"
            );
        }
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
        let at: Vec<Timestamp> = due.skipped.iter().map(|f| f.at).collect();
        assert_eq!(at, [t("2026-11-29T08:00:00Z"), t("2026-11-30T08:00:00Z")]);
        assert_eq!(
            due.skipped[1].reason(None),
            "fire not run: missed more than 6h ago: history, not debt"
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
        assert!(due.skipped.is_empty());
        let manual = due_fires(
            &JobTiming::Manual,
            t("2026-11-30T10:00:00Z"),
            t("2026-12-30T10:00:00Z"),
            t("2026-11-30T10:00:00Z"),
            CatchUpPolicy::default(),
        );
        assert!(manual.runs.is_empty() && manual.skipped.is_empty());
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
        assert_eq!(due.skipped.len(), 5);
        assert_eq!(due.skipped[4].at, t("2026-11-30T10:05:00Z"));
        assert!(due.skipped.iter().all(|f| f.count == 1
            && f.reason(None)
                == "fire not run: missed while stead was not running or the machine slept (catch_up = skip)"));
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
        assert!(due.skipped.is_empty());

        // Three hours of minutely fires: the latest 100 run, the rest are passed over.
        let now = t("2026-11-30T13:00:30Z");
        let due = due_fires(&every_minute(), t("2026-11-30T10:00:00Z"), now, now, policy);
        assert_eq!(due.runs.len(), CATCH_UP_ALL_CAP);
        assert_eq!(due.runs[0].0, t("2026-11-30T11:21:00Z"));
        assert_eq!(due.skipped.len(), 180 - CATCH_UP_ALL_CAP);
        assert_eq!(due.skipped[0].at, t("2026-11-30T10:01:00Z"));
        assert_eq!(due.skipped[79].at, t("2026-11-30T11:20:00Z"));
        assert_eq!(
            due.skipped[0].reason(None),
            "fire not run: over the catch-up cap of 100 (catch_up = all)"
        );
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
        assert_eq!(due.not_run(), 29);
        let history = due
            .skipped
            .iter()
            .filter(|f| f.reason(Some(7)).contains("more than 10m ago"));
        assert_eq!(history.count(), 20);
        let coalesced = due
            .skipped
            .iter()
            .filter(|f| f.reason(Some(7)).contains("coalesced into catch-up run 7"));
        assert_eq!(coalesced.count(), 9);
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
            // Every fire in (handled, now] is run or skipped, exactly once, while the
            // rows stay under the cap.
            proptest::prop_assert!(due.skipped.len() <= MAX_SKIPPED_ROWS);
            let mut seen: Vec<Timestamp> = times.clone();
            seen.extend(due.skipped.iter().map(|f| f.at));
            seen.sort();
            let n = seen.len();
            seen.dedup();
            proptest::prop_assert_eq!(n, seen.len());
            for f in &due.skipped {
                proptest::prop_assert!(f.at > handled && f.at <= now);
                // Older than every fire that runs: the pass's first run carries them
                // and moves fired_through past them all.
                proptest::prop_assert!(times.iter().all(|at| f.at < *at));
            }
            let all = timing.fires_between(handled, now).total;
            proptest::prop_assert_eq!(due.runs.len() + due.not_run(), all);
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
    fn a_long_sleep_writes_at_most_the_row_cap() {
        // Asleep for 30 days: 43,200 minutely fires, all but the last 6 h history.
        let now = t("2026-12-30T10:00:30Z");
        let due = due_fires(
            &every_minute(),
            t("2026-11-30T10:00:00Z"),
            now,
            now,
            CatchUpPolicy::default(),
        );
        assert_eq!(due.runs, [(t("2026-12-30T10:00:00Z"), Trigger::CatchUp)]);
        assert_eq!(due.skipped.len(), MAX_SKIPPED_ROWS);
        assert_eq!(due.not_run(), 43_200 - 1);
        let summary = &due.skipped[0];
        assert_eq!(summary.earliest, t("2026-11-30T10:01:00Z"));
        assert_eq!(summary.count, 43_200 - MAX_SKIPPED_ROWS);
        let reason = summary.reason(Some(9));
        assert!(
            reason.starts_with(
                "fires not run: 42200 fires from 2026-11-30T10:01:00.000Z through 2026-12-29T17:20:00.000Z in this one row (at most 1000 rows per gap): "
            ),
            "{reason}"
        );
        assert!(reason.contains("history, not debt"), "{reason}");
        // The newest fires keep a row each, with no time twice.
        let mut at: Vec<Timestamp> = due.skipped.iter().map(|f| f.at).collect();
        at.dedup();
        assert_eq!(at.len(), MAX_SKIPPED_ROWS);
        assert_eq!(due.skipped[999].at, t("2026-12-30T09:59:00Z"));
        assert!(due.skipped[1..].iter().all(|f| f.count == 1));
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
