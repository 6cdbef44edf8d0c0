//! The event loop that watches a started command until its process group is gone, and
//! the [`RunEnd`] it comes to. The run's command, each alternative and the failure hook
//! are all watched by it, each within its [`Limits`].
//!
//! One thread, one `poll` over the command's stdout and stderr and the signal pipe,
//! sleeping until the next deadline: the timeout, a due SIGKILL, a check on the group,
//! or the end of the final drain. Stopping the command (cancel, timeout, the monitor
//! itself being stopped) is always the same escalation on the whole group: SIGTERM,
//! then SIGKILL after the grace if anything in it is still alive.

use std::collections::HashSet;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal};
use stead_protocol::RunStatus;

use super::log::Log;
use super::process_group::{self, Started};
use super::reap::{self, ChildExit};
use super::signals::SignalPipe;
use super::sweep::{self, Identity};
use stead_core::runs::RunEnd;

/// How long to wait for the output pipes to close once the group is gone: a descendant
/// that escaped the group (setsid) may hold them open indefinitely.
const DRAIN: Duration = Duration::from_secs(1);

/// Bounds of the backoff between checks of a group that outlived its leader. Most
/// deaths are announced by SIGCHLD (orphans are the monitor's children); this catches
/// members whose parent is some other process.
const FIRST_RECHECK: Duration = Duration::from_millis(10);
const LAST_RECHECK: Duration = Duration::from_secs(1);

/// Why the monitor is stopping the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGUSR1 from the server.
    Cancelled,
    /// The monitor itself received this signal.
    Interrupted(i32),
    /// The timeout, in milliseconds, ran out.
    TimedOut(u64),
    /// The run was ended on the ledger by a server while its command still ran: its host
    /// was judged lost. The work is someone else's debt now, so the command stops.
    Settled,
    /// The run may resume on any host, and its host could not confirm it with the shared
    /// ledger for this many milliseconds (a lease): the others may judge the host lost
    /// and resume it elsewhere, so the command stops rather than run twice.
    Unconfirmed(u64),
}

impl Stop {
    /// The stop a signal to the monitor asks for, if any.
    pub fn from_signal(sig: i32) -> Option<Self> {
        match sig {
            libc::SIGUSR1 => Some(Stop::Cancelled),
            libc::SIGTERM | libc::SIGINT | libc::SIGHUP => Some(Stop::Interrupted(sig)),
            _ => None,
        }
    }

    pub fn status(self) -> RunStatus {
        match self {
            Stop::Cancelled => RunStatus::Cancelled,
            Stop::Interrupted(_) | Stop::Settled | Stop::Unconfirmed(_) => RunStatus::Interrupted,
            Stop::TimedOut(_) => RunStatus::Failed,
        }
    }

    /// Whether the stop cuts the job short by stead's own lifecycle (cancel, the monitor
    /// being stopped), as opposed to a timeout, which is the job's own failure.
    pub fn is_cut(self) -> bool {
        !matches!(self, Stop::TimedOut(_))
    }

    pub fn reason(self) -> String {
        match self {
            Stop::Cancelled => "cancelled".into(),
            Stop::Interrupted(sig) => format!(
                "interrupted: the monitor received {}",
                reap::signal_name(sig)
            ),
            Stop::TimedOut(ms) => format!("timed out after {}", readable(ms)),
            Stop::Settled => {
                "interrupted: the ledger says its run already ended (its host was judged lost)"
                    .into()
            }
            Stop::Unconfirmed(ms) => format!(
                "interrupted: this host could not confirm the run with the shared ledger for {} (a lease), so another host may resume it; stopped so that the work does not run twice",
                readable(ms)
            ),
        }
    }
}

fn readable(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        stead_core::schedule::format_duration(Duration::from_millis(ms))
    }
}

/// What bounds a watched command: a timeout, and the grace between SIGTERM and SIGKILL.
/// Both count time the machine was awake, never time it slept (a lid closed is not the
/// command's doing): the timeout on the awake clock (`stead_sys::clock::awake`), the
/// grace on `Instant`, which is that clock on both platforms.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// When the command times out, on the awake clock, with the timeout in milliseconds.
    /// Fixed once, so that a run's alternatives share its timeout.
    deadline: Option<(Duration, u64)>,
    kill_grace: Duration,
}

