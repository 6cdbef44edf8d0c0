//! `monitor_started`: a monitor of this host marks its run running, through its server
//! (shared ledgers), so the host's monitors need no database connection of their own. The
//! monitor's time is recorded as the ledger's clock has it.

use std::sync::Arc;

use jiff::Timestamp;
use stead_core::identity::StartIdentity;
use stead_protocol::MonitorStarted;

use super::{Answer, invalid};
use crate::ledger::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: MonitorStarted) -> Answer<bool> {
    let at: Timestamp = params.at.parse().map_err(|e| invalid(format!("at: {e}")))?;
    let identity = StartIdentity::from_stored(params.start_identity);
    let marked = blocking(shared, move |s| {
        s.world
            .store
            .recorder()
            .mark_running(params.run_id, params.pid, &identity, at)
    })
    .await?;
    if marked {
        let _ = shared.run_events.send(params.run_id);
    }
    Ok(marked)
}
