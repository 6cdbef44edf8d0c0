//! `step_done`: a run records that its step completed (its command exited 0), once the
//! record is committed; a step completed already keeps its first completion.

use std::sync::Arc;

use stead_protocol::{Step, StepParams};

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, p: StepParams) -> Answer<Step> {
    let now = shared.world.clock.now();
    blocking(shared, move |s| {
        s.world.store.step_done(p.run_id, &p.token, &p.name, now)
    })
    .await
}