impl Limits {
    /// A timeout of `timeout_ms` (if any) counted from now, and a grace of `kill_grace_ms`.
    pub fn from_now(timeout_ms: Option<u64>, kill_grace_ms: u64) -> Self {
        let deadline = timeout_ms.map(|ms| {
            let at = stead_sys::clock::awake().saturating_add(Duration::from_millis(ms));
            (at, ms)
        });
        Self {
            deadline,
            kill_grace: Duration::from_millis(kill_grace_ms),
        }
    }

    /// The timeout's stop, once the deadline has passed.
    pub fn expired(&self) -> Option<Stop> {
        let (at, ms) = self.deadline?;
        (stead_sys::clock::awake() >= at).then_some(Stop::TimedOut(ms))
    }
}

/// How a watched command ended.
#[derive(Debug)]
pub struct Watched {
    pub end: RunEnd,
    /// Why the monitor stopped the command, if it did; `end` then says so.
    pub stop: Option<Stop>,
    /// A stop asked for once the command had exited by itself: too late to change how it
    /// ended, but nothing more may be started.
    pub late: Option<Stop>,
}

/// How often, and how, a monitor on a shared ledger asks whether its run is still its
/// own: `check` answers the stop to make, if the run was ended by a server that judged
/// its host lost, or could not be confirmed for too long.
#[derive(Clone, Copy)]
pub struct Ownership<'a> {
    pub every: Duration,
    pub check: &'a dyn Fn() -> Option<Stop>,
}

/// Watches `started` to the end: copies its output to `log`, enforces the timeout of
/// `limits`, obeys the signals, stops when `ownership` says the run is no longer its
/// own, kills what is left of its group, and reaps.
pub fn watch(
    limits: &Limits,
    started: Started,
    signals: &mut SignalPipe,
    log: &mut Log,
    ownership: Option<Ownership<'_>>,
) -> Watched {
    let mut watch = Watch {
        limits: *limits,
        leader: started.leader,
        marker: started.marker,
        pipes: [Some(started.stdout), Some(started.stderr)],
        exit: None,
        stop: None,
        late: None,
        signalled: HashSet::new(),
        kill_at: None,
        recheck_at: None,
        recheck: FIRST_RECHECK,
        drain_until: None,
        nothing_left: false,
        own_check_at: ownership.map(|o| Instant::now() + o.every),
    };
    let exit = loop {
        if let Some(exit) = watch.finished() {
            break exit;
        }
        let timeout = watch.next_wake();
        watch.wait(timeout, signals, log);
        for sig in signals.take() {
            watch.on_signal(sig);
        }
        watch.on_time();
        if let Some(own) = ownership
            && watch.own_check_at.is_some_and(|at| Instant::now() >= at)
        {
            watch.own_check_at = Some(Instant::now() + own.every);
            if watch.exit.is_none()
                && watch.stop.is_none()
                && let Some(stop) = (own.check)()
            {
                log.note(&stop.reason());
                watch.request_stop(stop);
            }
        }
    };
    // What left the group (`setsid`, a double fork) goes too; those re-parented to the
    // monitor are then its zombies, reaped with the rest. When nothing at all outlived
    // the leader there is nothing to look for: only a live process could have made one.
    let escaped = if watch.nothing_left {
        0
    } else {
        sweep::end_descendants(
            watch.limits.kill_grace,
            &watch.signalled,
            &watch.marker,
            watch.leader.as_raw_nonzero().get(),
        )
    };
    reap::reap_all();
    // Pipes left unread when the drain ran out of time: what they kept back goes in.
    for stream in 0..watch.pipes.len() {
        log.end_output(stream);
    }
    Watched {
        end: watch.end(exit, escaped),
        stop: watch.stop,
        late: watch.late,
    }
}

