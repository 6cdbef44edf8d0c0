//! `job_add`: a new job, validated, naming only declared services.

use std::sync::Arc;

use stead_protocol::{Job, JobSpec};

use super::Answer;
use super::jobs::{changed, depends_on_known, validated, view};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, spec: JobSpec) -> Answer<Job> {
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
    changed(shared);
    Ok(view(shared, &job))
}
