//! `restart_end`: the service is ready again; fires that waited go on and runs the
//! restart cut are resumed.

use std::sync::Arc;

use stead_protocol::{Empty, RestartMark};

use super::Answer;
use super::services::known;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: RestartMark) -> Answer<Empty> {
    known(shared, &params.service).await?;
    let epoch = shared.epoch();
    let name = params.service.clone();
    blocking(shared, move |s| {
        s.world.store.service_set_restarting(&name, None, epoch)
    })
    .await?;
    // Fires that waited for the service go on; runs it cut are owed and resumed now.
    shared.wake.jobs_changed.notify_one();
    shared.wake.runs_cut.notify_one();
    shared.changed();
    Ok(Empty {})
}
