//! `stead-bench`: measures a release build of stead, side by side with pueue.
//!
//! `scripts/bench` builds stead in release mode and this package's two programs, then
//! runs the bench:
//!
//! ```text
//! scripts/bench foundation [--iterations N] [--stead PATH] [--pueue PATH] [--json]
//! scripts/bench runs [--iterations N] [--submissions N] [...]
//! scripts/bench recovery [--iterations N] [...]
//! scripts/bench web [--iterations N] [--json]
//! scripts/bench cluster [--iterations N] [--submissions N] [--json]
//! scripts/bench hostile [--iterations N] [--json]
//! scripts/bench guard [--iterations N] [--json]
//! scripts/bench retention [--iterations N] [--json]
//! scripts/bench notify [--iterations N] [--json]
//! scripts/bench sleep [--iterations N] [--json]
//! scripts/bench checkpoints [--iterations N] [--json]
//! scripts/bench floor [--iterations N] [--submissions N] [--clean-build] [--json]
//! scripts/bench all [...]
//! ```
//!
//! `web` drives the dashboard in a real browser when `scripts/setup-browser` has been run
//! (chromium at /usr/bin/chromium, node, web-tests/node_modules); without it, those
//! figures say they were skipped.
//!
//! `cluster` (and so `all`) needs a PostgreSQL server where it may create databases:
//! `STEAD_TEST_PG_URL`, default `postgres://postgres@127.0.0.1:5432/test` (see [`pg`]).
//!
//! Everything the bench starts lives under one fresh directory `/tmp/sb-PID-XXXX` and is
//! killed, with the directory removed and its databases dropped, when the bench ends
//! (see [`proc`]).

mod checkpoints;
mod cluster;
mod figures;
mod floor;
mod guard;
mod hostile;
mod notify;
mod pg;
mod probe;
mod proc;
mod pueue;
mod raw_ledger;
mod recovery;
mod report;
mod retention;
mod runs;
mod sleep;
mod stead;
mod web;
mod wide;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

use crate::raw_ledger::Backend;

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
    /// Run throughput, fire-to-exec latency, `stead runs` over a large ledger, memory
    Runs(Args),
    /// Resume of a cut run after a restart, cold start and reconcile over a large ledger
    /// with runs to settle, and fire-to-exec latency again
    Recovery(Args),
    /// Run end to the event stream and to the dashboard in a real browser, the API over a
    /// large ledger beside the CLI, the server's memory with the dashboard open
    Web(Args),
    /// Fire-to-exec latency and run throughput on a one-host PostgreSQL ledger beside
    /// SQLite, then three hosts on one PostgreSQL ledger: leader failover after SIGKILL,
    /// and a dead host's run resumed on another host
    Cluster(Args),
    /// What hostile clients cost: memory with readers stalled on a log, `stead status`
    /// with the API saturated, and the sweep of escaped descendants at a run's end
    Hostile(Args),
    /// What reading a command costs the guard: verdicts per second, a megabyte command,
    /// deep nesting, and `stead guard --hook` end to end
    Guard(Args),
    /// The ledger's size and `stead runs` with 1,000,000 runs, before and after a prune to
    /// 100,000; the prune's throughput and the longest it held the ledger
    Retention(Args),
    /// How soon a failure's notification reaches a local receiver, and what the outbox
    /// adds to a run's end
    Notify(Args),
    /// What the sleep watch costs a heartbeat: three clocks read and judged against the
    /// last reading
    Sleep(Args),
    /// `stead checkpoint set` and `stead step NAME -- true` as whole processes beside
    /// `stead status --json`, and 1,000 steps of one run
    Checkpoints(Args),
    /// A run start against the machine's floor, and the figures as a user measures them
    /// from outside: fire -> exec on SQLite and PostgreSQL, 1,000 jobs at one minute beside
    /// cron, runs through one HTTP connection to a fresh and a warm server, idle memory
    /// (RSS, and PSS of every process) and a warm status beside pueue, the programs' size
    /// beside pueue's, and with --clean-build a clean release build's time
    Floor(Args),
    /// `foundation`, then `runs`, then `recovery`, then `web`, then `hostile`, then
    /// `guard`, then `cluster`
    All(Args),
    /// Cleans up after a bench that died: reads its directory from stdin, waits for EOF
    #[command(hide = true)]
    Watchdog,
    /// What the resume figure's first attempt runs: sleeps; DIR is for the cleanup
    #[command(hide = true)]
    Hold { dir: PathBuf },
    /// What the sweep figure runs: N timed sweeps in a process without children
    #[command(hide = true)]
    Sweep { n: usize },
}

