//! `job_pause`: pause a job for a while or until a time (its fires until then are
//! recorded skipped), or unpause it. A pause `for` a duration is counted on the
//! server's clock (on a shared ledger, the database's), not the client's.

use std::sync::Arc;

use jiff::Timestamp;
use stead_protocol::{ErrorBody, ErrorCode, Job, PauseParams};

use super::jobs::{changed, find, view};
use super::{Answer, invalid};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: PauseParams) -> Answer<Job> {
    let now = shared.world.clock.now();
    let name = &params.name;
    let until = match (&params.duration, &params.until) {
        (Some(_), Some(_)) => {
            return Err(invalid(format!(
                "pause {name}: give either for or until, not both"
            )));
        }
        (Some(text), None) => {
            let duration = stead_core::schedule::parse_duration(text)
                .map_err(|e| invalid(format!("pause {name}: for {text:?}: {e}")))?;
            let until = jiff::SignedDuration::try_from(duration)
                .ok()
                .and_then(|span| now.checked_add(span).ok())
                .ok_or_else(|| invalid(format!("pause {name}: for {text:?} is too long")))?;
            Some(until)
        }
        (None, Some(text)) => {
            let until: Timestamp = text.parse().map_err(|e| {
                invalid(format!(
                    "pause {name}: until {text:?} is not an RFC 3339 time: {e}"
                ))
            })?;
            if until <= now {
                return Err(invalid(format!(
                    "pause {name}: until {text:?} has already passed"
                )));
            }
            Some(until)
        }
        (None, None) => None,
    };
    if until.is_some() {
        let spec = find(shared, params.name.clone()).await?.spec;
        // The request is well formed; the job as it is now gives it nothing to do (it may
        // be given a schedule later): a conflict with its state, not a bad parameter.
        if spec.cron.is_none() && spec.every.is_none() && spec.after.is_empty() {
            return Err(ErrorBody::new(
                ErrorCode::Conflict,
                format!(
                    "pause {name}: it has no schedule and runs after no job, so a pause would hold back nothing (a run by hand is never held)"
                ),
            ));
        }
    }
    let epoch = shared.epoch();
    let name = params.name.clone();
    let job = blocking(shared, move |s| {
        s.world.store.job_set_paused(&name, until, now, epoch)
    })
    .await?;
    changed(shared);
    Ok(view(shared, &job))
}
