//! The server's spawner of monitors: one `stead spawner` process, kept while runs
//! start, that forks each run's monitor without exec'ing the binary
//! ([`stead_monitor::spawner`] holds its side and the wire). A monitor so started
//! begins running its plan at once instead of loading, relocating and initializing a
//! whole program first.
//!
//! The server asks from its event loop (the control socket is non-blocking), one request
//! at a time: a fork costs it no thread.
//!
//! The spawner is an optimization, never a dependency: if it cannot be started, does
//! not answer within [`PATIENCE`], or refuses a plan, that run's monitor is exec'd as
//! it always could be, and a new spawner is started for the next run. Where the platform
//! does not allow a forked process to run without exec (macOS: see
//! [`stead_sys::spawn::FORK_SERVER`]) none is started, and every monitor is exec'd.
//!
//! It lives only while runs start: a run that finds none has its monitor exec'd and one
//! started for the next run (off the event loop), a scheduled fire has the scheduler
//! start one [`WARM_AHEAD`] of its instant and keep it until just past it, and once no
//! run has asked for a monitor for `[timings] spawner_idle` it is let go, so an idle
//! server, a laptop's usual state, holds no process but its own.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use stead_monitor::spawner::{self, Forked};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tracing::{info, warn};

/// How long a fork may take before the spawner counts as hung.
const PATIENCE: Duration = Duration::from_secs(2);

/// How long before a scheduled fire a spawner is started where none runs: starting one
/// takes milliseconds, and a fire is admitted only `[timings] fire_lead` (20 ms) ahead.
pub const WARM_AHEAD: Duration = Duration::from_secs(2);

/// A running spawner: its control socket and its process.
struct Link {
    control: Option<AsyncFd<OwnedFd>>,
    child: Option<Child>,
}

impl Drop for Link {
    fn drop(&mut self) {
        // With its control socket closed the spawner sees the end and exits; one that
        // does not (frozen, hung) is killed. Its monitors live on either way. Waited for
        // off the event loop.
        drop(self.control.take());
        let Some(mut child) = self.child.take() else {
            return;
        };
        let mut reap = move || {
            for _ in 0..20 {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = child.kill();
            let _ = child.wait();
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(reap)),
            Err(_) => reap(),
        }
    }
}

impl Link {
    /// One request and its answer.
    async fn request(&self, start: &[u8], stdout: BorrowedFd<'_>) -> io::Result<Forked> {
        let control = self.control.as_ref().expect("a live link has its socket");
        control
            .async_io(Interest::WRITABLE, |fd| {
                spawner::send_request(fd.as_fd(), start, stdout)
            })
            .await?;
        control
            .async_io(Interest::READABLE, |fd| spawner::read_answer(fd.as_fd()))
            .await
    }
}

pub struct Spawner {
    exe: PathBuf,
    state_dir: PathBuf,
    link: tokio::sync::Mutex<Option<Link>>,
    /// Until when it is kept (awake time): `idle` after a monitor was last asked of it,
    /// or past a fire that will ask for one.
    kept_until: std::sync::Mutex<Instant>,
    idle: Duration,
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawner").field("exe", &self.exe).finish()
    }
}

impl Spawner {
    /// A spawner of `exe`'s monitors for `state_dir`, kept `idle` after its last use;
    /// none is started until a run or a fire asks.
    pub fn new(exe: &Path, state_dir: &Path, idle: Duration) -> Self {
        Self {
            exe: exe.to_path_buf(),
            state_dir: state_dir.to_path_buf(),
            link: tokio::sync::Mutex::new(None),
            kept_until: std::sync::Mutex::new(Instant::now()),
            idle,
        }
    }

    /// Starts the spawner process now, so the run coming does not wait for it (on a
    /// blocking thread of the server's runtime: it forks and execs).
    pub fn warm(&self) {
        self.want();
        let mut link = self.link.blocking_lock();
        if link.is_none() {
            *link = self.start();
        }
    }

