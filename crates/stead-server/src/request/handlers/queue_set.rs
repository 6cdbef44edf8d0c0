//! `queue_set`: create a queue or change its limit.

use std::sync::Arc;

use stead_protocol::{Queue, QueueSpec};

use super::Answer;
use super::queues::{validated, view};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, spec: QueueSpec) -> Answer<Queue> {
    let spec = validated(spec)?;
    let (epoch, now, machine) = (
        shared.epoch(),
        shared.world.clock.now(),
        shared.world.machine_id.clone(),
    );
    let name = spec.name.clone();
    let (queues, jobs, loads) = blocking(shared, move |s| {
        s.world.store.queue_set(&spec, now, epoch)?;
        Ok((
            s.world.store.queue_list()?,
            s.world.store.job_list()?,
            s.world.store.queue_loads(&machine)?,
        ))
    })
    .await?;
    // A larger limit may let waiting runs start now.
    shared.wake.waiting_changed.notify_one();
    // The event stream says so (the dashboard lists queues and notifiers).
    shared.changed();
    let queue = queues
        .iter()
        .find(|q| q.name == name)
        .expect("the queue was just set");
    Ok(view(queue, &jobs, &loads))
}
