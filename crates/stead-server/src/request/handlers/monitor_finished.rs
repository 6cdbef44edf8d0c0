//! `monitor_finished`: a monitor of this host records how its run ended, through its
//! server, together with the other writes about runs (see `group_commit`), its time as the
//! ledger's clock has it.

use std::sync::Arc;

use jiff::Timestamp;
use stead_core::runs::{CommandStart, RunEnd, Waited};
use stead_protocol::MonitorFinished;

use super::{Answer, invalid};
use crate::request::group_commit::Group;
use crate::runs::Link;
use crate::shared::Shared;

/// `link`: the monitor's link, when the end came on it.
pub async fn handle(
    shared: &Arc<Shared>,
    params: MonitorFinished,
    link: Option<&Link>,
) -> Answer<bool> {
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
    let started = match params.started_at {
        None => CommandStart::AsMarked,
        Some(None) => CommandStart::Never,
        Some(Some(text)) => {
            let at: Timestamp = text
                .parse()
                .map_err(|e| invalid(format!("started_at: {e}")))?;
            CommandStart::At(shared.in_ledger_time(at))
        }
    };
    let id = params.run_id;
    let end = RunEnd {
        status: params.status,
        exit_code: params.exit_code,
        signal: params.signal,
        reason: params.reason,
        ended_at,
        ended_processes: params.ended_processes,
        started,
        waited: params.waited_ms.map(|ms| Waited {
            ms,
            note: params.wait_note.unwrap_or_default(),
        }),
    };
    let interrupted = end.status == stead_protocol::RunStatus::Interrupted;
    let recorded = Group::end(shared, id, end).await?;
    // Ended either way (by this write, or before it): nothing is left for the watch of
    // its monitor to read when the monitor exits, and no signal for the run goes to the
    // monitor from now on (before it is answered: see `runs::reuse`).
    shared.ended_here(id);
    if let Some(link) = link {
        shared.runs.monitors.ended(link.pid, id);
    }
    if recorded && interrupted {
        // Cut while this server serves: it is owed now, not only at the next boot.
        shared.wake.runs_cut.notify_one();
    }
    // Its log no longer grows: if the disk is below its reserve, room can be made now.
    crate::tasks::retention::after_run_end(shared);
    // Whether a run now waits was looked at in the commit (`Due::after_ends`).
    shared.run_changed_quietly(id);
    Ok(recorded)
}
