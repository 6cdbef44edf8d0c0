//! `apply`: make the jobs (and services) match a declared set, in one transaction, or
//! with `dry_run` say what that would change.

use std::sync::Arc;

use stead_core::jobs;
use stead_core::records::Changes;
use stead_protocol::{ApplyParams, ApplyResult, JobSpec, ServiceChanges};

use super::jobs::{changed, depends_on_known, validated};
use super::{Answer, invalid, services};
use crate::ledger::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: ApplyParams) -> Answer<ApplyResult> {
    let mut desired = Vec::with_capacity(params.jobs.len());
    for spec in params.jobs {
        if desired.iter().any(|d: &JobSpec| d.name == spec.name) {
            return Err(invalid(format!("job {:?} is declared twice", spec.name)));
        }
        desired.push(validated(spec)?);
    }
    for (i, spec) in params.services.iter().enumerate() {
        services::validate(spec)?;
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
        return Ok(result);
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
    changed(shared);
    Ok(result)
}
