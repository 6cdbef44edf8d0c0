//! Signals as input: a self-pipe that the monitor's signal handlers write to, read by the
//! same `poll` that reads the command's output.
//!
//! A handler can safely do almost nothing; writing one record (the signal number, and the
//! run a cancel is for) to a non-blocking pipe is async-signal-safe and turns the signal
//! into readable input, so the single-threaded event loop cannot miss one that lands
//! between a check and its `poll`.
//!
//! A server cancels a run by queueing SIGUSR1 with the run's id as its value
//! (`sigqueue`), so a monitor that takes run after run tells a cancel of the run it has
//! just been handed from one meant for the run before it; a plain SIGUSR1 (`kill`) is
//! for whatever run the monitor has.

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
    /// Records looked at and put back, ahead of those in the pipe (which came later).
    kept: Vec<Received>,
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
        let pipe = Self {
            read,
            write,
            kept: Vec::new(),
        };
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

    /// Before the run's command starts (while it waits for what its job needs): whether
    /// a cancel or a stop has arrived. Those stay for the next look; a child's exit is
    /// dropped, since no child of the run exists yet and the wait's own helpers (macOS
    /// `pmset`) exit as they are read.
    pub fn pending(&mut self) -> bool {
        let kept: Vec<Received> = self
            .received()
            .into_iter()
            .filter(|r| r.signal != libc::SIGCHLD)
            .collect();
        self.put_back(&kept);
        !kept.is_empty()
    }

    /// The signals received since the last call, oldest first.
    pub fn take(&mut self) -> Vec<libc::c_int> {
        self.received().into_iter().map(|r| r.signal).collect()
    }

    /// The signals received since the last call, as their handler recorded them, oldest
    /// first.
    fn received(&mut self) -> Vec<Received> {
        // Whole records only: the handler writes each in one write, which a pipe keeps
        // whole (it is far below PIPE_BUF), and reads of a multiple of its size split none.
        let mut buf = [0u8; RECORD * 64];
        let mut got = std::mem::take(&mut self.kept);
        loop {
            match self.read.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend(
                    buf[..n]
                        .chunks_exact(RECORD)
                        .map(Received::from_bytes)
                        .filter(|r| r.signal != WAKE),
                ),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // WouldBlock: drained.
                Err(_) => break,
            }
        }
        got
    }

    /// While the monitor waits for a run: whether a stop of the monitor is pending. Every
    /// signal stays for the next look, a cancel among them perhaps queued for the run
    /// about to be handed over.
    pub fn stop_pending(&mut self) -> bool {
        let got = self.received();
        self.put_back(&got);
        got.iter().any(Received::is_stop)
    }

    /// Between two runs: drops the child exits and the cancels received so far, except
    /// those queued for the run `keep` (the one just handed over; `None` before one is),
    /// and keeps any stop of the monitor pending, for the next look. False when a stop
    /// is pending.
    pub fn drop_cancels(&mut self, keep: Option<i64>) -> bool {
        let kept: Vec<Received> = self
            .received()
            .into_iter()
            .filter(|r| match r.signal {
                libc::SIGCHLD => false,
                libc::SIGUSR1 => keep.is_some() && r.run == keep,
                _ => true,
            })
            .collect();
        self.put_back(&kept);
        !kept.iter().any(Received::is_stop)
    }

    /// Puts `records`, just looked at, back for the next look: ahead of any signal that
    /// came since (written back into the pipe, they would go behind it, and a stop that
    /// came after a cancel would be taken first). The pipe is woken, so whoever polls it
    /// looks again.
    fn put_back(&mut self, records: &[Received]) {
        if records.is_empty() {
            return;
        }
        self.kept.splice(0..0, records.iter().copied());
        let wake = Received {
            signal: WAKE,
            run: None,
        };
        // Cannot fail short of a full pipe, and then the pipe is readable anyway.
        let _ = (&self.write).write_all(&wake.to_bytes());
    }
}

/// The record [`SignalPipe::put_back`] writes to wake the pipe: no signal has number 0.
const WAKE: libc::c_int = 0;

/// The size of a signal's record in the pipe: its number, and the run id a queued cancel
/// carries (0: none).
const RECORD: usize = 9;

/// One signal as its handler recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Received {
    signal: libc::c_int,
    /// The run a cancel was queued for (`sigqueue` with the run's id).
    run: Option<i64>,
}

impl Received {
    /// Whether it asks the monitor itself to stop (neither a cancel nor a child's exit).
    fn is_stop(&self) -> bool {
        self.signal != libc::SIGUSR1 && self.signal != libc::SIGCHLD
    }

    fn from_bytes(record: &[u8]) -> Self {
        let mut id = [0u8; 8];
        id.copy_from_slice(&record[1..RECORD]);
        let id = i64::from_ne_bytes(id);
        Self {
            signal: libc::c_int::from(record[0]),
            run: (id != 0).then_some(id),
        }
    }

