//! The stead client library: find a state directory's server, start one when none
//! serves, and make typed calls. It depends on the wire protocol alone: no C compiler,
//! no database, no HTTP stack, so any program can embed it.
//!
//! - [`Client`]: a state directory and its configuration, the starting point;
//! - [`Connection`]: an open session, with one typed method per protocol method
//!   (`calls.rs`, `services.rs`) over the generic [`Connection::call`];
//! - [`Connection::wait_final`]: wait for a run's final attempt, following it through
//!   its retries and resumes (`wait.rs`), and learn how the work ended ([`FinalAttempt`],
//!   with the exit code `stead run --wait` exits with);
//! - [`ensure_available`]: reach a serving server within one deadline, starting one with
//!   an explicit server program (the `stead` binary) when none serves;
//! - [`paths`]: where a state directory's files live; [`config`]: its `config.toml`;
//!   [`probe`]: is a socket's holder serving, judged by its hello; [`secrets`]: the
//!   host's secret store, which runs' monitors read and `stead secret` writes.
//!
//! Calls are synchronous (a blocking unix socket): a CLI process makes one or two calls
//! and exits, and any program can use the library without an async runtime. From async
//! code, run calls on a blocking thread.
//!
//! ```no_run
//! use stead_client::{Client, installed_stead};
//!
//! let client = Client::for_state_dir(None)?;
//! // Starts `stead serve` (the installed `stead`, or $STEAD_BIN) when none serves.
//! let mut conn = client.connect_or_start(&installed_stead()?)?;
//! println!("{}", conn.status()?.server_id);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod calls;
mod checkpoints;
pub mod config;
mod ensure;
pub mod paths;
pub mod probe;
pub mod secrets;
mod services;
mod wait;

use std::io::{self, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use stead_protocol::{
    Empty, ErrorBody, Hello, Method, Outcome, RequestEnvelope, ResponseEnvelope, StatusResult,
    StopParams, StopResult, method,
};

pub use checkpoints::RunContext;
pub use ensure::{MAX_SPAWNS, ServerSpawner, Spawner, ensure_available};
pub use wait::{Ending, FinalAttempt, Follow, Waited};

use config::{Config, ConfigError};
use paths::{PathsError, StatePaths};
use probe::{Greeted, NotServing};

/// Names the `stead` program a library's client starts servers with.
pub const STEAD_BIN_ENV: &str = "STEAD_BIN";

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    #[error(transparent)]
    Paths(#[from] PathsError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("no stead server is serving {dir}")]
    NotRunning { dir: String },
    #[error("stead server did not become ready: {0}")]
    Unavailable(String),
    /// The spawned server exited with a code no retry can change (a broken ledger, a bad
    /// config); the client exits with the same code.
    #[error("stead server could not start: {message}")]
    StartFailed { code: i32, message: String },
    #[error("lost the connection to the stead server: {0}")]
    Io(#[from] io::Error),
    #[error("{}", .0.message)]
    Server(ErrorBody),
    #[error("the stead server sent something this client does not understand: {0}")]
    Protocol(String),
    #[error(
        "no stead program to start a server with: install stead so that `stead` is on PATH, \
         or set {STEAD_BIN_ENV} to its path"
    )]
    NoServerProgram,
}

/// A state directory plus its configuration: the starting point of every client.
#[derive(Debug, Clone)]
pub struct Client {
    pub paths: StatePaths,
    pub config: Config,
}

impl Client {
    /// Resolves the state directory (flag, `STEAD_STATE_DIR`, platform default) and
    /// loads its configuration.
    pub fn for_state_dir(dir: Option<&Path>) -> Result<Self, ClientError> {
        let paths = StatePaths::resolve(dir)?;
        let config = Config::load(&paths.config())?;
        Ok(Self { paths, config })
    }

    /// Connects to the serving server, or fails with [`ClientError::NotRunning`].
    pub fn connect(&self) -> Result<Connection, ClientError> {
        Connection::open(self.paths.socket(), self.config.timings.probe_timeout).map_err(|why| {
            match &why {
                NotServing::Missing => ClientError::NotRunning {
                    dir: self.paths.dir().display().to_string(),
                },
                // A full accept queue is a holder that is alive but not accepting.
                NotServing::Connect(e) if e.kind() != std::io::ErrorKind::WouldBlock => {
                    ClientError::NotRunning {
                        dir: self.paths.dir().display().to_string(),
                    }
                }
                NotServing::WrongProtocol(_) => ClientError::Protocol(why.to_string()),
                _ => ClientError::Unavailable(why.to_string()),
            }
        })
    }

    /// Connects, starting a server (`SERVER --state-dir DIR serve`, where `server` is
    /// the `stead` program) when none serves.
    pub fn connect_or_start(&self, server: &Path) -> Result<Connection, ClientError> {
        let mut spawner = ServerSpawner::new(server, self.paths.dir());
        ensure_available(self.paths.socket(), &self.config.timings, &mut spawner)
    }
}

