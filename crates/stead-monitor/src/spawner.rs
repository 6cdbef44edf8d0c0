//! The spawner: a small process a server keeps while runs start (`stead spawner`, a
//! hidden subcommand) where the platform allows it ([`stead_sys::spawn::FORK_SERVER`]: Linux),
//! which forks a run's monitor on request. A monitor so made skips what an
//! exec of the whole binary costs (loading and relocating it, the runtime's start, the
//! argument parser): it is a copy of a process that is already up, and runs
//! [`run_start`](crate::run_start) at once.
//!
//! The spawner is single-threaded, so forking it is safe, and it does nothing but wait
//! on its control socket: a `SOCK_SEQPACKET` pair whose other end the server holds.
//! One request is one message: a [`MonitorStart`] as JSON, with one descriptor attached,
//! the monitor's stdout (its link to the server: a socket it records over). The answer is one message: `+` and the monitor's pid (4 bytes,
//! little-endian) with an exit watch of it (a pidfd) attached, or `-` and why it could
//! not fork. The watch is opened before the spawner reaps the monitor (a pid is not reused while its
//! zombie is unreaped), so the server watches the very process it asked for. Monitors
//! that exit are reaped as SIGCHLD interrupts the wait for the next request. When the
//! server's end closes, the spawner exits; its monitors live on, as every monitor
//! outlives its server.
//!
//! A monitor forked here is a session leader of its own with stdin on `/dev/null` and
//! stderr the spawner's (the monitors' log, `logs/monitors.log`), as an exec'd one is, and its command line reads `stead --state-dir DIR
//! monitor` (the spawner's last word is rewritten in place), so `ps` and whoever looks
//! for a state directory's monitors see what they always saw.

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, SendAncillaryBuffer, SendAncillaryMessage,
};
use stead_core::runs::MonitorStart;
use stead_sys::exit::ExitWatch;
use stead_sys::spawn::ArgumentArea;

/// The largest request: a plan is bounded well below it (a job's fields and a run's
/// parameters have limits of their own); a larger one is started by exec instead.
pub const MAX_REQUEST: usize = 1 << 20;

/// The word of the spawner's command line that a forked monitor's reads `monitor`.
pub const SUBCOMMAND: &str = "spawner";

/// A control socket pair: the server's end (non-blocking) and the spawner's (its stdin).
pub fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (server, spawner) = stead_sys::socket::message_pair()?;
    // The server waits on its end with its event loop.
    rustix::io::ioctl_fionbio(&server, true)?;
    for fd in [&server, &spawner] {
        rustix::net::sockopt::set_socket_send_buffer_size(fd, MAX_REQUEST + 4096)?;
        rustix::net::sockopt::set_socket_recv_buffer_size(fd, MAX_REQUEST + 4096)?;
    }
    Ok((server, spawner))
}

/// A monitor the spawner forked: its pid, and an exit watch opened while it could not
/// yet be reaped.
pub struct Forked {
    pub pid: u32,
    pub watch: ExitWatch,
}

/// The server's half, first step: asks the spawner at `control` to fork a monitor for
/// `start`, whose stdout is `stdout`. On a non-blocking socket, `WouldBlock` means: try
/// again once it is writable (nothing was sent).
pub fn send_request(
    control: BorrowedFd<'_>,
    start: &[u8],
    stdout: BorrowedFd<'_>,
) -> io::Result<()> {
    if start.len() > MAX_REQUEST {
        return Err(io::Error::other("the plan is too large for the spawner"));
    }
    let fds = [stdout];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control_msg = SendAncillaryBuffer::new(&mut space);
    control_msg.push(SendAncillaryMessage::ScmRights(&fds));
    rustix::net::sendmsg(
        control,
        &[IoSlice::new(start)],
        &mut control_msg,
        stead_sys::socket::SEND_NOSIGNAL,
    )?;
    Ok(())
}

/// The server's half, second step: the spawner's answer to the request sent. On a
/// non-blocking socket, `WouldBlock` means: not yet.
pub fn read_answer(control: BorrowedFd<'_>) -> io::Result<Forked> {
    let mut answer = [0u8; 512];
    let (got, pidfd) = receive(control, &mut answer)?
        .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "the spawner is gone"))?;
    match (&answer[..got], pidfd) {
        ([b'+', pid @ ..], Some(fd)) if pid.len() == 4 => {
            let pid = u32::from_le_bytes(pid.try_into().expect("four bytes"));
            Ok(Forked {
                pid,
                watch: ExitWatch::from_received(pid, fd),
            })
        }
        ([b'-', why @ ..], _) => Err(io::Error::other(String::from_utf8_lossy(why).into_owned())),
        _ => Err(io::Error::other("the spawner answered nonsense")),
    }
}

