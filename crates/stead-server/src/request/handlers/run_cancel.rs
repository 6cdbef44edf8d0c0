//! `run_cancel`: a queued run at once, a running one through its monitor.

use std::sync::Arc;

use stead_protocol::{Run, RunId};

use super::Answer;
use crate::runs;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: RunId) -> Answer<Run> {
    runs::cancel(shared, params.id).await
}
