//! `apply`: make the jobs (and the services, queues and notifiers) match a declared set,
//! in one transaction, or with `dry_run` say what that would change.

use std::sync::Arc;

use stead_core::jobs;
use stead_core::jobs::apply::named;
use stead_core::records::Changes;
use stead_protocol::{ApplyParams, ApplyResult, ErrorBody, JobSpec, QueueSpec, ServiceSpec};

use super::jobs::{changed, depends_on_known, validated};
use super::{Answer, invalid, notifiers, queues, services};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: ApplyParams) -> Answer<ApplyResult> {
    let mut desired = Vec::with_capacity(params.jobs.len());
    for spec in params.jobs {
        if desired.iter().any(|d: &JobSpec| d.name == spec.name) {
            return Err(invalid(format!("job {:?} is declared twice", spec.name)));
        }
        desired.push(validated(spec)?);
    }
    for spec in &params.services {
        services::validate(spec)?;
    }
    once(&params.services, "service", |s| &s.name)?;
    let declared_queues = params
        .queues
        .into_iter()
        .map(queues::validated)
        .collect::<Result<Vec<_>, _>>()?;
    once(&declared_queues, "queue", |q| &q.name)?;
    let declared_notifiers = params
        .notifiers
        .into_iter()
        .map(notifiers::validated)
        .collect::<Result<Vec<_>, _>>()?;
    once(&declared_notifiers, "notifier", |n| &n.name)?;

    let (current, stored_services, stored_queues, stored_notifiers) = blocking(shared, |s| {
        let store = &s.world.store;
        Ok((
            store.job_list()?,
            store.service_list()?,
            store.queue_list()?,
            store.notifier_list()?,
        ))
    })
    .await?;
    let stored_services: Vec<ServiceSpec> = stored_services.into_iter().map(|s| s.spec).collect();
    let stored_queues: Vec<QueueSpec> = stored_queues
        .into_iter()
        .map(|q| QueueSpec {
            name: q.name,
            parallel: q.parallel,
        })
        .collect();
    let services = named(&stored_services, &params.services, params.prune, |s| {
        &s.name
    });
    let queues = named(&stored_queues, &declared_queues, params.prune, |q| &q.name);
    let notifiers = named(&stored_notifiers, &declared_notifiers, params.prune, |n| {
        &n.name
    });
    let known: Vec<String> = stored_services
        .iter()
        .map(|s| s.name.clone())
        .filter(|n| !services.remove.contains(n))
        .chain(params.services.iter().map(|s| s.name.clone()))
        .collect();
    for spec in &desired {
        depends_on_known(spec, &known)?;
    }
    let plan = jobs::apply::plan(&current, &desired, params.prune);
    let mut result = plan.result(params.dry_run);
    result.services = services.report;
    result.queues = queues.report;
    result.notifiers = notifiers.report;
    if params.dry_run {
        return Ok(result);
    }
    // A signing notifier's secret exists before the notifier does, as with `notify add`.
    for spec in notifiers.create.iter().chain(&notifiers.update) {
        notifiers::signing_secret(shared, spec)?;
    }
    let removed_notifiers = notifiers.remove.clone();
    let changes = Changes {
        create_services: services.create,
        update_services: services.update,
        remove_services: services.remove,
        create_jobs: plan.create,
        update_jobs: plan
            .update
            .into_iter()
            .map(|(spec, _, schedule)| (spec, schedule))
            .collect(),
        remove_jobs: plan.remove,
        set_queues: queues.create.into_iter().chain(queues.update).collect(),
        remove_queues: queues.remove,
        set_notifiers: notifiers
            .create
            .into_iter()
            .chain(notifiers.update)
            .collect(),
        remove_notifiers: notifiers.remove,
    };
    let epoch = shared.epoch();
    blocking(shared, move |s| {
        s.world.store.apply(&changes, s.world.clock.now(), epoch)
    })
    .await?;
    for name in removed_notifiers {
        let _ = std::fs::remove_file(crate::tasks::notify::secret_path(shared, &name));
    }
    changed(shared);
    // Limits may have grown, and notifiers changed: the starter and deliverer look again.
    shared.wake.waiting_changed.notify_one();
    shared.wake.notifiers_changed.notify_one();
    Ok(result)
}

/// Refuses a file that declares one `what` twice.
fn once<T>(items: &[T], what: &str, name: impl Fn(&T) -> &String) -> Result<(), ErrorBody> {
    for (i, item) in items.iter().enumerate() {
        if items[..i].iter().any(|o| name(o) == name(item)) {
            return Err(invalid(format!(
                "{what} {:?} is declared twice",
                name(item)
            )));
        }
    }
    Ok(())
}