struct Watch {
    limits: Limits,
    leader: Pid,
    /// The marker the command's processes carry (see [`process_group::Started`]).
    marker: String,
    /// stdout and stderr, until each reaches end of file.
    pipes: [Option<OwnedFd>; 2],
    /// The leader's exit, once it has exited (it stays unreaped until the end).
    exit: Option<ChildExit>,
    stop: Option<Stop>,
    /// A stop asked for after the leader had exited by itself.
    late: Option<Stop>,
    /// Processes of the group alive when the monitor first signalled it (once the
    /// leader had exited by itself: the leftovers). Kept by identity: a process still
    /// starting as the leader exited may leave the group (a `setsid` on its way) between
    /// the count and the signal, and the sweep of escapees then finds it again.
    signalled: HashSet<Identity>,
    /// When SIGKILL is due, once the group has been sent SIGTERM.
    kill_at: Option<Instant>,
    /// When to next count the group's live members, once the leader has exited; `None`
    /// once the group is empty (it cannot fill again: only its members could join it).
    recheck_at: Option<Instant>,
    recheck: Duration,
    /// When to stop waiting for the pipes, once the group is empty.
    drain_until: Option<Instant>,
    /// Nothing descended from the monitor was alive when the leader exited: the group
    /// is empty for good, and nothing escaped it.
    nothing_left: bool,
    /// When to next ask the ledger whether the run is still this monitor's.
    own_check_at: Option<Instant>,
}

impl Watch {
    /// The leader's exit, once the group is empty and the output drained (or the drain
    /// ran out of time).
    fn finished(&mut self) -> Option<ChildExit> {
        let exit = self.exit?;
        let now = Instant::now();
        if self.recheck_at.is_some_and(|at| at <= now) {
            if process_group::live_members(self.leader, &self.marker).is_empty() {
                self.recheck_at = None;
                self.kill_at = None;
                self.drain_until = Some(now + DRAIN);
            } else {
                self.recheck_at = Some(now + self.recheck);
                self.recheck = (self.recheck * 2).min(LAST_RECHECK);
            }
        }
        let until = self.drain_until?;
        let drained = self.pipes.iter().all(Option::is_none);
        (drained || now >= until).then_some(exit)
    }

    /// How long `poll` may sleep: until the earliest pending deadline, or indefinitely.
    fn next_wake(&self) -> Option<Duration> {
        let now = Instant::now();
        let timeout = self
            .limits
            .deadline
            .filter(|_| self.exit.is_none() && self.stop.is_none());
        let timeout = timeout.map(|(at, _)| at.saturating_sub(stead_sys::clock::awake()));
        let own_check = self
            .own_check_at
            .filter(|_| self.exit.is_none() && self.stop.is_none());
        [self.kill_at, self.recheck_at, self.drain_until, own_check]
            .into_iter()
            .flatten()
            .map(|at| at.saturating_duration_since(now))
            .chain(timeout)
            .min()
    }

    /// Sleeps until output, a signal or `timeout`; copies whatever output is ready.
    fn wait(&mut self, timeout: Option<Duration>, signals: &SignalPipe, log: &mut Log) {
        let mut ready = [false; 2];
        {
            let mut fds = vec![PollFd::from_borrowed_fd(signals.fd(), PollFlags::IN)];
            let mut which = Vec::with_capacity(2);
            for (i, pipe) in self.pipes.iter().enumerate() {
                if let Some(fd) = pipe {
                    fds.push(PollFd::new(fd, PollFlags::IN));
                    which.push(i);
                }
            }
            let timeout = timeout.map(|d| {
                Timespec::try_from(d).unwrap_or(Timespec {
                    tv_sec: i64::MAX,
                    tv_nsec: 0,
                })
            });
            // EINTR: a signal arrived, and its byte is waiting in the signal pipe.
            if rustix::event::poll(&mut fds, timeout.as_ref()).is_err() {
                return;
            }
            for (fd, &i) in fds[1..].iter().zip(&which) {
                ready[i] = !fd.revents().is_empty();
            }
        }
        for (i, ready) in ready.into_iter().enumerate() {
            if ready {
                self.read(i, log);
            }
        }
    }

    fn read(&mut self, i: usize, log: &mut Log) {
        let Some(fd) = &self.pipes[i] else { return };
        let mut buf = [0u8; 16 * 1024];
        match rustix::io::read(fd.as_fd(), &mut buf) {
            Ok(n) if n > 0 => log.output(i, &buf[..n]),
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {}
            // End of file, or a pipe that cannot be read.
            Ok(_) | Err(_) => {
                self.pipes[i] = None;
                log.end_output(i);
            }
        }
    }

