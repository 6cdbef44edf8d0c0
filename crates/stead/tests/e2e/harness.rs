//! A temporary state directory with short timings, a builder for `stead` commands in it,
//! and a guard that kills every process tied to the directory when the test ends, even
//! when it fails. A test killed outright (at its time limit) never runs its guard: the
//! directories are named after the test process that owns them, and the next test's
//! first one ends what a dead owner left ([`sweep_orphans`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Timings short enough for tests, long enough for a loaded 2-core machine.
pub const LEASE_MS: u64 = 2_000;
pub const HEARTBEAT_MS: u64 = 250;
pub const PROBE_TIMEOUT_MS: u64 = 300;
pub const START_TIMEOUT_MS: u64 = 10_000;

/// Generous upper bound for anything a test waits on.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub struct StateDir {
    /// A small file system the state directory lives on, unmounted after the processes
    /// are gone and before the temporary directory is removed (fields drop in order).
    _disk: Option<Tmpfs>,
    _tmp: tempfile::TempDir,
    path: PathBuf,
    env: Vec<(String, String)>,
    /// Where this directory's commands run, when not plainly on this machine.
    wrap: Option<Wrap>,
}

/// A tmpfs mounted for a test, unmounted (lazily, so nothing left open holds it) when
/// dropped.
pub struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// How a state directory's commands are run to stand in for another machine.
enum Wrap {
    /// In a mount namespace where this directory (another host's files) is empty.
    Hiding(PathBuf),
    /// In this network namespace.
    NetNs(String),
}

impl StateDir {
    pub fn new() -> Self {
        let tmp = temp_dir();
        // A directory stead creates itself, as on a fresh machine.
        let path = tmp.path().canonicalize().unwrap().join("state");
        Self::at(tmp, path)
    }

