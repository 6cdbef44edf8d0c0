//! The stop sequence: give back everything a successor needs, then drain.
//!
//! A server that releases its lock only at the end of a long shutdown stays deaf while
//! holding it, and a replacement started meanwhile refuses to run. So the first act of
//! stopping is to unlink the socket, release the lease and remove the lock file, in that
//! order and each only if it is still ours (a superseded server touches none of its
//! successor's). Only then does the server wait for open requests to finish. However
//! long the drain takes, and even if the process freezes in it, a successor can start.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use super::shared::{Phase, Shared, StopReason};
use crate::system::lock;

/// How long open requests get to finish once everything is released.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

pub async fn run(shared: &Arc<Shared>, tracker: &TaskTracker) -> StopReason {
    let reason = shared
        .stop_reason()
        .expect("the accept loop ends only after begin_stop");
    info!(%reason, "stopping");
    // The HTTP port first, so a successor can bind it the moment it holds the lease.
    shared.web.closed().await;
    let releasing = shared.clone();
    if let Err(e) = tokio::task::spawn_blocking(move || release(&releasing)).await {
        warn!(cause = %e, "release task failed");
    }
    shared.phase.send_replace(Phase::Released);
    info!("released the socket, lease and lock file; draining open requests");
    tracker.close();
    shared.runs.launches.close();
    let drained = async {
        tracker.wait().await;
        shared.runs.launches.wait().await;
    };
    if tokio::time::timeout(DRAIN_GRACE, drained).await.is_err() {
        warn!(
            grace_ms = DRAIN_GRACE.as_millis() as u64,
            "open requests did not finish in time; stopping anyway"
        );
    }
    info!("stopped");
    reason
}

fn release(shared: &Shared) {
    let socket = shared.world.paths.socket();
    match std::fs::symlink_metadata(socket) {
        Ok(meta) if (meta.dev(), meta.ino()) == shared.socket_inode() => {
            if let Err(e) = std::fs::remove_file(socket) {
                warn!(cause = %e, "failed to remove the socket file");
            }
        }
        Ok(_) => info!("the socket path now belongs to a successor; leaving it"),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => warn!(cause = %e, "failed to inspect the socket file"),
    }
    if !shared.superseded() {
        match shared
            .world
            .store
            .release_lease(&shared.lease(), shared.world.clock.now())
        {
            Ok(true) => {}
            Ok(false) => info!("the lease was no longer ours to release"),
            Err(e) => warn!(cause = %e, "failed to release the lease; it will expire"),
        }
    }
    if let Err(e) = lock::release(&shared.me.lock_paths, &shared.me.lock_record) {
        warn!(cause = %e, "failed to remove the lock file");
    }
}
