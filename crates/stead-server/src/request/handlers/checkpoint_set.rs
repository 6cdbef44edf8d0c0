//! `checkpoint_set`: a run records a checkpoint under its idempotency key. Answered once
//! the value is committed; refused (nothing written) unless the run holds its key and
//! gives its own token.

use std::sync::Arc;

use stead_protocol::{Checkpoint, CheckpointSet};

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, p: CheckpointSet) -> Answer<Checkpoint> {
    let now = shared.world.clock.now();
    blocking(shared, move |s| {
        s.world
            .store
            .checkpoint_set(p.run_id, &p.token, &p.key, &p.value, now)
    })
    .await
}
