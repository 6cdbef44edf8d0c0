//! `stead logs RUN [--follow]`: a run's output.
//!
//! A run of this machine: its log is a file here (the run's monitor writes it), so its
//! bytes are copied to stdout as they are, with no round trip through the server.
//! Following asks the server only whether the run has ended, with a short `run_wait`
//! between reads: the wait returns the moment the run ends, so the last bytes are
//! printed at once.
//!
//! A run of another host of a shared ledger: its host's server ships its output to the
//! ledger (about once a heartbeat while it runs, the rest when it ends), and the log is
//! read from there with `run_log`, in bounded stretches by offset. Following reads until
//! the log is complete, or until the run has ended on a host that does not serve: then
//! what was shipped is printed, and a note on stderr says the rest stayed on that host.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use stead_client::{Client, Connection};
use stead_protocol::{Run, exit};

use super::output;

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
    let run = conn.run_get(args.id)?;
    if let Some(when) = &run.log_pruned_at {
        eprintln!(
            "stead: run {}'s log was pruned on {when} by retention (the run's record is kept; see `stead show {}`)",
            run.id, run.id
        );
        return Ok(exit::FAILURE);
    }
    print(&client, &mut conn, run, args.follow)?;
    Ok(exit::SUCCESS)
}

/// Prints a run's output to stdout: what there is now, or with `follow` everything
/// until the run ends. Answers the run as last read (with `follow`, ended).
pub fn print(
    client: &Client,
    conn: &mut Connection,
    mut run: Run,
    follow: bool,
) -> anyhow::Result<Run> {
    // Queued for any host: its log will be the claiming host's.
    while follow && run.machine_id.is_empty() && !run.status.is_terminal() {
        run = pause(client, conn, run)?;
    }
    if elsewhere(&run.machine_id) {
        shipped(conn, &run, follow)?;
        return Ok(if follow { conn.run_get(run.id)? } else { run });
    }
    let path = PathBuf::from(&run.log_path);
    let mut log = open(&path)?;
    loop {
        // Read after learning the run had ended, never before: the monitor records the
        // end only once the output is all in the file, so this read gets the rest; what
        // it writes after the end (the failure hook's output, its notes) is in once the
        // monitor is gone.
        let ended = run.status.is_terminal();
        if ended && follow {
            monitor_gone(&run);
        }
        if log.is_none() {
            // A queued run has no log yet.
            log = open(&path)?;
        }
        if let Some(file) = log.as_mut() {
            output::copy(file).with_context(|| format!("copying {}", path.display()))?;
        }
        if ended || !follow {
            return Ok(run);
        }
        run = pause(client, conn, run)?;
    }
}

/// Waits up to [`FOLLOW_INTERVAL`] for the run to end, then answers it as it is.
fn pause(client: &Client, conn: &mut Connection, run: Run) -> anyhow::Result<Run> {
    let until = Instant::now() + FOLLOW_INTERVAL;
    Ok(conn.wait_ended(run, Some(until), || super::connect(client))?)
}

/// Prints a run of another host from the copy its host ships to the shared ledger.
fn shipped(conn: &mut Connection, run: &Run, follow: bool) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    let mut offset = 0;
    loop {
        let log = conn.run_log(run.id, offset, None)?;
        let bytes = log.bytes().map_err(anyhow::Error::msg)?;
        out.write_all(&bytes)
            .and_then(|()| out.flush())
            .context("writing the log")?;
        offset = log.end();
        if offset < log.shipped_bytes {
            continue;
        }
        if log.complete {
            return Ok(());
        }
        let host = log.host.as_deref().unwrap_or(&run.machine_id);
        if log.kept_on_host {
            eprintln!(
                "stead: run {} ended before its host shipped logs to the ledger: its log stayed on host {host}, in {}",
                run.id, run.log_path
            );
            return Ok(());
        }
        let state = log.host_state.as_deref().unwrap_or("unknown");
        if log.status.is_terminal() && state != "serving" {
            eprintln!(
                "stead: the rest of run {}'s log stayed on host {host} ({state}): it is shipped when that host's server starts again",
                run.id
            );
            return Ok(());
        }
        if !follow {
            if log.status.is_terminal() {
                eprintln!(
                    "stead: the end of run {}'s log is still being shipped from host {host}",
                    run.id
                );
            }
            return Ok(());
        }
        std::thread::sleep(FOLLOW_INTERVAL);
    }
}

/// The longest a followed log waits, once its run has ended, for the monitor to finish
/// writing it: the failure hook's limit, and a little more.
const MONITOR_AFTER_END: Duration = Duration::from_secs(65);

/// Waits (bounded) until the run's monitor, on this machine, has exited.
fn monitor_gone(run: &Run) {
    let Some(pid) = run.monitor_pid else {
        return;
    };
    let deadline = Instant::now() + MONITOR_AFTER_END;
    while is_monitor(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a live `stead monitor` (not a zombie, not a process that reused the pid).
fn is_monitor(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rfind(')')
        .and_then(|at| stat[at + 1..].split_whitespace().next());
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let monitor = cmdline.split(|&b| b == 0).any(|word| word == b"monitor");
    monitor && !matches!(state, None | Some("Z" | "X"))
}

/// Whether a run was claimed by another host of a shared ledger: its log is read from
/// the ledger, where that host ships it.
pub fn elsewhere(machine_id: &str) -> bool {
    !machine_id.is_empty() && stead_sys::machine::machine_id().is_ok_and(|mine| mine != machine_id)
}

/// The log, or `None` while it does not exist yet.
fn open(path: &Path) -> anyhow::Result<Option<File>> {
    match File::open(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read the run's log {}", path.display())),
    }
}
