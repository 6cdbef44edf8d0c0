//! The processes below this one: what a run's monitor must end when the run is over.
//!
//! A command may leave its process group (`setsid`, a double fork) and so escape every
//! signal sent to the group. The monitor finds such escapees by walking down from itself:
//!
//! - Linux: the monitor is a child subreaper ([`become_subreaper`]), so a process whose
//!   parent died is re-parented to the monitor rather than to init and stays below it.
//!   The walk reads each process's `children` lists (`/proc/PID/task/TID/children`), or,
//!   on a kernel without them, the parent links of every process.
//! - macOS has no subreaper: an orphan goes to launchd and leaves the tree. The walk
//!   reads children lists (`proc_listpids` with `PROC_PPID_ONLY`, which is what
//!   `proc_listchildpids` does), and adds every process of this user adopted by launchd
//!   whose environment carries the run's marker ([`MARKER_VAR`], which the monitor gives
//!   the command and every descendant inherits), with what lies below it.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::os;

/// The environment variable through which a run's processes are recognised once they
/// have left the tree (macOS): a random id per execution of a run's command, which the
/// monitor sets. Commands may read it too (an id for this execution of the run).
pub const MARKER_VAR: &str = "STEAD_INVOCATION_ID";

/// A process by its pid and start time: a pid used again by a later process is another
/// identity, and a process seen twice is one.
pub type Identity = (i32, u64);

/// A process as the walk saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub parent: i32,
    /// Its process group.
    pub group: i32,
    /// Its start time (clock ticks since boot on Linux, microseconds since the epoch on
    /// macOS); with the pid, an identity.
    pub started: u64,
    /// Exited, not yet reaped.
    pub zombie: bool,
}

impl Proc {
    pub fn identity(&self) -> Identity {
        (self.pid, self.started)
    }
}

/// The process `pid` as it is now; `None` when there is none.
pub fn process(pid: i32) -> Option<Proc> {
    os::process(pid)
}

/// The live processes descended from this one, zombies left out (whatever a zombie had
/// was handed on as it exited); on macOS also those that carry `marker` in
/// [`MARKER_VAR`] after launchd adopted them.
pub fn descendants(marker: &str) -> Vec<Proc> {
    os::descendants(std::process::id() as i32, marker)
}

/// `found` (this process's descendants) without the processes outside the process group
/// `group` that run this very program, and those below them. A run's monitor runs
/// stead's daemon program; so does a server that a command of the run started (`stead
/// status` after the server it ran under stopped, a `stead restart` from an agent's
/// turn), in a session of its own, with its spawner and monitors. That server is the
/// user's, serving every job: ending it with the run, and the runs it started since,
/// would cut work that is no part of this run. A process of the command's own group is
/// the command's, whatever it runs.
pub fn apart_from_servers(found: Vec<Proc>, group: i32) -> Vec<Proc> {
    let me = std::process::id() as i32;
    apart_from_this_program(found, group, os::executable(me), os::executable)
}

fn apart_from_this_program(
    found: Vec<Proc>,
    group: i32,
    program: Option<PathBuf>,
    executable: impl Fn(i32) -> Option<PathBuf>,
) -> Vec<Proc> {
    let Some(program) = program else {
        return found;
    };
    let ours: HashSet<i32> = found
        .iter()
        .filter(|p| p.group != group && executable(p.pid).as_ref() == Some(&program))
        .map(|p| p.pid)
        .collect();
    if ours.is_empty() {
        return found;
    }
    let parents: HashMap<i32, i32> = found.iter().map(|p| (p.pid, p.parent)).collect();
    let below_ours = |p: &Proc| {
        // Up the parent links the walk saw, at most once round them all.
        std::iter::successors(Some(p.pid), |pid| parents.get(pid).copied())
            .take(parents.len() + 1)
            .any(|pid| ours.contains(&pid))
    };
    found.into_iter().filter(|p| !below_ours(p)).collect()
}

/// Makes this process a child subreaper, so its orphaned descendants are re-parented to
/// it (Linux); whether it is one. macOS has none (see the module's documentation).
pub fn become_subreaper() -> bool {
    os::become_subreaper()
}

/// The environment entry that marks a run's processes.
pub fn marker_entry(marker: &str) -> String {
    format!("{MARKER_VAR}={marker}")
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::*;

    /// Two processes of this program below the walk's root: each is left out with what
    /// lies below it, and the rest is kept.
    #[test]
    fn a_process_of_this_program_is_left_out_with_its_subtree() {
        let p = |pid, parent| Proc {
            pid,
            parent,
            group: pid,
            started: 1,
            zombie: false,
        };
        // 10 is the root; 11 runs this program, 12 and 13 below it; 14 runs it too.
        let found = vec![
            p(11, 10),
            p(12, 11),
            p(13, 12),
            p(20, 10),
            p(21, 20),
            p(14, 21),
            p(30, 10),
        ];
        let program = PathBuf::from("/bin/steadd");
        let executable = |pid| match pid {
            11 | 14 | 30 => Some(program.clone()),
            _ => Some(PathBuf::from("/bin/sh")),
        };
        // 30 runs this program in the command's own group (30): it is the command's.
        let kept = apart_from_this_program(found.clone(), 30, Some(program.clone()), executable);
        let pids: Vec<i32> = kept.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [20, 21, 30]);
        // Where this program's path cannot be read, nothing is left out.
        assert_eq!(
            apart_from_this_program(found.clone(), 30, None, executable),
            found
        );
    }

    #[test]
    fn this_process_runs_the_program_it_was_started_from() {
        let me = std::process::id() as i32;
        // Resolved: macOS reports the path with its links resolved (/private/tmp).
        let exe = std::env::current_exe().unwrap().canonicalize().unwrap();
        let found = os::executable(me).map(|path| path.canonicalize().unwrap());
        assert_eq!(found, Some(exe));
    }

    #[test]
    fn this_process_is_seen_as_it_is() {
        let me = process(std::process::id() as i32).expect("this process");
        assert_eq!(me.pid, std::process::id() as i32);
        assert!(!me.zombie);
        assert_eq!(me.group, rustix::process::getpgrp().as_raw_nonzero().get());
        assert_eq!(
            process(me.pid).map(|p| p.identity()),
            Some(me.identity()),
            "stable"
        );
    }

    /// A command that starts a grandchild in a session of its own and exits: the
    /// grandchild has left the command's process group, and is found below this process
    /// (a subreaper) or by its marker (macOS).
    #[test]
    fn a_grandchild_that_called_setsid_is_found() {
        let marker = format!("test-{}", std::process::id());
        let _subreaper = become_subreaper();
        let out = Command::new("sh")
            .args(["-c", "setsid sleep 30 >/dev/null 2>&1 </dev/null & echo $!"])
            .env(MARKER_VAR, &marker)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        // Found once it has left (`setsid` runs a moment after the fork that made it).
        let found = loop {
            let found = descendants(&marker).into_iter().find(|p| p.pid == pid);
            if let Some(p) = found.filter(|p| p.group == pid) {
                break p;
            }
            assert!(
                Instant::now() < deadline,
                "the escapee {pid} is never found"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        // Gone, so as not to outlive the test (and reaped: it is this process's now).
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid).unwrap(),
            rustix::process::Signal::KILL,
        );
        assert!(!found.zombie);
        let deadline = Instant::now() + Duration::from_secs(10);
        while descendants(&marker).iter().any(|p| p.pid == pid) {
            // SAFETY: reaps this process's own exited children, without blocking.
            unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
            assert!(Instant::now() < deadline, "the escapee never died");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
