//! `step_begin`: whether a run's step completed already under its idempotency key (its
//! command is then skipped). Refused as a write is: a run that no longer holds its key
//! starts no new work.

use std::sync::Arc;

use stead_protocol::{StepParams, StepState};

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, p: StepParams) -> Answer<StepState> {
    let completed = blocking(shared, move |s| {
        s.world.store.step_begin(p.run_id, &p.token, &p.name)
    })
    .await?;
    Ok(StepState { completed })
}
