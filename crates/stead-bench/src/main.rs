//! `stead-bench`: measures a release build of stead, side by side with pueue.
//!
//! Build stead in release mode first, then run the bench:
//!
//! ```text
//! cargo build --release
//! cargo run --release -p stead-bench -- foundation [--iterations N] [--stead PATH] [--pueue PATH] [--json]
//! ```
//!
//! Everything the bench starts lives under one fresh directory `/tmp/sb-PID-XXXX` and is
//! killed, with the directory removed, when the bench ends (see [`proc`]).

mod figures;
mod proc;
mod pueue;
mod report;
mod stead;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

/// Benchmarks of the stead binary.
#[derive(Debug, Parser)]
#[command(name = "stead-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Bench,
}

#[derive(Debug, Subcommand)]
enum Bench {
    /// Round trip, cold start, recovery after SIGKILL and idle cost of the server
    Foundation(Args),
    /// Cleans up after a bench that died: reads its directory from stdin, waits for EOF
    #[command(hide = true)]
    Watchdog,
}

#[derive(Debug, clap::Args)]
struct Args {
    /// Repetitions of every timed figure [default: 200 round trips, 30 cold starts,
    /// 30 recoveries]
    #[arg(long, value_name = "N")]
    iterations: Option<usize>,
    /// The stead binary [default: `stead` next to this executable, i.e. target/release]
    #[arg(long, value_name = "PATH")]
    stead: Option<PathBuf>,
    /// The pueue client; pueued is expected next to it [default: found on PATH or in
    /// ~/.cargo/bin]
    #[arg(long, value_name = "PATH")]
    pueue: Option<PathBuf>,
    /// Print the figures as one JSON object instead of a table
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Bench::Foundation(args) => match foundation(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("stead-bench: {e:#}");
                ExitCode::FAILURE
            }
        },
        Bench::Watchdog => {
            proc::watchdog_main();
            ExitCode::SUCCESS
        }
    }
}

fn foundation(args: Args) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let stead_exe = match args.stead {
        Some(path) => path,
        None => exe.with_file_name("stead"),
    };
    if !stead_exe.is_file() {
        bail!(
            "no stead binary at {}: run `cargo build --release -p stead` first, or pass --stead PATH",
            stead_exe.display()
        );
    }
    let [warm_n, cold_n, recovery_n] = match args.iterations {
        Some(n) => [n; 3],
        None => [200, 30, 30],
    };
    let pueue_bins = pueue::find(args.pueue.as_deref());
    if pueue_bins.is_none() {
        eprintln!("pueue: not found (cargo install pueue)");
    }

    let mut watchdog = Command::new(&exe);
    watchdog.arg("watchdog");
    let guard = proc::Guard::new(watchdog)?;
    let stead = stead::Stead::new(stead_exe, guard.root());
    let version = stead.status(&stead.dir("v"), &[])?.version;
    stead.stop(&stead.dir("v"))?;
    let pueue = pueue_bins
        .map(|bins| pueue::Pueue::start(bins, &guard.root().join("pueue")))
        .transpose()
        .context("starting pueued")?;

    let progress = |what: &str| eprintln!("stead-bench: {what}");
    progress("idle server");
    let (idle, pueue_idle) = figures::idle(&stead, pueue.as_ref())?;
    progress("warm round trip");
    let warm = figures::warm_stead(&stead, warm_n)?;
    let pueue_warm = pueue
        .as_ref()
        .map(|p| figures::warm_pueue(p, warm_n))
        .transpose()?;
    progress("cold start");
    let cold = figures::cold(&stead, cold_n)?;
    progress("recovery after SIGKILL");
    let recovery = figures::recovery(&stead, recovery_n)?;

    let report = report::Report {
        stead: stead.exe().display().to_string(),
        stead_version: version,
        pueue_version: pueue.as_ref().map(|p| p.version.clone()),
        warm,
        pueue_warm,
        cold,
        recovery,
        idle,
        pueue_idle,
    };
    if let Some(p) = pueue {
        p.stop();
    }
    drop(guard);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        print!("{}", report.table());
    }
    Ok(())
}
