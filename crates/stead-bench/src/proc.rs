//! What `/proc` says about a process, and the cleanup of everything the bench started.
//!
//! Every process the bench starts, directly or through `stead status`, carries the
//! bench's private temporary directory in its command line (`--state-dir`, `-c`). The
//! cleanup therefore needs no bookkeeping: it SIGKILLs every process whose command line
//! names that directory, then removes the directory. [`Guard`] does this on drop, and a
//! watchdog process does it again when the bench dies without dropping the guard (Ctrl-C,
//! a kill), since it sees its stdin pipe from the bench close.
//!
//! The PostgreSQL databases of the cluster figures are the guard's too: it creates them
//! ([`Guard::database`]), tells the watchdog their names before they exist, and drops
//! them after the processes that used them are killed.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::pg;

/// A line of `/proc/PID/status` such as `VmRSS:  5120 kB`, as its number.
pub fn status_field(pid: u32, field: &str) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("process {pid} is gone"))?;
    parse_field(&text, field).with_context(|| format!("no {field} in /proc/{pid}/status"))
}

/// How many processes have `file` open (a descriptor linking to it).
pub fn holding(file: &Path) -> u64 {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    procs
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            std::fs::read_dir(e.path().join("fd")).is_ok_and(|fds| {
                fds.flatten()
                    .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|to| to == file))
            })
        })
        .count() as u64
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

/// Resident memory now in MiB, split: anonymous (heap, stacks: the process's own) and
/// file-backed (program text and data mapped from files, which the page cache holds).
pub fn resident_split_mib(pid: u32) -> anyhow::Result<(f64, f64)> {
    let mib = |kb: u64| kb as f64 / 1024.0;
    Ok((
        mib(status_field(pid, "RssAnon")?),
        mib(status_field(pid, "RssFile")?),
    ))
}

/// Resident memory now and at its peak, in MiB.
pub fn memory_mib(pid: u32) -> anyhow::Result<(f64, f64)> {
    let mib = |kb: u64| kb as f64 / 1024.0;
    Ok((
        mib(status_field(pid, "VmRSS")?),
        mib(status_field(pid, "VmHWM")?),
    ))
}

/// `pid` and every process below it, parents first.
pub fn with_descendants(pid: u32) -> Vec<u32> {
    let mut found = vec![pid];
    let mut next = 0;
    while next < found.len() {
        found.extend(children(found[next]));
        next += 1;
    }
    found
}

/// Proportional set size in MiB: each page counts once, shared out among the processes
/// mapping it, so the figures of processes that share a program add up to what they
/// cost together.
pub fn pss_mib(pid: u32) -> anyhow::Result<f64> {
    Ok(rollup_field(pid, "Pss")? as f64 / 1024.0)
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
    kill_all_and_wait(&[pid])
}

/// Sends SIGKILL to every one of `pids` (in that order, by one `kill`) and waits until
/// none runs.
pub fn kill_all_and_wait(pids: &[u32]) -> anyhow::Result<()> {
    kill(pids);
    let deadline = Instant::now() + Duration::from_secs(5);
    for &pid in pids {
        while is_running(pid) {
            if Instant::now() >= deadline {
                bail!("process {pid} survived SIGKILL for 5 s");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(())
}

/// The processes whose parent is `pid`.
pub fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue; // it exited meanwhile
        };
        // `PID (COMM) STATE PPID ...`; COMM may hold spaces and parentheses.
        let ppid = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            found.push(child);
        }
    }
    found
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

/// The bench's temporary directory and databases, and the promise to clean them up.
pub struct Guard {
    root: PathBuf,
    watchdog: Option<(Child, ChildStdin)>,
    /// The admin URL and name of every database created through [`Guard::database`].
    databases: Vec<(String, String)>,
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
            databases: Vec::new(),
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

    /// Creates a PostgreSQL database of the bench's own (see [`pg`]), dropped when the
    /// guard drops; returns its URL.
    pub fn database(&mut self, label: &str) -> anyhow::Result<String> {
        let admin = pg::admin_url();
        let name = pg::database_name(label);
        // Told to the watchdog first: a bench killed while it creates one still has it
        // dropped.
        let (_, stdin) = self.watchdog.as_mut().context("the watchdog is gone")?;
        writeln!(stdin, "{DATABASE} {name} {admin}")?;
        self.databases.push((admin.clone(), name.clone()));
        pg::create(&admin, &name)
    }
}

/// The watchdog's line that names a database to drop: `database NAME ADMIN_URL`.
const DATABASE: &str = "database";

/// Kills every process under `root`, drops the databases, then removes `root`: the
/// servers go before their databases, so none writes to a database being dropped.
fn clean(root: &Path, databases: &[(String, String)]) {
    kill_under(root);
    for (admin, name) in databases {
        if let Err(e) = pg::drop_database(admin, name) {
            eprintln!("stead-bench: could not drop database {name}: {e:#}");
        }
    }
    let _ = std::fs::remove_dir_all(root);
}

impl Drop for Guard {
    fn drop(&mut self) {
        clean(&self.root, &self.databases);
        if let Some((mut child, stdin)) = self.watchdog.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

/// The watchdog: reads the root from stdin, then the databases the bench creates, waits
/// for end of input, then cleans up (dropping a database already dropped is a no-op).
pub fn watchdog_main() {
    let mut lines = std::io::stdin().lock().lines();
    let Some(Ok(root)) = lines.next() else { return };
    let mut databases = Vec::new();
    for line in lines.map_while(Result::ok) {
        let mut words = line.splitn(3, ' ');
        if let (Some(DATABASE), Some(name), Some(admin)) =
            (words.next(), words.next(), words.next())
        {
            databases.push((admin.to_string(), name.to_string()));
        }
    }
    if root.starts_with("/tmp/sb-") {
        clean(Path::new(&root), &databases);
    }
}
