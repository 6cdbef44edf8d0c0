//! `run_wait`: the run once it is terminal, or as it is after the timeout.

use std::sync::Arc;
use std::time::Duration;

use stead_protocol::{Run, RunWait};

use super::Answer;
use crate::runs;
use crate::shared::Shared;

/// `run_wait` without a timeout still answers after this long, so a client never waits
/// on a connection the server forgot; the CLI simply asks again.
const WAIT_CAP: Duration = Duration::from_secs(3600);

pub async fn handle(shared: &Arc<Shared>, params: RunWait) -> Answer<Run> {
    let mut events = shared.run_events.subscribe();
    let limit = params
        .timeout_ms
        .map_or(WAIT_CAP, Duration::from_millis)
        .min(WAIT_CAP);
    runs::wait_terminal(shared, params.id, &mut events, limit).await
}
