//! What a restart of a service would cut: a pure function of the jobs, the runs in
//! flight, the holds and the time.
//!
//! For a service a job names in `depends_on`, its runs in flight and its fires due within
//! the window would be cut. A restart of `stead` itself cuts neither: runs in flight are
//! carried through it by their monitors, and a fire that falls inside it (a restart of
//! stead takes well under a second) is made up as soon as the new server runs, from the
//! durable record of handled fires. Both are noted, not counted. Live holds on the
//! service block; holds past their TTL are wedged and listed apart.

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{Blocker, Hold, Readiness, STEAD_SERVICE};

use crate::clock::rfc3339;
use crate::jobs::JobTiming;
use crate::records::{StoredHold, StoredJob};

/// The gate's default look-ahead for fires: about as long as a restart takes.
pub const DEFAULT_WINDOW: SignedDuration = SignedDuration::from_secs(90);

/// A run in flight, for readiness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InFlight {
    pub id: i64,
    pub job: String,
    pub started_at: Option<String>,
}

/// Everything readiness looks at.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub service: &'a str,
    pub now: Timestamp,
    pub window: SignedDuration,
    /// Every job with its timing (a disabled job's fires do not count, its runs do).
    pub jobs: &'a [(StoredJob, JobTiming)],
    pub in_flight: &'a [InFlight],
    pub holds: &'a [StoredHold],
}

/// The answer, and when it would next change by the clock alone (a fire entering or
/// leaving the window, a hold expiring), so a waiter knows when to look again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub readiness: Readiness,
    pub next_change: Option<Timestamp>,
}

pub fn readiness(inputs: Inputs<'_>) -> Answer {
    let Inputs {
        service,
        now,
        window,
        jobs,
        in_flight,
        holds,
    } = inputs;
    let is_stead = service == STEAD_SERVICE;
    let depends = |job: &StoredJob| is_stead || job.spec.depends_on.iter().any(|d| d == service);
    let mut blockers = Vec::new();
    let mut notes = Vec::new();
    let mut next_change: Option<Timestamp> = None;
    let mut sooner = |t: Timestamp| {
        next_change = Some(next_change.map_or(t, |n| n.min(t)));
    };

    let dependent_runs: Vec<&InFlight> = in_flight
        .iter()
        .filter(|run| {
            jobs.iter()
                .any(|(j, _)| j.spec.name == run.job && depends(j))
        })
        .collect();
    if is_stead {
        if !dependent_runs.is_empty() {
            notes.push(format!(
                "{} run(s) in flight go on through a restart of stead: their monitors hold them, and the next server adopts them",
                dependent_runs.len()
            ));
        }
    } else {
        blockers.extend(dependent_runs.iter().map(|run| Blocker::Run {
            id: run.id,
            job: run.job.clone(),
            started_at: run.started_at.clone(),
        }));
    }

    for (job, timing) in jobs.iter().filter(|(j, _)| j.spec.enabled && depends(j)) {
        // Fires a pause skips cut nothing: the first that counts is at its end or later.
        let from = match job.paused_until.filter(|until| *until > now) {
            Some(until) => (until - SignedDuration::from_millis(1)).max(now),
            None => now,
        };
        let Some(at) = timing.next_after(from) else {
            continue;
        };
        if at <= now + window {
            if is_stead {
                notes.push(format!(
                    "{} fires at {}: a fire inside a restart of stead is made up as soon as the new server runs",
                    job.spec.name,
                    rfc3339(at)
                ));
            } else {
                blockers.push(Blocker::Fire {
                    job: job.spec.name.clone(),
                    at: rfc3339(at),
                });
            }
            // Once it has fired, the next fire may lie outside the window.
            sooner(at);
        } else {
            sooner(at - window);
        }
    }

    let mut wedged_holds = Vec::new();
    for hold in holds.iter().filter(|h| h.service == service) {
        let live = hold.expires_at > now;
        if live {
            blockers.push(Blocker::Hold {
                name: hold.name.clone(),
                expires_at: rfc3339(hold.expires_at),
            });
            sooner(hold.expires_at);
        } else {
            wedged_holds.push(hold_view(hold, now));
        }
    }

    Answer {
        readiness: Readiness {
            service: service.to_string(),
            window: crate::schedule::format_duration(
                std::time::Duration::try_from(window).unwrap_or_default(),
            ),
            ready: blockers.is_empty(),
            blockers,
            wedged_holds,
            notes,
        },
        next_change,
    }
}

/// The protocol's view of a hold at `now`.
pub fn hold_view(hold: &StoredHold, now: Timestamp) -> Hold {
    Hold {
        name: hold.name.clone(),
        service: hold.service.clone(),
        acquired_at: rfc3339(hold.acquired_at),
        expires_at: rfc3339(hold.expires_at),
        wedged: hold.expires_at <= now,
    }
}

#[cfg(test)]
mod tests {
    use stead_protocol::JobSpec;

    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    const NOW: &str = "2026-11-30T12:00:00Z";

