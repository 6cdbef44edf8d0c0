//! The server's spawner of monitors: one `stead spawner` process, started with the
//! server, that forks each run's monitor without exec'ing the binary
//! ([`stead_monitor::spawner`] holds its side and the wire). A monitor so started
//! begins running its plan at once instead of loading, relocating and initializing a
//! whole program first.
//!
//! The spawner is an optimization, never a dependency: if it cannot be started, does
//! not answer within [`PATIENCE`], or refuses a plan, that run's monitor is exec'd as
//! it always could be, and a new spawner is started for the next run.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use stead_monitor::spawner::{self, Forked};
use tracing::{info, warn};

/// How long a fork may take before the spawner counts as hung.
const PATIENCE: Duration = Duration::from_secs(2);

/// A running spawner: its control socket and its process.
struct Link {
    control: Option<OwnedFd>,
    child: Child,
}

impl Drop for Link {
    fn drop(&mut self) {
        // With its control socket closed the spawner sees the end and exits; one that
        // does not (frozen, hung) is killed. Its monitors live on either way.
        drop(self.control.take());
        for _ in 0..20 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
pub struct Spawner {
    exe: PathBuf,
    state_dir: PathBuf,
    link: Mutex<Option<LinkSlot>>,
}

/// What the mutex holds (a `Link` is not `Debug`).
struct LinkSlot(Link);

impl std::fmt::Debug for LinkSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "spawner pid {}", self.0.child.id())
    }
}

impl Spawner {
    pub fn new(exe: &Path, state_dir: &Path) -> Self {
        Self {
            exe: exe.to_path_buf(),
            state_dir: state_dir.to_path_buf(),
            link: Mutex::new(None),
        }
    }

    /// Starts the spawner process now, so the first run does not wait for it.
    pub fn warm(&self) {
        let mut link = self.link.lock().unwrap_or_else(|p| p.into_inner());
        if link.is_none() {
            *link = self.start().map(LinkSlot);
        }
    }

    /// Forks a monitor for `start` (a `MonitorStart` as JSON) with `stdout` as its
    /// stdout. Blocks for as long as a fork takes. An error: start the monitor by exec.
    pub fn spawn(&self, start: &[u8], stdout: BorrowedFd<'_>) -> std::io::Result<Forked> {
        let mut slot = self.link.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = self.start().map(LinkSlot);
        }
        let Some(LinkSlot(link)) = slot.as_ref() else {
            return Err(std::io::Error::other("no spawner could be started"));
        };
        let control = link.control.as_ref().expect("a live link has its socket");
        match spawner::request(control.as_fd(), start, stdout, PATIENCE) {
            Ok(forked) => Ok(forked),
            Err(e) => {
                // Gone, hung or confused: the next run gets a new one.
                warn!(cause = %e, "the spawner failed; starting this monitor by exec");
                *slot = None;
                Err(e)
            }
        }
    }

    fn start(&self) -> Option<Link> {
        let (control, theirs) = match spawner::socket_pair() {
            Ok(pair) => pair,
            Err(e) => {
                warn!(cause = %e, "cannot make the spawner's socket; monitors are exec'd");
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
            .stderr(Stdio::null());
        match command.spawn() {
            Ok(child) => {
                info!(pid = child.id(), "started the spawner of monitors");
                Some(Link {
                    control: Some(control),
                    child,
                })
            }
            Err(e) => {
                warn!(cause = %e, "cannot start the spawner; monitors are exec'd");
                None
            }
        }
    }
}
