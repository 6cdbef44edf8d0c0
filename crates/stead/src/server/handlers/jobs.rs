//! `job_add`, `job_list`, `job_get`, `job_remove`, `job_set_enabled`, `apply`.

use std::sync::Arc;

use stead_protocol::{
    ApplyParams, ErrorBody, ErrorCode, Job, JobName, JobSpec, STEAD_SERVICE, ServiceChanges,
    SetEnabled,
};

use super::{HandlerResult, invalid, to_value};
use crate::clock::rfc3339;
use crate::jobs::{self, JobTiming};
use crate::server::runs::blocking;
use crate::server::shared::Shared;
use crate::store::{Changes, StoredJob};

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
    if !spec.depends_on.is_empty() {
        let services = blocking(shared, |s| s.world.store.service_list()).await?;
        let known: Vec<String> = services.into_iter().map(|s| s.spec.name).collect();
        depends_on_known(&spec, &known)?;
    }
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
    for (i, spec) in params.services.iter().enumerate() {
        super::services::validate(spec)?;
        if params.services[..i].iter().any(|o| o.name == spec.name) {
            return Err(invalid(format!(
                "service {:?} is declared twice",
                spec.name
            )));
        }
    }
    let (current, services) = blocking(shared, |s| {
        Ok((s.world.store.job_list()?, s.world.store.service_list()?))
    })
    .await?;
    let mut changes = Changes::default();
    let mut service_result = ServiceChanges::default();
    for spec in &params.services {
        match services.iter().find(|s| s.spec.name == spec.name) {
            None => {
                service_result.created.push(spec.name.clone());
                changes.create_services.push(spec.clone());
            }
            Some(stored) if stored.spec == *spec => {
                service_result.unchanged.push(spec.name.clone())
            }
            Some(_) => {
                service_result.changed.push(spec.name.clone());
                changes.update_services.push(spec.clone());
            }
        }
    }
    if params.prune {
        for stored in &services {
            if !params.services.iter().any(|s| s.name == stored.spec.name) {
                service_result.removed.push(stored.spec.name.clone());
                changes.remove_services.push(stored.spec.name.clone());
            }
        }
    }
    let known: Vec<String> = services
        .iter()
        .map(|s| s.spec.name.clone())
        .filter(|n| !changes.remove_services.contains(n))
        .chain(params.services.iter().map(|s| s.name.clone()))
        .collect();
    for spec in &desired {
        depends_on_known(spec, &known)?;
    }
    let plan = jobs::apply::plan(&current, &desired, params.prune);
    let mut result = plan.result(params.dry_run);
    result.services = service_result;
    if params.dry_run {
        return to_value(result);
    }
    changes.create_jobs = plan.create;
    changes.update_jobs = plan
        .update
        .into_iter()
        .map(|(spec, _, schedule)| (spec, schedule))
        .collect();
    changes.remove_jobs = plan.remove;
    let epoch = shared.epoch();
    blocking(shared, move |s| {
        s.world.store.apply(&changes, s.world.clock.now(), epoch)
    })
    .await?;
    shared.jobs_changed.notify_one();
    shared.changed();
    to_value(result)
}

/// A job may only name services that exist (or `stead`): a typo must not leave a job
/// unprotected by the gate.
fn depends_on_known(spec: &JobSpec, known: &[String]) -> Result<(), ErrorBody> {
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
