//! A soak of random faults: on-demand and scheduled runs go on while the server is
//! crashed, frozen, stopped and stopped with its runs cut, and monitors are killed with
//! their commands. Once the faults stop and everything owed is settled, the ledger must
//! be whole: every run ended once, nothing ran twice without a recorded reason, every
//! cut run's debt is settled, and no process outlives its run.
//!
//! Bounded by time (`STEAD_SOAK_SECS`, default 20 s of faults; nextest ends any test at
//! 120 s, so a soak much past 90 s wants `cargo test`) and by an iteration count.
//! Deterministic per seed (`STEAD_SOAK_SEED`, decimal or 0x-hex) in the steps it takes,
//! though not in their timing; the seed is printed first and in the soak's own failures.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use crate::harness::*;

const DEFAULT_SECS: u64 = 20;
const DEFAULT_SEED: u64 = 0x5eed_c0ff_ee01_2026;
/// Iterations per second of soak, at most: a bound should the commands be quicker than
/// expected.
const MAX_ITERATIONS_PER_SEC: u64 = 25;
/// The longest freeze: well under the harness's lease, so a freeze is a doze, not a
/// takeover.
const MAX_FREEZE_MS: u64 = 1_000;
/// The longest pause between two steps.
const MAX_PAUSE_MS: u64 = 250;
/// How long settling after the faults may take.
const SETTLE: Duration = Duration::from_secs(60);

const NOT_RESUMED_AGAIN: &str =
    "not resumed: it was itself a resume, and a cut run is resumed once";

/// xorshift64*: small, seedable, good enough to choose faults.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    Run,
    KillServer,
    FreezeServer,
    KillMonitor,
    Stop,
    StopCancelRuns,
}

impl Fault {
    fn name(self) -> &'static str {
        match self {
            Fault::Run => "run",
            Fault::KillServer => "kill-server",
            Fault::FreezeServer => "freeze-server",
            Fault::KillMonitor => "kill-monitor",
            Fault::Stop => "stop",
            Fault::StopCancelRuns => "stop-cancel-runs",
        }
    }

    /// Weighted: runs are started most often, the rougher faults less.
    fn choose(rng: &mut Rng) -> Self {
        match rng.below(100) {
            0..40 => Fault::Run,
            40..52 => Fault::KillServer,
            52..64 => Fault::FreezeServer,
            64..82 => Fault::KillMonitor,
            82..91 => Fault::Stop,
            _ => Fault::StopCancelRuns,
        }
    }
}

/// The on-demand jobs the soak starts by hand.
const BY_HAND: [&str; 3] = ["slow", "fails", "brains"];

/// One iteration's choices, drawn whole whichever the fault uses, so the steps depend on
/// the seed alone and not on what the machine's timing made of the steps before.
struct Step {
    fault: Fault,
    /// For a run: the jobs started, one or two.
    jobs: Vec<&'static str>,
    /// For a freeze: how long the server stays frozen.
    freeze: Duration,
    /// For a monitor kill: which running monitor (modulo how many run).
    pick: u64,
    /// After a server kill: start the next server at once, else leave it to the next
    /// command.
    restart_at_once: bool,
    /// The pause after the step.
    pause: Duration,
}

impl Step {
    fn draw(rng: &mut Rng) -> Self {
        let fault = Fault::choose(rng);
        let count = 1 + rng.below(2) as usize;
        let jobs: Vec<&str> = (0..2)
            .map(|_| BY_HAND[rng.below(BY_HAND.len() as u64) as usize])
            .collect();
        Self {
            fault,
            jobs: jobs[..count].to_vec(),
            freeze: Duration::from_millis(100 + rng.below(MAX_FREEZE_MS - 99)),
            pick: rng.next(),
            restart_at_once: rng.chance(50),
            pause: Duration::from_millis(rng.below(MAX_PAUSE_MS + 1)),
        }
    }
}

struct Soak {
    dir: StateDir,
    seed: u64,
    faults: BTreeMap<&'static str, u32>,
    /// Faults chosen that found nothing to hit (no running monitor).
    misses: u32,
    /// Client commands that did not succeed during the faults: what, exit code, stderr.
    client_errors: Vec<String>,
}

