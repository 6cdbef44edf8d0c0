//! What a run's monitor executes: the job's command (or `sh -c` script) with the run's
//! own arguments, its environment (the job's, the run's own, the `STEAD_*` run
//! variables), its timeout, alternatives and retry budget.

use std::collections::BTreeMap;
use std::path::Path;

use stead_core::clock::rfc3339;
use stead_core::params;
use stead_core::records::{NewRun, RetryBudget};
use stead_core::retry::RetryPlan;
use stead_core::runs::{DEFAULT_KILL_GRACE_MS, DEFAULT_LOG_MAX_BYTES, Millis, MonitorPlan};
use stead_core::schedule;
use stead_protocol::{JobSpec, ResumeOn, Trigger};

use crate::shared::Shared;

pub fn plan_for(
    shared: &Shared,
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
    env.insert(
        "STEAD_STATE_DIR".into(),
        shared.world.paths.dir().display().to_string(),
    );
    MonitorPlan {
        run_id: id,
        ledger: shared.world.store.ledger_ref(),
        argv,
        cwd: spec.cwd.as_ref().map(Into::into),
        env,
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
