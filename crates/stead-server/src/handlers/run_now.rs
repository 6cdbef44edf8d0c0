//! `run_now`: a run of a job, now (trigger `on_demand`, subject to its concurrency
//! policy), with its own environment and arguments when given.

use std::sync::Arc;

use stead_core::records::NewRun;
use stead_protocol::{ErrorBody, ErrorCode, Run, RunNow, RunParams, Trigger};

use super::{Answer, invalid};
use crate::ledger::blocking;
use crate::runs;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: RunNow) -> Answer<Run> {
    let run_params = RunParams {
        env: params.env.clone(),
        args: params.args.clone(),
    };
    stead_core::params::validate(&run_params)
        .map_err(|e| invalid(format!("run {}: {e}", params.job)))?;
    let name = params.job.clone();
    let job = blocking(shared, move |s| s.world.store.job_get(&name))
        .await?
        .ok_or_else(|| {
            ErrorBody::new(
                ErrorCode::NotFound,
                format!("no job named {:?}", params.job),
            )
        })?;
    let new = NewRun {
        params: (!run_params.is_empty()).then_some(run_params),
        ..NewRun::of(
            &job,
            Trigger::OnDemand,
            shared.queue_host(),
            &shared.boot_id,
            shared.world.clock.now(),
        )
    };
    runs::start(shared, &job, new).await
}
