//! Monitors that take another run. A monitor whose run is recorded through this server,
//! and which has nothing of it left (no process, no failure hook), offers itself on its
//! link (`monitor_next`) and waits a moment; a run admitted meanwhile is handed to it
//! instead of to a new monitor. A process per run costs its fork, the page faults that
//! follow and its exit, most of what a monitor costs on a short command: a monitor that
//! runs many commands in a row pays them once.
//!
//! An on-demand run goes further: a waiting monitor is reserved before the run's
//! admission commits, and the admission marks the run running for it in the same commit
//! ([`Monitors::reserve`]), so the run costs one commit and no mark from its monitor.
//! A server that dies between that commit and the hand-over leaves a row `running` for a
//! monitor that never gets it: the monitor exits when its link closes, and the run is
//! settled as any run whose monitor died is.
//!
//! A reused monitor's pid outlives its run, so a signal meant for one run must never
//! reach the next. Every monitor linked to this server is on the books with what it
//! holds, and a signal for a run goes to its monitor only while the books say the run is
//! the monitor's, under the lock that hands runs over. A run's hold ends when its end is
//! recorded ([`Monitors::ended`]), before the monitor is answered: every signal for it
//! is then delivered before the monitor can offer itself, and it drops them. A cancel
//! carries its run's id (`sigqueue`, see [`stead_sys::signal`]), so the monitor keeps one
//! for the run just handed to it, and a cancel of a run marked for a reserved monitor waits on the books until the
//! run is handed over.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::process::Signal;
use stead_sys::identity::{self, StartIdentity};
use tokio::sync::oneshot;

use super::watch::ExitFd;

/// The most monitors waiting for a run at once; more than this are let go.
const MOST_IDLE: usize = 8;
/// How much of its wait a monitor must have left to be reserved for an admission: the
/// admission's commit must come before the monitor gives up on its offer, or the run is
/// marked for a monitor that never takes it.
const RESERVE_MARGIN: Duration = Duration::from_millis(250);

/// A monitor's link as this server holds it: the process at its other end.
#[derive(Debug)]
pub struct Link {
    pub pid: u32,
    /// The monitor's exit watch, opened while it could not have been reaped.
    pub exit: ExitFd,
    /// Its start identity, read the first time it offers to take a marked run (a marked
    /// row carries it, as the monitor's own mark would).
    identity: OnceLock<Option<StartIdentity>>,
}

impl Link {
    pub fn new(pid: u32, exit: ExitFd) -> Self {
        Self {
            pid,
            exit,
            identity: OnceLock::new(),
        }
    }

    fn identity(&self) -> Option<StartIdentity> {
        self.identity
            .get_or_init(|| identity::of_pid(self.pid).ok().flatten())
            .clone()
    }
}

/// The monitors linked to this server, with their runs; see the module docs.
#[derive(Debug, Default)]
pub struct Monitors {
    books: Mutex<Books>,
}

#[derive(Debug, Default)]
struct Books {
    /// What each linked monitor holds.
    held: HashMap<u32, Held>,
    /// The monitors waiting, the latest last.
    idle: Vec<Idle>,
    next_token: u64,
}

/// What a linked monitor holds.
#[derive(Debug, PartialEq, Eq)]
enum Held {
    /// A run, until its end is recorded.
    Run(i64),
    /// Nothing: the run it names has its end recorded.
    Ended(i64),
    /// Nothing: it waits for a run.
    Waiting,
    /// Nothing yet: it is reserved for a run being admitted marked for it, and the
    /// signals sent for that run wait here for the hand-over.
    Reserved(Vec<(i64, Signal)>),
}

#[derive(Debug)]
struct Idle {
    pid: u32,
    token: u64,
    exit: ExitFd,
    give: oneshot::Sender<serde_json::Value>,
    /// Its start identity, when it takes marked runs.
    marked_for: Option<StartIdentity>,
    /// When its offer runs out.
    until: Instant,
}

/// A monitor's offer, taken: what it waits on, and how to withdraw it.
pub struct Offer {
    pub token: u64,
    pub taken: oneshot::Receiver<serde_json::Value>,
}

/// A waiting monitor reserved for a run being admitted ([`Monitors::reserve`]).
#[derive(Debug)]
pub struct Reserved(Idle);

impl Reserved {
    /// The monitor's pid and start identity, for the run's mark.
    pub fn taker(&self) -> (u32, &StartIdentity) {
        let identity = self.0.marked_for.as_ref();
        (
            self.0.pid,
            identity.expect("only a monitor with an identity is reserved"),
        )
    }
}