#[derive(Debug, clap::Args)]
struct Args {
    /// Repetitions of every timed figure [default: foundation: 200 round trips, 30 cold
    /// starts, 30 recoveries; runs: 30 fires, 50 listings of each kind; recovery: 15
    /// resumes, 5 cold starts of each ledger, 30 fires; web: 50 runs through the event
    /// stream, 30 through the browser, 200 API requests and CLI calls of each kind;
    /// cluster: 20 fires on each ledger, 5 failovers, 5 host deaths]
    #[arg(long, value_name = "N")]
    iterations: Option<usize>,
    /// On-demand runs submitted by the throughput figure, on each side [default: runs:
    /// 1000; cluster: 300]
    #[arg(long, value_name = "N")]
    submissions: Option<u64>,
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
    /// `floor`: time a clean `cargo build --release` of this tree too (minutes)
    #[arg(long)]
    clean_build: bool,
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Bench::Foundation(args) => Setup::new(&args).and_then(|setup| {
            let report = foundation(&setup, &args)?;
            print(args.json, report.json(), || report.table())
        }),
        Bench::Runs(args) => Setup::new(&args).and_then(|setup| {
            let report = runs(&setup, &args)?;
            print(args.json, report.json(), || report.table())
        }),
        Bench::Recovery(args) => Setup::new(&args).and_then(|setup| {
            let report = recovery(&setup, &args)?;
            print(args.json, report.json(), || report.table())
        }),
        Bench::Web(args) => Setup::new(&args).and_then(|setup| {
            let report = web(&setup, &args)?;
            print(args.json, report.json(), || report.table())
        }),
        Bench::Cluster(args) => Setup::new(&args).and_then(|setup| {
            let report = cluster(&setup, &args)?;
            print(args.json, report.json(), || report.table())
        }),
        Bench::Hostile(args) => Setup::new(&args).and_then(|setup| {
            let report = hostile(&setup, &args)?;
            print(args.json, report.json(), || report.table())
        }),
        Bench::Guard(args) => Setup::new(&args).and_then(|setup| {
            let report = guard(&setup, &args)?;
            print(args.json, report.json(), || report.table())
        }),
        Bench::Retention(args) => Setup::new(&args).and_then(|setup| {
            let guard = setup.guard()?;
            let stead = stead::Stead::new(setup.stead.clone(), guard.root());
            let report = retention::run(&stead, args.iterations.unwrap_or(50))?;
            drop(guard);
            print(args.json, report.json(), || report.table())
        }),
        Bench::Notify(args) => Setup::new(&args).and_then(|setup| {
            let guard = setup.guard()?;
            let stead = stead::Stead::new(setup.stead.clone(), guard.root());
            let report = notify::run(&stead, guard.root(), args.iterations.unwrap_or(50))?;
            drop(guard);
            print(args.json, report.json(), || report.table())
        }),
        Bench::Sleep(args) => sleep::run(args.iterations.unwrap_or(200))
            .and_then(|report| print(args.json, report.json(), || report.table())),
        Bench::Checkpoints(args) => Setup::new(&args).and_then(|setup| {
            let guard = setup.guard()?;
            let stead = stead::Stead::new(setup.stead.clone(), guard.root());
            let report = checkpoints::run(&stead, args.iterations.unwrap_or(200))?;
            drop(guard);
            print(args.json, report.json(), || report.table())
        }),
        Bench::Floor(args) => Setup::new(&args).and_then(|setup| {
            let report = floor(&setup, &args)?;
            print(args.json, report.json(), || report.table())
        }),
        Bench::All(args) => Setup::new(&args).and_then(|setup| {
            // The last suite needs PostgreSQL: better to know before the others run.
            pg::server_version(&pg::admin_url())?;
            let foundation = foundation(&setup, &args)?;
            let runs = runs(&setup, &args)?;
            let recovery = recovery(&setup, &args)?;
            let web = web(&setup, &args)?;
            let hostile = hostile(&setup, &args)?;
            let guard = guard(&setup, &args)?;
            let cluster = cluster(&setup, &args)?;
            let json = serde_json::json!({
                "foundation": foundation.json(),
                "runs": runs.json(),
                "recovery": recovery.json(),
                "web": web.json(),
                "hostile": hostile.json(),
                "guard": guard.json(),
                "cluster": cluster.json(),
            });
            print(args.json, json, || {
                format!(
                    "{}\n{}\n{}\n{}\n{}\n{}\n{}",
                    foundation.table(),
                    runs.table(),
                    recovery.table(),
                    web.table(),
                    hostile.table(),
                    guard.table(),
                    cluster.table()
                )
            })
        }),
        Bench::Watchdog => {
            proc::watchdog_main();
            Ok(())
        }
        Bench::Hold { dir: _ } => {
            recovery::hold();
            Ok(())
        }
        Bench::Sweep { n } => hostile::sweep_probe(n),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stead-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn print(
    json: bool,
    value: serde_json::Value,
    table: impl FnOnce() -> String,
) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", table());
    }
    Ok(())
}

