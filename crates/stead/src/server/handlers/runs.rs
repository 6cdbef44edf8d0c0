//! `run_now`, `run_list`, `run_get`, `run_wait`, `run_cancel`.

use std::sync::Arc;
use std::time::Duration;

use stead_protocol::{ErrorBody, ErrorCode, RunFilter, RunId, RunNow, RunWait, Trigger};

use super::{HandlerResult, invalid, to_value};
use crate::server::runs::{self, blocking};
use crate::server::shared::Shared;
use crate::store::NewRun;
use crate::store::sqlite::MAX_RUN_LIST;

/// `run_wait` without a timeout still answers after this long, so a client never waits
/// on a connection the server forgot; the CLI simply asks again.
const WAIT_CAP: Duration = Duration::from_secs(3600);

pub async fn now(shared: &Arc<Shared>, params: RunNow) -> HandlerResult {
    let name = params.job.clone();
    let job = blocking(shared, move |s| s.world.store.job_get(&name))
        .await?
        .ok_or_else(|| {
            ErrorBody::new(
                ErrorCode::NotFound,
                format!("no job named {:?}", params.job),
            )
        })?;
    let new = NewRun::of(
        &job,
        Trigger::OnDemand,
        shared.queue_host(),
        &shared.boot_id,
        shared.world.clock.now(),
    );
    to_value(runs::start(shared, &job, new).await?)
}

pub async fn list(shared: &Arc<Shared>, filter: RunFilter) -> HandlerResult {
    if filter.limit.is_some_and(|l| l == 0 || l > MAX_RUN_LIST) {
        return Err(invalid(format!(
            "limit must be between 1 and {MAX_RUN_LIST}"
        )));
    }
    to_value(blocking(shared, move |s| s.world.store.run_list(&filter)).await?)
}

pub async fn get(shared: &Arc<Shared>, params: RunId) -> HandlerResult {
    let id = params.id;
    let run = blocking(shared, move |s| s.world.store.run_get(id))
        .await?
        .ok_or_else(|| ErrorBody::new(ErrorCode::NotFound, format!("no run {id}")))?;
    to_value(run)
}

pub async fn wait(shared: &Arc<Shared>, params: RunWait) -> HandlerResult {
    let mut events = shared.run_events.subscribe();
    let limit = params
        .timeout_ms
        .map_or(WAIT_CAP, Duration::from_millis)
        .min(WAIT_CAP);
    to_value(runs::wait_terminal(shared, params.id, &mut events, limit).await?)
}

pub async fn cancel(shared: &Arc<Shared>, params: RunId) -> HandlerResult {
    to_value(runs::cancel(shared, params.id).await?)
}
