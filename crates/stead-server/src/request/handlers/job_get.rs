//! `job_get`: one job.

use std::sync::Arc;

use stead_protocol::{Job, JobName};

use super::Answer;
use super::jobs::{find, view};
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: JobName) -> Answer<Job> {
    Ok(view(shared, &find(shared, params.name).await?))
}
