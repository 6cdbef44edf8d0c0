//! Descendants that left the command's process group: a `setsid` daemon, the grandchild
//! of a double fork. Signalling the group never reaches them, so when a command ends (by
//! itself, cancelled or timed out) the monitor looks for every process still descended
//! from it and ends those too: no descendant outlives its run, but for a stead server
//! the command started, which serves every job ([`procs::apart_from_servers`]).
//!
//! How they are found is the platform layer's ([`stead_sys::procs`]): below the monitor,
//! a child subreaper, on Linux; below it or by the run's marker in their environment on
//! macOS, where orphans go to launchd. Each process is signalled through an exit watch
//! opened before its identity is checked again, so a pid reused between the scan and the
//! signal is never hit.

use std::collections::HashSet;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use rustix::process::Signal;
use stead_sys::exit::ExitWatch;
use stead_sys::procs::{self, Proc};

pub use stead_sys::procs::Identity;

/// The process group of the monitor's own helper (the sleep inhibitor of a run that
/// keeps the machine awake), which is no part of the run: 0 when there is none.
static SPARED_GROUP: AtomicI32 = AtomicI32::new(0);

/// Leaves the process group `group` (the monitor's own helper) out of every sweep until
/// called again (`None`: no group is spared).
pub fn spare_group(group: Option<i32>) {
    SPARED_GROUP.store(group.unwrap_or(0), Ordering::SeqCst);
}

/// Ends every live descendant of this process (SIGTERM, then SIGKILL after `grace`) but
/// a stead server the command (of process group `group`) started, and returns how many
/// there were, leaving out those in `counted` (already counted as members of the
/// command's group, which one of them may have left on its way out). `marker`: the
/// run's marker ([`stead_sys::procs::MARKER_VAR`]).
pub fn end_descendants(
    grace: Duration,
    counted: &HashSet<Identity>,
    marker: &str,
    group: i32,
) -> usize {
    // Each process once, by its identity, however many passes see it.
    let mut ended = HashSet::new();
    for _ in 0..PASSES {
        let found: Vec<(Proc, ExitWatch)> = procs::apart_from_servers(below(marker), group)
            .into_iter()
            .filter_map(|p| Some((p, hold(&p)?)))
            .collect();
        if found.is_empty() {
            break;
        }
        ended.extend(found.iter().map(|(p, _)| p.identity()));
        let held: Vec<ExitWatch> = found.into_iter().map(|(_, watch)| watch).collect();
        signal_until_gone(&held, Signal::TERM, grace);
        signal_until_gone(&held, Signal::KILL, KILL_WAIT);
    }
    ended.difference(counted).count()
}

/// The live processes of the process group `group` (zombies count as dead). Its members
/// all descend from this monitor (the command's group is in the monitor's session, which
/// only the monitor's descendants share), so the walk down from it finds them: a command
/// that left nothing behind costs a read or two rather than one of every process on the
/// machine.
pub fn live_in_group(group: i32, marker: &str) -> Vec<Identity> {
    alive_below(group, marker).0
}

/// What is alive below this process: the members of the process group `group`, and
/// whether anything at all (in that group or outside it), from one walk of the tree.
pub fn alive_below(group: i32, marker: &str) -> (Vec<Identity>, bool) {
    let found = below(marker);
    let in_group = found
        .iter()
        .filter(|p| p.group == group)
        .map(Proc::identity)
        .collect();
    (in_group, !found.is_empty())
}

/// The live descendants of this process but the spared group's.
fn below(marker: &str) -> Vec<Proc> {
    let spared = SPARED_GROUP.load(Ordering::SeqCst);
    let mut found = procs::descendants(marker);
    found.retain(|p| spared == 0 || p.group != spared);
    found
}

/// An exit watch on `p`, if it is still the process the scan saw.
fn hold(p: &Proc) -> Option<ExitWatch> {
    let watch = ExitWatch::open(u32::try_from(p.pid).ok()?).ok()??;
    // Checked after opening: from here on the watch names this process and no other.
    match procs::process(p.pid) {
        Some(now) if now.started == p.started && !now.zombie => Some(watch),
        _ => None,
    }
}

/// Passes at most: a process forked by one being ended, after the pass that found it,
/// is found by the next.
const PASSES: usize = 4;

/// How long a process may take to die of SIGKILL before a later pass looks again.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// Sends `sig` to each process still alive, then waits up to `wait` for them to exit.
fn signal_until_gone(held: &[ExitWatch], sig: Signal, wait: Duration) {
    let mut left: Vec<&ExitWatch> = held.iter().filter(|w| !w.has_exited()).collect();
    for watch in &left {
        let _ = watch.signal(sig);
    }
    let deadline = Instant::now() + wait;
    while !left.is_empty() {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let exited = ExitWatch::wait_any(&left, deadline - now);
        left = left
            .into_iter()
            .zip(exited)
            .filter_map(|(watch, gone)| (!gone).then_some(watch))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    /// A grandchild that called setsid (out of the command's group, its parent gone) is
    /// found and ended, and counted once.
    #[test]
    fn an_escaped_grandchild_is_found_and_ended() {
        let marker = format!("sweep-test-{}", std::process::id());
        let _ = procs::become_subreaper();
        let out = Command::new("sh")
            .args(["-c", "setsid sleep 30 >/dev/null 2>&1 </dev/null & echo $!"])
            .env(procs::MARKER_VAR, &marker)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let identity = stead_sys::identity::of_pid(pid as u32)
            .unwrap()
            .expect("the escapee lives");
        let ended = end_descendants(Duration::from_secs(5), &HashSet::new(), &marker, 0);
        assert!(ended >= 1, "the escapee was ended");
        assert!(
            stead_sys::identity::wait_gone(pid as u32, &identity, Duration::from_secs(10)),
            "the escapee is gone"
        );
        // Reaped (it is this process's child now, as the subreaper's): nothing is left.
        // SAFETY: reaps this process's own exited children, without blocking.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        assert!(procs::descendants(&marker).is_empty());
    }
}
