//! `hold_list`: every hold, live and wedged.

use std::sync::Arc;

use stead_core::readiness::hold_view;
use stead_protocol::Hold;

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>) -> Answer<Vec<Hold>> {
    let holds = blocking(shared, |s| s.world.store.hold_list()).await?;
    let now = shared.world.clock.now();
    Ok(holds.iter().map(|h| hold_view(h, now)).collect())
}
