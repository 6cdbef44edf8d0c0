//! `notify_list`: every notifier, with how its deliveries stand.

use std::sync::Arc;

use stead_protocol::Notifier;

use super::Answer;
use super::notifiers::view;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>) -> Answer<Vec<Notifier>> {
    let all = blocking(shared, |s| s.world.store.notifier_report()).await?;
    Ok(all
        .into_iter()
        .map(|(spec, stats)| view(shared, spec, stats))
        .collect())
}
