//! `monitor_started`: a monitor of this host marks its run running, through its server,
//! together with the other writes about runs (see `group`), so the host's monitors need
//! no database connection of their own. The
//! monitor's time is recorded as the ledger's clock has it.

use std::sync::Arc;

use jiff::Timestamp;
use stead_core::identity::StartIdentity;
use stead_protocol::MonitorStarted;
use stead_store::{Mark, RunWritten};

use super::{Answer, invalid};
use crate::group::{Group, Write};
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: MonitorStarted) -> Answer<bool> {
    let at: Timestamp = params.at.parse().map_err(|e| invalid(format!("at: {e}")))?;
    let identity = StartIdentity::from_stored(params.start_identity);
    let mark = Mark {
        run_id: params.run_id,
        monitor_pid: params.pid,
        monitor_identity: identity,
        started_at: at,
    };
    let marked = matches!(
        Group::write(shared, Write::Mark(mark)).await?,
        RunWritten::Marked(true)
    );
    if marked {
        shared.run_changed_quietly(params.run_id);
    }
    Ok(marked)
}
