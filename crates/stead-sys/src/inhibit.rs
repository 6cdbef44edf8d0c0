//! Keeping the machine awake while a run is live: a sleep inhibitor held by a helper
//! process for as long as the [`Inhibitor`] lives, and for no longer than the process it
//! was taken for.
//!
//! Linux asks logind for an inhibitor lock (`systemd-inhibit --what=sleep --mode=block`,
//! whose child says it holds the lock and then waits for the process to exit); macOS
//! takes a power assertion against idle sleep (`caffeinate -i -w PID`). Where none can
//! be had (no logind, no `systemd-inhibit`) [`hold`] says why, and the run goes on.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A sleep inhibitor, let go when dropped.
#[derive(Debug)]
pub struct Inhibitor {
    helper: Child,
}

impl Inhibitor {
    /// The process group of the helper that holds it (which the run's sweep spares).
    pub fn group(&self) -> i32 {
        self.helper.id() as i32
    }
}

impl Drop for Inhibitor {
    fn drop(&mut self) {
        // Its own process group: the helper and what it started.
        let pgid = self.helper.id() as i32;
        // SAFETY: a plain kill(2) of a group this process made and has not reaped.
        unsafe {
            libc::kill(-pgid, libc::SIGTERM);
        }
        let _ = self.helper.wait();
    }
}

/// Holds a sleep inhibitor until `pid` exits or the inhibitor is dropped, with `why`
/// for whoever lists inhibitors. The error says why none could be had.
pub fn hold(pid: u32, why: &str) -> Result<Inhibitor, String> {
    let mut command = crate::os::inhibitor_command(pid, why);
    let mut helper = spawn(&mut command).map_err(|e| {
        format!(
            "no sleep inhibitor: {} cannot be started: {e}",
            command.get_program().to_string_lossy()
        )
    })?;
    if crate::os::INHIBITOR_SAYS_HELD {
        let mut line = String::new();
        let said = helper
            .stdout
            .take()
            .map(|out| BufReader::new(out).read_line(&mut line));
        if !matches!(said, Some(Ok(n)) if n > 0) {
            let mut err = String::new();
            if let Some(mut e) = helper.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            let _ = helper.wait();
            let err = err.trim();
            return Err(format!(
                "no sleep inhibitor: {}",
                if err.is_empty() {
                    "logind refused it"
                } else {
                    err
                }
            ));
        }
    }
    Ok(Inhibitor { helper })
}

fn spawn(command: &mut Command) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
}

/// Whether an inhibitor can be had here now (taken and let go at once): what `stead
/// doctor` reports.
pub fn available() -> Result<(), String> {
    hold(
        std::process::id(),
        "stead doctor: checking that an inhibitor can be had",
    )
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inhibitor_is_held_or_the_reason_says_why_not() {
        match hold(std::process::id(), "a test") {
            Ok(inhibitor) => drop(inhibitor),
            Err(why) => assert!(why.starts_with("no sleep inhibitor: "), "{why}"),
        }
    }
}