/// The spawner's main loop, on the control socket it was given as stdin. Exits 0 when
/// the server's end closes.
pub fn serve() -> i32 {
    // SAFETY: fd 0 is this process's stdin, the control socket its server handed it;
    // nothing else owns it.
    let control = unsafe { OwnedFd::from_raw_fd(0) };
    wake_on_child_exit();
    // Read once here, for every monitor forked: each is a copy of this process, and
    // needs read nothing but its own start time.
    let _ = stead_sys::identity::boot_id();
    let arguments = ArgumentArea::find();
    let mut buffer = vec![0u8; MAX_REQUEST];
    loop {
        reap();
        let (len, stdout) = match receive(control.as_fd(), &mut buffer) {
            Ok(Some(got)) => got,
            Ok(None) => return 0,
            // A monitor exited (SIGCHLD): reaped at the top of the loop.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                crate::diagnostic("spawner", &e.to_string());
                return 1;
            }
        };
        let answer = match (
            serde_json::from_slice::<MonitorStart>(&buffer[..len]),
            stdout,
        ) {
            (Ok(start), Some(stdout)) => fork_monitor(&control, start, stdout, arguments),
            (Err(e), _) => Err(format!("an unreadable plan: {e}")),
            (_, None) => Err("no descriptor came with the plan".to_string()),
        };
        let sent = match answer {
            Ok(forked) => {
                #[cfg(debug_assertions)]
                late_answer_for_tests();
                let reply = [&[b'+'][..], &forked.pid.to_le_bytes()].concat();
                let fds = [forked.watch.as_fd()];
                let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
                let mut ancillary = SendAncillaryBuffer::new(&mut space);
                ancillary.push(SendAncillaryMessage::ScmRights(&fds));
                rustix::net::sendmsg(
                    &control,
                    &[IoSlice::new(&reply)],
                    &mut ancillary,
                    stead_sys::socket::SEND_NOSIGNAL,
                )
            }
            Err(why) => {
                let reply = [&[b'-'][..], why.as_bytes()].concat();
                rustix::net::send(&control, &reply, stead_sys::socket::SEND_NOSIGNAL)
            }
        };
        if sent.is_err() {
            // The server is gone: so is the reason to be here.
            return 0;
        }
    }
}

/// Debug builds only (the tests' binaries): holds the answer to a fork back for
/// `STEAD_TEST_SPAWNER_LATE_MS` milliseconds, so a test can make the server give up on
/// a monitor that exists (see `fire_path.rs`). Release builds have no such setting.
#[cfg(debug_assertions)]
fn late_answer_for_tests() {
    let late = std::env::var("STEAD_TEST_SPAWNER_LATE_MS").ok();
    if let Some(ms) = late.and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// A SIGCHLD handler that does nothing but interrupt the wait for a request (no
/// `SA_RESTART`), so exited monitors are reaped soon.
fn wake_on_child_exit() {
    extern "C" fn interrupt(_: libc::c_int) {}
    // SAFETY: installs a handler that touches nothing, before any thread exists.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = interrupt as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = libc::SA_NOCLDSTOP;
        libc::sigaction(libc::SIGCHLD, &action, std::ptr::null_mut());
    }
}

/// Reaps every monitor that has exited.
fn reap() {
    // SAFETY: waitpid on this process's own children, without blocking.
    while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
}

/// One request: its length in `buffer` and the descriptor that came with it; `None` at
/// the end (the server's end closed).
fn receive(
    control: BorrowedFd<'_>,
    buffer: &mut [u8],
) -> io::Result<Option<(usize, Option<OwnedFd>)>> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut ancillary = RecvAncillaryBuffer::new(&mut space);
    let got = rustix::net::recvmsg(
        control,
        &mut [IoSliceMut::new(buffer)],
        &mut ancillary,
        stead_sys::socket::RECV_CLOEXEC,
    )?;
    let mut fd = None;
    for message in ancillary.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            // Any beyond the first is dropped, and so closed.
            for received in fds {
                stead_sys::socket::received_cloexec(&received)?;
                fd.get_or_insert(received);
            }
        }
    }
    if got.bytes == 0 && fd.is_none() {
        return Ok(None);
    }
    if got.flags.contains(rustix::net::ReturnFlags::TRUNC) {
        return Err(io::Error::other("a request larger than the spawner takes"));
    }
    Ok(Some((got.bytes, fd)))
}

/// Forks a monitor for `start` with `stdout` as its stdout.
fn fork_monitor(
    control: &OwnedFd,
    start: MonitorStart,
    stdout: OwnedFd,
    arguments: Option<ArgumentArea>,
) -> Result<Forked, String> {
    // SAFETY: this process has one thread, so the child is a whole copy of it and may
    // run anything.
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", io::Error::last_os_error())),
        0 => {
            become_monitor(std::os::fd::AsRawFd::as_raw_fd(control), stdout);
            if let Some(arguments) = arguments {
                arguments.rename(SUBCOMMAND.as_bytes(), b"monitor");
            }
            std::process::exit(crate::run_start(&start));
        }
        pid => {
            // Opened before the next reap: the pid is the monitor's (or its zombie's).
            let watch = ExitWatch::open(pid as u32)
                .map_err(|e| format!("watching the monitor's exit: {e}"))?
                .ok_or_else(|| "the monitor was gone before it could be watched".to_string())?;
            Ok(Forked {
                pid: pid as u32,
                watch,
            })
        }
    }
}

/// In the forked child: what an exec'd monitor starts with (a session of its own, stdin
/// on `/dev/null`, stdout the server's pipe, stderr the spawner's: the monitors' log),
/// then its name.
fn become_monitor(control: std::os::fd::RawFd, stdout: OwnedFd) {
    use std::os::fd::IntoRawFd;
    let stdout = stdout.into_raw_fd();
    // SAFETY: plain system calls on this process's own descriptors and dispositions, in
    // a process with one thread. The control socket is stdin (fd 0): /dev/null takes its
    // place; stdout is moved onto 1; 2 stays the spawner's.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        libc::close(control);
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        libc::dup2(stdout, 1);
        if null >= 0 {
            libc::dup2(null, 0);
        }
        for fd in [stdout, null] {
            if fd > 2 {
                libc::close(fd);
            }
        }
    }
}
