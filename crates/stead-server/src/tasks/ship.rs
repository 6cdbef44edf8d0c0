//! Shipping this host's run logs to a shared ledger, so any host can read any run's
//! output (`run_log`, `stead logs`, the dashboard's log panel).
//!
//! The server of the host that ran a run ships it; monitors open no connection for it.
//! A pass reads, for each run of this host still shipping, its log file from the offset
//! the ledger holds up to the file's length (at most the plan's cap and room for notes),
//! and appends it in writes of at most one chunk, each fenced by this server's epoch.
//! Passes run:
//!
//! - once per heartbeat, for every running run of this host (its new output);
//! - at once when a run of this host ends (its monitor exited: `watch_monitor` tells
//!   [`Shared::log_ended`]), for everything left, after which the log is complete;
//! - at the server's start, for every ended run of this host whose log is not complete
//!   (a server that crashed, or a run that ended while none served, loses no tail).
//!
//! A run read as ended before its file is read has all its output in the file: a
//! monitor records the end only once the output is written. On a ledger of one host
//! nothing runs here: the file is the only copy.

use std::collections::BTreeSet;
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::Arc;

use stead_core::records::LogShipment;
use stead_core::runs::shipped_log_cap;
use stead_store::{Cluster, LOG_CHUNK_BYTES, StoreError};
use tracing::{debug, warn};

use crate::request::ledger_calls::on_cluster;
use crate::shared::Shared;
use stead_store::Refusal;

/// Starts shipping (shared ledgers only: called by `cluster::start`).
pub fn start(shared: &Arc<Shared>) {
    tokio::spawn(run(shared.clone()));
}

async fn run(shared: Arc<Shared>) {
    let heartbeat = shared.world.config.timings.heartbeat;
    // The first pass looks at every ended run of this host.
    let mut all_ended = true;
    loop {
        let ended: Vec<i64> = shared.logs_ended().into_iter().collect();
        let epoch = shared.epoch();
        let scope = (!all_ended).then(|| ended.clone());
        let pass = on_cluster(&shared, move |_, c| pass(c, scope.as_deref(), epoch)).await;
        match pass {
            Ok(done) => {
                all_ended = false;
                // Ended runs not listed are complete already, or not this host's.
                shared.logs_shipped(&ended, &done);
            }
            Err(e) => {
                warn!(cause = %e.message, "failed to ship run logs to the shared ledger; retrying at the next heartbeat")
            }
        }
        tokio::select! {
            () = shared.stop.cancelled() => return,
            () = shared.wake.ship_now.notified() => {}
            () = tokio::time::sleep(heartbeat) => {}
        }
    }
}

/// One pass; returns the ended runs whose logs could not be completed (to try again).
fn pass(c: &dyn Cluster, ended: Option<&[i64]>, epoch: i64) -> Result<BTreeSet<i64>, StoreError> {
    let mut left = BTreeSet::new();
    for shipment in c.logs_to_ship(ended)? {
        match ship(c, &shipment, epoch) {
            Ok(()) => {}
            Err(
                e @ (StoreError::Refused(Refusal::Fenced { .. }) | StoreError::Unavailable { .. }),
            ) => return Err(e),
            Err(e) if shipment.ended => {
                warn!(run = shipment.run_id, cause = %e, "failed to ship the end of the run's log");
                left.insert(shipment.run_id);
            }
            // Tried again at the next heartbeat, and at the run's end.
            Err(e) => debug!(run = shipment.run_id, cause = %e, "failed to ship the run's log"),
        }
    }
    Ok(left)
}

/// Ships what the ledger lacks of one run's log, and completes it if the run had ended.
fn ship(c: &dyn Cluster, s: &LogShipment, epoch: i64) -> Result<(), StoreError> {
    let cap = shipped_log_cap(s.log_max_bytes);
    let file = match open(s) {
        Ok(file) => Some(file),
        // No log (yet, or ever: a run whose command never started may have none).
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(file_error(s, &e)),
    };
    let mut at = s.shipped;
    if let Some(file) = &file {
        let len = file
            .metadata()
            .map_err(|e| file_error(s, &e))?
            .len()
            .min(cap);
        let mut buf = vec![0u8; LOG_CHUNK_BYTES];
        while at < len {
            // Up to the next chunk boundary: one write fills at most one chunk.
            let chunk = LOG_CHUNK_BYTES as u64;
            let want = usize::try_from((chunk - at % chunk).min(len - at)).unwrap_or(0);
            let piece = &mut buf[..want];
            file.read_exact_at(piece, at)
                .map_err(|e| file_error(s, &e))?;
            let held = c.log_ship(s.run_id, at, piece, false, epoch)?;
            if held != at + want as u64 {
                // The ledger holds another count (a superseded server of this host
                // shipped too): the next pass starts from it.
                debug!(
                    run = s.run_id,
                    held, "the shipped log moved under this pass"
                );
                return Ok(());
            }
            at = held;
        }
    }
    if s.ended {
        c.log_ship(s.run_id, at, &[], true, epoch)?;
    }
    Ok(())
}

/// The run's log, never through a link (a link planted after the run would ship
/// another file).
fn open(s: &LogShipment) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(&s.log_path)
}

fn file_error(s: &LogShipment, e: &io::Error) -> StoreError {
    StoreError::Row(format!(
        "run {}: cannot read its log {}: {e}",
        s.run_id,
        s.log_path.display()
    ))
}