impl Soak {
    fn setup(seed: u64) -> Self {
        let mut dir = StateDir::new();
        dir.set_env("STEAD_RESUME_DELAY_MS", "0");
        add_job(
            &dir,
            "tick",
            &["--every", "1s", "--concurrency", "allow"],
            "sleep 0.2",
        );
        add_job(
            &dir,
            "slow",
            &["--concurrency", "allow"],
            "case $((STEAD_RUN_ID % 4)) in 0) sleep 0.5;; 1) sleep 1;; 2) sleep 1.5;; *) sleep 2;; esac",
        );
        add_job(&dir, "fails", &["--concurrency", "allow"], "exit 3");
        add_job(
            &dir,
            "brains",
            &["--alternative", "sleep 0.3; exit 0"],
            "sleep 0.2; exit 1",
        );
        Self {
            dir,
            seed,
            faults: BTreeMap::new(),
            misses: 0,
            client_errors: Vec::new(),
        }
    }

    /// Runs a client command; a failure is recorded, not fatal, while faults fly.
    fn client(&mut self, args: &[&str]) -> Option<Output> {
        let out = self.dir.run(args);
        if out.status.success() {
            Some(out)
        } else {
            self.client_errors.push(format!(
                "stead {args:?} exited {:?}: {}",
                out.status.code(),
                text(&out.stderr).trim()
            ));
            None
        }
    }

    fn client_json(&mut self, args: &[&str]) -> Option<Value> {
        let out = self.client(args)?;
        serde_json::from_slice(&out.stdout).ok()
    }

    /// The serving server's pid, starting one if none serves.
    fn server_pid(&mut self) -> Option<u32> {
        let status = self.client_json(&["status", "--json"])?;
        status["pid"].as_u64().map(|pid| pid as u32)
    }

    fn inject(&mut self, step: &Step) {
        match step.fault {
            Fault::Run => {
                for job in &step.jobs {
                    self.client(&["run", job, "--json"]);
                }
            }
            Fault::KillServer => {
                if let Some(pid) = self.server_pid() {
                    signal(pid, libc::SIGKILL);
                    self.wait(
                        &format!("the killed server {pid} is gone"),
                        PATIENCE,
                        || !is_alive(pid),
                    );
                    // Now and then the next command starts the next server; else one
                    // starts at once.
                    if step.restart_at_once {
                        self.server_pid();
                    }
                }
            }
            Fault::FreezeServer => {
                if let Some(pid) = self.server_pid() {
                    // The fault is the freeze itself, so its length is wall time; nothing
                    // runs meanwhile, so nothing waits on a frozen server.
                    let frozen = Instant::now();
                    signal(pid, libc::SIGSTOP);
                    while frozen.elapsed() < step.freeze {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    signal(pid, libc::SIGCONT);
                }
            }
            Fault::KillMonitor => {
                if !self.kill_a_monitor(step.pick) {
                    self.misses += 1;
                }
            }
            Fault::Stop => {
                self.client(&["stop"]);
                self.server_pid();
            }
            Fault::StopCancelRuns => {
                self.client(&["stop", "--cancel-runs"]);
                self.server_pid();
            }
        }
        *self.faults.entry(step.fault.name()).or_default() += 1;
    }

    /// SIGKILLs a random running run's monitor and its command's process group. The
    /// monitor is frozen first, so it cannot start an alternative in between.
    fn kill_a_monitor(&mut self, pick: u64) -> bool {
        let Some(running) =
            self.client_json(&["runs", "--status", "running", "--limit", "1000", "--json"])
        else {
            return false;
        };
        let monitors: Vec<u32> = running
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|run| run["monitor_pid"].as_u64())
            .map(|pid| pid as u32)
            .filter(|pid| is_monitor_of(*pid, self.dir.path()))
            .collect();
        if monitors.is_empty() {
            return false;
        }
        let monitor = monitors[(pick % monitors.len() as u64) as usize];
        signal(monitor, libc::SIGSTOP);
        kill_monitor_and_group(monitor);
        true
    }

