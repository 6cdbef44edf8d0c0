//! A process's exit as a descriptor: it turns readable when the process exits, so an
//! event loop (`poll`, tokio's `AsyncFd`) waits for processes that are not its children
//! (monitors a restarted server adopts, a run's escaped descendants) as it waits for
//! input. Linux: a pidfd. macOS: a kqueue of its own holding one `EVFILT_PROC` /
//! `NOTE_EXIT` event, which stays pending (readable) once the process has exited.
//!
//! The watch is opened first and the process's identity checked second
//! ([`ExitWatch::open_checked`]): from the moment it is open it names that one process,
//! so a pid reused in between cannot be mistaken for it.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::Signal;

use crate::identity::{self, StartIdentity};
use crate::os;

/// A watch on one process's exit.
#[derive(Debug)]
pub struct ExitWatch {
    pid: u32,
    fd: OwnedFd,
}

impl ExitWatch {
    /// Opens a watch on `pid`; `None` when no such process exists (any longer). The
    /// descriptor is close-on-exec and non-blocking.
    pub fn open(pid: u32) -> io::Result<Option<Self>> {
        Ok(os::exit_fd(pid)?.map(|fd| Self { pid, fd }))
    }

    /// Opens a watch on `pid` if it is still the process `identity` names (alive, not a
    /// zombie); `None` when it is gone.
    pub fn open_checked(pid: u32, identity: &StartIdentity) -> io::Result<Option<Self>> {
        let Some(watch) = Self::open(pid)? else {
            return Ok(None);
        };
        // Checked after opening: from here on the watch names this process and no other.
        Ok(identity::is_alive(pid, identity).then_some(watch))
    }

    /// A watch received from another process that opened it on `pid` (the spawner's
    /// answer carries one).
    pub fn from_received(pid: u32, fd: OwnedFd) -> Self {
        Self { pid, fd }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the process has exited (without waiting).
    pub fn has_exited(&self) -> bool {
        self.wait(Some(Duration::ZERO))
    }

    /// Waits up to `timeout` (`None`: for ever) for the process to exit; whether it did.
    pub fn wait(&self, timeout: Option<Duration>) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
            let left = deadline.map(|d| {
                Timespec::try_from(d.saturating_duration_since(Instant::now())).unwrap_or(
                    Timespec {
                        tv_sec: i64::MAX,
                        tv_nsec: 0,
                    },
                )
            });
            match rustix::event::poll(&mut fds, left.as_ref()) {
                Ok(n) => return n > 0,
                // A signal handler ran: wait out the rest.
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => return false,
            }
        }
    }

    /// Sends `sig` to the process, unless it has exited: on Linux through the pidfd,
    /// which cannot reach another process; on macOS by pid once the watch shows it has
    /// not exited (the window between the two is the platform's; see
    /// `docs/platforms.md`).
    pub fn signal(&self, sig: Signal) -> io::Result<()> {
        Ok(os::signal_exit_fd(self.fd.as_fd(), self.pid, sig)?)
    }

    /// Waits for any of `watches` to exit, up to `timeout`; which of them have.
    pub fn wait_any(watches: &[&ExitWatch], timeout: Duration) -> Vec<bool> {
        let mut fds: Vec<PollFd> = watches
            .iter()
            .map(|w| PollFd::new(&w.fd, PollFlags::IN))
            .collect();
        let wait = Timespec::try_from(timeout).ok();
        if rustix::event::poll(&mut fds, wait.as_ref()).is_err() {
            // EINTR: a signal handler ran; the caller looks again.
            return vec![false; watches.len()];
        }
        fds.iter().map(|fd| !fd.revents().is_empty()).collect()
    }
}

impl AsFd for ExitWatch {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for ExitWatch {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use std::process::{Child, Command, Stdio};

    use super::*;

    /// A child killed and reaped however the test ends.
    struct Guard(Child);

    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn sleeper() -> Guard {
        Guard(Command::new("sleep").arg("30").spawn().unwrap())
    }

    #[test]
    fn the_exit_of_a_child_is_seen() {
        let mut child = sleeper();
        let watch = ExitWatch::open(child.0.id())
            .unwrap()
            .expect("the child lives");
        assert!(!watch.has_exited());
        assert!(!watch.wait(Some(Duration::from_millis(20))));
        watch.signal(Signal::KILL).unwrap();
        assert!(watch.wait(Some(Duration::from_secs(10))), "exit seen");
        // Readable for good, also once reaped.
        child.0.wait().unwrap();
        assert!(watch.has_exited());
    }

    #[test]
    fn the_exit_of_a_process_that_is_not_a_child_is_seen() {
        // sh starts sleep and exits: sleep is a grandchild of this process, and its exit
        // is seen without any wait on it.
        let out = Command::new("sh")
            .args(["-c", "sleep 30 >/dev/null 2>&1 & echo $!"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let identity = identity::of_pid(pid)
            .unwrap()
            .expect("the grandchild lives");
        let watch = ExitWatch::open_checked(pid, &identity)
            .unwrap()
            .expect("still the same process");
        let ended = || {
            let _ = watch.signal(Signal::KILL);
            watch.wait(Some(Duration::from_secs(10)))
        };
        assert!(!watch.has_exited());
        assert!(ended(), "exit seen");
        assert!(identity::wait_gone(pid, &identity, Duration::from_secs(10)));
    }

    #[test]
    fn a_process_that_is_gone_has_no_watch() {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(ExitWatch::open(pid).unwrap().is_none());
    }

    #[test]
    fn a_watch_is_not_opened_for_another_identity() {
        let child = sleeper();
        let stale = StartIdentity::from_stored("an identity of another process");
        assert!(
            ExitWatch::open_checked(child.0.id(), &stale)
                .unwrap()
                .is_none()
        );
        let own = identity::of_pid(child.0.id()).unwrap().unwrap();
        assert!(
            ExitWatch::open_checked(child.0.id(), &own)
                .unwrap()
                .is_some()
        );
    }
}