impl Monitors {
    fn books(&self) -> std::sync::MutexGuard<'_, Books> {
        self.books.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A monitor was linked to this server for `run_id`.
    pub fn linked(&self, pid: u32, run_id: i64) {
        self.books().held.insert(pid, Held::Run(run_id));
    }

    /// The monitor's link closed: it is off the books.
    pub fn gone(&self, pid: u32) {
        let mut books = self.books();
        books.held.remove(&pid);
        books.idle.retain(|idle| idle.pid != pid);
    }

    /// The end of `run_id`, the run of the monitor `pid`, is recorded: no signal is sent
    /// for it from now on.
    pub fn ended(&self, pid: u32, run_id: i64) {
        let mut books = self.books();
        if let Some(held) = books.held.get_mut(&pid)
            && *held == Held::Run(run_id)
        {
            *held = Held::Ended(run_id);
        }
    }

    /// Sends `signal` about `run_id` to its monitor `pid` unless the books say the
    /// monitor holds another run now, or none: `None` then, as the run is over. A monitor
    /// reserved for the run gets it once the run is handed over. A monitor not on the
    /// books (adopted from an earlier server) is signalled. Whether it was sent (or held
    /// for the hand-over).
    pub fn signal_for(&self, pid: u32, run_id: i64, signal: Signal) -> Option<bool> {
        let mut books = self.books();
        match books.held.get_mut(&pid) {
            Some(Held::Run(run)) if *run == run_id => Some(send(pid, run_id, signal)),
            Some(Held::Reserved(held)) => {
                held.push((run_id, signal));
                Some(true)
            }
            Some(_) => None,
            None => Some(send(pid, run_id, signal)),
        }
    }

    /// The monitor at `link`, done with `after`, offers to take another run until
    /// `until`; it takes runs marked for it when `takes_marked`. `None`: it is not taken
    /// (too many wait, or `after` was not its run), and exits.
    pub fn offer(
        &self,
        link: &Link,
        after: i64,
        takes_marked: bool,
        until: Instant,
    ) -> Option<Offer> {
        let marked_for = takes_marked.then(|| link.identity()).flatten();
        let mut books = self.books();
        let held = books.held.get_mut(&link.pid)?;
        if *held != Held::Run(after) && *held != Held::Ended(after) {
            return None;
        }
        *held = Held::Waiting;
        if books.idle.len() >= MOST_IDLE {
            return None;
        }
        let exit = link.exit.clone();
        let (give, taken) = oneshot::channel();
        let token = books.next_token;
        books.next_token += 1;
        books.idle.push(Idle {
            pid: link.pid,
            token,
            exit,
            give,
            marked_for,
            until,
        });
        Some(Offer { token, taken })
    }

    /// Whether any monitor waits for a run.
    pub fn any_waiting(&self) -> bool {
        !self.books().idle.is_empty()
    }

    /// Withdraws an offer that waited long enough; false when it was taken meanwhile
    /// (its receiver then has the run, or is closed) or is reserved.
    pub fn withdraw(&self, token: u64) -> bool {
        let mut books = self.books();
        let before = books.idle.len();
        books.idle.retain(|idle| idle.token != token);
        books.idle.len() < before
    }

    /// Hands `run_id`, started by `start` (a `MonitorStart`), to the monitor that offered
    /// itself last and is still alive: its pid and an exit watch to watch it by. `None` when no
    /// monitor waits.
    pub fn hand(&self, run_id: i64, start: &serde_json::Value) -> Option<(u32, ExitFd)> {
        let mut books = self.books();
        while let Some(idle) = books.idle.pop() {
            if exited(&idle.exit) {
                books.held.remove(&idle.pid);
                continue;
            }
            books.held.insert(idle.pid, Held::Run(run_id));
            if idle.give.send(start.clone()).is_ok() {
                return Some((idle.pid, idle.exit));
            }
            // Its wait was given up on (its link closed): not this one.
            books.held.insert(idle.pid, Held::Waiting);
        }
        None
    }

    /// Takes the live monitor that offered itself last among those that take marked
    /// runs and have [`RESERVE_MARGIN`] of their wait left, for a run about to be
    /// admitted: the admission marks the run running for it ([`Reserved::taker`]), and
    /// the run is then [`handed`](Self::hand_reserved) to it, or the monitor
    /// [`released`](Self::release).
    pub fn reserve(&self) -> Option<Reserved> {
        let mut books = self.books();
        let soonest = Instant::now() + RESERVE_MARGIN;
        loop {
            let at = books
                .idle
                .iter()
                .rposition(|i| i.marked_for.is_some() && i.until > soonest)?;
            let idle = books.idle.remove(at);
            if exited(&idle.exit) {
                books.held.remove(&idle.pid);
                continue;
            }
            books.held.insert(idle.pid, Held::Reserved(Vec::new()));
            return Some(Reserved(idle));
        }
    }

