//! `notify_remove`: remove a notifier and the events not yet delivered to it.

use std::sync::Arc;

use stead_core::records::NotifierStats;
use stead_protocol::{Notifier, NotifierName};

use super::Answer;
use super::notifiers::view;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: NotifierName) -> Answer<Notifier> {
    let epoch = shared.epoch();
    let spec = blocking(shared, move |s| {
        s.world.store.notifier_remove(&params.name, epoch)
    })
    .await?;
    let _ = std::fs::remove_file(crate::tasks::notify::secret_path(shared, &spec.name));
    // The event stream says so (the dashboard lists notifiers).
    shared.changed();
    Ok(view(shared, spec, NotifierStats::default()))
}
