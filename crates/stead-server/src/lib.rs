//! The daemon: `stead serve`, one per state directory.
//!
//! [`run`] receives its world (state paths, config, store, clock) and a stop future; a
//! test starts a whole server in its own process in one line with
//! `testing::TestServer` (feature `testing`). The sequence:
//!
//! 1. [`startup`]: take the lock file (`system::lock`), claim the epoch lease, bind the
//!    socket;
//! 2. serve: the request path (`request`: accept connections, answer each request with
//!    its method's handler over the ledger), the background tasks (`tasks`: renew the
//!    lease, fire jobs, start waiting runs, resume cut runs, prune, deliver
//!    notifications, and on a shared ledger take part in the cluster and ship run logs),
//!    and the runs in the server's hands (`runs`: admit, start and watch monitors,
//!    cancel, reconcile at boot);
//! 3. `shutdown`: release everything a successor needs *first* (socket, lease, lock
//!    file), then drain. A server frozen or slow during its drain blocks nobody.
//!
//! What every part shares is in `shared` (who the server is, what wakes its tasks, the
//! runs in its hands); what it asks of the system around it, beyond the platform layer,
//! is in [`system`]. Where a new method goes is told in `docs/architecture.md`.

mod request;
mod runs;
mod shared;
mod shutdown;
pub mod startup;
pub mod system;
mod tasks;
#[cfg(feature = "testing")]
pub mod testing;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use stead_client::config::Config;
use stead_client::paths::StatePaths;
use stead_core::clock::{LedgerClock, SharedClock};
use stead_core::locator::StoreLocator;
use stead_protocol::Hello;
use stead_store::Store;
use tokio_util::task::TaskTracker;
use tracing::{error, info, warn};

use crate::system::lock::LockRecord;
use shared::Shared;
pub use shared::StopReason;
use startup::{StartError, Startup};

/// The version of this build, reported in hello lines and `stead status`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Everything a server needs from the outside.
#[derive(Debug, Clone)]
pub struct World {
    pub paths: StatePaths,
    pub config: Config,
    pub store: Arc<dyn Store>,
    /// Where `store` lives, for the monitors, which open it themselves.
    pub ledger: StoreLocator,
    pub clock: SharedClock,
    /// The `stead` executable whose hidden `monitor` subcommand watches each run.
    pub monitor_exe: PathBuf,
    /// This host's id (see [`stead_sys::machine`]); every run row carries it.
    pub machine_id: String,
}

/// How a server run ended.
#[derive(Debug)]
pub enum Outcome {
    /// This process served and has stopped.
    Stopped(StopReason),
    /// Another live server is serving this state directory.
    AlreadyServing { holder: LockRecord, hello: Hello },
}