    /// Hands `run_id`, admitted marked for the `reserved` monitor, to it with `start`,
    /// then sends it the signals held for the run meanwhile. The monitor's pid and exit watch,
    /// to watch it by; `Err` with them when nothing waits on its offer any more (its link
    /// is no longer served): it never takes the run, and the run is settled when it is
    /// gone.
    pub fn hand_reserved(
        &self,
        reserved: Reserved,
        run_id: i64,
        start: serde_json::Value,
    ) -> Result<(u32, ExitFd), (u32, ExitFd)> {
        let Reserved(idle) = reserved;
        let mut books = self.books();
        let held = books.held.insert(idle.pid, Held::Run(run_id));
        if idle.give.send(start).is_err() {
            books.held.insert(idle.pid, Held::Waiting);
            return Err((idle.pid, idle.exit));
        }
        if let Some(Held::Reserved(signals)) = held {
            for (run, signal) in signals {
                if run == run_id {
                    send(idle.pid, run_id, signal);
                }
            }
        }
        Ok((idle.pid, idle.exit))
    }

    /// A reserved monitor whose run was not marked for it (skipped, waiting its turn, or
    /// refused): it waits for a run again, unless its offer ran out meanwhile or the
    /// server `stopping` sends it away; it is then let go, answered with no run, and
    /// exits. (One whose admission failed in a commit of unknown outcome is dropped
    /// instead: it exits at once.)
    pub fn release(&self, reserved: Reserved, stopping: bool) {
        let Reserved(idle) = reserved;
        let mut books = self.books();
        books.held.insert(idle.pid, Held::Waiting);
        if !stopping && Instant::now() < idle.until {
            books.idle.push(idle);
        }
    }
}

/// Signals the monitor `pid` about `run_id`: a cancel (SIGUSR1) carries the run's id
/// where the platform allows (see [`stead_sys::signal`]), anything else is sent plainly.
/// Whether it was sent.
pub fn send(pid: u32, run_id: i64, signal: Signal) -> bool {
    if signal == Signal::USR1 {
        return stead_sys::signal::queue(pid, signal, run_id).is_ok();
    }
    let Some(raw) = rustix::process::Pid::from_raw(pid as i32) else {
        return false;
    };
    rustix::process::kill_process(raw, signal).is_ok()
}

/// Whether the monitor behind `exit` has exited.
fn exited(exit: &ExitFd) -> bool {
    exit.get_ref().has_exited()
}

