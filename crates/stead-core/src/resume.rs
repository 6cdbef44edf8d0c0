//! Whether a cut run is resumed: a pure decision over the run, its job and the time.
//!
//! A run cut by a restart, a reboot or a dead monitor ended `interrupted`: it is owed.
//! It is resumed once, with its trigger and idempotency key kept, unless one of the
//! rules below says it is not, and each refusal is recorded with its reason. The whole
//! table is in `docs/recovery.md`.

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{JobSpec, Run, RunStatus, Trigger};

/// What to do with one owed run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Resume it; first ask the job's landed check when it has one.
    Resume { check_receipt: bool },
    /// Settle the debt without a resume, for this reason.
    Decline(String),
    /// Not this machine's to decide: leave it untouched.
    Leave,
}

/// Decides for `run` (an interrupted run whose debt is unsettled), given its job (`None`
/// if the job was removed), this machine's id, the time now and the resume age.
pub fn decide(
    run: &Run,
    job: Option<&JobSpec>,
    machine_id: &str,
    now: Timestamp,
    max_age: SignedDuration,
) -> Decision {
    if run.machine_id != machine_id {
        return Decision::Leave;
    }
    if run.status != RunStatus::Interrupted || run.resolution.is_some() {
        return Decision::Leave;
    }
    if run.trigger == Trigger::Resume {
        return Decision::Decline(
            "not resumed: it was itself a resume, and a cut run is resumed once".into(),
        );
    }
    let Some(job) = job else {
        return Decision::Decline("not resumed: its job was removed".into());
    };
    if !job.resume {
        return Decision::Decline("not resumed: its job does not resume cut runs".into());
    }
    if !job.enabled && run.trigger != Trigger::OnDemand {
        return Decision::Decline("not resumed: its job is disabled".into());
    }
    let born = run
        .scheduled_at
        .as_deref()
        .unwrap_or(&run.created_at)
        .parse::<Timestamp>()
        .unwrap_or(now);
    if now.duration_since(born) > max_age {
        return Decision::Decline(format!(
            "not resumed: it is older than the resume age ({}): history, not debt",
            crate::schedule::format_duration(
                std::time::Duration::try_from(max_age).unwrap_or_default()
            )
        ));
    }
    Decision::Resume {
        check_receipt: job.landed_check.is_some(),
    }
}

/// What a landed check's exit says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receipt {
    /// Exit 0: the work landed.
    Landed,
    /// Exit 1: it did not land.
    NotLanded,
    /// Anything else (another code, a signal, a timeout, a failure to start): unknown.
    /// The run is resumed anyway (a duplicate is the lesser loss beside a missing run),
    /// and this says why.
    Unknown(String),
}

