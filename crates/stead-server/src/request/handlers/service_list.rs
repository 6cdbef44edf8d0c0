//! `service_list`: every service, the built-in `stead` first, with its dependent jobs.

use std::sync::Arc;

use stead_protocol::Service;

use super::Answer;
use super::services::{builtin, view};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>) -> Answer<Vec<Service>> {
    let (services, jobs) = blocking(shared, |s| {
        Ok((s.world.store.service_list()?, s.world.store.job_list()?))
    })
    .await?;
    let mut all = vec![builtin(&jobs)];
    all.extend(services.iter().map(|svc| view(svc, &jobs)));
    Ok(all)
}
