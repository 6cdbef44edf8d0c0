//! The runs' log directory, `logs/runs/`, kept in step with the ledger.
//!
//! A run's log is `logs/runs/ID.log`, created new by its monitor (which refuses a path
//! where something already is). A ledger that starts afresh (a broken one moved aside, a
//! new PostgreSQL database) numbers its runs from 1 again, so the logs of the ledger
//! before would be in the way of every new run: a server that finds its ledger without a
//! single run moves such a directory aside, whole, to `logs/runs.before-TIMESTAMP`.

use std::path::{Path, PathBuf};

use stead_core::clock::rfc3339;
use stead_protocol::RunFilter;
use stead_store::StoreError;
use tracing::{info, warn};

use crate::World;

/// Moves a non-empty `logs/runs` aside when the ledger has no runs; returns where to.
pub fn set_aside_for_a_fresh_ledger(world: &World) -> Result<Option<PathBuf>, StoreError> {
    let dir = world.paths.logs_dir().join("runs");
    if !has_entries(&dir) {
        return Ok(None);
    }
    let any = RunFilter {
        limit: Some(1),
        ..Default::default()
    };
    if !world.store.run_list(&any)?.is_empty() {
        return Ok(None);
    }
    let stamp = rfc3339(world.clock.now()).replace(':', "-");
    let aside = world.paths.logs_dir().join(format!("runs.before-{stamp}"));
    match std::fs::rename(&dir, &aside) {
        Ok(()) => {
            info!(from = %dir.display(), to = %aside.display(), "the ledger has no runs: moved the run logs of an earlier ledger aside");
            Ok(Some(aside))
        }
        Err(e) => {
            warn!(dir = %dir.display(), cause = %e, "failed to move the run logs of an earlier ledger aside; new runs may find their log paths taken");
            Ok(None)
        }
    }
}

fn has_entries(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some())
}
