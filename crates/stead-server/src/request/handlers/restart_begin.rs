//! `restart_begin`: a gated restart of a service is under way: dependent fires wait, and
//! a dependent run that fails meanwhile is recorded cut, not failed. With `cut_runs`,
//! its dependent runs in flight are cut first.

use std::sync::Arc;

use stead_protocol::{Empty, RestartMark, STEAD_SERVICE};

use super::services::{dependents, known};
use super::{Answer, invalid};
use crate::request::ledger_calls::blocking;
use crate::runs;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: RestartMark) -> Answer<Empty> {
    if params.service == STEAD_SERVICE {
        return Err(invalid(
            "a restart of stead itself is done by `stead restart`, which stops and starts the server",
        ));
    }
    known(shared, &params.service).await?;
    let epoch = shared.epoch();
    let name = params.service.clone();
    let jobs = blocking(shared, move |s| {
        s.world
            .store
            .service_set_restarting(&name, Some(s.world.clock.now()), epoch)?;
        s.world.store.job_list()
    })
    .await?;
    if params.cut_runs {
        let dependent = dependents(&params.service, &jobs);
        runs::cut_where(
            shared,
            &format!("interrupted: its service {} was restarted", params.service),
            move |job| dependent.iter().any(|d| d == job),
        )
        .await?;
    }
    shared.changed();
    Ok(Empty {})
}
