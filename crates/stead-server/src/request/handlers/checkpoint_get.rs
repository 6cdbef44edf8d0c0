//! `checkpoint_get`: one checkpoint of a run's idempotency key (`null` when unset). A
//! read: any run of the key may ask, a landed check for its cut run among them.

use std::sync::Arc;

use stead_protocol::{Checkpoint, CheckpointGet};

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, p: CheckpointGet) -> Answer<Option<Checkpoint>> {
    blocking(shared, move |s| {
        s.world.store.checkpoint_get(p.run_id, &p.key)
    })
    .await
}
