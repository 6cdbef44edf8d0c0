//! When a job fires, and which fires are due now.
//!
//! [`due_fires`] is the scheduler's one decision, a pure function of the job's timing,
//! the instant up to which its fires were handled, the time now, and since when the
//! scheduler has been awake and waiting. A fire the scheduler waited for runs as
//! `scheduled`; a fire it could not have waited for (stead was stopped, asleep, or the
//! wall clock jumped over it) was missed, and missed fires inside the catch-up window
//! are coalesced into one `catch_up` run. Fires older than the window are history.

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{JobSpec, Trigger};

use crate::schedule::{CronSchedule, IntervalSchedule, ScheduleError};

/// How late a fire the scheduler waited for may be noticed and still count as on time
/// (a loaded machine, a slow ledger write).
pub const LATE_TOLERANCE: SignedDuration = SignedDuration::from_secs(5);

/// Missed fires older than this are not made up for.
pub const CATCH_UP_WINDOW: SignedDuration = SignedDuration::from_hours(6);

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

    /// Fires in `(after, until]`, in real-time order.
    fn fires_between(&self, after: Timestamp, until: Timestamp) -> Vec<Timestamp> {
        let mut fires = Vec::new();
        let mut cursor = after;
        while let Some(fire) = self.next_after(cursor).filter(|f| *f <= until) {
            fires.push(fire);
            cursor = fire;
        }
        fires
    }
}

/// What the scheduler should do for one job now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueFires {
    /// Runs to start: each fire's scheduled time and trigger, in order.
    pub runs: Vec<(Timestamp, Trigger)>,
    /// Missed fires inside the window folded into the one catch-up run.
    pub coalesced: usize,
    /// Some fires were missed before the window began and are not made up for.
    pub expired: bool,
    /// Every fire at or before this instant is handled once these runs are recorded.
    pub handled_through: Timestamp,
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
) -> DueFires {
    let window_start = now - CATCH_UP_WINDOW;
    // Fires before the window are history: counting them is enough (bounded work even
    // after months away).
    let from = handled_through.max(window_start);
    let fires = timing.fires_between(from, now);
    let on_time = |f: &Timestamp| *f > awake_since && now.duration_since(*f) <= LATE_TOLERANCE;
    let (punctual, missed): (Vec<Timestamp>, Vec<Timestamp>) = fires.into_iter().partition(on_time);
    let expired = handled_through < window_start
        && timing
            .next_after(handled_through)
            .is_some_and(|f| f <= window_start);
    let mut runs = Vec::new();
    if let Some(latest) = missed.last() {
        runs.push((*latest, Trigger::CatchUp));
    }
    runs.extend(punctual.into_iter().map(|f| (f, Trigger::Scheduled)));
    DueFires {
        runs,
        coalesced: missed.len().saturating_sub(1),
        expired,
        handled_through: now,
    }
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
        let due = due_fires(&every_minute(), t("2026-11-30T10:00:00Z"), now, now);
        assert_eq!(
            due.runs,
            vec![(t("2026-11-30T10:05:00Z"), Trigger::CatchUp)]
        );
        assert_eq!(due.coalesced, 4);
        assert!(!due.expired);
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
        );
        assert!(due.runs.is_empty(), "{due:?}");
        assert!(due.expired);
        assert_eq!(due.handled_through, now);
    }

    #[test]
    fn nothing_due_is_nothing_to_do() {
        let due = due_fires(
            &every_minute(),
            t("2026-11-30T10:00:00Z"),
            t("2026-11-30T10:00:59Z"),
            t("2026-11-30T10:00:00Z"),
        );
        assert!(due.runs.is_empty());
        assert!(!due.expired);
        assert!(
            due_fires(
                &JobTiming::Manual,
                t("2026-11-30T10:00:00Z"),
                t("2026-12-30T10:00:00Z"),
                t("2026-11-30T10:00:00Z")
            )
            .runs
            .is_empty()
        );
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
