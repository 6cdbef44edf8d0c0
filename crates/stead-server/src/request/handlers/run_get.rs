//! `run_get`: one run, every field.

use std::sync::Arc;

use stead_protocol::{ErrorBody, ErrorCode, Run, RunId};

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: RunId) -> Answer<Run> {
    let id = params.id;
    blocking(shared, move |s| s.world.store.run_get(id))
        .await?
        .ok_or_else(|| ErrorBody::new(ErrorCode::NotFound, format!("no run {id}")))
}
