//! `queue_list`: every queue, with its jobs and its runs on this host.

use std::sync::Arc;

use stead_protocol::Queue;

use super::Answer;
use super::queues::view;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>) -> Answer<Vec<Queue>> {
    let machine = shared.world.machine_id.clone();
    let (queues, jobs, loads) = blocking(shared, move |s| {
        Ok((
            s.world.store.queue_list()?,
            s.world.store.job_list()?,
            s.world.store.queue_loads(&machine)?,
        ))
    })
    .await?;
    Ok(queues.iter().map(|q| view(q, &jobs, &loads)).collect())
}
