//! The command's process group: starting the command as its leader, signalling the
//! group, and telling whether anything in it is still alive.
//!
//! The group id is the leader's pid. The monitor leaves the leader unreaped (a zombie)
//! until the group is empty, so the id cannot be reused by a stranger while the monitor
//! may still signal it: a pid is never handed out while a group of that id exists.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};

use rustix::process::{Pid, Signal};

use stead_core::runs::MonitorPlan;

use super::sweep::{self, Identity};

/// A started command: the leader of its own process group, with its output pipes.
#[derive(Debug)]
pub struct Started {
    pub leader: Pid,
    /// The marker its processes carry in their environment
    /// ([`stead_sys::procs::MARKER_VAR`]), by which those that leave the tree are found.
    pub marker: String,
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
    let path = plan.env.get("PATH").map(OsString::from);
    let mut cmd = match on_path(program, path.or_else(|| std::env::var_os("PATH"))) {
        Some(found) => {
            let mut cmd = Command::new(found);
            // The name it was given, as the child's own search would have left it (a
            // multi-call binary tells its tools apart by it).
            cmd.arg0(program);
            cmd
        }
        None => Command::new(program),
    };
    cmd.args(args).envs(&plan.env).stdin(Stdio::null());
    if let Some(cwd) = &plan.cwd {
        cmd.current_dir(cwd);
    }
    Ok(cmd)
}

/// Where `program` is on `path` (the PATH the command gets), found as the child's own
/// search (`execvp`) finds it: in the first entry that holds a regular file this process
/// may execute. The child tries an exec per entry until one works, and a failed exec
/// costs far more than a look here (on a PATH of a dozen entries before `/usr/bin`, a
/// tenth of a millisecond a run). The standard library leaves the search to the child,
/// and what crates do (`which`) differs from `execvp` in ways that matter here: for
/// every case this does not answer (`None`) the child searches as it always did: a
/// program named by a path, a PATH with a relative or empty entry (searched from the
/// command's own directory), no PATH, or a program found nowhere (the child's search
/// then fails with the error it always gave).
fn on_path(program: &str, path: Option<OsString>) -> Option<PathBuf> {
    if program.is_empty() || program.contains('/') {
        return None;
    }
    let dirs: Vec<PathBuf> = std::env::split_paths(&path?).collect();
    if dirs.iter().any(|dir| dir.is_relative()) {
        return None;
    }
    dirs.into_iter()
        .map(|dir| dir.join(program))
        .find(|candidate| {
            rustix::fs::access(candidate, rustix::fs::Access::EXEC_OK).is_ok()
                && std::fs::metadata(candidate).is_ok_and(|meta| meta.is_file())
        })
}

/// Starts `cmd` in a new process group, its output to non-blocking pipes, marked with a
/// marker of its own. The error is the reason, worded for the run's record.
pub fn spawn(cmd: &mut Command) -> Result<Started, String> {
    let marker = new_marker();
    cmd.env(stead_sys::procs::MARKER_VAR, &marker);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.process_group(0);
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
        marker,
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
pub fn live_members(leader: Pid, marker: &str) -> Vec<Identity> {
    sweep::live_in_group(leader.as_raw_nonzero().get(), marker)
}

/// What outlived the group's leader: the members of its group still alive, and
/// whether anything descended from the monitor is (an escapee too), which the sweep at
/// the end then has to end. One look, for the common end of a command that left nothing.
pub fn outlived(leader: Pid, marker: &str) -> (Vec<Identity>, bool) {
    sweep::alive_below(leader.as_raw_nonzero().get(), marker)
}

/// A marker no other execution of a command shares: 128 random bits. Should the system
/// have no randomness to give, the monitor's pid and the time stand in: unique on this
/// machine all the same.
fn new_marker() -> String {
    let mut bytes = [0u8; 16];
    match getrandom::fill(&mut bytes) {
        Ok(()) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        Err(_) => format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use super::*;

    fn path_of(dirs: &[&Path]) -> Option<OsString> {
        std::env::join_paths(dirs).ok()
    }

    fn file(path: &Path, mode: u32) {
        std::fs::write(path, "#!/bin/sh\necho found\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_program_is_found_where_the_childs_own_search_finds_it() {
        let tmp = tempfile::tempdir().unwrap();
        let [unreadable, dir, first, later] =
            ["a", "b", "c", "d"].map(|name| tmp.path().join(name));
        for d in [&unreadable, &dir, &first, &later] {
            std::fs::create_dir(d).unwrap();
        }
        // Passed over, as exec fails there: a file nobody may execute, a directory.
        file(&unreadable.join("tool"), 0o644);
        std::fs::create_dir(dir.join("tool")).unwrap();
        file(&first.join("tool"), 0o755);
        file(&later.join("tool"), 0o755);
        let path = path_of(&[&unreadable, &dir, &first, &later]);
        assert_eq!(on_path("tool", path), Some(first.join("tool")));
    }

    #[test]
    fn the_search_is_left_to_the_child_where_it_could_differ() {
        let tmp = tempfile::tempdir().unwrap();
        file(&tmp.path().join("tool"), 0o755);
        let dir = tmp.path().to_path_buf();
        let with = |entries: &str| Some(OsString::from(entries));
        assert_eq!(on_path("tool", path_of(&[&dir])), Some(dir.join("tool")));
        // A relative or empty entry is searched from the command's own directory.
        let relative = format!("rel:{}", dir.display());
        assert_eq!(on_path("tool", with(&relative)), None);
        let empty = format!(":{}", dir.display());
        assert_eq!(on_path("tool", with(&empty)), None);
        // Named by a path, found nowhere, or no PATH at all.
        assert_eq!(on_path("./tool", path_of(&[&dir])), None);
        assert_eq!(on_path("elsewhere", path_of(&[&dir])), None);
        assert_eq!(on_path("tool", None), None);
    }

    #[test]
    fn a_command_found_here_keeps_the_name_it_was_given() {
        let tmp = tempfile::tempdir().unwrap();
        let path = std::env::var_os("PATH");
        assert!(on_path("sh", path).is_some(), "sh is found on this PATH");
        let plan = MonitorPlan {
            run_id: 1,
            ledger: stead_core::locator::LedgerRef::Sqlite {
                path: tmp.path().join("stead.db"),
            },
            argv: vec!["sh".into(), "-c".into(), "echo $0".into()],
            cwd: None,
            env: BTreeMap::new(),
            secrets: BTreeMap::new(),
            timeout_ms: None,
            kill_grace_ms: 200,
            log_path: tmp.path().join("log"),
            log_max_bytes: 1024,
            alternatives: Vec::new(),
            on_failure: None,
            resume_anywhere: false,
            retry: None,
            not_before: None,
            conditions: Default::default(),
        };
        let out = command(&plan, &plan.argv).unwrap().output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "sh\n");
    }
}
