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

/// How large `logs/monitors.log` grows before it is moved to `monitors.log.1` (one kept).
const MONITORS_LOG_MAX: u64 = 1 << 20;

/// `logs/monitors.log`, opened for appending: the stderr of every monitor and of the
/// spawner, where a monitor's own diagnostics go (a plan it cannot read, a panic). Runs'
/// output never does: each run's goes to its own log. Moved aside to `monitors.log.1`
/// once past [`MONITORS_LOG_MAX`], when a monitor is next started, so it stays bounded
/// (a spawner started before keeps writing to the moved file until it is replaced).
pub fn monitors_log(logs_dir: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = logs_dir.join("monitors.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > MONITORS_LOG_MAX) {
        let _ = std::fs::rename(&path, logs_dir.join("monitors.log.1"));
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

#[cfg(test)]
mod monitors_log_tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn the_monitors_log_is_appended_to_and_moved_aside_when_large() {
        let dir = tempfile::tempdir().unwrap();
        writeln!(monitors_log(dir.path()).unwrap(), "first").unwrap();
        writeln!(monitors_log(dir.path()).unwrap(), "second").unwrap();
        let log = dir.path().join("monitors.log");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "first\nsecond\n");
        std::fs::write(&log, vec![b'x'; MONITORS_LOG_MAX as usize + 1]).unwrap();
        writeln!(monitors_log(dir.path()).unwrap(), "third").unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "third\n");
        let aside = std::fs::metadata(dir.path().join("monitors.log.1")).unwrap();
        assert_eq!(aside.len(), MONITORS_LOG_MAX + 1);
    }
}
