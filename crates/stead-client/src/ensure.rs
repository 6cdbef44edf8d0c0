//! `ensure_available`: reach a serving server within one deadline, starting one when
//! none serves, and starting another when a spawned one dies before serving.
//!
//! A spawned server that exits without serving has either lost a race to a competing
//! starter (which will serve in a moment) or failed. Either way the client stops waiting
//! on it, allows a short grace for a competitor's socket to answer, and spawns again, at
//! most [`MAX_SPAWNS`] times; after that it keeps connecting until the deadline, since
//! another client's spawn may still win. A spawn that exits with a code saying no retry
//! can help (an unusable ledger or state directory, an invalid configuration) ends the
//! wait at once. The error names the last spawn's own diagnostic, read from its stderr
//! pipe, so a user sees why the server could not start.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use stead_protocol::exit;

use crate::config::Timings;
use crate::probe::NotServing;
use crate::{ClientError, Connection};

/// The most servers one call spawns.
pub const MAX_SPAWNS: usize = 3;
/// Between connection attempts.
const POLL: Duration = Duration::from_millis(50);
/// After a spawned server exits, how long a competitor gets to answer before respawning.
const LOSER_GRACE: Duration = Duration::from_millis(250);
/// The most of a spawn's diagnostic kept for the error message.
const DIAGNOSTIC_LIMIT: u64 = 64 * 1024;

/// Starts a server process. Implemented by [`ServerSpawner`]; tests inject failing ones.
pub trait Spawner {
    /// Starts a server whose stderr is a pipe carrying its startup diagnostic.
    fn spawn(&mut self) -> io::Result<Child>;
}

/// Spawns `PROGRAM [ARGS] --state-dir DIR serve --spawned`, detached in its own session
/// with stdin and stdout on /dev/null, so it outlives the client and never holds the
/// client's terminal or output, and without the variables of the run the client may be
/// part of ([`stead_protocol::run_env`]).
#[derive(Debug, Clone)]
pub struct ServerSpawner {
    program: PathBuf,
    state_dir: PathBuf,
    envs: Vec<(OsString, OsString)>,
}

impl ServerSpawner {
    pub fn new(program: impl Into<PathBuf>, state_dir: &Path) -> Self {
        Self {
            program: program.into(),
            state_dir: state_dir.to_path_buf(),
            envs: Vec::new(),
        }
    }

    /// Sets an environment variable for the spawned server (`STEAD_LOG`, timings).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.envs.push((key.into(), value.into()));
        self
    }
}

impl Spawner for ServerSpawner {
    fn spawn(&mut self) -> io::Result<Child> {
        let args: [OsString; 4] = [
            "--state-dir".into(),
            self.state_dir.clone().into_os_string(),
            "serve".into(),
            "--spawned".into(),
        ];
        let mut command = Command::new(&self.program);
        // A server started from inside a run is the user's, not the run's: it carries
        // neither the run's identity nor its secrets into the commands it runs.
        for var in stead_protocol::run_env::left_out_of_a_server(|var| std::env::var(var).ok()) {
            command.env_remove(var);
        }
        command
            .args(args)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
        unsafe {
            command.pre_exec(|| rustix::process::setsid().map(drop).map_err(io::Error::from));
        }
        command
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.program.display())))
    }
}

/// Connects to the server on `socket`, spawning servers as described in the module docs.
pub fn ensure_available(
    socket: &Path,
    timings: &Timings,
    spawner: &mut dyn Spawner,
) -> Result<Connection, ClientError> {
    let deadline = Instant::now() + timings.start_timeout;
    let attempt = |deadline: Instant| -> Result<Connection, NotServing> {
        let left = deadline.saturating_duration_since(Instant::now());
        Connection::open(socket, timings.probe_timeout.min(left.max(POLL)))
    };
    if let Ok(conn) = attempt(deadline) {
        return Ok(conn);
    }
    let mut last_connect: Option<NotServing>;
    let mut last_diagnostic: Option<String> = None;
    let mut spawns = 0;
    while spawns < MAX_SPAWNS && Instant::now() < deadline {
        spawns += 1;
        let mut spawned = match spawner.spawn() {
            Ok(child) => Spawned::new(child),
            // A program that is not there, or not executable, stays so: waiting out the
            // start timeout for another client's server would only hide that.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied
                ) =>
            {
                return Err(ClientError::StartFailed {
                    code: stead_protocol::exit::UNAVAILABLE,
                    message: e.to_string(),
                });
            }
            Err(e) => {
                last_diagnostic = Some(format!("failed to start a server: {e}"));
                continue;
            }
        };
        loop {
            match attempt(deadline) {
                Ok(conn) => {
                    spawned.reap_in_background();
                    return Ok(conn);
                }
                Err(why) => last_connect = Some(why),
            }
            spawned.check_exit()?;
            if let Some(diagnostic) = spawned.diagnostic() {
                last_diagnostic = Some(diagnostic);
            }
            let now = Instant::now();
            if now >= deadline {
                spawned.reap_in_background();
                return Err(unavailable(last_diagnostic, last_connect));
            }
            if let Some(code) = spawned.failed_for_good() {
                // Another spawn would meet the same broken ledger, state directory or
                // config.
                return Err(ClientError::StartFailed {
                    code,
                    message: last_diagnostic
                        .unwrap_or_else(|| format!("the server exited with code {code}")),
                });
            }
            if spawned
                .exited_at
                .is_some_and(|t| now.duration_since(t) >= LOSER_GRACE)
            {
                break;
            }
            spawned.wait(POLL.min(deadline - now));
        }
    }
    // Out of spawns: another client's server may still come up before the deadline.
    loop {
        match attempt(deadline) {
            Ok(conn) => return Ok(conn),
            Err(why) => last_connect = Some(why),
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(unavailable(last_diagnostic, last_connect));
        }
        std::thread::sleep(POLL.min(deadline - now));
    }
}

