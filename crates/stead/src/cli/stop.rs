//! `stead stop`: ask the server to stop and wait until its process is gone.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use stead_client::{Client, ClientError};
use stead_protocol::{StopParams, exit};
use stead_sys::identity::{self, StartIdentity};

use super::output::{self, OutputArgs};

/// How long to wait for the stopped process to exit. The server has already released
/// everything when it answers, so this only bounds the wait for its open requests.
const EXIT_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Cut the runs in flight as well: they end interrupted and are resumed once after
    /// the next start (without it they go on, and the next server adopts them)
    #[arg(long)]
    cancel_runs: bool,
    #[command(flatten)]
    format: OutputArgs,
}

#[derive(Debug, Serialize)]
struct Stopped {
    was_running: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    /// Whether the process had exited when this command returned.
    exited: bool,
    waited_ms: u64,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let started = Instant::now();
    let result = match client.connect() {
        Err(ClientError::NotRunning { .. }) => Stopped {
            was_running: false,
            server_id: None,
            pid: None,
            exited: true,
            waited_ms: 0,
        },
        Err(e) => return Err(e.into()),
        Ok(mut conn) => {
            let stopped = conn.stop(StopParams {
                cancel_runs: args.cancel_runs,
            })?;
            let identity = StartIdentity::from_stored(stopped.start_identity);
            let exited = identity::wait_gone(stopped.pid, &identity, EXIT_WAIT);
            Stopped {
                was_running: true,
                server_id: Some(stopped.server_id),
                pid: Some(stopped.pid),
                exited,
                waited_ms: started.elapsed().as_millis() as u64,
            }
        }
    };
    output::show_with(&result, args.format, || said(&result, client.paths.dir()))?;
    Ok(exit::SUCCESS)
}

/// What a stop did, in words; `dir` is the state directory.
fn said(result: &Stopped, dir: &Path) -> String {
    let pid = result.pid.unwrap_or_default();
    let id = result.server_id.as_deref().unwrap_or_default();
    if !result.was_running {
        format!("no stead server is running for {}\n", dir.display())
    } else if result.exited {
        format!("stopped server {id} (pid {pid})\n")
    } else {
        format!(
            "server {id} (pid {pid}) released the state directory but is still finishing open requests\n"
        )
    }
}
