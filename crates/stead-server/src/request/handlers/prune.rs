//! `prune`: the retention rules applied now, or with `dry_run` only said.

use std::sync::Arc;

use stead_protocol::{PruneParams, PruneResult};

use super::Answer;
use crate::shared::Shared;
use crate::tasks::retention;

pub async fn handle(shared: &Arc<Shared>, params: PruneParams) -> Answer<PruneResult> {
    retention::prune(shared, params.dry_run).await
}
