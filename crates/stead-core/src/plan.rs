//! What a run's monitor executes, made from its job and its row: the job's command (or
//! `sh -c` script) with the run's own arguments, its environment (the job's, the run's
//! own, the `STEAD_*` run variables), its timeout, alternatives and retry budget.
//!
//! A [`Planner`] holds what a plan needs of the host that admits the run (its ledger, its
//! state directory, where logs go) as plain values, so the store can make a new run's
//! plan inside the transaction that admits it, once the run's id and key are known.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use stead_protocol::{JobSpec, ResumeOn, Trigger};

use crate::clock::rfc3339;
use crate::conditions;
use crate::locator::LedgerRef;
use crate::params;
use crate::records::{NewRun, RetryBudget};
use crate::retry::RetryPlan;
use crate::run_token::{RUN_TOKEN_VAR, new_run_token};
use crate::runs::{DEFAULT_KILL_GRACE_MS, DEFAULT_LOG_MAX_BYTES, Millis, MonitorPlan};
use crate::schedule;

/// What a run's plan needs of the host that admits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planner {
    /// The ledger the run is recorded in, as its plan names it (nothing secret).
    pub ledger: LedgerRef,
    /// The state directory, which the run sees as `STEAD_STATE_DIR`.
    pub state_dir: PathBuf,
    /// Where runs' logs go (`DIR/logs/runs`).
    pub log_dir: PathBuf,
    /// Where this host reads its power supplies (`[power] supplies`); the platform's
    /// own when `None`.
    pub power_supplies: Option<PathBuf>,
}

impl Planner {
    /// Where run `id`'s log goes.
    pub fn log_path(&self, id: i64) -> PathBuf {
        self.log_dir.join(format!("{id}.log"))
    }

    /// The plan of run `id` of `spec`, the row `new`, with its log at `log_path` and its
    /// idempotency key `key`.
    pub fn plan(
        &self,
        spec: &JobSpec,
        new: &NewRun,
        id: i64,
        log_path: &Path,
        key: &str,
    ) -> MonitorPlan {
        let params = new.params.clone().unwrap_or_default();
        let with_args = |argv| params::with_args(argv, spec.shell, &spec.name, &params.args);
        let argv = with_args(argv_of(spec.shell, &spec.command));
        let mut env: BTreeMap<String, String> = spec.env.clone();
        // The run's own environment over the job's; the STEAD_* variables over both.
        env.extend(params.env.clone());
        env.insert("STEAD_RUN_ID".into(), id.to_string());
        env.insert("STEAD_JOB".into(), spec.name.clone());
        env.insert("STEAD_TRIGGER".into(), new.trigger.as_str().into());
        env.insert(
            "STEAD_SCHEDULED_AT".into(),
            new.scheduled_at.map(rfc3339).unwrap_or_default(),
        );
        env.insert("STEAD_IDEMPOTENCY_KEY".into(), key.to_string());
        env.insert("STEAD_ATTEMPT".into(), new.attempt.to_string());
        env.insert(RUN_TOKEN_VAR.into(), new_run_token());
        env.insert(
            "STEAD_STATE_DIR".into(),
            self.state_dir.display().to_string(),
        );
        MonitorPlan {
            run_id: id,
            ledger: self.ledger.clone(),
            argv,
            cwd: spec.cwd.as_ref().map(Into::into),
            env,
            secrets: spec
                .secrets
                .iter()
                .map(|entry| {
                    let (var, name) = stead_protocol::secret_binding(entry);
                    (var.to_string(), name.to_string())
                })
                .collect(),
            timeout_ms: spec
                .timeout
                .as_deref()
                .and_then(|t| schedule::parse_duration(t).ok())
                .map(|d| d.as_millis() as u64),
            kill_grace_ms: DEFAULT_KILL_GRACE_MS,
            log_path: log_path.to_path_buf(),
            log_max_bytes: DEFAULT_LOG_MAX_BYTES,
            alternatives: spec
                .alternatives
                .iter()
                .map(|alt| with_args(argv_of(spec.shell, alt)))
                .collect(),
            on_failure: spec.on_failure.clone(),
            resume_anywhere: spec.resume_on == ResumeOn::Any,
            retry: match new.retry {
                RetryBudget::FromJob => RetryPlan::of(spec),
                RetryBudget::Kept(kept) => kept,
            },
            // A fire on time starts on its instant, even when admitted ahead of it.
            not_before: (new.trigger == Trigger::Scheduled)
                .then_some(new.scheduled_at)
                .flatten()
                .map(Millis::from),
            conditions: conditions::of(
                spec,
                // A resumed fire is still a fire: it is deferred on battery as it was.
                match new.trigger {
                    Trigger::Resume => new.original_trigger.unwrap_or(Trigger::Resume),
                    trigger => trigger,
                },
                new.scheduled_at,
                self.power_supplies.as_deref(),
            ),
        }
    }
}

