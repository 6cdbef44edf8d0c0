//! `job_set_enabled`: enable or disable a job. Enabling counts fires from now: the
//! disabled stretch is not owed.

use std::sync::Arc;

use stead_protocol::{Job, SetEnabled};

use super::Answer;
use super::jobs::{changed, find, view};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: SetEnabled) -> Answer<Job> {
    let mut job = find(shared, params.name).await?;
    if job.spec.enabled == params.enabled {
        return Ok(view(shared, &job));
    }
    job.spec.enabled = params.enabled;
    let epoch = shared.epoch();
    let spec = job.spec.clone();
    let job = blocking(shared, move |s| {
        s.world
            .store
            .job_update(&spec, params.enabled, s.world.clock.now(), epoch)
    })
    .await?;
    changed(shared);
    Ok(view(shared, &job))
}
