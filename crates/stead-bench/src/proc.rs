//! What `/proc` says about a process, and the cleanup of everything the bench started.
//!
//! Every process the bench starts, directly or through `stead status`, carries the
//! bench's private temporary directory in its command line (`--state-dir`, `-c`). The
//! cleanup therefore needs no bookkeeping: it SIGKILLs every process whose command line
//! names that directory, then removes the directory. [`Guard`] does this on drop, and a
//! watchdog process does it again when the bench dies without dropping the guard (Ctrl-C,
//! a kill), since it sees its stdin pipe from the bench close.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// A line of `/proc/PID/status` such as `VmRSS:  5120 kB`, as its number.
pub fn status_field(pid: u32, field: &str) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("process {pid} is gone"))?;
    parse_field(&text, field).with_context(|| format!("no {field} in /proc/{pid}/status"))
}

/// A line of `/proc/PID/smaps_rollup` such as `Pss:  1024 kB`, as its number.
pub fn rollup_field(pid: u32, field: &str) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .with_context(|| format!("process {pid} is gone"))?;
    parse_field(&text, field).with_context(|| format!("no {field} in /proc/{pid}/smaps_rollup"))
}

fn parse_field(text: &str, field: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Resident memory now and at its peak, in MiB.
pub fn memory_mib(pid: u32) -> anyhow::Result<(f64, f64)> {
    let mib = |kb: u64| kb as f64 / 1024.0;
    Ok((
        mib(status_field(pid, "VmRSS")?),
        mib(status_field(pid, "VmHWM")?),
    ))
}

/// Voluntary plus involuntary context switches, summed over all threads of `pid`.
pub fn context_switches(pid: u32) -> anyhow::Result<u64> {
    let mut sum = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let Ok(text) = std::fs::read_to_string(task?.path().join("status")) else {
            continue; // the thread exited meanwhile
        };
        for field in ["voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"] {
            sum += parse_field(&text, field).unwrap_or(0);
        }
    }
    Ok(sum)
}

/// Whether `pid` runs: present and neither a zombie nor dead.
pub fn is_running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    !matches!(state, None | Some("Z" | "X"))
}

/// Sends SIGKILL to `pid` and waits until it no longer runs.
pub fn kill_and_wait(pid: u32) -> anyhow::Result<()> {
    kill(&[pid]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_running(pid) {
        if Instant::now() >= deadline {
            bail!("process {pid} survived SIGKILL for 5 s");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

fn kill(pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill")
        .arg("-KILL")
        .args(pids.iter().map(u32::to_string))
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// The sockets `pid` holds open (its file descriptors that are sockets).
pub fn sockets(pid: u32) -> anyhow::Result<usize> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .with_context(|| format!("process {pid} is gone"))?;
    let mut n = 0;
    for fd in fds {
        // A descriptor closed meanwhile has no link to read.
        let Ok(target) = std::fs::read_link(fd?.path()) else {
            continue;
        };
        n += usize::from(target.to_string_lossy().starts_with("socket:"));
    }
    Ok(n)
}

/// SIGKILLs every process whose command line mentions a path under `root`, then
/// removes `root`.
pub fn sweep(root: &Path) {
    kill_under(root);
    let _ = std::fs::remove_dir_all(root);
}

/// SIGKILLs every process but this one whose command line mentions a path under `dir`.
pub fn kill_under(dir: &Path) {
    let needle = format!("{}/", dir.display()).into_bytes();
    let me = std::process::id();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if pid != me
            && cmdline
                .windows(needle.len())
                .any(|w| w == needle.as_slice())
        {
            pids.push(pid);
        }
    }
    kill(&pids);
}

/// The bench's temporary directory and the promise to clean it up.
pub struct Guard {
    root: PathBuf,
    watchdog: Option<(Child, ChildStdin)>,
}

impl Guard {
    /// Creates a short, fresh directory under /tmp (unix socket paths are short) and
    /// starts the watchdog, which is `watchdog_cmd` and runs [`watchdog_main`].
    pub fn new(mut watchdog_cmd: Command) -> anyhow::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .subsec_nanos();
        let root = PathBuf::from(format!("/tmp/sb-{}-{nanos:x}", std::process::id()));
        std::fs::create_dir(&root).with_context(|| format!("creating {}", root.display()))?;
        let mut guard = Self {
            root,
            watchdog: None,
        };
        // Its own process group, so a Ctrl-C at the terminal leaves it alive to clean up.
        let mut child = std::os::unix::process::CommandExt::process_group(&mut watchdog_cmd, 0)
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting the cleanup watchdog")?;
        let mut stdin = child.stdin.take().context("watchdog stdin")?;
        // The root goes through the pipe, not argv, so the sweep does not kill the watchdog.
        writeln!(stdin, "{}", guard.root.display())?;
        guard.watchdog = Some((child, stdin));
        Ok(guard)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        sweep(&self.root);
        if let Some((mut child, stdin)) = self.watchdog.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

/// The watchdog: reads the root from stdin, waits for end of input, then sweeps.
pub fn watchdog_main() {
    let mut lines = std::io::stdin().lock().lines();
    let Some(Ok(root)) = lines.next() else { return };
    for _ in lines.by_ref() {}
    if root.starts_with("/tmp/sb-") {
        sweep(Path::new(&root));
    }
}
