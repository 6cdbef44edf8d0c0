//! The bridge from async handlers to the ledger: blocking calls run off the async
//! threads, and the ledger's refusals become protocol errors.

use std::sync::Arc;

use stead_core::records::ActiveRun;
use stead_protocol::limits::MAX_RUN_LIST;
use stead_protocol::{ErrorBody, ErrorCode, Run, RunFilter, RunStatus};
use stead_store::{Cluster, Refusal, Store, StoreError};

use crate::shared::Shared;

/// Maps a store failure to a protocol error: each refusal to what it means for the
/// request, every failure of the ledger itself to `store_unavailable`.
pub fn store_error(e: StoreError) -> ErrorBody {
    let code = match &e {
        StoreError::Refused(refusal) => refusal_code(refusal),
        StoreError::Corrupt { .. }
        | StoreError::TooNew { .. }
        | StoreError::Open { .. }
        | StoreError::Migrate { .. }
        | StoreError::Row(_)
        | StoreError::Unavailable { .. }
        | StoreError::LedgerUrl { .. }
        | StoreError::OtherLedger { .. }
        | StoreError::Unsupported { .. }
        | StoreError::Backend { .. } => ErrorCode::StoreUnavailable,
    };
    ErrorBody::new(code, e.to_string())
}

fn refusal_code(refusal: &Refusal) -> ErrorCode {
    match refusal {
        Refusal::JobExists(_)
        | Refusal::ServiceExists(_)
        | Refusal::ServiceInUse { .. }
        | Refusal::QueueInUse { .. }
        | Refusal::JobInChain { .. }
        | Refusal::Overlap(_)
        | Refusal::AlreadyResolved(_)
        | Refusal::NotKeyHolder { .. } => ErrorCode::Conflict,
        Refusal::WrongRunToken(_) => ErrorCode::Unauthorized,
        Refusal::NoSuchJob(_)
        | Refusal::NoSuchRun(_)
        | Refusal::NoSuchService(_)
        | Refusal::NoSuchHold(_)
        | Refusal::NoSuchQueue(_)
        | Refusal::NoSuchNotifier(_) => ErrorCode::NotFound,
        Refusal::UnknownQueue { .. }
        | Refusal::NoSuchUpstream { .. }
        | Refusal::AfterCycle { .. }
        | Refusal::CheckpointName { .. }
        | Refusal::CheckpointLimit(_) => ErrorCode::InvalidParams,
        Refusal::Fenced { .. } => ErrorCode::ShuttingDown,
        // A cluster request to a server of one host: the ledger has nothing to say.
        Refusal::NotShared => ErrorCode::StoreUnavailable,
    }
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
/// it fails with [`Refusal::NotShared`].
pub async fn on_cluster<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&Shared, &dyn Cluster) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ErrorBody> {
    blocking(shared, move |s| match s.world.store.cluster() {
        Some(cluster) => f(s, cluster),
        None => Err(StoreError::Refused(Refusal::NotShared)),
    })
    .await
}
