//! `job_list`: every job, by name, with its next fire.

use std::sync::Arc;

use stead_protocol::Job;

use super::Answer;
use super::jobs::view;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>) -> Answer<Vec<Job>> {
    let jobs = blocking(shared, |s| s.world.store.job_list()).await?;
    Ok(jobs.iter().map(|j| view(shared, j)).collect())
}
