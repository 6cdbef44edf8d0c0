//! The Linux implementation of the platform layer: `/proc`, pidfds, `prctl`, the boot
//! and monotonic clocks.

mod proc;
mod smaps;

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::PathBuf;

use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};
use rustix::process::{Pid, PidfdFlags, Signal};

pub use proc::{argument_area, descendants, executable, process, start_identity};

// identity, machine

pub fn boot_id() -> io::Result<String> {
    Ok(std::fs::read_to_string("/proc/sys/kernel/random/boot_id")?
        .trim()
        .to_string())
}

pub fn host_id() -> io::Result<String> {
    let mut last = None;
    for path in ["/etc/machine-id", "/var/lib/dbus/machine-id"] {
        match std::fs::read_to_string(path) {
            Ok(id) if !id.trim().is_empty() => return Ok(id.trim().to_string()),
            Ok(_) => {
                last = Some(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{path} is empty"),
                ))
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::ErrorKind::NotFound.into()))
}

// clocks

pub const AWAKE_CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC;
pub const BOOT_CLOCK: libc::clockid_t = libc::CLOCK_BOOTTIME;

// exit watches

pub fn exit_fd(pid: u32) -> io::Result<Option<OwnedFd>> {
    let Some(pid) = Pid::from_raw(pid as i32) else {
        return Ok(None);
    };
    match rustix::process::pidfd_open(pid, PidfdFlags::NONBLOCK) {
        Ok(fd) => Ok(Some(fd)),
        Err(rustix::io::Errno::SRCH) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

pub fn signal_exit_fd(fd: BorrowedFd<'_>, _pid: u32, sig: Signal) -> rustix::io::Result<()> {
    rustix::process::pidfd_send_signal(fd, sig)
}

// processes

pub fn become_subreaper() -> bool {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
}

// signals

pub const SIGNALS_CARRY_VALUES: bool = true;

pub fn queue_signal(pid: u32, sig: Signal, value: i64) -> io::Result<bool> {
    let v = libc::sigval {
        sival_ptr: value as usize as *mut libc::c_void,
    };
    // SAFETY: sigqueue only reads its arguments; the value is an integer in a pointer.
    if unsafe { libc::sigqueue(pid as libc::pid_t, sig.as_raw(), v) } == 0 {
        Ok(true)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// # Safety
/// `info` is the siginfo the kernel passed to the handler of `sig`.
pub unsafe fn queued_value(_sig: libc::c_int, info: *const libc::siginfo_t) -> Option<i64> {
    // SAFETY: as the caller promises; si_value is set for SI_QUEUE.
    unsafe {
        if info.is_null() || (*info).si_code != libc::SI_QUEUE {
            return None;
        }
        Some((*info).si_value().sival_ptr as i64)
    }
}

pub fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns this thread's errno slot; always valid.
    unsafe { libc::__errno_location() }
}

// descriptors

pub const OPEN_FDS: &str = "/proc/self/fd";

pub fn close_from(first: u32) -> bool {
    // close_range(2), Linux 5.9 and later: the whole range in one call.
    // SAFETY: closes descriptors the caller has not opened; nothing of this process
    // refers to them (it has opened nothing yet).
    unsafe { libc::syscall(libc::SYS_close_range, first, u32::MAX, 0u32) == 0 }
}

// sockets

pub fn stream_socket_nonblocking() -> rustix::io::Result<OwnedFd> {
    rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )
}

pub fn message_pair() -> rustix::io::Result<(OwnedFd, OwnedFd)> {
    rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )
}

pub const SEND_NOSIGNAL: SendFlags = SendFlags::NOSIGNAL;

pub const RECV_CLOEXEC: RecvFlags = RecvFlags::CMSG_CLOEXEC;

pub fn received_cloexec(_fd: &OwnedFd) -> rustix::io::Result<()> {
    // Received close-on-exec already (`RECV_CLOEXEC`).
    Ok(())
}

// spawning

pub const FORK_SERVER: bool = true;

pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK changes only this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

// memory

pub fn let_go_of_start() -> usize {
    smaps::let_go_of_start()
}

// directories

pub const URL_OPENER: &str = "xdg-open";

pub fn default_state_dir() -> Option<PathBuf> {
    use etcetera::BaseStrategy;
    let strategy = etcetera::base_strategy::Xdg::new().ok()?;
    let state = strategy
        .state_dir()
        .unwrap_or_else(|| strategy.home_dir().join(".local/state"));
    Some(state.join("stead"))
}

// tests

/// Starts a process with `spawn` so that it gets `pid`, which must be free: the kernel's
/// next pid is set through `/proc/sys/kernel/ns_last_pid` (root only), and set again if
/// another process took it first.
#[cfg(test)]
pub fn reuse_pid(pid: u32, spawn: impl Fn() -> std::process::Child) -> Option<std::process::Child> {
    for _ in 0..100 {
        std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string())
            .expect("setting the next pid (root only)");
        let mut child = spawn();
        if child.id() == pid {
            return Some(child);
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("pid {pid} was taken by another process each time");
}

/// The helper that holds a sleep inhibitor for `pid`: logind's lock through
/// `systemd-inhibit`, whose child prints a line once the lock is held, then waits for
/// `pid` to exit.
pub fn inhibitor_command(pid: u32, why: &str) -> std::process::Command {
    let mut command = std::process::Command::new("systemd-inhibit");
    command
        .args(["--what=sleep", "--mode=block", "--who=stead"])
        .arg(format!("--why={why}"))
        .args([
            "sh",
            "-c",
            "echo held && exec tail -f /dev/null --pid=\"$0\"",
        ])
        .arg(pid.to_string());
    command
}

/// `systemd-inhibit` starts its child only once logind has granted the lock.
pub const INHIBITOR_SAYS_HELD: bool = true;

/// The power source, from `/sys/class/power_supply` (none there: mains).
pub fn power_source() -> io::Result<crate::power::Source> {
    match crate::power::read_supplies(std::path::Path::new("/sys/class/power_supply")) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(crate::power::Source::Mains),
        read => read,
    }
}