/// The `stead` program a client of this library starts servers with: `$STEAD_BIN` when
/// set, else the first `stead` on `$PATH`.
pub fn installed_stead() -> Result<PathBuf, ClientError> {
    if let Some(bin) = std::env::var_os(STEAD_BIN_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(bin));
    }
    let path = std::env::var_os("PATH").ok_or(ClientError::NoServerProgram)?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("stead"))
        .find(|candidate| is_executable(candidate))
        .ok_or(ClientError::NoServerProgram)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// An open session with a server.
#[derive(Debug)]
pub struct Connection {
    reader: BufReader<UnixStream>,
    /// What the server said first; none on a link (see [`Connection::linked`]).
    hello: Option<Hello>,
    next_id: u64,
}

impl Connection {
    /// Connects to `socket` and reads the hello within `timeout`.
    pub fn open(socket: &Path, timeout: Duration) -> Result<Self, NotServing> {
        Ok(Self::greeted(probe::open(socket, timeout)?))
    }

    fn greeted(greeted: Greeted) -> Self {
        Self {
            reader: greeted.reader,
            hello: Some(greeted.hello),
            next_id: 1,
        }
    }

    /// A session over `link`, a socket a server started this process with (a monitor's
    /// link to the server that started it): no hello comes on it, since whoever made it
    /// knows the server already.
    pub fn linked(link: UnixStream) -> Self {
        Self {
            reader: BufReader::new(link),
            hello: None,
            next_id: 1,
        }
    }

    /// The hello the server sent on this connection (none on a link).
    pub fn hello(&self) -> Option<&Hello> {
        self.hello.as_ref()
    }

    /// Sends one request of method `M` and waits for its response.
    pub fn call<M: Method>(&mut self, params: &M::Params) -> Result<M::Output, ClientError> {
        // No deadline: some calls legitimately wait (a run to finish, a gate to clear).
        self.call_within::<M>(params, Duration::from_secs(60 * 60 * 24 * 365))
    }

    /// [`Connection::call`], giving up once `timeout` has passed without an answer (an
    /// I/O error of kind `WouldBlock` or `TimedOut`): for callers that must not hang on a
    /// server that froze. The connection must not be used after such an error, since
    /// the answer may still come.
    pub fn call_within<M: Method>(
        &mut self,
        params: &M::Params,
        timeout: Duration,
    ) -> Result<M::Output, ClientError> {
        self.call_unless::<M>(params, timeout, &mut || false)
    }

    /// [`Connection::call_within`], also giving up (an I/O error of kind `Interrupted`)
    /// when `give_up` says so, asked whenever a signal interrupts the wait: for a caller
    /// whose signals may make the answer moot. The connection must not be used after.
    pub fn call_unless<M: Method>(
        &mut self,
        params: &M::Params,
        timeout: Duration,
        give_up: &mut dyn FnMut() -> bool,
    ) -> Result<M::Output, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let request = RequestEnvelope {
            id,
            method: M::NAME.to_string(),
            params: serde_json::to_value(params)
                .map_err(|e| ClientError::Protocol(e.to_string()))?,
        };
        let mut line = serde_json::to_vec(&request).expect("requests always serialize");
        line.push(b'\n');
        self.reader.get_mut().write_all(&line)?;
        let deadline = Instant::now() + timeout;
        let text = probe::read_line_unless(&mut self.reader, deadline, give_up)?;
        let response: ResponseEnvelope = serde_json::from_str(&text)
            .map_err(|e| ClientError::Protocol(format!("{e}: {text}")))?;
        if response.id != Some(id) {
            return Err(ClientError::Protocol(format!(
                "response id {:?} does not match request id {id}",
                response.id
            )));
        }
        match response.outcome {
            Outcome::Result(value) => serde_json::from_value(value)
                .map_err(|e| ClientError::Protocol(format!("{}: {e}", M::NAME))),
            Outcome::Error(body) => Err(ClientError::Server(body)),
        }
    }

    pub fn status(&mut self) -> Result<StatusResult, ClientError> {
        self.call::<method::Status>(&Empty {})
    }

    /// The hosts sharing the ledger and who leads the scheduler.
    pub fn hosts(&mut self) -> Result<stead_protocol::HostsResult, ClientError> {
        self.call::<method::Hosts>(&Empty {})
    }

    /// The HTTP API's address and token; with `start`, the server first starts it on a
    /// free loopback port if it is off.
    pub fn http(&mut self, start: bool) -> Result<stead_protocol::HttpEndpoint, ClientError> {
        self.call::<method::Http>(&stead_protocol::HttpParams { start })
    }

    /// Asks the server to stop. It answers once its socket, lease and lock file are
    /// released; the process may still be finishing open requests. Runs go on under
    /// their monitors unless `params.cancel_runs`.
    pub fn stop(&mut self, params: StopParams) -> Result<StopResult, ClientError> {
        self.call::<method::Stop>(&params)
    }
}

/// The README's and the docs' Rust examples compile against this crate (`cargo test
/// --doc`), so they cannot drift from it.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
#[doc = include_str!("../../../docs/client.md")]
#[doc = include_str!("../../../docs/gate.md")]
struct DocumentedExamples;
