//! Waiting for a run to end, on the server's run events.

use std::sync::Arc;
use std::time::Duration;

use stead_protocol::{ErrorBody, Run};
use stead_store::StoreError;

use crate::request::ledger_calls::{blocking, store_error};
use crate::shared::Shared;
use stead_store::Refusal;

/// Returns the run once it is terminal, or as it is after `limit`.
pub async fn wait_terminal(
    shared: &Arc<Shared>,
    id: i64,
    events: &mut tokio::sync::broadcast::Receiver<i64>,
    limit: Duration,
) -> Result<Run, ErrorBody> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let run = blocking(shared, move |s| s.world.store.run_get(id))
            .await?
            .ok_or_else(|| store_error(StoreError::Refused(Refusal::NoSuchRun(id))))?;
        if run.status.is_terminal() {
            return Ok(run);
        }
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Ok(changed) if changed != id => continue,
                    // A changed row, or missed events: look again.
                    _ => break,
                },
                () = tokio::time::sleep_until(deadline) => return Ok(run),
                () = shared.stop.cancelled() => return Ok(run),
            }
        }
    }
}
