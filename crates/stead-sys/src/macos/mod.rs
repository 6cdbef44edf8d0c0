//! The macOS implementation of the platform layer: libproc, kqueue, sysctl, the uptime
//! and continuous clocks. Compiled (and linted) on every change by `scripts/check-macos`;
//! run by the macOS CI workflow.

mod libproc;

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::time::Duration;

use rustix::event::kqueue::{Event, EventFilter, EventFlags, ProcessEvents};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType};
use rustix::process::Signal;

pub use libproc::{descendants, executable, process, start_identity};

// identity, machine

/// The boot session UUID (`kern.bootsessionuuid`).
pub fn boot_id() -> io::Result<String> {
    let name = c"kern.bootsessionuuid";
    let mut buf = [0u8; 64];
    let mut len = buf.len();
    // SAFETY: `buf` is writable for `len` bytes and `name` is NUL-terminated.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let s = std::ffi::CStr::from_bytes_until_nul(&buf[..len.min(buf.len())])
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(&buf[..len.min(buf.len())]).into_owned());
    Ok(s)
}

/// The hardware UUID (`gethostuuid`).
pub fn host_id() -> io::Result<String> {
    let mut uuid = [0u8; 16];
    let wait = libc::timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    // SAFETY: `uuid` is the 16-byte buffer gethostuuid fills; `wait` is a valid timespec.
    if unsafe { libc::gethostuuid(uuid.as_mut_ptr(), &wait) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(uuid.iter().map(|b| format!("{b:02x}")).collect())
}

// clocks

/// `mach_absolute_time`: stops while the machine sleeps.
pub const AWAKE_CLOCK: libc::clockid_t = libc::CLOCK_UPTIME_RAW;
/// `mach_continuous_time`: goes on while the machine sleeps.
pub const BOOT_CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC;

// exit watches

/// A kqueue of its own with one `EVFILT_PROC`/`NOTE_EXIT` event for `pid`: the kqueue
/// reads as readable once the event is pending, and it stays pending (nothing collects
/// it). Registered first and the process looked at second, so a process that had exited
/// already (a zombie, for which the kernel may not fire) is never waited for.
pub fn exit_fd(pid: u32) -> io::Result<Option<OwnedFd>> {
    let Ok(raw) = i32::try_from(pid) else {
        return Ok(None);
    };
    let Some(target) = rustix::process::Pid::from_raw(raw) else {
        return Ok(None);
    };
    let kq = rustix::event::kqueue::kqueue()?;
    rustix::io::fcntl_setfd(&kq, rustix::io::FdFlags::CLOEXEC)?;
    rustix::io::ioctl_fionbio(&kq, true)?;
    let change = Event::new(
        EventFilter::Proc {
            pid: target,
            flags: ProcessEvents::EXIT,
        },
        EventFlags::ADD | EventFlags::ENABLE,
        std::ptr::null_mut(),
    );
    let mut none: Vec<Event> = Vec::new();
    // SAFETY: the event carries no user data pointer that the kernel would hand back.
    match unsafe { rustix::event::kqueue::kevent(&kq, &[change], &mut none, Some(Duration::ZERO)) }
    {
        Ok(_) => {}
        Err(rustix::io::Errno::SRCH) => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    match process(raw) {
        Some(p) if !p.zombie => Ok(Some(kq)),
        _ => Ok(None),
    }
}

/// Signals by pid while the watch shows the process has not exited.
pub fn signal_exit_fd(fd: BorrowedFd<'_>, pid: u32, sig: Signal) -> rustix::io::Result<()> {
    let mut fds = [rustix::event::PollFd::new(
        &fd,
        rustix::event::PollFlags::IN,
    )];
    let now = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    if rustix::event::poll(&mut fds, Some(&now))? > 0 {
        return Err(rustix::io::Errno::SRCH);
    }
    let pid = rustix::process::Pid::from_raw(pid as i32).ok_or(rustix::io::Errno::SRCH)?;
    rustix::process::kill_process(pid, sig)
}

// processes

/// macOS has no subreaper: orphans go to launchd (see `crate::procs`).
pub fn become_subreaper() -> bool {
    false
}

// signals

pub const SIGNALS_CARRY_VALUES: bool = false;

/// No `sigqueue` on macOS: the signal goes plainly.
pub fn queue_signal(pid: u32, sig: Signal, _value: i64) -> io::Result<bool> {
    let pid = rustix::process::Pid::from_raw(pid as i32)
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    rustix::process::kill_process(pid, sig)?;
    Ok(false)
}

/// # Safety
/// Nothing is read: no value rides with a signal here.
pub unsafe fn queued_value(_sig: libc::c_int, _info: *const libc::siginfo_t) -> Option<i64> {
    None
}

pub fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns this thread's errno slot; always valid.
    unsafe { libc::__error() }
}

// descriptors

pub const OPEN_FDS: &str = "/dev/fd";

/// No `close_range`: the caller lists `/dev/fd`.
pub fn close_from(_first: u32) -> bool {
    false
}

// sockets

pub fn stream_socket_nonblocking() -> rustix::io::Result<OwnedFd> {
    let fd = rustix::net::socket(AddressFamily::UNIX, SocketType::STREAM, None)?;
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::CLOEXEC)?;
    rustix::io::ioctl_fionbio(&fd, true)?;
    Ok(fd)
}

/// No `SOCK_SEQPACKET` for unix sockets, and datagrams of 2 KiB at most.
pub fn message_pair() -> rustix::io::Result<(OwnedFd, OwnedFd)> {
    Err(rustix::io::Errno::NOTSUP)
}

pub const SEND_NOSIGNAL: SendFlags = SendFlags::empty();

pub const RECV_CLOEXEC: RecvFlags = RecvFlags::empty();

pub fn received_cloexec(fd: &OwnedFd) -> rustix::io::Result<()> {
    rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC)
}

// spawning

/// A forked child may not run without exec here (see `crate::spawn`).
pub const FORK_SERVER: bool = false;

/// No timer slack setting.
pub fn tighten_timer_slack() {}

/// Not needed: there is no spawner to rename its copies.
pub fn argument_area() -> Option<(usize, usize)> {
    None
}

// memory

/// Nothing to do (see `crate::memory`).
pub fn let_go_of_start() -> usize {
    0
}

// directories

pub const URL_OPENER: &str = "open";

pub fn default_state_dir() -> Option<PathBuf> {
    use etcetera::BaseStrategy;
    let strategy = etcetera::base_strategy::Apple::new().ok()?;
    Some(strategy.data_dir().join("stead"))
}

// tests

/// macOS cannot be told which pid to hand out next.
#[cfg(test)]
pub fn reuse_pid(
    _pid: u32,
    _spawn: impl Fn() -> std::process::Child,
) -> Option<std::process::Child> {
    None
}

/// The helper that holds a sleep inhibitor for `pid`: a power assertion against idle
/// sleep, held by `caffeinate` until `pid` exits.
pub fn inhibitor_command(pid: u32, _why: &str) -> std::process::Command {
    let mut command = std::process::Command::new("/usr/bin/caffeinate");
    command.args(["-i", "-w"]).arg(pid.to_string());
    command
}

/// `caffeinate` takes its assertion at once and prints nothing.
pub const INHIBITOR_SAYS_HELD: bool = false;

/// The power source, from `pmset -g batt`.
pub fn power_source() -> io::Result<crate::power::Source> {
    let out = std::process::Command::new("/usr/bin/pmset")
        .args(["-g", "batt"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()?;
    Ok(crate::power::from_pmset(&String::from_utf8_lossy(
        &out.stdout,
    )))
}
