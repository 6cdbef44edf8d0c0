//! What the job handlers share: the protocol's view of a stored job, validation, lookup,
//! and telling the scheduler and waiters that jobs changed.

use std::sync::Arc;

use stead_core::clock::rfc3339;
use stead_core::jobs::{self, JobTiming};
use stead_core::records::StoredJob;
use stead_protocol::{ErrorBody, ErrorCode, Job, JobSpec, STEAD_SERVICE};

use super::invalid;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

/// The protocol's view of a stored job, with its next fire: for a paused job, the first
/// fire the pause does not skip (one at its very end runs).
pub fn view(shared: &Shared, job: &StoredJob) -> Job {
    let now = shared.world.clock.now();
    let paused_until = job.paused_until.filter(|until| *until > now);
    let timing = JobTiming::of(&job.spec, job.anchor).ok();
    let next_fire_at = timing.as_ref().filter(|_| job.spec.enabled).and_then(|t| {
        let mut after = now.max(job.fired_through.unwrap_or(job.created_at));
        if let Some(until) = paused_until {
            let skipped = until
                .checked_sub(jiff::SignedDuration::from_millis(1))
                .unwrap_or(until);
            after = after.max(skipped);
        }
        t.next_after_display(after)
    });
    Job {
        spec: job.spec.clone(),
        schedule_kind: timing.map_or("manual", |t| t.kind()).to_string(),
        created_at: rfc3339(job.created_at),
        updated_at: rfc3339(job.updated_at),
        next_fire_at,
        paused_until: paused_until.map(rfc3339),
    }
}

/// A spec checked and normalized, or the refusal naming what is wrong with it.
pub fn validated(spec: JobSpec) -> Result<JobSpec, ErrorBody> {
    jobs::validate(spec).map_err(|e| invalid(e.to_string()))
}

/// The stored job of that name, or `not_found`.
pub async fn find(shared: &Arc<Shared>, name: String) -> Result<StoredJob, ErrorBody> {
    let missing = name.clone();
    blocking(shared, move |s| s.world.store.job_get(&name))
        .await?
        .ok_or_else(|| ErrorBody::new(ErrorCode::NotFound, format!("no job named {missing:?}")))
}

/// A job may only name services that exist (or `stead`): a typo must not leave a job
/// unprotected by the gate.
pub fn depends_on_known(spec: &JobSpec, known: &[String]) -> Result<(), ErrorBody> {
    match spec
        .depends_on
        .iter()
        .find(|d| d.as_str() != STEAD_SERVICE && !known.contains(d))
    {
        Some(missing) => Err(invalid(format!(
            "job {}: depends_on names {missing:?}, which is not a declared service (stead service add {missing} ...)",
            spec.name
        ))),
        None => Ok(()),
    }
}

/// Jobs changed: the scheduler reads them again, readiness waiters look again.
pub fn changed(shared: &Shared) {
    shared.wake.jobs_changed.notify_one();
    shared.changed();
}