    /// Whether [`Spawner::warm`] would start one: none runs (or is being started), and
    /// this platform has them.
    pub fn needs_start(&self) -> bool {
        stead_sys::spawn::FORK_SERVER && self.link.try_lock().is_ok_and(|link| link.is_none())
    }

    /// Keeps the spawner for `self.idle` from now.
    fn want(&self) {
        self.keep_until(Instant::now() + self.idle);
    }

    /// Keeps the spawner until `at` at least (a fire will ask for a monitor by then).
    pub fn keep_until(&self, at: Instant) {
        let mut kept = self.kept_until.lock().unwrap_or_else(|p| p.into_inner());
        *kept = (*kept).max(at);
    }

    /// Lets the spawner go once it is no longer kept: no monitor asked of it for
    /// `self.idle`, and no fire coming that will ask. It sees its socket close and exits
    /// (its monitors live on). One busy starting a monitor is not idle.
    pub fn let_go_if_idle(&self) {
        let kept = *self.kept_until.lock().unwrap_or_else(|p| p.into_inner());
        if Instant::now() < kept {
            return;
        }
        let Ok(mut link) = self.link.try_lock() else {
            return;
        };
        if link.take().is_some() {
            info!(
                idle_ms = self.idle.as_millis() as u64,
                "no run asked for a monitor meanwhile; the spawner is let go until the next"
            );
        }
    }

    /// Forks a monitor for `start` (a `MonitorStart` as JSON) with `stdout` as its
    /// stdout. An error: start the monitor by exec (and, when none runs, have one
    /// started for the next run: [`Spawner::needs_start`], [`Spawner::warm`]). None is
    /// started here: that forks and execs on the server's event loop, and the request
    /// would then wait out the new spawner's start.
    pub async fn spawn(&self, start: &[u8], stdout: BorrowedFd<'_>) -> io::Result<Forked> {
        self.want();
        let mut slot = self.link.lock().await;
        // Out of the slot while asked: a request given up on half-way (its answer may
        // still come) drops the link with it, and the next run gets a new spawner
        // rather than that answer.
        let Some(link) = slot.take() else {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "no spawner runs",
            ));
        };
        let asked = tokio::time::timeout(PATIENCE, link.request(start, stdout))
            .await
            .unwrap_or_else(|_| {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the spawner did not answer in time",
                ))
            });
        match &asked {
            Ok(_) => *slot = Some(link),
            // Gone, hung or confused: the next run gets a new one.
            Err(e) => warn!(cause = %e, "the spawner failed; starting this monitor by exec"),
        }
        asked
    }

    fn start(&self) -> Option<Link> {
        if !stead_sys::spawn::FORK_SERVER {
            return None;
        }
        let (control, theirs) = match spawner::socket_pair() {
            Ok(pair) => pair,
            Err(e) => {
                warn!(cause = %e, "cannot make the spawner's socket; monitors are exec'd");
                return None;
            }
        };
        // SAFETY: the AsyncFd owns the socket, which stays open while registered.
        let control = match unsafe { AsyncFd::register(control) } {
            Ok(control) => control,
            Err(e) => {
                warn!(cause = %e, "cannot watch the spawner's socket; monitors are exec'd");
                return None;
            }
        };
        let mut command = Command::new(&self.exe);
        command
            .arg("--state-dir")
            .arg(&self.state_dir)
            .arg(spawner::SUBCOMMAND)
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            // Its own diagnostics, and those of every monitor it forks.
            .stderr(super::spawn::monitors_stderr(&self.state_dir.join("logs")));
        match command.spawn() {
            Ok(child) => {
                info!(pid = child.id(), "started the spawner of monitors");
                Some(Link {
                    control: Some(control),
                    child: Some(child),
                })
            }
            Err(e) => {
                warn!(cause = %e, "cannot start the spawner; monitors are exec'd");
                None
            }
        }
    }
}
