//! `checkpoint_list`: the checkpoints and completed steps of a run's idempotency key.

use std::sync::Arc;

use stead_protocol::{Checkpoints, RunId};

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, p: RunId) -> Answer<Checkpoints> {
    blocking(shared, move |s| s.world.store.checkpoints_of(p.id)).await
}
