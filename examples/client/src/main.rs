//! `stead-run-and-wait JOB`: what a third-party program does with the stead client library
//! alone. It finds the state directory (`$STEAD_STATE_DIR` or the platform default),
//! starts a server with the installed `stead` (or `$STEAD_BIN`) when none serves, runs the
//! job now, waits for the run to end and exits with the run's exit code.
//!
//! Its dependencies are `stead-client` and `stead-protocol`, nothing of the server: no C
//! compiler, no SQLite, no PostgreSQL, no HTTP stack (`cargo tree -p
//! stead-client-example` shows it).

use std::process::ExitCode;
use std::time::Duration;

use stead_client::{Client, installed_stead};
use stead_protocol::RunStatus;

fn main() -> ExitCode {
    let Some(job) = std::env::args().nth(1) else {
        eprintln!("usage: stead-run-and-wait JOB");
        return ExitCode::from(2);
    };
    match run_and_wait(&job) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("stead-run-and-wait: {e}");
            ExitCode::from(69)
        }
    }
}

fn run_and_wait(job: &str) -> Result<u8, Box<dyn std::error::Error>> {
    let client = Client::for_state_dir(None)?;
    let mut conn = client.connect_or_start(&installed_stead()?)?;
    let mut run = conn.run_now(job)?;
    println!("run {} of {job}: {}", run.id, run.status.as_str());
    while !run.status.is_terminal() {
        // The server holds the call until the run ends or the timeout passes.
        run = conn.run_wait(run.id, Some(Duration::from_secs(60)))?;
    }
    println!("run {} of {job}: {}", run.id, run.status.as_str());
    Ok(match (run.status, run.exit_code) {
        (RunStatus::Succeeded, _) => 0,
        (_, Some(code)) => u8::try_from(code).unwrap_or(1),
        _ => 1,
    })
}
