//! `monitor_check`: a monitor of this host asks whether its run is still its own, and,
//! when its command failed, whether a service its job depends on is being restarted.
//! Ownership is answered from memory (see [`crate::runs::ownership`]), so the answer never
//! waits on the database.

use std::sync::Arc;

use stead_protocol::{MonitorCheck, MonitorVerdict};

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: MonitorCheck) -> Answer<MonitorVerdict> {
    let verdict = shared.ownership.verdict(params.run_id);
    let restarting_service = if params.restarting {
        let id = params.run_id;
        blocking(shared, move |s| {
            s.world.store.recorder().restarting_service(id)
        })
        .await?
    } else {
        None
    };
    Ok(MonitorVerdict {
        ended: verdict.ended,
        confirmed_ms_ago: verdict
            .confirmed_ago
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        restarting_service,
    })
}