/// The executables a bench uses.
struct Setup {
    /// This executable: the watchdog and the helpers of some figures.
    exe: PathBuf,
    /// `stead-probe`, beside it: what the latency figures' jobs run.
    probe: PathBuf,
    stead: PathBuf,
    pueue: Option<pueue::Binaries>,
}

impl Setup {
    fn new(args: &Args) -> anyhow::Result<Self> {
        let exe = std::env::current_exe()?;
        let stead = match &args.stead {
            Some(path) => path.clone(),
            None => exe.with_file_name("stead"),
        };
        if !stead.is_file() {
            bail!(
                "no stead binary at {}: run `cargo build --release -p stead` first, or pass --stead PATH",
                stead.display()
            );
        }
        let probe = exe.with_file_name("stead-probe");
        if !probe.is_file() {
            bail!(
                "no stead-probe at {}: `scripts/bench` builds it (`cargo build --release -p stead-bench`)",
                probe.display()
            );
        }
        let pueue = pueue::find(args.pueue.as_deref());
        if pueue.is_none() {
            eprintln!("pueue: not found (cargo install pueue)");
        }
        Ok(Self {
            exe,
            probe,
            stead,
            pueue,
        })
    }

    /// A fresh temporary directory with its cleanup guard and watchdog.
    fn guard(&self) -> anyhow::Result<proc::Guard> {
        let mut watchdog = Command::new(&self.exe);
        watchdog.arg("watchdog");
        proc::Guard::new(watchdog)
    }

    /// The stead version, from a server started and stopped in `stead`'s directory.
    fn version(stead: &stead::Stead) -> anyhow::Result<String> {
        let version = stead.status(&stead.dir("v"), &[])?.version;
        stead.stop(&stead.dir("v"))?;
        Ok(version)
    }

    fn start_pueue(&self, guard: &proc::Guard) -> anyhow::Result<Option<pueue::Pueue>> {
        self.pueue
            .clone()
            .map(|bins| pueue::Pueue::start(bins, &guard.root().join("pueue")))
            .transpose()
            .context("starting pueued")
    }
}

fn progress(what: &str) {
    eprintln!("stead-bench: {what}");
}

fn floor(setup: &Setup, args: &Args) -> anyhow::Result<floor::FloorReport> {
    let mut guard = setup.guard()?;
    let stead = stead::Stead::new(setup.stead.clone(), guard.root());
    let pueue = setup.start_pueue(&guard)?;
    let pg_database = match floor::postgres_here() {
        true => Some(guard.database("floor")?),
        false => {
            eprintln!("PostgreSQL: no server at STEAD_TEST_PG_URL; its figure is skipped");
            None
        }
    };
    let root = guard.root().to_path_buf();
    let report = floor::run(floor::Inputs {
        stead: &stead,
        pueue: pueue.as_ref(),
        probe: &setup.probe,
        root: &root,
        pg_database,
        fires: args.iterations.unwrap_or(30),
        posts: args.submissions.map_or(2000, |n| n as usize),
        warm: 200,
        clean_build: args.clean_build,
    })?;
    if let Some(p) = pueue {
        p.stop();
    }
    drop(guard);
    Ok(report)
}

fn foundation(setup: &Setup, args: &Args) -> anyhow::Result<report::Report> {
    let [warm_n, cold_n, recovery_n] = match args.iterations {
        Some(n) => [n; 3],
        None => [200, 30, 30],
    };
    let guard = setup.guard()?;
    let stead = stead::Stead::new(setup.stead.clone(), guard.root());
    let version = Setup::version(&stead)?;
    let pueue = setup.start_pueue(&guard)?;

    progress("idle server");
    let (idle, pueue_idle) = figures::idle(&stead, pueue.as_ref())?;
    progress("warm round trip");
    let (warm, pueue_warm) = figures::warm(&stead, pueue.as_ref(), warm_n)?;
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
    Ok(report)
}

