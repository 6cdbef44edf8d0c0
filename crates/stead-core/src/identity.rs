//! Process start identity: a pid plus something that changes whenever the pid is reused.
//!
//! On Linux that is the boot id with the process's start time in clock ticks since boot
//! (field 22 of `/proc/PID/stat`); on macOS, the kernel's start time of the process in
//! microseconds since the epoch. A process that is a zombie counts as gone: it serves
//! nothing and will never answer.

use std::fmt;
use std::io;

use serde::{Deserialize, Serialize};

/// An opaque, comparable start identity such as `linux:<boot id>:<ticks>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StartIdentity(String);

impl StartIdentity {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Wraps a stored identity read back from the ledger or a lock file.
    pub fn from_stored(s: impl Into<String>) -> Self {
        Self(s.into())
    }
}

impl fmt::Display for StartIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The identity of the calling process.
pub fn current() -> io::Result<StartIdentity> {
    of_pid(std::process::id())?.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "cannot read this process's own start identity",
        )
    })
}

/// Whether `pid` is a live process whose start identity is `expected`.
pub fn is_alive(pid: u32, expected: &StartIdentity) -> bool {
    matches!(of_pid(pid), Ok(Some(found)) if &found == expected)
}

/// Waits until the process `pid` with start identity `identity` is gone (dead, a zombie,
/// or its pid reused by another process), for at most `limit`. Returns whether it is.
/// A supervisor's "stopped" means nothing until this holds.
pub fn wait_gone(pid: u32, identity: &StartIdentity, limit: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while is_alive(pid, identity) {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    true
}

/// The start identity of `pid`, or `None` when no such live process exists.
#[cfg(target_os = "linux")]
pub fn of_pid(pid: u32) -> io::Result<Option<StartIdentity>> {
    let stat = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some((state, ticks)) = parse_stat(&stat) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unreadable /proc/{pid}/stat"),
        ));
    };
    if state == "Z" || state == "X" {
        return Ok(None);
    }
    Ok(Some(StartIdentity(format!("linux:{}:{ticks}", boot_id()?))))
}

/// State (field 3) and start time (field 22) from a `/proc/PID/stat` line. The command
/// name (field 2) may contain spaces and parentheses, so fields are counted from the
/// last `)`.
#[cfg(any(target_os = "linux", test))]
fn parse_stat(stat: &str) -> Option<(&str, &str)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let ticks = fields.nth(18)?;
    Some((state, ticks))
}

/// The kernel's boot id: a fresh UUID at every boot. Read once per process (a process
/// never outlives its boot), and inherited by the processes a process forks: a monitor
/// forked by the spawner reads nothing but its own start time.
#[cfg(target_os = "linux")]
pub fn boot_id() -> io::Result<String> {
    static BOOT_ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(id) = BOOT_ID.get() {
        return Ok(id.clone());
    }
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")?
        .trim()
        .to_string();
    Ok(BOOT_ID.get_or_init(|| id).clone())
}

#[cfg(target_os = "macos")]
pub fn of_pid(pid: u32) -> io::Result<Option<StartIdentity>> {
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: `info` is a writable buffer of exactly `size` bytes for PROC_PIDTBSDINFO.
    let n = unsafe {
        libc::proc_pidinfo(
            pid as libc::c_int,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    if n != size {
        let err = io::Error::last_os_error();
        return match err.raw_os_error() {
            Some(libc::ESRCH) | Some(0) | None => Ok(None),
            _ => Err(err),
        };
    }
    // SZOMB: the process has exited and waits to be reaped.
    if info.pbi_status == 5 {
        return Ok(None);
    }
    Ok(Some(StartIdentity(format!(
        "darwin:{}.{:06}",
        info.pbi_start_tvsec, info.pbi_start_tvusec
    ))))
}

/// The boot session UUID (`kern.bootsessionuuid`).
#[cfg(target_os = "macos")]
pub fn boot_id() -> io::Result<String> {
    let name = c"kern.bootsessionuuid";
    let mut buf = [0u8; 64];
    let mut len = buf.len();
    // SAFETY: `buf` is writable for `len` bytes and `name` is NUL-terminated.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let s = std::ffi::CStr::from_bytes_until_nul(&buf[..len])
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(&buf[..len]).into_owned());
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_last_paren() {
        let line = "4242 (evil) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(parse_stat(line), Some(("S", "987654")));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn own_identity_is_stable_and_alive() {
        let me = current().unwrap();
        assert_eq!(me, current().unwrap());
        assert!(is_alive(std::process::id(), &me));
        assert!(!is_alive(
            std::process::id(),
            &StartIdentity::from_stored("linux:other-boot:1")
        ));
    }

    #[test]
    fn exited_and_zombie_processes_are_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not yet reaped: a zombie once it exits. Wait for that without reaping.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while of_pid(pid).unwrap().is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "child never became a zombie"
            );
            std::thread::yield_now();
        }
        child.wait().unwrap();
        assert_eq!(of_pid(pid).unwrap(), None);
    }
}