    /// A state directory on a file system of its own of `size` (`6m`): a disk a test can
    /// fill. Needs root.
    pub fn on_tmpfs(size: &str) -> Self {
        let tmp = temp_dir();
        let disk = tmp.path().canonicalize().unwrap().join("disk");
        std::fs::create_dir(&disk).unwrap();
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(&disk)
            .stdin(Stdio::null())
            .output()
            .expect("mount runs");
        assert!(
            out.status.success(),
            "mounting a tmpfs (root only): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut dir = Self::at(tmp, disk.join("state"));
        dir._disk = Some(Tmpfs(disk));
        dir.remove_env("STEAD_LOGS_KEEP_FREE");
        dir
    }

    /// The root of the file system a state directory made by [`StateDir::on_tmpfs`] is on.
    pub fn disk(&self) -> &Path {
        &self._disk.as_ref().expect("a state directory on a tmpfs").0
    }

    /// A state directory whose path is too long for a unix socket.
    pub fn with_long_path() -> Self {
        let tmp = temp_dir();
        let path = tmp
            .path()
            .canonicalize()
            .unwrap()
            .join("a-rather-long-directory-name-for-state".repeat(3));
        Self::at(tmp, path)
    }

    fn at(tmp: tempfile::TempDir, path: PathBuf) -> Self {
        Self {
            _disk: None,
            _tmp: tmp,
            path,
            env: vec![
                // The default reserve is a share of the disk: on a large disk nearly full
                // of something else (a CI machine's), every run's output would be dropped.
                // The disk tests measure the reserve on a tmpfs of their own.
                ("STEAD_LOGS_KEEP_FREE".into(), "0".into()),
                ("STEAD_LEASE_MS".into(), LEASE_MS.to_string()),
                ("STEAD_HEARTBEAT_MS".into(), HEARTBEAT_MS.to_string()),
                (
                    "STEAD_PROBE_TIMEOUT_MS".into(),
                    PROBE_TIMEOUT_MS.to_string(),
                ),
                (
                    "STEAD_START_TIMEOUT_MS".into(),
                    START_TIMEOUT_MS.to_string(),
                ),
            ],
            wrap: None,
        }
    }

    /// The temporary directory holding the state directory (and nothing else).
    pub fn root(&self) -> &Path {
        self._tmp.path()
    }

    /// Runs every command of this directory (and so the server its first command
    /// starts, and that server's monitors) in a mount namespace of its own where
    /// `dir` is an empty tmpfs: they cannot see another host's files there.
    pub fn hide_from_commands(&mut self, dir: &Path) {
        self.wrap = Some(Wrap::Hiding(dir.to_path_buf()));
    }

    /// Runs every command of this directory (and so its server and monitors) in the
    /// network namespace `ns`: another machine on the network, which a test can cut off.
    pub fn run_in_netns(&mut self, ns: &str) {
        self.wrap = Some(Wrap::NetNs(ns.to_string()));
    }

    /// `program ARGS...` as this directory's commands run: in its mount namespace, if
    /// it hides a directory, or in its network namespace.
    pub fn command(&self, program: &str) -> Command {
        match &self.wrap {
            Some(Wrap::NetNs(ns)) => {
                let mut cmd = Command::new("ip");
                cmd.args(["netns", "exec", ns, program]);
                cmd
            }
            Some(Wrap::Hiding(hidden)) => {
                let mut cmd = Command::new("unshare");
                cmd.args([
                    "-m",
                    "sh",
                    "-c",
                    "mount -t tmpfs none \"$0\" && exec \"$@\"",
                ])
                .arg(hidden)
                .arg(program);
                cmd
            }
            None => Command::new(program),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `DIR/config.toml`, making the directory first: read by every command after.
    pub fn write_config(&self, text: &str) {
        std::fs::create_dir_all(&self.path).unwrap();
        std::fs::write(self.path.join("config.toml"), text).unwrap();
    }

    /// Overrides one environment variable for every command of this directory.
    pub fn set_env(&mut self, name: &str, value: &str) {
        self.remove_env(name);
        self.env.push((name.into(), value.into()));
    }

    /// Leaves an environment variable this directory sets to the caller's environment.
    pub fn remove_env(&mut self, name: &str) {
        self.env.retain(|(k, _)| k != name);
    }

    /// The value this directory's commands get for an environment variable it sets.
    pub fn env_value(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }

    /// `stead --state-dir DIR ARGS...` with this directory's timings.
    pub fn stead(&self, args: &[&str]) -> Command {
        let mut cmd = self.program(env!("CARGO_BIN_EXE_stead"));
        cmd.arg("--state-dir").arg(&self.path).args(args);
        cmd
    }

    /// `program` with this directory's environment (its timings; no `STEAD_STATE_DIR`
    /// or `STEAD_LOG` of the caller's): a program that runs `stead` itself.
    pub fn program(&self, program: &str) -> Command {
        let mut cmd = self.command(program);
        cmd.env_remove("STEAD_STATE_DIR").env_remove("STEAD_LOG");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Runs a command to completion, capturing its output.
    pub fn run(&self, args: &[&str]) -> Output {
        self.stead(args).output().expect("stead runs")
    }

    /// `stead status --json`, which must succeed.
    pub fn status(&self) -> Value {
        let out = self.run(&["status", "--json"]);
        assert!(
            out.status.success(),
            "status failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        serde_json::from_slice(&out.stdout).expect("status --json is JSON")
    }

    pub fn server_log(&self) -> PathBuf {
        self.path.join("logs/server.log")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.server_log()).unwrap_or_default()
    }

    /// Live (non-zombie) `serve` processes of this directory.
    pub fn server_pids(&self) -> Vec<u32> {
        pids_matching(&self.path)
            .into_iter()
            .filter(|(_, argv)| argv.iter().any(|a| a == "serve"))
            .map(|(pid, _)| pid)
            .collect()
    }
}

impl StateDir {
    /// Live run monitors of this directory.
    pub fn monitor_pids(&self) -> Vec<u32> {
        self.pids_of("monitor")
    }

    /// SIGKILLs this directory's servers: a crash (their monitors live on).
    pub fn kill_servers(&self) {
        for pid in self.server_pids() {
            signal(pid, libc::SIGKILL);
        }
    }

    /// The live spawner of monitors of this directory's server (Linux).
    pub fn spawner_pids(&self) -> Vec<u32> {
        self.pids_of("spawner")
    }

    fn pids_of(&self, role: &str) -> Vec<u32> {
        pids_matching(&self.path)
            .into_iter()
            .filter(|(_, argv)| argv.iter().any(|a| a == role))
            .map(|(pid, _)| pid)
            .collect()
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        end_processes_of(&self.path);
    }
}

/// Ends every process whose command line names `dir` (or a path under it): servers die
/// at once; monitors get SIGTERM, on which they take their run's whole process group down
/// with them, then anything left is killed.
fn end_processes_of(dir: &Path) {
    for (pid, argv) in pids_matching(dir) {
        let monitor = argv.iter().any(|a| a == "monitor");
        signal(
            pid,
            if monitor {
                libc::SIGTERM
            } else {
                libc::SIGKILL
            },
        );
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pids_matching(dir).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for (pid, _) in pids_matching(dir) {
        signal(pid, libc::SIGKILL);
    }
}

/// How the temporary directories of these tests are named: `stead-e2e.PID.START.` and a
/// random part, PID and START (its start time) naming the test process that owns it.
const TEMP_PREFIX: &str = "stead-e2e.";

/// A temporary directory in `/tmp` owned by this test process; the first one a process
/// makes sweeps the directories of dead owners first.
fn temp_dir() -> tempfile::TempDir {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep_orphans(Path::new("/tmp")));
    let me = std::process::id();
    let start = start_time(me).expect("this process's start time");
    tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{me}.{start}."))
        .tempdir_in("/tmp")
        .expect("temp dir")
}

/// When the process `pid` started (clock ticks after boot), which tells it from a later
/// process given the same pid.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields = &stat[stat.rfind(')')? + 1..];
    // The fields after the command's name start at the third, the state; the start time
    // is the twenty-second.
    fields.split_whitespace().nth(19)?.parse().ok()
}

/// Ends the processes of, and removes, every temporary directory in `parent` whose owning
/// test process is gone without its guard having run (killed at its time limit): its
/// servers would live on through the rest of the run, and past it.
fn sweep_orphans(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(|n| n.strip_prefix(TEMP_PREFIX)) else {
            continue;
        };
        let mut parts = owner.split('.');
        let pid = parts.next().and_then(|p| p.parse::<u32>().ok());
        let start = parts.next().and_then(|s| s.parse::<u64>().ok());
        let (Some(pid), Some(start)) = (pid, start) else {
            continue;
        };
        if start_time(pid) == Some(start) && !is_zombie(pid) {
            continue;
        }
        let Ok(root) = entry.path().canonicalize() else {
            continue;
        };
        end_processes_of(&root);
        let disk = root.join("disk");
        if disk.is_dir() {
            drop(Tmpfs(disk));
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// Processes (not zombies) whose command line names `dir`, or a path under it.
fn pids_matching(dir: &Path) -> Vec<(u32, Vec<String>)> {
    let needle = dir.to_string_lossy().to_string();
    let under = format!("{needle}/");
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let argv: Vec<String> = raw
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if argv.iter().any(|a| a == &needle || a.starts_with(&under)) && !is_zombie(pid) {
            found.push((pid, argv));
        }
    }
    found
}

pub fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace()
                .next()
                .map(|st| st == "Z" || st == "X")
        })
        .unwrap_or(true)
}

/// Runs a helper program (`ip`, `mount`, `openssl`) to its end, failing the test with
/// `what` and what the program said unless it succeeds.
pub fn run_checked(cmd: &mut Command, what: &str) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run it: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The pid of a running run's monitor.
pub fn monitor_of(run: &Value) -> u32 {
    run["monitor_pid"]
        .as_u64()
        .expect("a running run names its monitor") as u32
}

/// SIGKILLs a run's monitor and the command's whole process group: a crash of the
/// monitor and all it watched.
pub fn kill_monitor_and_group(monitor: u32) {
    let children = std::fs::read_to_string(format!("/proc/{monitor}/task/{monitor}/children"))
        .unwrap_or_default();
    // The monitor first: killed after its command, it could still see the command die
    // and record that end (a failure) before its own SIGKILL lands.
    signal(monitor, libc::SIGKILL);
    for child in children.split_whitespace() {
        let pgid: i32 = child.parse().unwrap();
        // SAFETY: killpg(2) on the group the monitor created for the command.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

pub fn is_alive(pid: u32) -> bool {
    !is_zombie(pid)
}

pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a plain pid and signal number.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// Waits until `cond` holds, failing the test with `what` after `PATIENCE`.
pub fn wait_until(what: &str, cond: impl FnMut() -> bool) {
    wait_until_within(what, PATIENCE, cond);
}

/// [`wait_until`] for a condition that takes longer than the usual patience to come.
pub fn wait_until_within(what: &str, patience: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + patience;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The scheduled times of `runs`, in order, asserting none is recorded twice.
pub fn fire_times(runs: &[Value]) -> Vec<i64> {
    let mut times: Vec<i64> = runs
        .iter()
        .map(|r| ms_of(r["scheduled_at"].as_str().unwrap()))
        .collect();
    times.sort();
    let n = times.len();
    times.dedup();
    assert_eq!(times.len(), n, "a fire was recorded twice: {runs:?}");
    times
}

/// Milliseconds since the epoch of an RFC 3339 time string.
pub fn ms_of(rfc3339: &str) -> i64 {
    rfc3339
        .parse::<jiff::Timestamp>()
        .expect("RFC 3339")
        .as_millisecond()
}

pub fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

pub fn now_ns() -> i64 {
    jiff::Timestamp::now().as_nanosecond() as i64
}

/// The check named `name` of `stead doctor --json` (which exits non-zero on a problem).
pub fn doctor_check(dir: &StateDir, name: &str) -> Value {
    let report = json_anyway(dir, &["doctor"]);
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} check: {report}"))
}

/// Run `id`'s log, as `stead logs` shows it.
pub fn log_of(dir: &StateDir, id: i64) -> String {
    text(&dir.run(&["logs", &id.to_string()]).stdout)
}

/// The lease row's expiry as stored in the ledger, read without a server.
pub fn lease_expiry_ms(dir: &StateDir) -> i64 {
    let conn = rusqlite::Connection::open_with_flags(
        dir.path().join("stead.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    conn.query_row(
        "SELECT expires_at_ms FROM server_lease WHERE id = 1",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `stead ARGS --json`, which must succeed, parsed. `--json` goes before a `--`, after
/// which everything is the job's command.
pub fn json(dir: &StateDir, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    let at = all.iter().position(|a| *a == "--").unwrap_or(all.len());
    all.insert(at, "--json");
    let out = dir.run(&all);
    assert!(
        out.status.success(),
        "stead {args:?} failed: {}\n{}",
        text(&out.stderr),
        dir.log()
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

/// `stead ARGS --json` parsed, whatever its exit code (a `run --wait` of a run that
/// failed exits with the run's code).
pub fn json_anyway(dir: &StateDir, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    let at = all.iter().position(|a| *a == "--").unwrap_or(all.len());
    all.insert(at, "--json");
    let out = dir.run(&all);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stead {args:?}: {e}: {}", text(&out.stderr)))
}

pub fn add_job(dir: &StateDir, name: &str, extra: &[&str], script: &str) {
    let mut args = vec!["job", "add", name];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--shell", "--", script]);
    json(dir, &args);
}

/// Every run of `job`, newest first.
pub fn runs_of(dir: &StateDir, job: &str) -> Vec<Value> {
    json(dir, &["runs", "--job", job, "--limit", "1000"])
        .as_array()
        .unwrap()
        .clone()
}

/// The runs of `job` whose parent is run `parent` (its resumes, retries).
pub fn children_of(dir: &StateDir, job: &str, parent: i64) -> Vec<Value> {
    runs_of(dir, job)
        .into_iter()
        .filter(|r| r["parent_id"] == parent)
        .collect()
}

pub fn run_of(dir: &StateDir, id: i64) -> Value {
    json(dir, &["show", &id.to_string()])
}

pub fn wait_status(dir: &StateDir, id: i64, status: &str) -> Value {
    let mut last = Value::Null;
    wait_until(&format!("run {id} is {status}"), || {
        last = run_of(dir, id);
        last["status"] == status
    });
    last
}

/// The run ids the jobs' commands wrote to `file` ([`writes_its_id`]), each once per time
/// it ran.
pub fn ran(file: &Path) -> std::collections::BTreeMap<i64, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(file).unwrap_or_default().lines() {
        *counts
            .entry(line.trim().parse::<i64>().unwrap())
            .or_default() += 1;
    }
    counts
}

/// A script that writes its run's id to `file`.
pub fn writes_its_id(file: &Path) -> String {
    format!("echo \"$STEAD_RUN_ID\" >> {}", file.display())
}

/// The arguments of a command that writes its own start, as its clock has it: the
/// nanoseconds since the epoch, which [`own_start_ms`] reads from its run's log.
pub const WRITES_ITS_START: [&str; 2] = ["date", "+%s%N"];

/// How much later than its run's recorded start a command may read its own clock: the
/// spawn, and `date` loading, on a busy machine.
pub const START_SLACK_MS: i64 = 100;

/// What a run of [`WRITES_ITS_START`] read from its clock, in milliseconds since the
/// epoch; checks that its recorded start is neither after it nor earlier than
/// [`START_SLACK_MS`] before it.
pub fn started_on_its_own_clock(run: &Value) -> i64 {
    let log = std::fs::read_to_string(run["log_path"].as_str().unwrap()).unwrap();
    let ns: i64 = log
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {log:?}"));
    let own = ns / 1_000_000;
    let started = ms_of(run["started_at"].as_str().expect("a start"));
    assert!(
        started <= own,
        "recorded as started {} ms after its command read its clock: {run}",
        started - own
    );
    assert!(
        own - started <= START_SLACK_MS,
        "recorded as started {} ms before its command read its clock: {run}",
        own - started
    );
    own
}

/// The runs of the job `clock`, which fires every `every` writing its own start
/// ([`WRITES_ITS_START`]), once `n` have succeeded; the job is disabled then.
pub fn clock_fires(dir: &StateDir, every: &str, n: usize) -> Vec<Value> {
    let mut add = vec!["job", "add", "clock", "--every", every, "--"];
    add.extend(WRITES_ITS_START);
    json(dir, &add);
    let mut done = Vec::new();
    wait_until_within("the fires ran", Duration::from_secs(30), || {
        done = runs_of(dir, "clock")
            .into_iter()
            .filter(|r| r["status"] == "succeeded")
            .collect();
        done.len() >= n
    });
    json(dir, &["job", "disable", "clock"]);
    done
}

/// Live `sleep MARKER` processes.
pub fn processes_with(marker: &str) -> usize {
    let wanted = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).ends_with(&wanted))
                .unwrap_or(false)
        })
        .filter(|e| is_alive(e.file_name().to_string_lossy().parse().unwrap()))
        .count()
}

/// A child process killed and reaped when the test ends, even when it fails.
pub struct ChildGuard(pub std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cmd` to its end, its output in files (no pipe to fill), killing it and failing
/// the test if it takes longer than [`PATIENCE`].
pub fn within_patience(cmd: std::process::Command) -> std::process::Output {
    within(cmd, PATIENCE)
}

/// Runs `cmd` to its end as [`within_patience`] does, with a patience of its own.
pub fn within(mut cmd: std::process::Command, patience: Duration) -> std::process::Output {
    let files = tempfile::tempdir().unwrap();
    let (out, err) = (files.path().join("out"), files.path().join("err"));
    cmd.stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let mut child = ChildGuard(cmd.spawn().unwrap());
    let mut status = None;
    wait_until_within("the command ends", patience, || {
        status = child.0.try_wait().unwrap();
        status.is_some()
    });
    std::process::Output {
        status: status.unwrap(),
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read(&err).unwrap(),
    }
}

/// A test killed at its time limit never runs its guard: the next test process's first
/// state directory ends the servers the dead one left, and removes its directory.
#[test]
fn a_state_directory_whose_test_died_is_swept_by_the_next_test() {
    // A test process that is gone: a pid with the start time it had.
    let mut gone = Command::new("true")
        .stdin(Stdio::null())
        .spawn()
        .expect("true runs");
    let pid = gone.id();
    let start = start_time(pid);
    gone.wait().expect("reaped");
    let start = start.expect("read while it was a zombie");
    // In a directory of this test's own: in /tmp the first directory of any other test
    // process would sweep it while this test still sets it up.
    let parent = tempfile::tempdir().expect("temp dir");
    let owned_by = |pid: u32, start: u64| {
        tempfile::Builder::new()
            .prefix(&format!("{TEMP_PREFIX}{pid}.{start}."))
            .tempdir_in(parent.path())
            .expect("temp dir")
    };
    let tmp = owned_by(pid, start);
    let root = tmp.path().canonicalize().unwrap();
    // Guarded all the same: should the sweep fail, this test's own guard ends the server.
    let dir = StateDir::at(tmp, root.join("state"));
    let server = dir.status()["pid"].as_u64().unwrap() as u32;
    // This process's own directory survives the sweep.
    let me = std::process::id();
    let mine = owned_by(me, start_time(me).expect("this process's start time"));
    std::fs::write(mine.path().join("kept"), "").unwrap();
    sweep_orphans(parent.path());
    assert!(!is_alive(server), "the dead test's server was ended");
    assert!(!root.exists(), "the dead test's directory was removed");
    assert!(mine.path().join("kept").exists());
}