fn runs(setup: &Setup, args: &Args) -> anyhow::Result<report::RunsReport> {
    let [fires, listings] = match args.iterations {
        Some(n) => [n; 2],
        None => [30, 50],
    };
    let n = args.submissions.unwrap_or(1000);
    let guard = setup.guard()?;
    let stead = stead::Stead::new(setup.stead.clone(), guard.root());
    let version = Setup::version(&stead)?;
    let pueue = setup.start_pueue(&guard)?;

    progress(&format!("throughput: {n} runs of `true`"));
    let throughput = runs::throughput_stead(&stead, Backend::Sqlite, n)?;
    let pueue_throughput = pueue
        .as_ref()
        .map(|p| runs::throughput_pueue(p, n))
        .transpose()?;
    progress(&format!(
        "fire-to-exec latency: {fires} fires, one a second"
    ));
    let latency = runs::latency(
        &stead,
        Backend::Sqlite,
        &setup.probe,
        &guard.root().join("probe"),
        fires,
    )?;
    progress(&format!("stead runs with {} runs", runs::LEDGER_ROWS));
    let listing = runs::listing(&stead, listings)?;
    progress(&format!(
        "memory with {} jobs, and a monitor",
        runs::IDLE_JOBS
    ));
    let memory = runs::memory(&stead, guard.root())?;

    let report = report::RunsReport {
        stead: stead.exe().display().to_string(),
        stead_version: version,
        pueue_version: pueue.as_ref().map(|p| p.version.clone()),
        throughput,
        pueue_throughput,
        fires,
        latency,
        listing,
        memory,
    };
    if let Some(p) = pueue {
        p.stop();
    }
    drop(guard);
    Ok(report)
}

fn recovery(setup: &Setup, args: &Args) -> anyhow::Result<report::RecoveryReport> {
    let [resumes, cold, fires] = match args.iterations {
        Some(n) => [n; 3],
        None => [15, 5, 30],
    };
    let guard = setup.guard()?;
    let stead = stead::Stead::new(setup.stead.clone(), guard.root());
    let version = Setup::version(&stead)?;

    progress(&format!(
        "resume after stop --cancel-runs: {resumes} restarts"
    ));
    let resume = recovery::resume(&stead, &setup.exe, resumes)?;
    progress(&format!(
        "cold start and reconcile with {} runs: {cold} starts of each ledger",
        runs::LEDGER_ROWS
    ));
    let reconcile = recovery::reconcile(&stead, cold)?;
    progress(&format!(
        "fire-to-exec latency: {fires} fires, one a second"
    ));
    let latency = runs::latency(
        &stead,
        Backend::Sqlite,
        &setup.probe,
        &guard.root().join("probe"),
        fires,
    )?;

    let report = report::RecoveryReport {
        stead: stead.exe().display().to_string(),
        stead_version: version,
        resume,
        reconcile,
        fires,
        latency,
    };
    drop(guard);
    Ok(report)
}

fn hostile(setup: &Setup, args: &Args) -> anyhow::Result<hostile::HostileReport> {
    let [statuses, sweeps] = match args.iterations {
        Some(n) => [n; 2],
        None => [50, 500],
    };
    let guard = setup.guard()?;
    let stead = stead::Stead::new(setup.stead.clone(), guard.root());
    let version = Setup::version(&stead)?;
    progress("server memory with 20 clients stalled on a 32 MiB log");
    let stalled_rss = hostile::stalled_readers(&stead)?;
    progress("`stead status` with 400 idle TCP connections at a 256-descriptor limit");
    let (saturated_status, saturated_open, saturated_cpu, saturated_log_bytes) =
        hostile::saturated(&stead, statuses)?;
    progress(&format!("{sweeps} sweeps for escaped descendants"));
    let (sweep, processes) = hostile::sweep(&setup.exe, sweeps)?;
    let report = hostile::HostileReport {
        stead: stead.exe().display().to_string(),
        stead_version: version,
        stalled_rss,
        saturated_status,
        saturated_open,
        saturated_cpu,
        saturated_log_bytes,
        sweep,
        processes,
    };
    drop(guard);
    Ok(report)
}

fn guard(setup: &Setup, args: &Args) -> anyhow::Result<guard::GuardReport> {
    let [rounds, megabytes, deep, hooks] = match args.iterations {
        Some(n) => [n; 4],
        None => [2000, 5, 20, 50],
    };
    let dirs = setup.guard()?;
    let stead = stead::Stead::new(setup.stead.clone(), dirs.root());
    let version = Setup::version(&stead)?;
    progress(&format!(
        "{rounds} rounds of verdicts on typical agent commands"
    ));
    let verdict = guard::verdicts(rounds)?;
    progress("1 MiB commands of four shapes, and a quarter of each");
    let megabyte = guard::megabyte(megabytes)?;
    progress("refusing 1,500 nested groups");
    let deep = guard::deep(deep)?;
    progress(&format!("{hooks} calls of `stead guard --hook`"));
    let hook = guard::hook(&stead, hooks)?;
    let report = guard::GuardReport {
        stead: stead.exe().display().to_string(),
        stead_version: version,
        verdict,
        megabyte,
        deep,
        hook,
    };
    drop(dirs);
    Ok(report)
}

