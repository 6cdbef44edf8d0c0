//! The command's process group: starting the command as its leader, signalling the
//! group, and telling whether anything in it is still alive.
//!
//! The group id is the leader's pid. The monitor leaves the leader unreaped (a zombie)
//! until the group is empty, so the id cannot be reused by a stranger while the monitor
//! may still signal it: a pid is never handed out while a group of that id exists.

use std::os::fd::OwnedFd;
use std::process::{ChildStdin, Command, Stdio};

use rustix::process::{Pid, Signal};

use stead_core::runs::MonitorPlan;

use super::sweep::Identity;

/// A started command: the leader of its own process group, with its output pipes.
#[derive(Debug)]
pub struct Started {
    pub leader: Pid,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    /// Its stdin, when the command was set up with a pipe there.
    pub stdin: Option<ChildStdin>,
}

/// `argv` as the plan runs its commands: with the plan's environment and working
/// directory, stdin from /dev/null. The error is the reason, worded for the run's record.
pub fn command(plan: &MonitorPlan, argv: &[String]) -> Result<Command, String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("the command is empty".into());
    };
    // The error of a failed chdir in the child reads like a missing program; name the
    // directory instead.
    if let Some(cwd) = &plan.cwd {
        match std::fs::metadata(cwd) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "working directory {}: not a directory",
                    cwd.display()
                ));
            }
            Err(e) => return Err(format!("working directory {}: {e}", cwd.display())),
        }
    }
    let mut cmd = Command::new(program);
    cmd.args(args).envs(&plan.env).stdin(Stdio::null());
    if let Some(cwd) = &plan.cwd {
        cmd.current_dir(cwd);
    }
    Ok(cmd)
}

/// Starts `cmd` in a new process group, its output to non-blocking pipes. The error is
/// the reason, worded for the run's record.
pub fn spawn(cmd: &mut Command) -> Result<Started, String> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{}: {e}", cmd.get_program().to_string_lossy()))?;
    let leader = Pid::from_child(&child);
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        unreachable!("both streams were asked for as pipes");
    };
    let (stdout, stderr) = (OwnedFd::from(stdout), OwnedFd::from(stderr));
    for fd in [&stdout, &stderr] {
        // Cannot fail on a pipe we own; were it to, a read would block until output
        // arrives, which delays but loses nothing.
        let _ = rustix::io::ioctl_fionbio(fd, true);
    }
    // Dropping `child` neither kills nor reaps it: the monitor reaps by pid.
    Ok(Started {
        leader,
        stdout,
        stderr,
        stdin: child.stdin.take(),
    })
}

/// Sends `sig` to the whole group. A group that is already gone is not an error.
pub fn signal(leader: Pid, sig: Signal) {
    let _ = rustix::process::kill_process_group(leader, sig);
}

/// The processes of the group that are alive (zombies count as dead).
#[cfg(target_os = "linux")]
pub fn live_members(leader: Pid) -> Vec<Identity> {
    super::sweep::live_in_group(leader.as_raw_nonzero().get())
}

/// What outlived the group's leader: the members of its group still alive, and
/// whether anything descended from the monitor is (an escapee too), which the sweep at
/// the end then has to end. One look, for the common end of a command that left nothing.
#[cfg(target_os = "linux")]
pub fn outlived(leader: Pid) -> (Vec<Identity>, bool) {
    super::sweep::alive_below(leader.as_raw_nonzero().get())
}

/// What outlived the group's leader; elsewhere there is no sweep of escapees to skip.
#[cfg(target_os = "macos")]
pub fn outlived(leader: Pid) -> (Vec<Identity>, bool) {
    let in_group = live_members(leader);
    let anything = !in_group.is_empty();
    (in_group, anything)
}

/// The processes of the group that are alive (zombies count as dead); by pid alone,
/// as nothing here is compared with a sweep's findings.
#[cfg(target_os = "macos")]
pub fn live_members(leader: Pid) -> Vec<Identity> {
    // From <sys/proc_info.h>; the libc crate does not export it.
    const PROC_PGRP_ONLY: u32 = 2;
    let mut pids = vec![0 as libc::pid_t; 4096];
    let size = std::mem::size_of_val(pids.as_slice()) as libc::c_int;
    // SAFETY: `pids` is writable for `size` bytes.
    let bytes = unsafe {
        libc::proc_listpids(
            PROC_PGRP_ONLY,
            leader.as_raw_nonzero().get() as u32,
            pids.as_mut_ptr().cast(),
            size,
        )
    };
    let n = usize::try_from(bytes).unwrap_or(0) / std::mem::size_of::<libc::pid_t>();
    pids[..n.min(pids.len())]
        .iter()
        .filter(|&&pid| pid > 0)
        .filter(|&&pid| matches!(stead_core::identity::of_pid(pid as u32), Ok(Some(_))))
        .map(|&pid| (pid, 0))
        .collect()
}
