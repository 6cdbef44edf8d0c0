//! `job_remove`: a job goes; its runs stay in the ledger.

use std::sync::Arc;

use stead_protocol::{Job, JobName};

use super::Answer;
use super::jobs::{changed, view};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: JobName) -> Answer<Job> {
    let epoch = shared.epoch();
    let job = blocking(shared, move |s| {
        s.world.store.job_remove(&params.name, epoch)
    })
    .await?;
    changed(shared);
    Ok(view(shared, &job))
}
