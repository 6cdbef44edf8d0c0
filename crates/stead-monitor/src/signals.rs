//! Signals as input: a self-pipe that the monitor's signal handlers write to, read by the
//! same `poll` that reads the command's output.
//!
//! A handler can safely do almost nothing; writing one byte (the signal number) to a
//! non-blocking pipe is async-signal-safe and turns the signal into readable input, so
//! the single-threaded event loop cannot miss one that lands between a check and its
//! `poll`.

use std::io::{self, PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicI32, Ordering};

/// SIGCHLD (a child changed state), SIGUSR1 (cancel, from the server) and the signals
/// that stop the monitor itself.
const HANDLED: [libc::c_int; 5] = [
    libc::SIGCHLD,
    libc::SIGUSR1,
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
];

/// The write end of the self-pipe, for the handlers; -1 when there is none.
static WRITE_FD: AtomicI32 = AtomicI32::new(-1);

/// The monitor's signal handlers and the pipe they report to. One at a time per process.
#[derive(Debug)]
pub struct SignalPipe {
    read: PipeReader,
    write: PipeWriter,
}

impl SignalPipe {
    /// Creates the pipe, installs the handlers and unblocks their signals (a blocked mask
    /// may be inherited from whoever started the monitor, and the command inherits ours).
    pub fn install() -> io::Result<Self> {
        let (read, write) = io::pipe()?;
        rustix::io::ioctl_fionbio(&read, true)?;
        // A full pipe must drop a byte rather than block the handler (and the monitor).
        rustix::io::ioctl_fionbio(&write, true)?;
        WRITE_FD.store(write.as_raw_fd(), Ordering::SeqCst);
        let pipe = Self { read, write };
        // SAFETY: a zeroed sigset_t is a valid argument to sigemptyset, which initialises
        // it; each call is given a valid signal number.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in HANDLED {
                handle(sig)?;
                libc::sigaddset(&mut set, sig);
            }
            let rc = libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
        }
        Ok(pipe)
    }

    /// The end to poll for readability.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }

    /// Sleeps until `at` (wall time, read again at least every second, so a clock that
    /// jumps is followed), or until a signal arrives, whichever is first; the signal is
    /// left for [`SignalPipe::take`].
    pub fn wait_until(&self, at: jiff::Timestamp) {
        use rustix::event::{PollFd, PollFlags, Timespec};
        loop {
            let Ok(left) = std::time::Duration::try_from(at.duration_since(jiff::Timestamp::now()))
            else {
                return;
            };
            if left.is_zero() {
                return;
            }
            let wait = Timespec::try_from(left.min(std::time::Duration::from_secs(1))).unwrap_or(
                Timespec {
                    tv_sec: 1,
                    tv_nsec: 0,
                },
            );
            let mut fds = [PollFd::new(&self.read, PollFlags::IN)];
            // EINTR: a signal's handler ran, and its byte is in the pipe.
            match rustix::event::poll(&mut fds, Some(&wait)) {
                Ok(0) => {}
                _ => return,
            }
        }
    }

    /// The signals received since the last call, oldest first.
    pub fn take(&mut self) -> Vec<libc::c_int> {
        let mut buf = [0u8; 64];
        let mut got = Vec::new();
        loop {
            match self.read.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend(buf[..n].iter().map(|&b| libc::c_int::from(b))),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // WouldBlock: drained.
                Err(_) => break,
            }
        }
        got
    }

    /// Between two runs: drops the cancels and child exits received so far (they were
    /// about the run before) and keeps any stop of the monitor pending, for the next
    /// look. False when a stop is pending.
    pub fn drop_cancels(&mut self) -> bool {
        let stops: Vec<u8> = self
            .take()
            .into_iter()
            .filter(|&sig| sig != libc::SIGUSR1 && sig != libc::SIGCHLD)
            .map(|sig| sig as u8)
            .collect();
        // Cannot fail short of a full pipe, and a pipe of a few bytes is not full.
        let _ = (&self.write).write_all(&stops);
        stops.is_empty()
    }
}

impl Drop for SignalPipe {
    fn drop(&mut self) {
        // Handlers stay installed; they must not write to a descriptor number that the
        // process may reuse once this pipe is closed.
        let _ = WRITE_FD.compare_exchange(
            self.write.as_raw_fd(),
            -1,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }
}

fn handle(sig: libc::c_int) -> io::Result<()> {
    // SAFETY: a zeroed sigaction is valid once its mask is emptied; the handler is an
    // `extern "C" fn(c_int)` that only calls async-signal-safe functions.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SA_RESTART spares blocking calls elsewhere from EINTR; poll(2) is woken anyway
        // by the byte in the pipe. Stopped children are none of the monitor's business.
        action.sa_flags = libc::SA_RESTART
            | if sig == libc::SIGCHLD {
                libc::SA_NOCLDSTOP
            } else {
                0
            };
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(sig, &action, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

extern "C" fn on_signal(sig: libc::c_int) {
    // SAFETY: write(2) and errno are async-signal-safe; errno is restored so that the
    // interrupted code sees its own.
    unsafe {
        let errno = errno_location();
        let saved = *errno;
        let byte = sig as u8;
        libc::write(WRITE_FD.load(Ordering::SeqCst), (&raw const byte).cast(), 1);
        *errno = saved;
    }
}

#[cfg(target_os = "linux")]
use libc::__errno_location as errno_location;
#[cfg(target_os = "macos")]
use libc::__error as errno_location;
