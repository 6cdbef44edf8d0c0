//! `run_now`: a run of a job, now (trigger `on_demand`, subject to its concurrency
//! policy), with its own environment and arguments when given.

use std::sync::Arc;

use stead_protocol::{Run, RunNow, RunParams};

use super::{Answer, invalid};
use crate::runs;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: RunNow) -> Answer<Run> {
    let run_params = RunParams {
        env: params.env,
        args: params.args,
    };
    stead_core::params::validate(&run_params)
        .map_err(|e| invalid(format!("run {}: {e}", params.job)))?;
    runs::start_now(shared, params.job, run_params).await
}
