//! Descendants that left the command's process group: a `setsid` daemon, the grandchild
//! of a double fork. Signalling the group never reaches them, so when a command ends (by
//! itself, cancelled or timed out) the monitor looks for every process still descended
//! from it and ends those too: no descendant outlives its run.
//!
//! The monitor is a child subreaper, so an escaped process whose parent died is
//! re-parented to the monitor rather than to init, and stays findable by walking parent
//! links down from the monitor. Each process is signalled through a pidfd opened before
//! its identity is checked again, so a pid reused between the scan and the signal is
//! never hit. Linux only: elsewhere there is no subreaper to keep the tree together, and
//! the sweep finds nothing (documented in `docs/ledger.md`).

use std::time::Duration;

/// Ends every live descendant of this process (SIGTERM, then SIGKILL after `grace`) and
/// returns how many there were.
#[cfg(target_os = "linux")]
pub fn end_descendants(grace: Duration) -> usize {
    linux::end_descendants(grace)
}

#[cfg(not(target_os = "linux"))]
pub fn end_descendants(_grace: Duration) -> usize {
    0
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::os::fd::OwnedFd;
    use std::time::{Duration, Instant};

    use rustix::event::{PollFd, PollFlags, Timespec};
    use rustix::process::{Pid, PidfdFlags, Signal};

    /// A process as `/proc/PID/stat` shows it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) struct Proc {
        pub pid: i32,
        pub parent: i32,
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
        // Fields 5 to 21 lie between the parent (4) and the start time (22).
        let started = fields.nth(17)?.parse().ok()?;
        Some(Proc {
            pid,
            parent,
            started,
            zombie: state == "Z" || state == "X",
        })
    }

    fn read(pid: i32) -> Option<Proc> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parse(pid, &stat)
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

    pub fn end_descendants(grace: Duration) -> usize {
        let me = std::process::id() as i32;
        let held: Vec<OwnedFd> = descendants_of(me, &all()).iter().filter_map(hold).collect();
        if held.is_empty() {
            return 0;
        }
        for fd in &held {
            let _ = rustix::process::pidfd_send_signal(fd, Signal::TERM);
        }
        let deadline = Instant::now() + grace;
        let mut left = held.iter().collect::<Vec<_>>();
        while !left.is_empty() {
            let now = Instant::now();
            if now >= deadline {
                for fd in &left {
                    let _ = rustix::process::pidfd_send_signal(fd, Signal::KILL);
                }
                break;
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
        held.len()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::linux::{Proc, descendants_of, parse};

    #[test]
    fn stat_fields_are_read_after_the_name() {
        let line = "42 (a) b (c) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 9876 1 1";
        assert_eq!(
            parse(42, line),
            Some(Proc {
                pid: 42,
                parent: 7,
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
