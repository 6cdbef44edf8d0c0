//! Descendants that left the command's process group: a `setsid` daemon, the grandchild
//! of a double fork. Signalling the group never reaches them, so when a command ends (by
//! itself, cancelled or timed out) the monitor looks for every process still descended
//! from it and ends those too: no descendant outlives its run.
//!
//! The monitor is a child subreaper, so an escaped process whose parent died is
//! re-parented to the monitor rather than to init, and stays findable by walking down
//! from the monitor: through each process's `children` list where the kernel keeps one
//! (`/proc/PID/task/TID/children`, a read per process of the tree, so a run that left
//! nothing costs one read), else through the parent links of every process. Each process is signalled through a pidfd opened before
//! its identity is checked again, so a pid reused between the scan and the signal is
//! never hit. Linux only: elsewhere there is no subreaper to keep the tree together, and
//! the sweep finds nothing (documented in `docs/ledger.md`).

use std::collections::HashSet;
use std::time::Duration;

/// A process by its pid and start time (clock ticks since boot): a pid used again by
/// a later process is another identity, and a process seen twice is one.
pub type Identity = (i32, u64);

/// Ends every live descendant of this process (SIGTERM, then SIGKILL after `grace`) and
/// returns how many there were, leaving out those in `counted` (already counted as
/// members of the command's group, which one of them may have left on its way out).
#[cfg(target_os = "linux")]
pub fn end_descendants(grace: Duration, counted: &HashSet<Identity>) -> usize {
    linux::end_descendants(grace, counted)
}

#[cfg(not(target_os = "linux"))]
pub fn end_descendants(_grace: Duration, _counted: &HashSet<Identity>) -> usize {
    0
}

/// The live processes of the process group `group` (zombies count as dead).
#[cfg(target_os = "linux")]
pub fn live_in_group(group: i32) -> Vec<Identity> {
    linux::live_in_group(group)
}

