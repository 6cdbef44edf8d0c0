//! Reaping: reading the leader's exit without reaping it, and reaping every other child.
//!
//! As a child subreaper (Linux), the monitor inherits the command's orphaned
//! descendants, so it reaps them as they die; otherwise they would pile up as zombies
//! for as long as the run lasts. The leader is reaped last, once its group is empty
//! (see [`super::process_group`] for why).

use std::io;

use rustix::process::{Pid, WaitId, WaitIdOptions, WaitOptions};

/// How the command's leader process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildExit {
    Code(i32),
    Signal(i32),
}

impl ChildExit {
    pub fn code(self) -> Option<i32> {
        match self {
            ChildExit::Code(code) => Some(code),
            ChildExit::Signal(_) => None,
        }
    }

    pub fn signal(self) -> Option<i32> {
        match self {
            ChildExit::Code(_) => None,
            ChildExit::Signal(sig) => Some(sig),
        }
    }
}

/// Reaps the exited children other than `leader`, and returns the leader's exit once it
/// has exited, leaving it unreaped.
pub fn reap_except(leader: Pid) -> Option<ChildExit> {
    while let Some(pid) = exited_child() {
        if pid == leader {
            return leader_exit(leader);
        }
        let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
    }
    None
}

/// Reaps every child that has exited, the leader included.
pub fn reap_all() {
    while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
}

/// A child that has exited and is not yet reaped, without reaping it.
fn exited_child() -> Option<Pid> {
    loop {
        // SAFETY: a zeroed siginfo_t is valid, and waitid writes only into it. With
        // WNOHANG and nothing to report, it stays zeroed: si_pid reads 0.
        let (rc, pid) = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_ALL,
                0,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            (rc, info.si_pid())
        };
        if rc == 0 {
            return Pid::from_raw(pid);
        }
        // ECHILD: no children at all.
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return None;
        }
    }
}

fn leader_exit(leader: Pid) -> Option<ChildExit> {
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    let status = rustix::process::waitid(WaitId::Pid(leader), options).ok()??;
    match (status.exit_status(), status.terminating_signal()) {
        (Some(code), _) => Some(ChildExit::Code(code)),
        (None, Some(sig)) => Some(ChildExit::Signal(sig)),
        (None, None) => None,
    }
}

/// The conventional name of a signal number, such as `SIGKILL`.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => "unknown signal",
    }
}
