//! A wall clock the test moves: libfaketime in the state directory's processes (the
//! server, its monitors, the CLI), the offset re-read from a file on every call, the
//! monotonic clock left real. Freezing the processes (SIGSTOP), moving the offset by
//! hours and thawing them is a laptop's lid closing and opening, as processes see it.

use std::path::PathBuf;

use crate::harness::{StateDir, now_ms, signal};

/// libfaketime: moves what a process reads as the wall clock, re-reading the offset from
/// a file on every call; its monotonic clock (tokio's timers) stays real.
pub const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// A state directory whose processes (the server, its monitors, the CLI) read the wall
/// clock `offset` seconds off the real one, the offset kept in a file the test rewrites.
pub struct FakeClock {
    pub dir: StateDir,
    file: PathBuf,
    offset_s: i64,
}

impl FakeClock {
    pub fn new() -> Self {
        assert!(
            std::path::Path::new(FAKETIME_LIB).exists(),
            "libfaketime is missing: apt-get install faketime (scripts/setup-faults does)"
        );
        let mut dir = StateDir::new();
        let file = dir.root().join("faketime");
        std::fs::write(&file, "+0s\n").unwrap();
        dir.set_env("LD_PRELOAD", FAKETIME_LIB);
        dir.set_env("FAKETIME_TIMESTAMP_FILE", file.to_str().unwrap());
        dir.set_env("FAKETIME_NO_CACHE", "1");
        dir.set_env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        Self {
            dir,
            file,
            offset_s: 0,
        }
    }

    /// The wall clock as the directory's processes read it, in ms.
    pub fn now_ms(&self) -> i64 {
        now_ms() + self.offset_s * 1_000
    }

    /// Moves their wall clock forward by `secs` (libfaketime's `+Ns` format).
    pub fn advance(&mut self, secs: i64) {
        self.offset_s += secs;
        std::fs::write(&self.file, format!("+{}s\n", self.offset_s)).unwrap();
    }
}

/// Thaws a frozen server when dropped, so a failing test never leaves it stopped.
pub struct Frozen(u32);

impl Frozen {
    pub fn freeze(pid: u32) -> Self {
        signal(pid, libc::SIGSTOP);
        Self(pid)
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal(self.0, libc::SIGCONT);
    }
}

/// Freezes every process of the session `sid` (a run's monitor leads one: it, its
/// command and whatever the command started), each thawed when dropped.
pub fn freeze_session(sid: u32) -> Vec<Frozen> {
    let mut frozen = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Field 6, the session, counted after the command name's closing parenthesis.
        let session = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(3)
            .and_then(|s| s.parse::<u32>().ok());
        if session == Some(sid) {
            frozen.push(Frozen::freeze(pid));
        }
    }
    frozen
}