    fn on_signal(&mut self, sig: i32) {
        if sig == libc::SIGCHLD {
            if self.exit.is_none() {
                if let Some(exit) = reap::reap_except(self.leader) {
                    self.on_exit(exit);
                }
            } else {
                reap::reap_except(self.leader);
            }
            // A death in the group: count it again now rather than at the next backoff.
            if self.recheck_at.is_some() {
                self.recheck_at = Some(Instant::now());
            }
        } else if let Some(stop) = Stop::from_signal(sig) {
            self.request_stop(stop);
        }
    }

    fn on_exit(&mut self, exit: ChildExit) {
        self.exit = Some(exit);
        let now = Instant::now();
        let (in_group, anything) = process_group::outlived(self.leader, &self.marker);
        if !anything {
            self.nothing_left = true;
            self.recheck_at = None;
            self.kill_at = None;
            self.drain_until = Some(now + DRAIN);
            return;
        }
        self.recheck_at = Some(now);
        if self.stop.is_none() && !in_group.is_empty() {
            // Whatever outlived the leader is left over: the run is over, so it goes.
            if self.signalled.is_empty() {
                self.signalled = in_group.into_iter().collect();
            }
            self.terminate();
        }
    }

    fn request_stop(&mut self, stop: Stop) {
        if self.exit.is_none() && self.stop.is_none() {
            self.stop = Some(stop);
            self.terminate();
            return;
        }
        if self.stop.is_none() {
            self.late.get_or_insert(stop);
        }
        if self.kill_at.is_some() {
            // Asked while the group is being stopped: skip the rest of the grace.
            self.kill();
        }
    }

    fn on_time(&mut self) {
        if self.exit.is_none()
            && self.stop.is_none()
            && let Some(stop) = self.limits.expired()
        {
            self.request_stop(stop);
        }
        if self.kill_at.is_some_and(|at| Instant::now() >= at) {
            self.kill();
        }
    }

    fn terminate(&mut self) {
        if self.signalled.is_empty() {
            self.signalled = process_group::live_members(self.leader, &self.marker)
                .into_iter()
                .collect();
        }
        process_group::signal(self.leader, Signal::TERM);
        self.kill_at = Some(Instant::now() + self.limits.kill_grace);
    }

    fn kill(&mut self) {
        process_group::signal(self.leader, Signal::KILL);
        self.kill_at = None;
        if self.recheck_at.is_some() {
            self.recheck_at = Some(Instant::now());
        }
    }

    /// How the run ended; `escaped` is how many descendants outside the group were
    /// ended after it.
    fn end(&self, exit: ChildExit, escaped: usize) -> RunEnd {
        let now = Timestamp::now();
        let mut end = match (self.stop, exit) {
            (None, ChildExit::Code(code)) => RunEnd::exited(code, now),
            (None, ChildExit::Signal(sig)) => RunEnd {
                signal: Some(sig),
                ..RunEnd::with_reason(
                    RunStatus::Failed,
                    format!("killed by signal {sig} ({})", reap::signal_name(sig)),
                    now,
                )
            },
            // A timed-out command may have died of SIGTERM or SIGKILL, or exited on its
            // own while being stopped: worth recording. A cancel or an interruption is
            // stead's own doing, and how the command then died says nothing more.
            (Some(stop @ Stop::TimedOut(_)), exit) => RunEnd {
                exit_code: exit.code(),
                signal: exit.signal(),
                ..RunEnd::with_reason(RunStatus::Failed, stop.reason(), now)
            },
            (Some(stop), _) => RunEnd::with_reason(stop.status(), stop.reason(), now),
        };
        let ended = self.signalled.len() + escaped;
        let leftovers = if self.stop.is_none() { ended } else { 0 };
        if leftovers > 0 {
            let plural = if leftovers == 1 { "" } else { "es" };
            let note = format!("killed {leftovers} leftover process{plural}");
            end.reason = Some(match end.reason {
                Some(reason) => format!("{reason}; {note}"),
                None => note,
            });
        }
        if self.stop.is_some() || leftovers > 0 {
            end.ended_processes = u32::try_from(ended).ok();
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_read_well() {
        assert_eq!(readable(300), "300ms");
        assert_eq!(readable(90_000), "1m30s");
        assert_eq!(readable(3_600_000), "1h");
    }
}
