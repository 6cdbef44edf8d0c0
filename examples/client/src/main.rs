//! `stead-run-and-wait JOB`: what a third-party program does with the stead client library
//! alone. It finds the state directory (`$STEAD_STATE_DIR` or the platform default),
//! starts a server with the installed `stead` (or `$STEAD_BIN`) when none serves, runs the
//! job now, waits for the run's final attempt (through its retries and a resume) and exits
//! as `stead run --wait` does: 0 only for a success, else the command's own code (128+N
//! for signal N), 1 for any other end (cancelled, interrupted, skipped).
//!
//! Its dependencies are `stead-client` and `stead-protocol`, nothing of the server: no C
//! compiler, no SQLite, no PostgreSQL, no HTTP stack (`cargo tree -p
//! stead-client-example` shows it).

use std::process::ExitCode;

use stead_client::{Client, installed_stead};

fn main() -> ExitCode {
    let Some(job) = std::env::args().nth(1) else {
        eprintln!("usage: stead-run-and-wait JOB");
        return ExitCode::from(2);
    };
    match run_and_wait(&job) {
        // An exit status is always within 0..=255.
        Ok(code) => u8::try_from(code).map_or(ExitCode::FAILURE, ExitCode::from),
        Err(e) => {
            eprintln!("stead-run-and-wait: {e}");
            ExitCode::from(69)
        }
    }
}

fn run_and_wait(job: &str) -> Result<i32, Box<dyn std::error::Error>> {
    let client = Client::for_state_dir(None)?;
    let stead = installed_stead()?;
    let mut conn = client.connect_or_start(&stead)?;
    let run = conn.run_now(job)?;
    println!("run {} of {job}: {}", run.id, run.status.as_str());
    // A restart meanwhile is no reason to stop waiting: the next server carries on.
    let last = conn.wait_final(run, || client.connect_or_start(&stead))?;
    println!("run {} of {job}: {}", last.run.id, last.run.status.as_str());
    Ok(last.exit_code())
}
