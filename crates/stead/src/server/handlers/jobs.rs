//! `job_add`, `job_list`, `job_get`, `job_remove`, `job_set_enabled`, `apply`.

use std::sync::Arc;

use stead_protocol::{ApplyParams, ErrorBody, ErrorCode, Job, JobName, JobSpec, SetEnabled};

use super::{HandlerResult, invalid, to_value};
use crate::clock::rfc3339;
use crate::jobs::{self, JobTiming};
use crate::server::runs::blocking;
use crate::server::shared::Shared;
use crate::store::StoredJob;

/// The protocol's view of a stored job, with its next fire.
pub fn job_view(shared: &Shared, job: &StoredJob) -> Job {
    let timing = JobTiming::of(&job.spec, job.anchor).ok();
    let next_fire_at = timing.as_ref().filter(|_| job.spec.enabled).and_then(|t| {
        let after = shared
            .world
            .clock
            .now()
            .max(job.fired_through.unwrap_or(job.created_at));
        t.next_after_display(after)
    });
    Job {
        spec: job.spec.clone(),
        schedule_kind: timing.map_or("manual", |t| t.kind()).to_string(),
        created_at: rfc3339(job.created_at),
        updated_at: rfc3339(job.updated_at),
        next_fire_at,
    }
}

fn validated(spec: JobSpec) -> Result<JobSpec, ErrorBody> {
    jobs::validate(spec).map_err(|e| invalid(e.to_string()))
}

pub async fn add(shared: &Arc<Shared>, spec: JobSpec) -> HandlerResult {
    let spec = validated(spec)?;
    let epoch = shared.epoch();
    let job = blocking(shared, move |s| {
        s.world.store.job_insert(&spec, s.world.clock.now(), epoch)
    })
    .await?;
    shared.jobs_changed.notify_one();
    shared.changed();
    to_value(job_view(shared, &job))
}

pub async fn list(shared: &Arc<Shared>) -> HandlerResult {
    let jobs = blocking(shared, |s| s.world.store.job_list()).await?;
    to_value(jobs.iter().map(|j| job_view(shared, j)).collect::<Vec<_>>())
}

async fn find(shared: &Arc<Shared>, name: String) -> Result<StoredJob, ErrorBody> {
    let missing = name.clone();
    blocking(shared, move |s| s.world.store.job_get(&name))
        .await?
        .ok_or_else(|| ErrorBody::new(ErrorCode::NotFound, format!("no job named {missing:?}")))
}

pub async fn get(shared: &Arc<Shared>, params: JobName) -> HandlerResult {
    to_value(job_view(shared, &find(shared, params.name).await?))
}

pub async fn remove(shared: &Arc<Shared>, params: JobName) -> HandlerResult {
    let epoch = shared.epoch();
    let job = blocking(shared, move |s| {
        s.world.store.job_remove(&params.name, epoch)
    })
    .await?;
    shared.jobs_changed.notify_one();
    shared.changed();
    to_value(job_view(shared, &job))
}

pub async fn set_enabled(shared: &Arc<Shared>, params: SetEnabled) -> HandlerResult {
    let mut job = find(shared, params.name).await?;
    if job.spec.enabled == params.enabled {
        return to_value(job_view(shared, &job));
    }
    job.spec.enabled = params.enabled;
    let epoch = shared.epoch();
    let spec = job.spec.clone();
    // Enabling counts fires from now: the disabled stretch is not owed.
    let job = blocking(shared, move |s| {
        s.world
            .store
            .job_update(&spec, params.enabled, s.world.clock.now(), epoch)
    })
    .await?;
    shared.jobs_changed.notify_one();
    shared.changed();
    to_value(job_view(shared, &job))
}

pub async fn apply(shared: &Arc<Shared>, params: ApplyParams) -> HandlerResult {
    let mut desired = Vec::with_capacity(params.jobs.len());
    for spec in params.jobs {
        if desired.iter().any(|d: &JobSpec| d.name == spec.name) {
            return Err(invalid(format!("job {:?} is declared twice", spec.name)));
        }
        desired.push(validated(spec)?);
    }
    let current = blocking(shared, |s| s.world.store.job_list()).await?;
    let plan = jobs::apply::plan(&current, &desired, params.prune);
    let result = plan.result(params.dry_run);
    if params.dry_run {
        return to_value(result);
    }
    let epoch = shared.epoch();
    blocking(shared, move |s| {
        let update: Vec<_> = plan
            .update
            .iter()
            .map(|(spec, _, schedule)| (spec.clone(), *schedule))
            .collect();
        s.world.store.job_apply(
            &plan.create,
            &update,
            &plan.remove,
            s.world.clock.now(),
            epoch,
        )
    })
    .await?;
    shared.jobs_changed.notify_one();
    shared.changed();
    to_value(result)
}