/// What is executed: a shell job's one script goes to `sh -c`.
fn argv_of(shell: bool, command: &[String]) -> Vec<String> {
    if shell {
        vec!["sh".into(), "-c".into(), command.join(" ")]
    } else {
        command.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;
    use stead_protocol::RunParams;

    use super::*;
    use crate::records::{OnDemand, StoredJob};

    fn planner() -> Planner {
        Planner {
            ledger: LedgerRef::Sqlite {
                path: "/state/stead.db".into(),
            },
            state_dir: "/state".into(),
            log_dir: "/state/logs/runs".into(),
            power_supplies: None,
        }
    }

    fn job(spec: JobSpec) -> StoredJob {
        StoredJob {
            id: 7,
            spec,
            created_at: Timestamp::UNIX_EPOCH,
            updated_at: Timestamp::UNIX_EPOCH,
            anchor: Timestamp::UNIX_EPOCH,
            fired_through: None,
            paused_until: None,
            overdue_since: None,
        }
    }

    fn spec(shell: bool, command: &[&str]) -> JobSpec {
        JobSpec {
            name: "nightly".into(),
            command: command.iter().map(|s| s.to_string()).collect(),
            shell,
            env: [
                ("A".to_string(), "job".to_string()),
                ("B".into(), "job".into()),
            ]
            .into(),
            timeout: Some("90s".into()),
            alternatives: vec![vec!["fallback".into()]],
            ..JobSpec::default()
        }
    }

    fn on_demand(params: &RunParams) -> OnDemand<'_> {
        OnDemand {
            params,
            machine_id: "m1",
            boot_id: "b1",
            now: Timestamp::from_second(1_800_000_000).unwrap(),
            default_limit: false,
        }
    }

    #[test]
    fn a_plan_runs_the_command_with_the_runs_own_arguments_and_environment() {
        let params = RunParams {
            env: [("B".to_string(), "run".to_string())].into(),
            args: vec!["--fast".into()],
        };
        let job = job(spec(false, &["backup", "--all"]));
        let new = on_demand(&params).run_of(&job);
        let planner = planner();
        let plan = planner.plan(&job.spec, &new, 42, &planner.log_path(42), "key-42");
        assert_eq!(plan.argv, ["backup", "--all", "--fast"]);
        assert_eq!(plan.alternatives, [vec!["fallback", "--fast"]]);
        assert_eq!(plan.log_path, PathBuf::from("/state/logs/runs/42.log"));
        assert_eq!(plan.timeout_ms, Some(90_000));
        assert_eq!(plan.ledger, planner.ledger);
        // The job's environment, the run's own over it, stead's over both.
        assert_eq!(plan.env["A"], "job");
        assert_eq!(plan.env["B"], "run");
        assert_eq!(plan.env["STEAD_RUN_ID"], "42");
        assert_eq!(plan.env["STEAD_JOB"], "nightly");
        assert_eq!(plan.env["STEAD_TRIGGER"], "on_demand");
        assert_eq!(plan.env["STEAD_IDEMPOTENCY_KEY"], "key-42");
        assert_eq!(plan.env["STEAD_ATTEMPT"], "1");
        assert!(crate::run_token::token_matches(
            &plan,
            &plan.env[RUN_TOKEN_VAR]
        ));
        assert!(!crate::run_token::token_matches(&plan, "guess"));
        assert_eq!(plan.env["STEAD_STATE_DIR"], "/state");
        assert_eq!(plan.env["STEAD_SCHEDULED_AT"], "");
        // A server a command starts leaves out every variable stead set for the run.
        for var in plan.env.keys().filter(|var| var.starts_with("STEAD_")) {
            assert!(
                stead_protocol::run_env::RUN_VARIABLES.contains(&var.as_str()),
                "{var} is not listed as a run variable"
            );
        }
        // Only a fire on time waits for its instant.
        assert_eq!(plan.not_before, None);
    }

    #[test]
    fn a_plan_names_its_secrets_and_holds_no_value() {
        let job = job(JobSpec {
            secrets: vec!["API_TOKEN".into(), "GH=GITHUB_TOKEN".into()],
            ..spec(false, &["true"])
        });
        let new = on_demand(&RunParams::default()).run_of(&job);
        let planner = planner();
        let plan = planner.plan(&job.spec, &new, 3, &planner.log_path(3), "k");
        assert_eq!(
            plan.secrets,
            [
                ("API_TOKEN".to_string(), "API_TOKEN".to_string()),
                ("GH".into(), "GITHUB_TOKEN".into())
            ]
            .into()
        );
        // Given to the command by the monitor at its start, not through the plan's env.
        assert!(!plan.env.contains_key("GH") && !plan.env.contains_key("API_TOKEN"));
    }

    #[test]
    fn a_shell_job_is_one_script_and_a_fire_on_time_waits_for_its_instant() {
        let job = job(spec(true, &["echo", "$1"]));
        let at = Timestamp::from_second(1_800_000_060).unwrap();
        let new = NewRun {
            trigger: Trigger::Scheduled,
            scheduled_at: Some(at),
            ..NewRun::of(&job, Trigger::Scheduled, "m1", "b1", at)
        };
        let planner = planner();
        let plan = planner.plan(&job.spec, &new, 1, &planner.log_path(1), "k");
        assert_eq!(plan.argv, ["sh", "-c", "echo $1"]);
        assert_eq!(plan.not_before, Some(Millis::from(at)));
        assert_eq!(plan.env["STEAD_SCHEDULED_AT"], rfc3339(at));
    }

    #[test]
    fn an_on_demand_run_is_limited_by_its_queue_or_the_hosts_default() {
        let params = RunParams::default();
        let plain = job(spec(false, &["true"]));
        assert!(!on_demand(&params).run_of(&plain).waiting);
        let limited = OnDemand {
            default_limit: true,
            ..on_demand(&params)
        };
        assert!(limited.run_of(&plain).waiting);
        let queued = job(JobSpec {
            queue: Some("q".into()),
            ..spec(false, &["true"])
        });
        let new = on_demand(&params).run_of(&queued);
        assert!(new.waiting);
        assert_eq!(new.params, None, "no parameters of its own");
        assert_eq!(new.machine_id, "m1");
    }
}
