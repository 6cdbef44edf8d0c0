//! `stead logs RUN [--follow]`: a run's output, read straight from its log file.
//!
//! The log is a file on this machine (the run's monitor writes it), so its bytes are
//! copied to stdout as they are, with no round trip through the server. Following asks
//! the server only whether the run has ended, with a short `run_wait` between reads: the
//! wait returns the moment the run ends, so the last bytes are printed at once.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use stead_client::Client;
use stead_protocol::exit;

use super::output;
use super::runs;

/// How long to wait for the run to end between two reads of a growing log.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(200);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run's id (from `stead runs`)
    id: i64,
    /// Keep printing output as it is written, until the run ends
    #[arg(long, short)]
    follow: bool,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let mut conn = super::connect(&client)?;
    let mut run = conn.run_get(args.id)?;
    let path = PathBuf::from(&run.log_path);
    let mut log = open(&path)?;
    if log.is_none() && elsewhere(&run.machine_id) {
        anyhow::bail!(
            "run {} ran on another host (machine {}): its log is there, in {}; read it with `stead logs {}` on that host",
            run.id,
            run.machine_id,
            path.display(),
            run.id
        );
    }
    loop {
        // Read after learning the run had ended, never before: the monitor records the
        // end only once the output is all in the file, so this read gets the rest.
        let ended = run.status.is_terminal();
        if log.is_none() {
            // A queued run has no log yet.
            log = open(&path)?;
        }
        if let Some(file) = log.as_mut() {
            output::copy(file).with_context(|| format!("copying {}", path.display()))?;
        }
        if ended || !args.follow {
            return Ok(exit::SUCCESS);
        }
        let asked = Instant::now();
        run = runs::wait(&client, &mut conn, run.id, Some(FOLLOW_INTERVAL))?;
        if !run.status.is_terminal() {
            // Should a server answer early, still never read in a tight loop.
            if let Some(rest) = FOLLOW_INTERVAL.checked_sub(asked.elapsed()) {
                std::thread::sleep(rest);
            }
        }
    }
}

/// Whether a run was claimed by another host of a shared ledger (logs stay where a run
/// ran).
fn elsewhere(machine_id: &str) -> bool {
    !machine_id.is_empty() && stead_core::machine::machine_id().is_ok_and(|mine| mine != machine_id)
}

/// The log, or `None` while it does not exist yet.
fn open(path: &Path) -> anyhow::Result<Option<File>> {
    match File::open(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read the run's log {}", path.display())),
    }
}
