//! `hold_release`: the hold goes; a restart it held back may proceed.

use std::sync::Arc;

use stead_core::readiness::hold_view;
use stead_protocol::{Hold, HoldName};

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: HoldName) -> Answer<Hold> {
    let epoch = shared.epoch();
    let hold = blocking(shared, move |s| {
        s.world.store.hold_remove(&params.name, epoch)
    })
    .await?;
    shared.changed();
    Ok(hold_view(&hold, shared.world.clock.now()))
}
