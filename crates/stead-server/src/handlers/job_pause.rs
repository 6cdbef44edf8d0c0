//! `job_pause`: pause a job until a time (its fires until then are recorded skipped),
//! or unpause it.

use std::sync::Arc;

use jiff::Timestamp;
use stead_protocol::{Job, PauseParams};

use super::jobs::{changed, view};
use super::{Answer, invalid};
use crate::ledger::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: PauseParams) -> Answer<Job> {
    let now = shared.world.clock.now();
    let until = match &params.until {
        None => None,
        Some(text) => {
            let until: Timestamp = text.parse().map_err(|e| {
                invalid(format!(
                    "pause {}: until {text:?} is not an RFC 3339 time: {e}",
                    params.name
                ))
            })?;
            if until <= now {
                return Err(invalid(format!(
                    "pause {}: until {text:?} has already passed",
                    params.name
                )));
            }
            Some(until)
        }
    };
    let epoch = shared.epoch();
    let name = params.name.clone();
    let job = blocking(shared, move |s| {
        s.world.store.job_set_paused(&name, until, now, epoch)
    })
    .await?;
    changed(shared);
    Ok(view(shared, &job))
}