fn web(setup: &Setup, args: &Args) -> anyhow::Result<report::WebReport> {
    let [streamed, browsed, requests] = match args.iterations {
        Some(n) => [n; 3],
        None => [50, 30, 200],
    };
    let guard = setup.guard()?;
    let stead = stead::Stead::new(setup.stead.clone(), guard.root());
    let version = Setup::version(&stead)?;

    progress(&format!(
        "run end -> event stream: {streamed} runs of `true`, one after another"
    ));
    let stream = web::stream(&stead, streamed)?;
    progress(&format!(
        "run end -> dashboard in chromium: {browsed} runs of `true`"
    ));
    let browser = web::browser(&stead, guard.root(), browsed)?;
    if let web::Browser::Skipped(reason) = &browser {
        progress(&format!("run end -> dashboard: skipped: {reason}"));
    }
    progress(&format!(
        "GET /api/runs with {} runs: {requests} requests of each kind, and as many `stead runs`",
        runs::LEDGER_ROWS
    ));
    let listing = web::listing(&stead, requests)?;
    progress(&format!(
        "server memory: HTTP off, on, then the dashboard and {} event-stream clients over {} runs",
        web::MEMORY_CLIENTS,
        web::MEMORY_RUNS
    ));
    let memory = web::memory(&stead, guard.root())?;

    let report = report::WebReport {
        stead: stead.exe().display().to_string(),
        stead_version: version,
        stream,
        browser,
        listing,
        memory,
    };
    drop(guard);
    Ok(report)
}

fn cluster(setup: &Setup, args: &Args) -> anyhow::Result<report::ClusterReport> {
    let [fires, failovers, deaths] = match args.iterations {
        Some(n) => [n; 3],
        None => [20, 5, 5],
    };
    let n = args.submissions.unwrap_or(300);
    let postgres_version = pg::server_version(&pg::admin_url())?;
    let mut guard = setup.guard()?;
    let stead = stead::Stead::new(setup.stead.clone(), guard.root());
    let root = guard.root().to_path_buf();
    let version = Setup::version(&stead)?;
    let latency_db = guard.database("latency")?;
    let throughput_db = guard.database("throughput")?;
    let cluster_db = guard.database("cluster")?;
    let (sqlite, on_pg) = (Backend::Sqlite, Backend::Postgres(&latency_db));
    let probe = |backend: Backend| root.join(backend.dir_name("probe"));

    progress(&format!(
        "fire-to-exec latency, one host: {fires} fires on SQLite, then on PostgreSQL, one a second"
    ));
    let latency = [
        runs::latency(&stead, sqlite, &setup.probe, &probe(sqlite), fires)?,
        runs::latency(&stead, on_pg, &setup.probe, &probe(on_pg), fires)?,
    ];
    progress(&format!(
        "throughput, one host: {n} runs of `true` on SQLite, then on PostgreSQL"
    ));
    let throughput = [
        runs::throughput_stead(&stead, sqlite, n)?,
        runs::throughput_stead(&stead, Backend::Postgres(&throughput_db), n)?,
    ];
    progress("100 runs in flight on one host: what they hold of the ledger");
    let wide_db = guard.database("wide")?;
    let wide = [
        wide::wide(&stead, sqlite, 100)?,
        wide::wide(&stead, Backend::Postgres(&wide_db), 100)?,
    ];

    progress(&format!(
        "cluster: {} hosts on one PostgreSQL ledger, lease {} ms, heartbeat {} ms",
        cluster::HOSTS.len(),
        cluster::LEASE_MS,
        cluster::HEARTBEAT_MS
    ));
    let hosts = cluster::Cluster::start(&stead, &cluster_db)?;
    progress(&format!("leader failover after SIGKILL: {failovers} times"));
    let failover = cluster::failover(&hosts, &cluster_db, failovers)?;
    progress(&format!(
        "host death -> its run resumed on another host: {deaths} times"
    ));
    let death = cluster::death(&hosts, &cluster_db, &setup.exe, &root, deaths)?;
    hosts.stop()?;

    let report = report::ClusterReport {
        stead: stead.exe().display().to_string(),
        stead_version: version,
        postgres_version,
        fires,
        latency,
        throughput,
        wide,
        failover,
        death,
    };
    drop(guard);
    Ok(report)
}
