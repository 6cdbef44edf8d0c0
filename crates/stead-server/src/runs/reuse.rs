//! Monitors that take another run. A monitor whose run is recorded through this server,
//! and which has nothing of it left (no process, no failure hook), offers itself on its
//! link (`monitor_next`) and waits a moment; a run admitted meanwhile is handed to it
//! instead of to a new monitor. A process per run costs its fork, the page faults that
//! follow and its exit, most of what a monitor costs on a short command: a monitor that
//! runs many commands in a row pays them once.
//!
//! A reused monitor's pid outlives its run, so a signal meant for one run must never
//! reach the next. Every monitor linked to this server is on the books with the run it
//! has (none while it waits), and a signal for a run goes to its monitor only while the
//! books say the run is the monitor's, under the lock that hands runs over. A signal sent
//! before the monitor offered itself is pending on it before the offer's answer arrives,
//! and the monitor drops a cancel it finds then (see `stead_monitor`).

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::sync::Mutex;

use tokio::sync::oneshot;

use super::watch::Pidfd;

/// The most monitors waiting for a run at once; more than this are let go.
const MOST_IDLE: usize = 8;

/// A monitor's link as this server holds it: the process at its other end.
#[derive(Debug)]
pub struct Link {
    pub pid: u32,
    /// A pidfd of the monitor, opened while it could not have been reaped.
    pub pidfd: Pidfd,
}

/// The monitors linked to this server, with their runs; see the module docs.
#[derive(Debug, Default)]
pub struct Monitors {
    books: Mutex<Books>,
}

#[derive(Debug, Default)]
struct Books {
    /// Each linked monitor's run (`None`: waiting for one).
    runs: HashMap<u32, Option<i64>>,
    /// The monitors waiting, the latest last.
    idle: Vec<Idle>,
    next_token: u64,
}

#[derive(Debug)]
struct Idle {
    pid: u32,
    token: u64,
    pidfd: Pidfd,
    give: oneshot::Sender<serde_json::Value>,
}

/// A monitor's offer, taken: what it waits on, and how to withdraw it.
pub struct Offer {
    pub token: u64,
    pub taken: oneshot::Receiver<serde_json::Value>,
}

impl Monitors {
    fn books(&self) -> std::sync::MutexGuard<'_, Books> {
        self.books.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A monitor was linked to this server for `run_id`.
    pub fn linked(&self, pid: u32, run_id: i64) {
        self.books().runs.insert(pid, Some(run_id));
    }

    /// The monitor's link closed: it is off the books.
    pub fn gone(&self, pid: u32) {
        let mut books = self.books();
        books.runs.remove(&pid);
        books.idle.retain(|idle| idle.pid != pid);
    }

    /// Runs `signal` (which signals the monitor `pid` about `run_id`) unless the books
    /// say the monitor has another run now, or none: `None` then, as the run is over.
    /// A monitor not on the books (adopted from an earlier server) is signalled.
    pub fn signal_for(&self, pid: u32, run_id: i64, signal: impl FnOnce() -> bool) -> Option<bool> {
        let books = self.books();
        match books.runs.get(&pid) {
            Some(Some(run)) if *run == run_id => Some(signal()),
            Some(_) => None,
            None => Some(signal()),
        }
    }

    /// The monitor at `link`, done with `after`, offers to take another run. `None`:
    /// it is not taken (too many wait, or `after` was not its run), and exits.
    pub fn offer(&self, link: &Link, after: i64) -> Option<Offer> {
        let mut books = self.books();
        if books.runs.get(&link.pid) != Some(&Some(after)) {
            return None;
        }
        books.runs.insert(link.pid, None);
        if books.idle.len() >= MOST_IDLE {
            return None;
        }
        let pidfd = link.pidfd.clone();
        let (give, taken) = oneshot::channel();
        let token = books.next_token;
        books.next_token += 1;
        books.idle.push(Idle {
            pid: link.pid,
            token,
            pidfd,
            give,
        });
        Some(Offer { token, taken })
    }

    /// Whether any monitor waits for a run.
    pub fn any_waiting(&self) -> bool {
        !self.books().idle.is_empty()
    }

    /// Withdraws an offer that waited long enough; false when it was taken meanwhile
    /// (its receiver then has the run, or is closed).
    pub fn withdraw(&self, token: u64) -> bool {
        let mut books = self.books();
        let before = books.idle.len();
        books.idle.retain(|idle| idle.token != token);
        books.idle.len() < before
    }