fn unavailable(diagnostic: Option<String>, connect: Option<NotServing>) -> ClientError {
    ClientError::Unavailable(diagnostic.unwrap_or_else(|| {
        connect.map_or_else(|| "no attempt was made".into(), |why| why.to_string())
    }))
}

/// A spawned server and what it has said on its stderr pipe.
struct Spawned {
    child: Child,
    /// Open until the server exits or detaches its stderr, which it does the moment it
    /// serves: the pipe closing is the readiness signal, so no poll interval is waited.
    pipe: Option<std::process::ChildStderr>,
    said: Vec<u8>,
    exited_at: Option<Instant>,
    status: Option<std::process::ExitStatus>,
}

impl Spawned {
    fn new(mut child: Child) -> Self {
        let pipe = child.stderr.take();
        if let Some(pipe) = &pipe {
            // Never block on a server that writes nothing.
            let _ = rustix::fs::fcntl_setfl(pipe, rustix::fs::OFlags::NONBLOCK);
        }
        Self {
            child,
            pipe,
            said: Vec::new(),
            exited_at: None,
            status: None,
        }
    }

    /// Waits up to `limit` for the pipe to say something or close.
    fn wait(&mut self, limit: Duration) {
        let Some(pipe) = &self.pipe else {
            std::thread::sleep(limit);
            return;
        };
        let mut fds = [rustix::event::PollFd::new(
            pipe,
            rustix::event::PollFlags::IN,
        )];
        let timeout = rustix::event::Timespec::try_from(limit).ok();
        let _ = rustix::event::poll(&mut fds, timeout.as_ref());
        self.drain_pipe();
    }

    fn drain_pipe(&mut self) {
        let Some(pipe) = &mut self.pipe else { return };
        let mut buf = [0u8; 4096];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => {
                    self.pipe = None;
                    return;
                }
                Ok(n) if (self.said.len() as u64) < DIAGNOSTIC_LIMIT => {
                    self.said.extend_from_slice(&buf[..n]);
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    fn check_exit(&mut self) -> io::Result<()> {
        if self.exited_at.is_none()
            && let Some(status) = self.child.try_wait()?
        {
            self.exited_at = Some(Instant::now());
            self.status = Some(status);
            self.drain_pipe();
        }
        Ok(())
    }

    /// Whether the server exited with a code that says no retry can help: its state
    /// directory or ledger is unusable ([`exit::IO_ERROR`]) or its configuration is
    /// invalid ([`exit::CONFIG`]).
    fn failed_for_good(&self) -> Option<i32> {
        self.status
            .and_then(|s| s.code())
            .filter(|&code| code == exit::IO_ERROR || code == exit::CONFIG)
    }

    /// What the server said, or how it exited if it said nothing.
    fn diagnostic(&self) -> Option<String> {
        let text = String::from_utf8_lossy(&self.said);
        let mut lines: Vec<&str> = Vec::new();
        for line in text
            .lines()
            .map(|l| l.trim().trim_start_matches("stead: "))
            .filter(|l| !l.is_empty())
        {
            // A server logs its fatal error and then prints it: say it once.
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        if !lines.is_empty() {
            return Some(lines.join("; "));
        }
        self.status
            .map(|status| format!("the spawned server exited ({status}) without a diagnostic"))
    }

    /// A server that became ready keeps running; whoever spawned it must still reap it
    /// when it exits, or a long-lived client collects zombies.
    fn reap_in_background(self) {
        let mut child = self.child;
        drop(self.pipe);
        let _ = std::thread::Builder::new()
            .name("stead-reaper".into())
            .spawn(move || child.wait());
    }
}
