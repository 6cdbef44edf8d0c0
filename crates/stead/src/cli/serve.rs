//! `stead serve`: the server in the foreground.
//!
//! Clients start it as `stead --state-dir DIR serve --spawned`: detached, with stderr a
//! pipe back to the client. A spawned server writes its startup diagnostic to that pipe
//! and, once serving, points stderr at /dev/null so it never holds the client's pipe
//! open. Logs always go to `DIR/logs/server.log`; in the foreground, to stderr as well.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use anyhow::Context;
use stead_client::config::{Config, HttpConfig, checked_store_url, parse_listen};
use stead_client::paths::StatePaths;
use stead_core::clock;
use stead_core::locator::StoreLocator;
use stead_protocol::exit;
use stead_server::{self as server, Outcome, StopReason, World};
use tracing_subscriber::fmt::writer::MakeWriterExt;

use crate::server_log::{self, ServerLog};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Started by a client: report startup problems on stderr only, then detach from it
    #[arg(long, hide = true)]
    spawned: bool,
    /// Serve the HTTP API and dashboard on this loopback address (IP:PORT, or
    /// localhost:PORT; port 0 picks a free one) [default: `[http] listen` in config.toml]
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// UNSAFE: let --http listen on a non-loopback address. Anyone who can reach the port
    /// and learn the token (sent in clear text) can run and cancel your jobs
    #[arg(long, requires = "http")]
    http_allow_remote: bool,
    /// Keep the ledger in this PostgreSQL database (postgres://USER@HOST/DB), shared with
    /// the other hosts that name it [default: $STEAD_STORE_URL, else `[store] url` in
    /// config.toml, else the state directory's own SQLite file]
    #[arg(long, value_name = "URL")]
    store: Option<String>,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let paths = StatePaths::resolve(dir)?;
    let mut config = Config::load(&paths.config())?;
    let flagged_store = match &args.store {
        Some(url) => {
            let url = checked_store_url(url)?;
            // A server a client starts on demand reads only config.toml: without the
            // same URL there, it would open the state directory's own ledger instead.
            let differs = config.store_url.as_deref() != Some(url.as_str());
            config.store_url = Some(url);
            differs
        }
        None => false,
    };
    if let Some(listen) = &args.http {
        config.http = HttpConfig {
            idle_timeout: config.http.idle_timeout,
            ..HttpConfig::checked(parse_listen(listen)?, args.http_allow_remote)?
        };
    }
    init_logging(&paths, args.spawned)?;
    if flagged_store {
        tracing::warn!(
            "--store applies to this server only; set [store] url in {} (or STEAD_STORE_URL) so that a server started on demand uses the same ledger",
            paths.config().display()
        );
    }
    let machine_id =
        stead_sys::machine::machine_id().context("failed to read this machine's id")?;
    let ledger = StoreLocator::of(config.store_url.as_deref(), paths.ledger());
    let store = stead_store::open(&ledger, &machine_id, config.timings.lease)
        .inspect_err(|e| tracing::error!("{e}"))?;
    let world = World {
        paths: paths.clone(),
        config,
        store,
        ledger,
        clock: clock::system(),
        monitor_exe: std::env::current_exe().context("failed to find the steadd executable")?,
        machine_id,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    let outcome = runtime
        .block_on(server::run(world, stop_signal(), |_hello| {
            if args.spawned {
                detach_stderr();
            }
        }))
        .inspect_err(|e| tracing::error!("{e}"))?;
    match outcome {
        Outcome::Stopped(reason) => Ok(match reason {
            StopReason::Superseded(_) => exit::FAILURE,
            _ => exit::SUCCESS,
        }),
        Outcome::AlreadyServing { hello, .. } => {
            eprintln!(
                "stead: a server is already serving {} (pid {}, server {}); nothing to do",
                paths.dir().display(),
                hello.pid,
                hello.server_id
            );
            if args.http.is_some() {
                eprintln!(
                    "stead: --http applies to a server as it starts: run `stead stop` first, or set [http] listen in {} so every start serves it (`stead dashboard` starts the API on a free port meanwhile)",
                    paths.config().display()
                );
            }
            Ok(if args.spawned {
                exit::SUCCESS
            } else {
                exit::FAILURE
            })
        }
    }
}

async fn stop_signal() -> StopReason {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        // Without signal handlers the default action (exit) still applies.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => StopReason::Signal("SIGTERM"),
        _ = int.recv() => StopReason::Signal("SIGINT"),
    }
}

fn init_logging(paths: &StatePaths, spawned: bool) -> anyhow::Result<()> {
    let logs = paths.logs_dir();
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&logs)
        .with_context(|| format!("failed to create {}", logs.display()))?;
    let path = paths.server_log();
    let file = ServerLog::open(&path, server_log::ROTATE_BYTES)
        .with_context(|| format!("failed to open {}", path.display()))?;
    let filter = EnvFilter::try_from_env("STEAD_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let to_file = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_target(false)
        .with_writer(file);
    // A spawned server's stderr is the pipe its client reads until it serves: warnings
    // there (such as "waiting for a live lease") become the client's diagnostic.
    let to_stderr = tracing_subscriber::fmt::layer()
        .with_target(false)
        .with_writer(std::io::stderr.with_max_level(if spawned {
            tracing::Level::WARN
        } else {
            tracing::Level::TRACE
        }));
    let to_stderr = if spawned {
        to_stderr
            .without_time()
            .with_level(false)
            .with_ansi(false)
            .boxed()
    } else {
        // Under a service manager stderr is a journal or a log file: colour codes there
        // are noise.
        to_stderr
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .boxed()
    };
    tracing_subscriber::registry()
        .with(filter)
        .with(to_file)
        .with(to_stderr)
        .init();
    Ok(())
}

/// Points stderr at /dev/null: the client that spawned us reads our stderr only until
/// we serve, and must not wait on a pipe we would hold open for our whole life.
fn detach_stderr() {
    if let Ok(null) = fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stderr(&null);
    }
}