    /// Hands `run_id`, started by `start` (a `MonitorStart`), to the monitor that offered
    /// itself last and is still alive: its pid and a pidfd to watch it by. `None` when no
    /// monitor waits.
    pub fn hand(&self, run_id: i64, start: &serde_json::Value) -> Option<(u32, Pidfd)> {
        let mut books = self.books();
        while let Some(idle) = books.idle.pop() {
            if exited(&idle.pidfd) {
                books.runs.remove(&idle.pid);
                continue;
            }
            books.runs.insert(idle.pid, Some(run_id));
            if idle.give.send(start.clone()).is_ok() {
                return Some((idle.pid, idle.pidfd));
            }
            // Its wait was given up on (its link closed): not this one.
            books.runs.insert(idle.pid, None);
        }
        None
    }
}

/// Whether the process behind `pidfd` has exited (a pidfd reads as readable then).
fn exited(pidfd: &Pidfd) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let pidfd = pidfd.get_ref().as_fd();
    let mut fds = [PollFd::new(&pidfd, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    !matches!(rustix::event::poll(&mut fds, Some(&now)), Ok(0))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::runs::watch::ProcessWatch;

    /// A real process to stand for a monitor, killed and reaped on drop.
    struct Process(std::process::Child);

    impl Process {
        fn start() -> Self {
            Self(
                std::process::Command::new("sleep")
                    .arg("60")
                    .spawn()
                    .expect("sleep starts"),
            )
        }

        /// Its link, its pidfd registered with the runtime as a monitor's is (so only
        /// inside one).
        fn link(&self) -> Link {
            let pid = rustix::process::Pid::from_child(&self.0);
            let fd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty())
                .expect("pidfd_open");
            Link {
                pid: self.0.id(),
                pidfd: ProcessWatch::of_pidfd(self.0.id(), fd)
                    .pidfd()
                    .expect("registered"),
            }
        }

        /// Its link, on the books of `Monitors` of their own with run 1.
        fn linked(&self) -> (Link, Monitors) {
            let (link, monitors) = (self.link(), Monitors::default());
            monitors.linked(link.pid, 1);
            (link, monitors)
        }

        fn end(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    impl Drop for Process {
        fn drop(&mut self) {
            self.end();
        }
    }

    #[tokio::test]
    async fn a_signal_reaches_a_monitor_only_while_the_run_is_its_own() {
        let process = Process::start();
        let (link, monitors) = process.linked();
        assert_eq!(monitors.signal_for(link.pid, 1, || true), Some(true));
        assert_eq!(monitors.signal_for(link.pid, 2, || true), None);
        // Offered for a run that is not its own: refused, and its books unchanged.
        assert!(monitors.offer(&link, 2).is_none());
        let mut offer = monitors.offer(&link, 1).expect("offered");
        assert_eq!(monitors.signal_for(link.pid, 1, || true), None, "waiting");
        let start = serde_json::json!({"run": 7});
        let (pid, _pidfd) = monitors.hand(7, &start).expect("handed over");
        assert_eq!(pid, link.pid);
        assert_eq!(offer.taken.try_recv().expect("the start came"), start);
        assert!(!monitors.withdraw(offer.token), "taken already");
        assert_eq!(monitors.signal_for(link.pid, 1, || true), None);
        assert_eq!(monitors.signal_for(link.pid, 7, || true), Some(true));
        // A monitor not on the books (adopted) is signalled as it always was.
        monitors.gone(link.pid);
        assert_eq!(monitors.signal_for(link.pid, 1, || true), Some(true));
    }

    #[tokio::test]
    async fn a_run_goes_to_a_live_monitor_and_never_to_one_that_exited() {
        let (mut dead, alive) = (Process::start(), Process::start());
        let (dead_link, alive_link) = (dead.link(), alive.link());
        let monitors = Monitors::default();
        monitors.linked(alive_link.pid, 1);
        monitors.linked(dead_link.pid, 2);
        let _alive_offer = monitors.offer(&alive_link, 1).expect("offered");
        let _dead_offer = monitors.offer(&dead_link, 2).expect("offered");
        dead.end();
        // The dead one offered itself last, and is skipped.
        let (pid, _) = monitors
            .hand(3, &serde_json::json!({}))
            .expect("handed over");
        assert_eq!(pid, alive_link.pid);
        assert!(
            monitors.hand(4, &serde_json::json!({})).is_none(),
            "none waits"
        );
    }

    #[tokio::test]
    async fn an_offer_withdrawn_takes_nothing() {
        let process = Process::start();
        let (link, monitors) = process.linked();
        let offer = monitors.offer(&link, 1).expect("offered");
        assert!(monitors.withdraw(offer.token));
        assert!(monitors.hand(2, &serde_json::json!({})).is_none());
    }
}