impl Receipt {
    /// Reads a check's exit code (`None`: it did not exit by itself).
    pub fn from_exit(code: Option<i32>, detail: &str) -> Self {
        match code {
            Some(0) => Receipt::Landed,
            Some(1) => Receipt::NotLanded,
            Some(code) => Receipt::Unknown(format!("the landed check exited with code {code}")),
            None => Receipt::Unknown(format!("the landed check did not finish: {detail}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    const NOW: &str = "2026-11-30T12:00:00Z";
    const AGE: SignedDuration = SignedDuration::from_hours(6);

    fn cut(trigger: Trigger) -> Run {
        Run {
            id: 7,
            job: "journal".into(),
            trigger,
            status: RunStatus::Interrupted,
            exit_code: None,
            signal: None,
            reason: Some("interrupted: its monitor (pid 9) is gone".into()),
            attempt: 1,
            parent_id: None,
            idempotency_key: "journal@2026-11-30T11:00:00.000Z".into(),
            machine_id: "here".into(),
            boot_id: "b".into(),
            monitor_pid: Some(9),
            scheduled_at: Some("2026-11-30T11:00:00.000Z".into()),
            created_at: "2026-11-30T11:00:00.003Z".into(),
            started_at: Some("2026-11-30T11:00:00.004Z".into()),
            ended_at: Some("2026-11-30T11:10:00.000Z".into()),
            log_path: "/x".into(),
            original_trigger: None,
            resolution: None,
            ended_processes: None,
            log_pruned_at: None,
            params: None,
            queue: None,
            waiting: None,
            not_before: None,
            slept_ms: 0,
            followed_by: None,
            waited_ms: None,
            wait_note: None,
            caught_up: None,
        }
    }

    fn job() -> JobSpec {
        JobSpec {
            name: "journal".into(),
            command: vec!["true".into()],
            ..JobSpec::default()
        }
    }

    #[test]
    fn the_table() {
        let resume = Decision::Resume {
            check_receipt: false,
        };
        let disabled = JobSpec {
            enabled: false,
            ..job()
        };
        let no_resume = JobSpec {
            resume: false,
            ..job()
        };
        let with_receipt = JobSpec {
            landed_check: Some("test -e /done".into()),
            ..job()
        };
        let mut on_demand = cut(Trigger::OnDemand);
        on_demand.scheduled_at = None;
        let mut old = cut(Trigger::Scheduled);
        old.scheduled_at = Some("2026-11-30T05:59:59.000Z".into());
        let mut elsewhere = cut(Trigger::Scheduled);
        elsewhere.machine_id = "there".into();
        let mut settled = cut(Trigger::Scheduled);
        settled.resolution = Some("resumed as run 8".into());
        let mut failed = cut(Trigger::Scheduled);
        failed.status = RunStatus::Failed;

        let cases: Vec<(&str, Run, Option<JobSpec>, Decision)> = vec![
            (
                "scheduled, job as it was",
                cut(Trigger::Scheduled),
                Some(job()),
                resume.clone(),
            ),
            (
                "catch-up",
                cut(Trigger::CatchUp),
                Some(job()),
                resume.clone(),
            ),
            ("on demand", on_demand.clone(), Some(job()), resume.clone()),
            (
                "a resume that was cut",
                cut(Trigger::Resume),
                Some(job()),
                Decision::Decline(
                    "not resumed: it was itself a resume, and a cut run is resumed once".into(),
                ),
            ),
            (
                "job removed",
                cut(Trigger::Scheduled),
                None,
                Decision::Decline("not resumed: its job was removed".into()),
            ),
            (
                "job disabled",
                cut(Trigger::Scheduled),
                Some(disabled.clone()),
                Decision::Decline("not resumed: its job is disabled".into()),
            ),
            (
                "job disabled, run on demand",
                on_demand,
                Some(disabled),
                resume.clone(),
            ),
            (
                "job opts out",
                cut(Trigger::Scheduled),
                Some(no_resume),
                Decision::Decline("not resumed: its job does not resume cut runs".into()),
            ),
            (
                "older than the resume age",
                old,
                Some(job()),
                Decision::Decline(
                    "not resumed: it is older than the resume age (6h): history, not debt".into(),
                ),
            ),
            ("another machine's", elsewhere, Some(job()), Decision::Leave),
            ("already settled", settled, Some(job()), Decision::Leave),
            ("not interrupted", failed, Some(job()), Decision::Leave),
            (
                "with a receipt",
                cut(Trigger::Scheduled),
                Some(with_receipt),
                Decision::Resume {
                    check_receipt: true,
                },
            ),
        ];
        for (name, run, job, expected) in cases {
            assert_eq!(
                decide(&run, job.as_ref(), "here", t(NOW), AGE),
                expected,
                "{name}"
            );
        }
    }

    #[test]
    fn receipts_read_exit_codes_as_documented() {
        assert_eq!(Receipt::from_exit(Some(0), ""), Receipt::Landed);
        assert_eq!(Receipt::from_exit(Some(1), ""), Receipt::NotLanded);
        assert!(
            matches!(Receipt::from_exit(Some(2), ""), Receipt::Unknown(m) if m.contains("code 2"))
        );
        assert!(
            matches!(Receipt::from_exit(None, "timed out after 1m"), Receipt::Unknown(m) if m.contains("timed out"))
        );
    }

    proptest::proptest! {
        /// Whatever the run and job, a decision never resumes another machine's run, a
        /// resume, or a settled debt.
        #[test]
        fn never_resumes_what_it_must_not(
            same_machine: bool,
            trigger in proptest::sample::select(vec![Trigger::Scheduled, Trigger::OnDemand, Trigger::Resume, Trigger::CatchUp]),
            settled: bool,
            job_exists: bool,
            enabled: bool,
            resume: bool,
            age_minutes in 0i64..1000,
        ) {
            let mut run = cut(trigger);
            if !same_machine { run.machine_id = "there".into(); }
            if settled { run.resolution = Some("x".into()); }
            let born = t(NOW) - SignedDuration::from_mins(age_minutes);
            run.scheduled_at = Some(born.to_string());
            let spec = JobSpec { enabled, resume, ..job() };
            let d = decide(&run, job_exists.then_some(&spec), "here", t(NOW), AGE);
            if matches!(d, Decision::Resume { .. }) {
                proptest::prop_assert!(same_machine && !settled && job_exists && resume);
                proptest::prop_assert!(trigger != Trigger::Resume);
                proptest::prop_assert!(enabled || trigger == Trigger::OnDemand);
                proptest::prop_assert!(age_minutes <= 360);
            }
            if !same_machine || settled {
                proptest::prop_assert_eq!(d, Decision::Leave);
            }
        }
    }
}
