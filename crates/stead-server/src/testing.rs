//! A whole server in the test's own process, on a wall clock the test moves: what the
//! scheduler and resumer tests start in one line instead of building a world by hand.
//!
//! ```no_run
//! # async fn demo(dir: &std::path::Path, stead: &std::path::Path) {
//! use stead_server::testing::TestServer;
//! let server = TestServer::start(dir, stead, "2026-11-30T10:00:00Z".parse().unwrap()).await;
//! server.clock.set("2026-11-30T10:45:00Z".parse().unwrap()); // a wall-clock jump
//! server.stop().await;
//! # }
//! ```
//!
//! The server runs on the test's runtime with its own SQLite ledger in `dir`; runs are
//! real processes (`monitor_exe` is the `steadd` binary whose hidden `monitor` subcommand
//! watches each run). The server is stopped when the `TestServer` is stopped or dropped,
//! so a failing test leaves no server behind.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use stead_client::config::Config;
use stead_client::paths::StatePaths;
use stead_client::{ClientError, Connection};
use stead_core::clock::ManualClock;
use stead_core::locator::StoreLocator;
use stead_protocol::Method;
use stead_store::Store;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::startup::StartError;
use crate::{Outcome, StopReason, World};

/// The machine id a test server's runs carry.
pub const TEST_MACHINE: &str = "test-machine";

/// A server serving `paths` until stopped.
pub struct TestServer {
    pub paths: StatePaths,
    /// The server's wall clock: moving it wakes every sleeper, as a jump would.
    pub clock: Arc<ManualClock>,
    /// The ledger, for a test to read what the server wrote.
    pub store: Arc<dyn Store>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<Outcome, StartError>>>,
}

impl TestServer {
    /// Starts a server for the state directory `dir` (created if needed) with the default
    /// configuration, its wall clock at `now`, and returns once it serves.
    pub async fn start(dir: &Path, monitor_exe: &Path, now: Timestamp) -> Self {
        Self::start_with(dir, monitor_exe, now, Config::default()).await
    }

    /// The same with a configuration of the test's own (shorter timings, say).
    pub async fn start_with(
        dir: &Path,
        monitor_exe: &Path,
        now: Timestamp,
        config: Config,
    ) -> Self {
        let paths = StatePaths::create(dir).expect("the test's state directory can be created");
        let ledger = StoreLocator::Sqlite {
            path: paths.ledger(),
        };
        let store = stead_store::open(&ledger, TEST_MACHINE, config.timings.lease)
            .expect("the test's ledger opens");
        let clock = ManualClock::new(now);
        let world = World {
            paths: paths.clone(),
            config,
            store: store.clone(),
            ledger,
            clock: clock.clone(),
            monitor_exe: monitor_exe.to_path_buf(),
            machine_id: TEST_MACHINE.into(),
        };
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (ready_tx, ready_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(crate::run(
            world,
            async move {
                let _ = stop_rx.await;
                StopReason::Requested
            },
            move |_| {
                let _ = ready_tx.send(());
            },
        ));
        if ready_rx.await.is_err() {
            let outcome = task.await.expect("the server task does not panic");
            panic!("the test server did not start: {outcome:?}");
        }
        Self {
            paths,
            clock,
            store,
            stop: Some(stop_tx),
            task: Some(task),
        }
    }

    /// A connection to the server, as a client process would open one. It blocks: open it
    /// on a thread of its own (`spawn_blocking`), not on the runtime the server runs on.
    pub fn connect(&self) -> Connection {
        connect(self.paths.socket())
    }

    /// One call of method `M`, made from a blocking thread as a client's would be.
    pub async fn call<M: Method + 'static>(
        &self,
        params: M::Params,
    ) -> Result<M::Output, ClientError>
    where
        M::Params: Send + 'static,
        M::Output: Send + 'static,
    {
        let socket = self.paths.socket().to_path_buf();
        tokio::task::spawn_blocking(move || connect(&socket).call::<M>(&params))
            .await
            .expect("a client call does not panic")
    }

    /// Stops the server and waits until it has.
    pub async fn stop(mut self) -> Outcome {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let task = self.task.take().expect("a server runs until stopped");
        task.await
            .expect("the server task does not panic")
            .expect("the server started")
    }
}

fn connect(socket: &Path) -> Connection {
    Connection::open(socket, Duration::from_secs(5)).expect("the test server answers")
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // A test that failed before `stop`: the server must not outlive it.
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
