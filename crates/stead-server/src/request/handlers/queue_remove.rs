//! `queue_remove`: refused while a job names the queue.

use std::sync::Arc;

use stead_protocol::{Queue, QueueName};

use super::Answer;
use super::queues::view;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: QueueName) -> Answer<Queue> {
    let epoch = shared.epoch();
    let queue = blocking(shared, move |s| {
        s.world.store.queue_remove(&params.name, epoch)
    })
    .await?;
    // Its waiting runs are held back by no limit now.
    shared.wake.waiting_changed.notify_one();
    // The event stream says so (the dashboard lists queues and notifiers).
    shared.changed();
    Ok(view(&queue, &[], &[]))
}