    fn wait(&self, what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + limit;
        while !cond() {
            assert!(
                Instant::now() < deadline,
                "seed {}: timed out waiting until {what}\n{}",
                self.seed,
                tail(&self.dir.log(), 40)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Serves until nothing is queued, running or owed, then stops the server; again if
    /// a run began between the last look and the stop.
    fn settle(&self) {
        let deadline = Instant::now() + SETTLE;
        loop {
            self.dir.status();
            let left = deadline.saturating_duration_since(Instant::now());
            self.wait("no run is queued, running or owed", left, || {
                unsettled(self.dir.path()) == 0
            });
            let out = self.dir.run(&["stop"]);
            assert!(
                out.status.success(),
                "seed {}: stop failed: {}",
                self.seed,
                text(&out.stderr)
            );
            if unsettled(self.dir.path()) == 0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "seed {}: the ledger never came to rest",
                self.seed
            );
        }
    }
}

/// Whether `pid` is a live monitor of the state directory `dir`.
fn is_monitor_of(pid: u32, dir: &Path) -> bool {
    let argv = cmdline(pid);
    is_alive(pid) && argv.iter().any(|a| a == "monitor") && argv.iter().any(|a| Path::new(a) == dir)
}

fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// Live processes tied to `dir`: its servers and monitors (which name it on their
/// command line) and the runs' commands (which see it as `STEAD_STATE_DIR`).
fn processes_of(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().to_string();
    let env = format!("STEAD_STATE_DIR={needle}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let argv = cmdline(pid);
        let in_env = std::fs::read(entry.path().join("environ"))
            .unwrap_or_default()
            .split(|&b| b == 0)
            .any(|v| v == env.as_bytes());
        if (in_env || argv.contains(&needle)) && is_alive(pid) {
            found.push(format!("{pid}: {}", argv.join(" ")));
        }
    }
    found
}

fn ledger(dir: &Path) -> Connection {
    let conn = Connection::open_with_flags(dir.join("stead.db"), OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("the ledger opens read-only");
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    conn
}

/// Runs queued, running, or cut and not yet settled.
fn unsettled(dir: &Path) -> i64 {
    ledger(dir)
        .query_row(
            "SELECT count(*) FROM runs WHERE status IN ('queued', 'running')
                OR (status = 'interrupted' AND resolution IS NULL)",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

#[derive(Debug, Clone)]
#[allow(dead_code)] // Fields are read through Debug in failure reports.
struct Row {
    id: i64,
    job_id: i64,
    job: String,
    trigger: String,
    scheduled_at_ms: Option<i64>,
    key: String,
    parent_id: Option<i64>,
    attempt: i64,
    status: String,
    reason: Option<String>,
    started_at_ms: Option<i64>,
    ended_at_ms: Option<i64>,
    original_trigger: Option<String>,
    resolution: Option<String>,
}

fn rows(conn: &Connection) -> Vec<Row> {
    let mut stmt = conn
        .prepare(
            "SELECT id, job_id, job, trigger, scheduled_at_ms, idempotency_key, parent_id,
                 attempt, status, reason, started_at_ms, ended_at_ms, original_trigger,
                 resolution
             FROM runs ORDER BY id",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(Row {
            id: r.get(0)?,
            job_id: r.get(1)?,
            job: r.get(2)?,
            trigger: r.get(3)?,
            scheduled_at_ms: r.get(4)?,
            key: r.get(5)?,
            parent_id: r.get(6)?,
            attempt: r.get(7)?,
            status: r.get(8)?,
            reason: r.get(9)?,
            started_at_ms: r.get(10)?,
            ended_at_ms: r.get(11)?,
            original_trigger: r.get(12)?,
            resolution: r.get(13)?,
        })
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Whether `resolution` says the run was resumed as run `child`, with or without a note.
fn resumed_as(resolution: Option<&str>, child: i64) -> bool {
    let Some(rest) = resolution.and_then(|r| r.strip_prefix(&format!("resumed as run {child}")))
    else {
        return false;
    };
    rest.is_empty() || (rest.starts_with(" (") && rest.ends_with(')'))
}

/// The run a resolution names as its resume.
fn resumed_run(resolution: &str) -> Option<i64> {
    let rest = resolution.strip_prefix("resumed as run ")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Checks the ledger's invariants; each violation names the runs involved.
fn violations(conn: &Connection, rows: &[Row]) -> Vec<(String, Vec<i64>)> {
    let mut found: Vec<(String, Vec<i64>)> = Vec::new();

    let integrity: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    if integrity != ["ok"] {
        found.push((format!("integrity_check: {integrity:?}"), vec![]));
    }

    let by_id: HashMap<i64, &Row> = rows.iter().map(|r| (r.id, r)).collect();
    let mut fires: HashMap<(i64, i64), i64> = HashMap::new();
    let mut roots: HashMap<&str, Vec<i64>> = HashMap::new();
    let mut children: HashMap<i64, Vec<i64>> = HashMap::new();

    for row in rows {
        let id = row.id;
        if matches!(row.status.as_str(), "queued" | "running") || row.ended_at_ms.is_none() {
            found.push(("a run did not end".into(), vec![id]));
        }
        if matches!(row.status.as_str(), "succeeded" | "failed")
            && row.started_at_ms.is_none()
            && row.resolution.is_none()
        {
            found.push(("a run ended without having started".into(), vec![id]));
        }
        if row.status == "interrupted" && row.resolution.is_none() {
            found.push(("a cut run's debt is unsettled".into(), vec![id]));
        }
        let landed = row.status == "succeeded"
            && row
                .resolution
                .as_deref()
                .is_some_and(|r| r.starts_with("landed"));
        if row.resolution.is_some() && row.status != "interrupted" && !landed {
            found.push(("a run that was not cut has a resolution".into(), vec![id]));
        }
        if matches!(row.trigger.as_str(), "scheduled" | "catch_up") {
            match row.scheduled_at_ms {
                None => found.push(("a fire without a scheduled time".into(), vec![id])),
                Some(at) => {
                    if let Some(first) = fires.insert((row.job_id, at), id) {
                        found.push(("a fire was recorded twice".into(), vec![first, id]));
                    }
                }
            }
        }
        if row.trigger == "resume" {
            let Some(parent_id) = row.parent_id else {
                found.push(("a resume without a parent".into(), vec![id]));
                continue;
            };
            children.entry(parent_id).or_default().push(id);
            let Some(parent) = by_id.get(&parent_id) else {
                found.push(("a resume of a run not in the ledger".into(), vec![id]));
                continue;
            };
            let ids = vec![parent_id, id];
            let parent_landed = parent.status == "succeeded"
                && parent
                    .resolution
                    .as_deref()
                    .is_some_and(|r| r.starts_with("landed"));
            if parent.status != "interrupted" && !parent_landed {
                found.push(("a resume of a run that was not cut".into(), ids.clone()));
            }
            if parent.trigger == "resume" {
                found.push(("a resume of a resume".into(), ids.clone()));
            }
            if !resumed_as(parent.resolution.as_deref(), id) {
                found.push((
                    "a resume its parent's resolution does not name".into(),
                    ids.clone(),
                ));
            }
            if row.key != parent.key
                || row.job_id != parent.job_id
                || row.attempt != parent.attempt + 1
                || row.original_trigger.as_deref() != Some(parent.trigger.as_str())
                || row.scheduled_at_ms != parent.scheduled_at_ms
            {
                found.push((
                    "a resume that is not its parent's work (key, job, attempt, trigger or time)"
                        .into(),
                    ids,
                ));
            }
        } else {
            roots.entry(row.key.as_str()).or_default().push(id);
        }
        if row.status == "interrupted"
            && let Some(resolution) = row.resolution.as_deref()
        {
            if row.trigger == "resume" {
                if resolution != NOT_RESUMED_AGAIN {
                    found.push((
                        format!("a cut resume resolved otherwise: {resolution}"),
                        vec![id],
                    ));
                }
            } else {
                // No job here is removed, disabled or old: every cut run is owed a resume.
                match resumed_run(resolution) {
                    None => {
                        found.push((format!("a cut run was not resumed: {resolution}"), vec![id]))
                    }
                    Some(child) => {
                        if by_id.get(&child).and_then(|c| c.parent_id) != Some(id) {
                            found.push((
                                "a resolution names a resume that does not resume it".into(),
                                vec![id, child],
                            ));
                        }
                    }
                }
            }
        }
    }
    for (parent, kids) in &children {
        if kids.len() > 1 {
            let mut ids = vec![*parent];
            ids.extend(kids);
            found.push(("a cut run was resumed more than once".into(), ids));
        }
    }
    for (key, ids) in &roots {
        if ids.len() > 1 {
            found.push((format!("the work {key} ran twice"), ids.clone()));
        }
    }
    found
}

/// "name n, ..." for the rows counted by `field`.
fn counted<'a>(rows: &'a [Row], field: impl Fn(&'a Row) -> &'a str) -> String {
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for row in rows {
        *counts.entry(field(row)).or_default() += 1;
    }
    counts
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn tail(log: &str, n: usize) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The server log's lines that name one of `ids` as a run.
fn log_lines_of(log: &str, ids: &BTreeSet<i64>) -> String {
    log.lines()
        .filter(|line| {
            line.split(|c: char| c.is_whitespace() || c == ',' || c == '}' || c == '{')
                .filter_map(|word| {
                    word.strip_prefix("run=")
                        .or_else(|| word.strip_prefix("resumed="))
                        .or_else(|| word.strip_prefix("id="))
                })
                .filter_map(|n| n.parse::<i64>().ok())
                .any(|n| ids.contains(&n))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The server's logs, and the monitors' notes in the runs' logs.
fn all_logs(dir: &Path) -> Vec<(String, String)> {
    let mut logs = Vec::new();
    for name in ["logs/server.log", "logs/server.log.1"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
            logs.push((name.to_string(), text));
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir.join("logs/runs")) {
        for entry in entries.flatten() {
            let text = std::fs::read(entry.path()).unwrap_or_default();
            logs.push((
                entry.path().display().to_string(),
                String::from_utf8_lossy(&text).into_owned(),
            ));
        }
    }
    logs
}

fn env_u64(name: &str) -> Option<u64> {
    let raw = std::env::var(name).ok()?;
    let raw = raw.trim();
    let parsed = match raw.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => raw.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={raw}: {e}")))
}

#[test]
fn a_soak_of_random_faults_keeps_the_ledger_whole() {
    let seed = env_u64("STEAD_SOAK_SEED").unwrap_or(DEFAULT_SEED);
    let secs = env_u64("STEAD_SOAK_SECS").unwrap_or(DEFAULT_SECS);
    println!("soak: seed {seed:#x} (STEAD_SOAK_SEED), {secs} s of faults (STEAD_SOAK_SECS)");
    let mut soak = Soak::setup(seed);

    let soaking = Instant::now();
    let length = Duration::from_secs(secs);
    let max_iterations = secs.max(1) * MAX_ITERATIONS_PER_SEC;
    let mut rng = Rng::new(seed);
    let mut iterations = 0;
    while soaking.elapsed() < length && iterations < max_iterations {
        let step = Step::draw(&mut rng);
        soak.inject(&step);
        // A pause between faults, not a wait for a result.
        std::thread::sleep(step.pause);
        iterations += 1;
    }

    let faulted = soaking.elapsed();
    let settling = Instant::now();
    soak.settle();
    let settled = settling.elapsed();
    let dir = soak.dir.path().to_path_buf();
    soak.wait(
        "no server, monitor or command of the directory is left",
        PATIENCE,
        || processes_of(&dir).is_empty(),
    );

    let conn = ledger(&dir);
    let rows = rows(&conn);
    let found = violations(&conn, &rows);
    let panics: Vec<String> = all_logs(&dir)
        .into_iter()
        .filter(|(_, text)| text.contains("panicked"))
        .map(|(name, text)| {
            let at = text.find("panicked").unwrap();
            let from = text[..at].rfind('\n').map_or(0, |i| i + 1);
            format!(
                "{name}: {}",
                text[from..].lines().take(5).collect::<Vec<_>>().join("\n")
            )
        })
        .collect();

    let faults: Vec<String> = soak
        .faults
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    println!(
        "soak: seed {seed:#x}, {iterations} iterations in {:.1} s, settled in {:.1} s; faults: {} ({} found no running monitor); runs: {} ({}; {}); client errors: {}",
        faulted.as_secs_f64(),
        settled.as_secs_f64(),
        faults.join(", "),
        soak.misses,
        rows.len(),
        counted(&rows, |r| &r.status),
        counted(&rows, |r| &r.trigger),
        soak.client_errors.len(),
    );
    for error in &soak.client_errors {
        println!("soak: client error: {error}");
    }

    let involved: BTreeSet<i64> = found.iter().flat_map(|(_, ids)| ids.clone()).collect();
    let log = soak.dir.log();
    let report = found
        .iter()
        .map(|(what, ids)| {
            let rows: Vec<String> = ids
                .iter()
                .filter_map(|id| rows.iter().find(|r| r.id == *id))
                .map(|r| format!("    {r:?}"))
                .collect();
            format!("  {what}\n{}", rows.join("\n"))
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        found.is_empty(),
        "seed {seed:#x}: the ledger is not whole:\n{report}\nserver log about these runs:\n{}",
        log_lines_of(&log, &involved)
    );
    assert!(
        panics.is_empty(),
        "seed {seed:#x}: a stead process panicked:\n{}",
        panics.join("\n")
    );
}
