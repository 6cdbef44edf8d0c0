//! `monitor_finished`: a monitor of this host records how its run ended, through its
//! server, together with its neighbours (see `group`), its time as the ledger's clock has it.

use std::sync::Arc;

use jiff::Timestamp;
use stead_core::runs::RunEnd;
use stead_protocol::MonitorFinished;
use stead_store::StoreError;

use super::{Answer, invalid};
use crate::group::Group;
use crate::shared::Shared;

/// The ends of a burst, in one durable transaction.
fn commit(shared: &Shared, ends: &[(i64, RunEnd)]) -> Vec<Result<bool, StoreError>> {
    shared.world.store.recorder().finish_all(ends)
}

pub async fn handle(shared: &Arc<Shared>, params: MonitorFinished) -> Answer<bool> {
    if !params.status.is_terminal() {
        return Err(invalid(format!(
            "status: {} is not an end",
            params.status.as_str()
        )));
    }
    let ended_at: Timestamp = params
        .ended_at
        .parse()
        .map_err(|e| invalid(format!("ended_at: {e}")))?;
    let ended_at = shared.in_ledger_time(ended_at);
    let id = params.run_id;
    let end = RunEnd {
        status: params.status,
        exit_code: params.exit_code,
        signal: params.signal,
        reason: params.reason,
        ended_at,
        ended_processes: params.ended_processes,
    };
    let recorded = Group::write(shared, |s| &s.ends, commit, (id, end)).await?;
    let _ = shared.run_events.send(id);
    Ok(recorded)
}
