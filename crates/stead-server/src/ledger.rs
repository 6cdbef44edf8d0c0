//! The bridge from async handlers to the ledger: blocking calls run off the async
//! threads, and the ledger's refusals become protocol errors.

use std::sync::Arc;

use stead_core::records::ActiveRun;
use stead_protocol::limits::MAX_RUN_LIST;
use stead_protocol::{ErrorBody, ErrorCode, Run, RunFilter, RunStatus};
use stead_store::{Cluster, Store, StoreError};

use crate::shared::Shared;

/// Maps a store failure to a protocol error.
pub fn store_error(e: StoreError) -> ErrorBody {
    let code = match &e {
        StoreError::JobExists(_)
        | StoreError::ServiceExists(_)
        | StoreError::ServiceInUse { .. }
        | StoreError::QueueInUse { .. }
        | StoreError::JobInChain { .. }
        | StoreError::Overlap(_)
        | StoreError::AlreadyResolved(_) => ErrorCode::Conflict,
        StoreError::NoSuchJob(_)
        | StoreError::NoSuchRun(_)
        | StoreError::NoSuchService(_)
        | StoreError::NoSuchHold(_)
        | StoreError::NoSuchQueue(_)
        | StoreError::NoSuchNotifier(_) => ErrorCode::NotFound,
        StoreError::UnknownQueue { .. }
        | StoreError::NoSuchUpstream { .. }
        | StoreError::AfterCycle { .. } => ErrorCode::InvalidParams,
        StoreError::Fenced { .. } => ErrorCode::ShuttingDown,
        _ => ErrorCode::StoreUnavailable,
    };
    ErrorBody::new(code, e.to_string())
}

/// The run `id` among `machine`'s runs in flight, with what only those rows carry (its
/// monitor's identity, whether its cancel was asked for); `None` once it has ended.
pub fn active_run(
    store: &Arc<dyn Store>,
    machine: &str,
    id: i64,
) -> Result<Option<ActiveRun>, StoreError> {
    Ok(store.runs_active(machine)?.into_iter().find(|r| r.id == id))
}

/// Every run queued or running, on any host, newest first.
pub fn in_flight(store: &Arc<dyn Store>) -> Result<Vec<Run>, StoreError> {
    let mut runs = Vec::new();
    for status in [RunStatus::Running, RunStatus::Queued] {
        let filter = RunFilter {
            status: Some(status),
            limit: Some(MAX_RUN_LIST),
            ..Default::default()
        };
        runs.extend(store.run_list(&filter)?);
    }
    Ok(runs)
}

/// Runs blocking ledger work off the async thread.
pub async fn blocking<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&Shared) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ErrorBody> {
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || f(&shared))
        .await
        .map_err(|e| ErrorBody::new(ErrorCode::Internal, e.to_string()))?
        .map_err(store_error)
}

/// Runs cluster work on the shared ledger off the async threads; on a ledger of one host
/// it fails with [`StoreError::NotShared`].
pub async fn on_cluster<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&Shared, &dyn Cluster) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ErrorBody> {
    blocking(shared, move |s| match s.world.store.cluster() {
        Some(cluster) => f(s, cluster),
        None => Err(StoreError::NotShared),
    })
    .await
}
