//! `monitor_started`: a monitor of this host marks its run running, through its server,
//! together with its neighbours (see `group`), so the host's monitors need no database connection of their own. The
//! monitor's time is recorded as the ledger's clock has it.

use std::sync::Arc;

use jiff::Timestamp;
use stead_core::identity::StartIdentity;
use stead_protocol::MonitorStarted;
use stead_store::{Mark, StoreError};

use super::{Answer, invalid};
use crate::group::Group;
use crate::shared::Shared;

/// The marks of a burst, in one transaction.
fn commit(shared: &Shared, marks: &[Mark]) -> Vec<Result<bool, StoreError>> {
    shared.world.store.recorder().mark_running_all(marks)
}

pub async fn handle(shared: &Arc<Shared>, params: MonitorStarted) -> Answer<bool> {
    let at: Timestamp = params.at.parse().map_err(|e| invalid(format!("at: {e}")))?;
    let identity = StartIdentity::from_stored(params.start_identity);
    let mark = Mark {
        run_id: params.run_id,
        monitor_pid: params.pid,
        monitor_identity: identity,
        started_at: at,
    };
    let marked = Group::write(shared, |s| &s.marks, commit, mark).await?;
    if marked {
        let _ = shared.run_events.send(params.run_id);
    }
    Ok(marked)
}