#[cfg(test)]
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

        /// Its link, its exit watch registered with the runtime as a monitor's is (so
        /// only inside one).
        fn link(&self) -> Link {
            let watch = stead_sys::exit::ExitWatch::open(self.0.id())
                .expect("an exit watch")
                .expect("the process lives");
            let exit = ProcessWatch::of_exit(watch).exit_fd();
            Link::new(self.0.id(), exit.expect("registered"))
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

    /// A signal that leaves the stand-in process as it is.
    const HARMLESS: Signal = Signal::CONT;

    /// When an offer runs out that waits longer than any test.
    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[tokio::test]
    async fn a_signal_reaches_a_monitor_only_while_the_run_is_its_own() {
        let process = Process::start();
        let (link, monitors) = process.linked();
        assert_eq!(monitors.signal_for(link.pid, 1, HARMLESS), Some(true));
        assert_eq!(monitors.signal_for(link.pid, 2, HARMLESS), None);
        // Offered for a run that is not its own: refused, and its books unchanged.
        assert!(monitors.offer(&link, 2, false, later()).is_none());
        let mut offer = monitors.offer(&link, 1, false, later()).expect("offered");
        assert_eq!(monitors.signal_for(link.pid, 1, HARMLESS), None, "waiting");
        let start = serde_json::json!({"run": 7});
        let (pid, _exit) = monitors.hand(7, &start).expect("handed over");
        assert_eq!(pid, link.pid);
        assert_eq!(offer.taken.try_recv().expect("the start came"), start);
        assert!(!monitors.withdraw(offer.token), "taken already");
        assert_eq!(monitors.signal_for(link.pid, 1, HARMLESS), None);
        assert_eq!(monitors.signal_for(link.pid, 7, HARMLESS), Some(true));
        // Its end recorded, the run is no longer signalled, and the monitor may offer.
        monitors.ended(link.pid, 7);
        assert_eq!(monitors.signal_for(link.pid, 7, HARMLESS), None, "ended");
        assert!(
            monitors.offer(&link, 7, false, later()).is_some(),
            "offered after its end"
        );
        // A monitor not on the books (adopted) is signalled as it always was.
        monitors.gone(link.pid);
        assert_eq!(monitors.signal_for(link.pid, 1, HARMLESS), Some(true));
    }

    #[tokio::test]
    async fn a_cancel_of_a_run_marked_for_a_reserved_monitor_reaches_it_once_handed_over() {
        let mut process = Process::start();
        let (link, monitors) = process.linked();
        let mut offer = monitors.offer(&link, 1, true, later()).expect("offered");
        let reserved = monitors.reserve().expect("reserved");
        let (pid, identity) = reserved.taker();
        assert_eq!(pid, link.pid);
        assert_eq!(Some(identity.clone()), identity::of_pid(pid).unwrap());
        assert!(
            monitors.hand(9, &serde_json::json!({})).is_none(),
            "reserved"
        );
        assert!(!monitors.withdraw(offer.token), "reserved, not withdrawn");
        // A cancel of run 5, marked for it in a commit that ended before the hand-over.
        assert_eq!(monitors.signal_for(pid, 5, Signal::USR1), Some(true));
        assert_eq!(
            monitors.books().held.get(&pid),
            Some(&Held::Reserved(vec![(5, Signal::USR1)])),
            "held until handed over"
        );
        let start = serde_json::json!({"run": 5});
        monitors
            .hand_reserved(reserved, 5, start.clone())
            .expect("handed over");
        assert_eq!(offer.taken.try_recv().expect("the start came"), start);
        // The stand-in has no handler: the cancel it was sent ends it.
        let status = process.0.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGUSR1), "{status:?}");
    }

    #[tokio::test]
    async fn a_monitor_released_or_unable_to_take_marked_runs_is_handed_runs_as_before() {
        let process = Process::start();
        let (link, monitors) = process.linked();
        let mut offer = monitors.offer(&link, 1, true, later()).expect("offered");
        let reserved = monitors.reserve().expect("reserved");
        monitors.release(reserved, false);
        assert!(
            monitors.hand(2, &serde_json::json!({"run": 2})).is_some(),
            "waits again"
        );
        assert_eq!(
            offer.taken.try_recv().unwrap(),
            serde_json::json!({"run": 2})
        );
        // A monitor that did not say it takes marked runs is never reserved.
        let _offer = monitors.offer(&link, 2, false, later()).expect("offered");
        assert!(monitors.reserve().is_none());
        assert!(monitors.hand(3, &serde_json::json!({})).is_some());
    }

    #[tokio::test]
    async fn a_monitor_about_to_give_up_is_not_reserved_and_one_released_late_is_let_go() {
        let process = Process::start();
        let (link, monitors) = process.linked();
        let soon = Instant::now() + RESERVE_MARGIN / 2;
        let _offer = monitors.offer(&link, 1, true, soon).expect("offered");
        assert!(monitors.reserve().is_none(), "too little of its wait left");
        assert!(
            monitors.hand(2, &serde_json::json!({})).is_some(),
            "unmarked"
        );
        // Reserved in time, released once its offer ran out: answered with no run.
        monitors.ended(link.pid, 2);
        let until = Instant::now() + RESERVE_MARGIN * 2;
        let offer = monitors.offer(&link, 2, true, until).expect("offered");
        let reserved = monitors.reserve().expect("reserved");
        tokio::time::sleep_until(until.into()).await;
        monitors.release(reserved, false);
        assert!(offer.taken.await.is_err(), "let go");
        assert!(monitors.hand(3, &serde_json::json!({})).is_none());
        // Released by a stopping server: let go however much of its wait is left.
        monitors.gone(link.pid);
        monitors.linked(link.pid, 4);
        let offer = monitors.offer(&link, 4, true, later()).expect("offered");
        let reserved = monitors.reserve().expect("reserved");
        monitors.release(reserved, true);
        assert!(offer.taken.await.is_err(), "let go");
    }

    #[tokio::test]
    async fn a_run_goes_to_a_live_monitor_and_never_to_one_that_exited() {
        let (mut dead, alive) = (Process::start(), Process::start());
        let (dead_link, alive_link) = (dead.link(), alive.link());
        let monitors = Monitors::default();
        monitors.linked(alive_link.pid, 1);
        monitors.linked(dead_link.pid, 2);
        let _alive_offer = monitors
            .offer(&alive_link, 1, true, later())
            .expect("offered");
        let _dead_offer = monitors
            .offer(&dead_link, 2, true, later())
            .expect("offered");
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
        let offer = monitors.offer(&link, 1, false, later()).expect("offered");
        assert!(monitors.withdraw(offer.token));
        assert!(monitors.hand(2, &serde_json::json!({})).is_none());
    }
}