    fn to_bytes(self) -> [u8; RECORD] {
        let mut record = [0u8; RECORD];
        record[0] = self.signal as u8;
        record[1..].copy_from_slice(&self.run.unwrap_or(0).to_ne_bytes());
        record
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
        action.sa_sigaction = on_signal
            as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
            as libc::sighandler_t;
        // SA_RESTART spares blocking calls elsewhere from EINTR; poll(2) is woken anyway
        // by the record in the pipe. Stopped children are none of the monitor's business.
        action.sa_flags = libc::SA_SIGINFO
            | libc::SA_RESTART
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

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler; reading it,
    // write(2) and errno are async-signal-safe; errno is restored so that the interrupted
    // code sees its own.
    unsafe {
        let errno = errno_location();
        let saved = *errno;
        let record = Received {
            signal: sig,
            run: queued_run(sig, info),
        }
        .to_bytes();
        libc::write(
            WRITE_FD.load(Ordering::SeqCst),
            record.as_ptr().cast(),
            RECORD,
        );
        *errno = saved;
    }
}

/// The run id a cancel was queued with (`sigqueue`), if it was; never where signals
/// carry no value (see [`stead_sys::signal`]).
///
/// # Safety
/// `info` is the siginfo the kernel passed to the handler of `sig`.
unsafe fn queued_run(sig: libc::c_int, info: *const libc::siginfo_t) -> Option<i64> {
    if sig != libc::SIGUSR1 {
        return None;
    }
    // SAFETY: as the caller promises.
    let id = unsafe { stead_sys::signal::queued_value(sig, info) }?;
    (id > 0).then_some(id)
}

use stead_sys::signal::errno_location;

#[cfg(test)]
mod tests {
    use super::*;

    /// Queues SIGUSR1 to this process, carrying `run` as a server's cancel does where
    /// the platform carries a value.
    fn queue_cancel(run: i64) {
        let sent = stead_sys::signal::queue(std::process::id(), rustix::process::Signal::USR1, run);
        assert!(sent.is_ok(), "{sent:?}");
    }

    /// The run a cancel queued with `run` arrives with here.
    fn as_received(run: i64) -> Option<i64> {
        stead_sys::signal::CARRIES_VALUES.then_some(run)
    }

    /// Sends a signal with `send` and waits for its record (a signal sent to this process
    /// may be handled by another of its threads): one at a time, since a second SIGUSR1
    /// sent while the first is still pending would be merged into it.
    fn sent(pipe: &mut SignalPipe, send: impl FnOnce()) -> Received {
        send();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let got = pipe.received();
            if let [one] = got[..] {
                return one;
            }
            assert!(got.is_empty(), "{got:?}");
            assert!(
                std::time::Instant::now() < deadline,
                "the signal never came"
            );
            std::thread::yield_now();
        }
    }

    fn kill_self(sig: libc::c_int) {
        // SAFETY: a signal this process handles.
        assert_eq!(unsafe { libc::kill(libc::getpid(), sig) }, 0);
    }

    #[test]
    fn between_runs_only_a_cancel_queued_for_the_run_just_handed_over_is_kept() {
        let mut pipe = SignalPipe::install().expect("installed");
        let cancel = |run| Received {
            signal: libc::SIGUSR1,
            run,
        };
        let got = [
            sent(&mut pipe, || queue_cancel(41)),
            sent(&mut pipe, || kill_self(libc::SIGUSR1)),
            sent(&mut pipe, || queue_cancel(42)),
        ];
        assert_eq!(
            got,
            [
                cancel(as_received(41)),
                cancel(None),
                cancel(as_received(42))
            ]
        );
        // Sorted out for the run 42 just handed over: only its own cancel is kept
        // (where no value rides, a monitor takes one run only, and none is kept).
        pipe.put_back(&got);
        assert!(pipe.drop_cancels(Some(42)), "no stop pending");
        let kept: Vec<Received> = as_received(42)
            .map(|run| cancel(Some(run)))
            .into_iter()
            .collect();
        assert_eq!(pipe.received(), kept);
        // Before a run is handed over every cancel goes; a stop stays, and says so.
        let got = [
            sent(&mut pipe, || queue_cancel(42)),
            sent(&mut pipe, || kill_self(libc::SIGTERM)),
        ];
        pipe.put_back(&got);
        assert!(!pipe.drop_cancels(None), "a stop is pending");
        assert_eq!(pipe.take(), [libc::SIGTERM]);
    }

    #[test]
    fn before_the_command_a_childs_exit_is_no_cancel_and_a_cancel_stays() {
        let mut pipe = SignalPipe::install().expect("installed");
        // A helper of the wait (macOS pmset) exited: nothing to stop the wait for.
        let exited = sent(&mut pipe, || kill_self(libc::SIGCHLD));
        pipe.put_back(&[exited]);
        assert!(!pipe.pending());
        assert!(pipe.take().is_empty(), "the child's exit is dropped");
        let cancel = sent(&mut pipe, || queue_cancel(7));
        pipe.put_back(&[cancel]);
        assert!(pipe.pending());
        assert!(pipe.pending(), "still there for the next look");
        assert_eq!(pipe.take(), [libc::SIGUSR1]);
    }

    #[test]
    fn signals_put_back_stay_ahead_of_those_that_came_meanwhile() {
        let mut pipe = SignalPipe::install().expect("installed");
        let cancel = sent(&mut pipe, || queue_cancel(7));
        // A stop that lands between a look and the put-back of what it saw.
        kill_self(libc::SIGTERM);
        let mut fds = [rustix::event::PollFd::new(
            &pipe.read,
            rustix::event::PollFlags::IN,
        )];
        let ten_seconds = rustix::event::Timespec {
            tv_sec: 10,
            tv_nsec: 0,
        };
        assert_eq!(
            rustix::event::poll(&mut fds, Some(&ten_seconds)).expect("poll"),
            1,
            "the stop came"
        );
        pipe.put_back(&[cancel]);
        assert_eq!(pipe.take(), [libc::SIGUSR1, libc::SIGTERM], "in order");
        // Nothing is left, and the pipe was woken for nothing more.
        assert!(pipe.take().is_empty());
    }
}