/// What is alive below this process: the members of the process group `group`, and
/// whether anything at all (in that group or outside it), from one walk of the tree.
#[cfg(target_os = "linux")]
pub fn alive_below(group: i32) -> (Vec<Identity>, bool) {
    linux::alive_below(group)
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet};
    use std::os::fd::OwnedFd;
    use std::time::{Duration, Instant};

    use rustix::event::{PollFd, PollFlags, Timespec};
    use rustix::process::{Pid, PidfdFlags, Signal};

    use super::Identity;

    /// A process as `/proc/PID/stat` shows it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) struct Proc {
        pub pid: i32,
        pub parent: i32,
        /// Field 5: its process group.
        pub group: i32,
        /// Field 22: start time in clock ticks since boot; with the pid, an identity.
        pub started: u64,
        pub zombie: bool,
    }

    /// Parses a `/proc/PID/stat` line after the last `)`: the command name may hold
    /// anything.
    pub(super) fn parse(pid: i32, stat: &str) -> Option<Proc> {
        let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
        let state = fields.next()?;
        let parent = fields.next()?.parse().ok()?;
        let group = fields.next()?.parse().ok()?;
        // Fields 6 to 21 lie between the group (5) and the start time (22).
        let started = fields.nth(16)?.parse().ok()?;
        Some(Proc {
            pid,
            parent,
            group,
            started,
            zombie: state == "Z" || state == "X",
        })
    }

    impl Proc {
        fn identity(&self) -> Identity {
            (self.pid, self.started)
        }
    }

    fn read(pid: i32) -> Option<Proc> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parse(pid, &stat)
    }

    /// The children of `pid`, from its threads' `children` lists; `None` where the
    /// kernel keeps none (no thread has the file). A thread that ends between the listing
    /// and the read has no children left to tell of: it is passed over, not taken for a
    /// kernel without the lists (which would cost a read of every process's `stat`).
    fn children(pid: i32) -> Option<Vec<i32>> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        let mut found = Vec::new();
        let mut listed = false;
        for task in tasks.flatten() {
            let Ok(list) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            listed = true;
            found.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
        listed.then_some(found)
    }

    /// How many live processes are in the process group `group`. Its members all descend
    /// from this monitor (the command's group is in the monitor's session, which only
    /// the monitor's descendants share, and orphans come back to the monitor as its
    /// subreaper), so the walk down from it finds them: a command that left nothing
    /// behind costs a read or two rather than one of every process on the machine.
    pub fn live_in_group(group: i32) -> Vec<Identity> {
        alive_below(group).0
    }

    pub fn alive_below(group: i32) -> (Vec<Identity>, bool) {
        let found = descendants(std::process::id() as i32);
        let in_group = found
            .iter()
            .filter(|p| p.group == group)
            .map(Proc::identity)
            .collect();
        (in_group, !found.is_empty())
    }

    /// The live descendants of `root`: through the `children` lists, or, without them,
    /// through every process's parent link. A zombie is not looked into: whatever it
    /// had was handed to the subreaper (this monitor) as it exited.
    fn descendants(root: i32) -> Vec<Proc> {
        let Some(first) = children(root) else {
            return descendants_of(root, &all());
        };
        let mut found = Vec::new();
        let mut next = first;
        while let Some(pid) = next.pop() {
            let Some(p) = read(pid).filter(|p| !p.zombie) else {
                continue;
            };
            found.push(p);
            next.extend(children(pid).unwrap_or_default());
        }
        found
    }

    fn all() -> Vec<Proc> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(read)
            .collect()
    }

    /// The live descendants of `root`, found by following parent links down from it.
    pub(super) fn descendants_of(root: i32, procs: &[Proc]) -> Vec<Proc> {
        let mut children: HashMap<i32, Vec<&Proc>> = HashMap::new();
        for p in procs {
            children.entry(p.parent).or_default().push(p);
        }
        let mut found = Vec::new();
        let mut next = vec![root];
        while let Some(pid) = next.pop() {
            for child in children.get(&pid).into_iter().flatten() {
                next.push(child.pid);
                if !child.zombie {
                    found.push(**child);
                }
            }
        }
        found
    }

    /// A pidfd on `p`, if it is still the process the scan saw.
    fn hold(p: &Proc) -> Option<OwnedFd> {
        let fd = rustix::process::pidfd_open(Pid::from_raw(p.pid)?, PidfdFlags::empty()).ok()?;
        // Checked after opening: from here on the pidfd names this process and no other.
        match read(p.pid) {
            Some(now) if now.started == p.started && !now.zombie => Some(fd),
            _ => None,
        }
    }

    /// Passes at most: a process forked by one being ended, after the pass that found
    /// it, is found by the next.
    const PASSES: usize = 4;

    /// How long a process may take to die of SIGKILL before a later pass looks again.
    const KILL_WAIT: Duration = Duration::from_secs(1);

    pub fn end_descendants(grace: Duration, counted: &HashSet<Identity>) -> usize {
        let me = std::process::id() as i32;
        // Each process once, by its identity, however many passes see it.
        let mut ended = HashSet::new();
        for _ in 0..PASSES {
            let found: Vec<(Proc, OwnedFd)> = descendants(me)
                .into_iter()
                .filter_map(|p| Some((p, hold(&p)?)))
                .collect();
            if found.is_empty() {
                break;
            }
            ended.extend(found.iter().map(|(p, _)| p.identity()));
            let held: Vec<OwnedFd> = found.into_iter().map(|(_, fd)| fd).collect();
            signal_until_gone(&held, Signal::TERM, grace);
            signal_until_gone(&held, Signal::KILL, KILL_WAIT);
        }
        ended.difference(counted).count()
    }

    /// Sends `sig` to each process still alive, then waits up to `wait` for them to exit.
    fn signal_until_gone(held: &[OwnedFd], sig: Signal, wait: Duration) {
        let mut left: Vec<&OwnedFd> = held.iter().filter(|fd| !exited(fd)).collect();
        for fd in &left {
            let _ = rustix::process::pidfd_send_signal(fd, sig);
        }
        let deadline = Instant::now() + wait;
        while !left.is_empty() {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            // A pidfd turns readable when its process exits.
            let mut fds: Vec<PollFd> = left
                .iter()
                .map(|fd| PollFd::new(*fd, PollFlags::IN))
                .collect();
            let wait = Timespec::try_from(deadline - now).ok();
            if rustix::event::poll(&mut fds, wait.as_ref()).is_err() {
                // EINTR: the monitor's own signal handler ran; look again.
                continue;
            }
            let exited: Vec<bool> = fds.iter().map(|fd| !fd.revents().is_empty()).collect();
            left = left
                .into_iter()
                .zip(exited)
                .filter_map(|(fd, gone)| (!gone).then_some(fd))
                .collect();
        }
    }

    /// Whether the pidfd's process has exited (without waiting).
    fn exited(fd: &OwnedFd) -> bool {
        let mut fds = [PollFd::new(fd, PollFlags::IN)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        rustix::event::poll(&mut fds, Some(&now)).is_ok_and(|n| n > 0)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::linux::{Proc, descendants_of, parse};

    #[test]
    fn stat_fields_are_read_after_the_name() {
        let line = "42 (a) b (c) S 7 41 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 9876 1 1";
        assert_eq!(
            parse(42, line),
            Some(Proc {
                pid: 42,
                parent: 7,
                group: 41,
                started: 9876,
                zombie: false
            })
        );
        assert_eq!(parse(1, "nonsense"), None);
    }

    #[test]
    fn descendants_are_found_through_every_generation_and_zombies_are_left_alone() {
        let p = |pid, parent, zombie| Proc {
            pid,
            parent,
            group: pid,
            started: 1,
            zombie,
        };
        let procs = [
            p(10, 1, false),  // the monitor
            p(11, 10, true),  // the command's leader, exited and unreaped
            p(12, 10, false), // re-parented to the monitor after a double fork
            p(13, 12, false), // its child
            p(14, 1, false),  // a stranger
            p(15, 14, false), // a stranger's child
        ];
        let mut found: Vec<i32> = descendants_of(10, &procs).iter().map(|p| p.pid).collect();
        found.sort();
        assert_eq!(found, [12, 13]);
    }
}
