//! `run_log`: a stretch of a run's log as the shared ledger holds it, shipped there by
//! the server of the host that ran the run (`crate::tasks::ship`). A ledger of one host keeps
//! no logs: every run's log is a file on this machine.

use std::sync::Arc;

use stead_protocol::limits::MAX_RUN_LOG_READ;
use stead_protocol::{ErrorBody, ErrorCode, RunLog, RunLogParams};

use super::{Answer, invalid};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: RunLogParams) -> Answer<RunLog> {
    let RunLogParams {
        id,
        offset,
        max_bytes,
    } = params;
    let max = max_bytes.unwrap_or(MAX_RUN_LOG_READ).min(MAX_RUN_LOG_READ);
    let lease = stead_core::clock::span(shared.world.config.timings.lease);
    let read = blocking(shared, move |s| {
        // The run first, then its log: a log read after the run was seen ended holds
        // what was shipped by then.
        let Some(run) = s.world.store.run_get(id)? else {
            return Ok(None);
        };
        let Some(cluster) = s.world.store.cluster() else {
            return Ok(Some((run, None, None)));
        };
        let log = cluster.log_read(id, offset, usize::try_from(max).unwrap_or(usize::MAX))?;
        let host = cluster
            .hosts()?
            .into_iter()
            .find(|h| h.machine_id == run.machine_id && !run.machine_id.is_empty())
            .map(|h| (h.name.clone(), h.state(lease).to_string()));
        Ok(Some((run, Some(log), host)))
    })
    .await?;
    let Some((run, log, host)) = read else {
        return Err(ErrorBody::new(ErrorCode::NotFound, format!("no run {id}")));
    };
    let Some(log) = log else {
        return Err(ErrorBody::new(
            ErrorCode::NotFound,
            format!(
                "run {id}'s log is not in the ledger: a ledger of one host keeps logs only in their files ({})",
                run.log_path
            ),
        ));
    };
    if offset > log.shipped {
        return Err(invalid(format!(
            "offset {offset} is past the end of the shipped log ({} bytes)",
            log.shipped
        )));
    }
    // A run that ended without a monitor (cancelled while queued, skipped, its monitor
    // never started) has no output: nothing will be shipped, and nothing is missing. (A
    // monitor that took the run and stopped before the command notes why in the log.)
    let never_started =
        run.status.is_terminal() && run.started_at.is_none() && run.monitor_pid.is_none();
    let (host, host_state) = host.unzip();
    Ok(RunLog {
        id,
        status: run.status,
        offset,
        data: RunLog::encode(&log.data),
        shipped_bytes: log.shipped,
        complete: log.complete || (never_started && log.shipped == 0),
        kept_on_host: log.kept_on_host && !never_started,
        host,
        host_state,
    })
}