/// Becomes the server for `world.paths` and serves until `stop` resolves, a client asks
/// to stop, or the lease is superseded. `on_ready` runs once the socket accepts
/// connections, with the hello every client will see.
pub async fn run(
    mut world: World,
    stop: impl Future<Output = StopReason>,
    on_ready: impl FnOnce(&Hello),
) -> Result<Outcome, StartError> {
    let descriptors = system::fdlimit::raise();
    // On a shared ledger every host reads time as the database's clock has it.
    let ledger_clock = world
        .store
        .is_shared()
        .then(|| LedgerClock::new(world.clock.clone()));
    if let Some(clock) = &ledger_clock {
        world.clock = clock.clone();
    }
    let server_id = uuid::Uuid::now_v7().to_string();
    let started = {
        let world = world.clone();
        let server_id = server_id.clone();
        tokio::task::spawn_blocking(move || {
            startup::start(
                &world.paths,
                &world.config,
                &world.store,
                &world.clock,
                &server_id,
            )
        })
        .await
        .expect("startup does not panic")?
    };
    let started = match started {
        Startup::Started(started) => *started,
        Startup::AlreadyServing { holder, hello } => {
            return Ok(Outcome::AlreadyServing { holder, hello });
        }
    };
    let socket_path = world.paths.socket().to_path_buf();
    let bind_err = |source| StartError::Bind {
        path: socket_path.clone(),
        source,
    };
    started.listener.set_nonblocking(true).map_err(bind_err)?;
    let mut listener = tokio::net::UnixListener::from_std(started.listener).map_err(bind_err)?;
    #[cfg(feature = "http")]
    let web = request::web::HttpState::new(Some(request::http::start_on_loopback));
    #[cfg(not(feature = "http"))]
    let web = request::web::HttpState::new(None);
    let shared = Arc::new(Shared::new(
        world,
        server_id,
        started.held,
        web,
        ledger_clock,
    ));
    tasks::heartbeat::read_ledger_clock(&shared).await;
    // Startup binds a configured address only in a build that serves the API.
    #[cfg(feature = "http")]
    if let Some((listener, token)) = started.http {
        let allow_remote = shared.world.config.http.allow_remote;
        if let Err(e) = request::http::serve(&shared, listener, token, allow_remote) {
            error!(cause = %e, "failed to serve the HTTP API");
        }
    }
    info!(
        server_id = %shared.me.server_id,
        pid = shared.me.pid,
        descriptors,
        epoch = shared.epoch(),
        socket = %shared.world.paths.socket().display(),
        "serving"
    );
    {
        let world = shared.world.clone();
        let set_aside =
            tokio::task::spawn_blocking(move || runs::logs::set_aside_for_a_fresh_ledger(&world))
                .await;
        if let Ok(Err(e)) = set_aside {
            warn!(cause = %e, "failed to read the ledger for its runs' logs");
        }
    }
    runs::reconcile(&shared).await;
    tasks::cluster::start(&shared);
    on_ready(&shared.hello());
    // Once the background tasks below have made their first pass, what the start
    // touched is let go of. (The spawner of monitors is started by the first run, or
    // ahead of the first fire: an idle server holds no process but its own.)
    let settling = shared.clone();
    tokio::spawn(async move {
        let passes = settling
            .first_passes
            .acquire_many(system::resident::FIRST_PASSES);
        // A scheduler that does not lead (a shared ledger) makes no pass: not waited for.
        let _ = tokio::time::timeout(system::resident::SETTLE_MAX, passes).await;
        tokio::task::spawn_blocking(system::resident::let_go_of_start);
    });

    let tracker = TaskTracker::new();
    let heartbeat = tokio::spawn(tasks::heartbeat::run(shared.clone()));
    let scheduler = tokio::spawn(tasks::scheduler::run(shared.clone()));
    let resumer = tokio::spawn(tasks::resume::run(shared.clone()));
    let pruner = tokio::spawn(tasks::retention::run(shared.clone()));
    let starter = tokio::spawn(tasks::starter::run(shared.clone()));
    let notifier = tokio::spawn(tasks::notify::run(shared.clone()));
    tokio::pin!(stop);
    let mut accept_errors = request::accept::AcceptErrors::new("accept failed on the socket");
    loop {
        tokio::select! {
            biased;
            () = shared.stop.cancelled() => break,
            reason = &mut stop => {
                shared.begin_stop(reason);
                break;
            }
            () = shared.wake.rebind.notified() => {
                match startup::bind(&shared.world.paths).and_then(|(std, inode)| {
                    std.set_nonblocking(true).map_err(&bind_err)?;
                    let fresh = tokio::net::UnixListener::from_std(std).map_err(bind_err)?;
                    Ok((fresh, inode))
                }) {
                    Ok((fresh, inode)) => {
                        listener = fresh;
                        shared.set_socket_inode(inode);
                        warn!(socket = %shared.world.paths.socket().display(), "the socket file had been removed; bound a new one");
                    }
                    Err(e) => error!(cause = %e, "failed to re-create the removed socket file"),
                }
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    accept_errors.accepted();
                    tracker.spawn(request::connection::serve(shared.clone(), stream));
                }
                Err(e) => {
                    // Out of descriptors, most likely: serve the connections there are,
                    // and wait rather than spin on a listener that stays readable.
                    let pause = accept_errors.failed(&e);
                    tokio::select! {
                        () = shared.stop.cancelled() => break,
                        () = tokio::time::sleep(pause) => {}
                    }
                }
            },
        }
    }
    drop(listener);
    scheduler.abort();
    resumer.abort();
    pruner.abort();
    starter.abort();
    notifier.abort();
    let reason = shutdown::run(&shared, &tracker).await;
    heartbeat.abort();
    Ok(Outcome::Stopped(reason))
}
