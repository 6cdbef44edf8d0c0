//! Process start identity: a pid plus something that changes whenever the pid is reused.
//!
//! On Linux that is the boot id with the process's start time in clock ticks since boot
//! (field 22 of `/proc/PID/stat`); on macOS, the kernel's start time of the process in
//! microseconds since the epoch (`proc_pidinfo`). A process that is a zombie counts as
//! gone: it serves nothing and will never answer.

use std::fmt;
use std::io;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::os;

/// An opaque, comparable start identity such as `linux:<boot id>:<ticks>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StartIdentity(String);

impl StartIdentity {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Wraps a stored identity read back from the ledger or a lock file.
    pub fn from_stored(s: impl Into<String>) -> Self {
        Self(s.into())
    }
}

impl fmt::Display for StartIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The start identity of `pid`, or `None` when no such live process exists.
pub fn of_pid(pid: u32) -> io::Result<Option<StartIdentity>> {
    Ok(os::start_identity(pid)?.map(StartIdentity))
}

/// The identity of the calling process.
pub fn current() -> io::Result<StartIdentity> {
    of_pid(std::process::id())?.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "cannot read this process's own start identity",
        )
    })
}

/// Whether `pid` is a live process whose start identity is `expected`.
pub fn is_alive(pid: u32, expected: &StartIdentity) -> bool {
    matches!(of_pid(pid), Ok(Some(found)) if &found == expected)
}

/// Waits until the process `pid` with start identity `identity` is gone (dead, a zombie,
/// or its pid reused by another process), for at most `limit`. Returns whether it is.
/// A supervisor's "stopped" means nothing until this holds.
pub fn wait_gone(pid: u32, identity: &StartIdentity, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while is_alive(pid, identity) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// The boot id: a fresh UUID at every boot. Read once per process (a process never
/// outlives its boot), and inherited by the processes it forks: a monitor forked by the
/// spawner reads nothing but its own start time.
pub fn boot_id() -> io::Result<String> {
    static BOOT_ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(id) = BOOT_ID.get() {
        return Ok(id.clone());
    }
    let id = os::boot_id()?;
    Ok(BOOT_ID.get_or_init(|| id).clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_identity_is_stable_and_alive() {
        let me = current().unwrap();
        assert_eq!(me, current().unwrap());
        assert!(is_alive(std::process::id(), &me));
        assert!(!is_alive(
            std::process::id(),
            &StartIdentity::from_stored("linux:other-boot:1")
        ));
    }

    #[test]
    fn the_boot_id_is_stable_within_a_boot() {
        let id = boot_id().unwrap();
        assert!(!id.trim().is_empty());
        assert_eq!(id, boot_id().unwrap());
        // Read afresh, not only from this process's memory.
        assert_eq!(id, os::boot_id().unwrap());
    }

    /// A pid used again by a later process is another identity. The kernel is made to
    /// hand the pid out again at once (`crate::os::reuse_pid`: as root on Linux).
    #[test]
    fn a_reused_pid_has_another_identity() {
        let mut first = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = first.id();
        let before = of_pid(pid).unwrap().expect("the first process lives");
        let started = crate::procs::process(pid as i32).unwrap().started;
        first.kill().unwrap();
        first.wait().unwrap();
        // A pid comes round again only after the whole pid space has been handed out,
        // which takes far longer than the tick a start time counts in (10 ms on Linux);
        // forced at once here, it is made to wait that tick out as a real reuse would:
        // until a new process starts at another time.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut probe = std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap();
            let probed = crate::procs::process(probe.id() as i32).map(|p| p.started);
            let _ = probe.kill();
            let _ = probe.wait();
            if probed.is_some_and(|at| at != started) {
                break;
            }
            assert!(Instant::now() < deadline, "the start clock never moved");
        }
        assert!(!is_alive(pid, &before));
        let Some(mut second) = os::reuse_pid(pid, || {
            std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap()
        }) else {
            eprintln!("this platform cannot hand a pid out again on demand: not tried");
            return;
        };
        let after = of_pid(pid).unwrap().expect("the second process lives");
        let _ = second.kill();
        let _ = second.wait();
        assert_eq!(second.id(), pid, "the same pid");
        assert_ne!(before, after, "another identity");
    }

    #[test]
    fn exited_and_zombie_processes_are_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not yet reaped: a zombie once it exits. Wait for that without reaping.
        let deadline = Instant::now() + Duration::from_secs(10);
        while of_pid(pid).unwrap().is_some() {
            assert!(Instant::now() < deadline, "child never became a zombie");
            std::thread::yield_now();
        }
        child.wait().unwrap();
        assert_eq!(of_pid(pid).unwrap(), None);
    }
}