    fn job(name: &str, cron: Option<&str>, depends_on: &[&str]) -> (StoredJob, JobTiming) {
        let spec = JobSpec {
            name: name.into(),
            cron: cron.map(Into::into),
            tz: cron.map(|_| "UTC".into()),
            command: vec!["true".into()],
            depends_on: depends_on.iter().map(|s| s.to_string()).collect(),
            ..JobSpec::default()
        };
        let stored = StoredJob {
            id: 1,
            spec,
            created_at: t(NOW),
            updated_at: t(NOW),
            anchor: t(NOW),
            fired_through: None,
            paused_until: None,
            overdue_since: None,
        };
        let timing = JobTiming::of(&stored.spec, stored.anchor).unwrap();
        (stored, timing)
    }

    fn run(id: i64, job: &str) -> InFlight {
        InFlight {
            id,
            job: job.into(),
            started_at: None,
        }
    }

    fn hold(name: &str, service: &str, expires: &str) -> StoredHold {
        StoredHold {
            name: name.into(),
            service: service.into(),
            acquired_at: t(NOW) - SignedDuration::from_mins(5),
            expires_at: t(expires),
        }
    }

    fn answer(
        service: &str,
        jobs: &[(StoredJob, JobTiming)],
        runs: &[InFlight],
        holds: &[StoredHold],
    ) -> Answer {
        readiness(Inputs {
            service,
            now: t(NOW),
            window: DEFAULT_WINDOW,
            jobs,
            in_flight: runs,
            holds,
        })
    }

    #[test]
    fn nothing_in_the_way_is_ready() {
        let jobs = [job("nightly", Some("0 3 * * *"), &["web"])];
        let a = answer("web", &jobs, &[], &[]);
        assert!(a.readiness.ready);
        assert!(a.readiness.blockers.is_empty());
        // Looks again when the 03:00 fire enters the window.
        assert_eq!(a.next_change, Some(t("2026-12-01T02:58:30Z")));
    }

    #[test]
    fn a_dependent_run_in_flight_blocks_and_others_do_not() {
        let jobs = [job("sync", None, &["web"]), job("other", None, &["db"])];
        let a = answer("web", &jobs, &[run(7, "sync"), run(8, "other")], &[]);
        assert!(!a.readiness.ready);
        assert_eq!(
            a.readiness.blockers,
            [Blocker::Run {
                id: 7,
                job: "sync".into(),
                started_at: None
            }]
        );
    }

    #[test]
    fn runs_are_noted_not_counted_for_stead_itself() {
        let jobs = [job("sync", None, &[])];
        let a = answer("stead", &jobs, &[run(7, "sync")], &[]);
        assert!(a.readiness.ready, "{a:?}");
        assert!(a.readiness.notes[0].contains("go on through a restart of stead"));
    }

    #[test]
    fn a_fire_inside_the_window_blocks() {
        let jobs = [job("every-minute", Some("* * * * *"), &["web"])];
        let a = answer("web", &jobs, &[], &[]);
        assert_eq!(
            a.readiness.blockers,
            [Blocker::Fire {
                job: "every-minute".into(),
                at: "2026-11-30T12:01:00.000Z".into()
            }]
        );
        assert_eq!(a.next_change, Some(t("2026-11-30T12:01:00Z")));
        // For stead a fire is made up after the restart: noted, not counted.
        let stead = answer("stead", &jobs, &[], &[]).readiness;
        assert!(stead.ready);
        assert!(
            stead.notes[0].contains("every-minute fires at"),
            "{stead:?}"
        );
        // A job that does not depend on the service does not.
        assert!(answer("db", &jobs, &[], &[]).readiness.ready);
    }

    #[test]
    fn a_paused_jobs_fires_block_only_from_the_end_of_its_pause() {
        let (mut paused, timing) = job("every-minute", Some("* * * * *"), &["web"]);
        paused.paused_until = Some(t("2026-11-30T12:30:00Z"));
        let a = answer("web", &[(paused.clone(), timing.clone())], &[], &[]);
        assert!(a.readiness.ready, "{a:?}");
        // Looks again when the fire at the pause's end enters the window.
        assert_eq!(a.next_change, Some(t("2026-11-30T12:28:30Z")));
        // A pause about to end: the fire at its end is inside the window.
        paused.paused_until = Some(t("2026-11-30T12:01:00Z"));
        let a = answer("web", &[(paused, timing)], &[], &[]);
        assert_eq!(
            a.readiness.blockers,
            [Blocker::Fire {
                job: "every-minute".into(),
                at: "2026-11-30T12:01:00.000Z".into()
            }]
        );
    }

    #[test]
    fn live_holds_block_and_wedged_ones_are_listed_apart() {
        let holds = [
            hold("turn", "web", "2026-11-30T12:05:00Z"),
            hold("stuck", "web", "2026-11-30T11:59:00Z"),
            hold("elsewhere", "db", "2026-11-30T12:05:00Z"),
        ];
        let a = answer("web", &[], &[], &holds);
        assert_eq!(
            a.readiness.blockers,
            [Blocker::Hold {
                name: "turn".into(),
                expires_at: "2026-11-30T12:05:00.000Z".into()
            }]
        );
        assert_eq!(a.readiness.wedged_holds.len(), 1);
        assert!(a.readiness.wedged_holds[0].wedged);
        assert_eq!(a.next_change, Some(t("2026-11-30T12:05:00Z")));
        let only_wedged = answer("web", &[], &[], &holds[1..2]);
        assert!(only_wedged.readiness.ready, "a wedged hold blocks nothing");
    }
}
