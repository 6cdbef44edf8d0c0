//! `stop`: a graceful stop, answered once socket, lease and lock file are released, so
//! the client may start a successor the moment it reads the answer. With `cancel_runs`,
//! the runs in flight are cut first (interrupted, owed).

use std::sync::Arc;

use stead_protocol::{StopParams, StopResult};

use super::Answer;
use crate::runs;
use crate::shared::{Shared, StopReason};

pub async fn handle(shared: &Arc<Shared>, params: StopParams) -> Answer<StopResult> {
    if params.cancel_runs {
        runs::cut_where(
            shared,
            "interrupted: stead was stopped with --cancel-runs",
            |_| true,
        )
        .await?;
    }
    shared.begin_stop(StopReason::Requested);
    shared.released().await;
    Ok(StopResult {
        server_id: shared.me.server_id.clone(),
        pid: shared.me.pid,
        start_identity: shared.me.start_identity.to_string(),
    })
}
