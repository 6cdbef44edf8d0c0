//! `monitor_started`: a monitor of this host marks its run running, through its server,
//! together with the other writes about runs (see `group_commit`), so the host's
//! monitors need no database connection of their own. The
//! monitor's time is recorded as the ledger's clock has it.

use std::sync::Arc;

use jiff::Timestamp;
use stead_protocol::MonitorStarted;
use stead_store::Mark;
use stead_sys::identity::StartIdentity;

use super::{Answer, invalid};
use crate::request::group_commit::Group;
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
    #[cfg(debug_assertions)]
    late_mark_for_tests().await;
    let marked = Group::mark(shared, mark).await?;
    if marked {
        shared.run_changed_quietly(params.run_id);
    }
    Ok(marked)
}

/// Debug builds only (the tests' binaries): holds every mark back for
/// `STEAD_TEST_MARK_LATE_MS` milliseconds before it joins a commit, as a burst of marks
/// waiting for the disk does, so a test can see a run's start recorded from its command
/// rather than its mark (see `fire_path.rs`). Release builds have no such setting.
#[cfg(debug_assertions)]
async fn late_mark_for_tests() {
    let late = std::env::var("STEAD_TEST_MARK_LATE_MS").ok();
    if let Some(ms) = late.and_then(|v| v.parse::<u64>().ok()) {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}
