//! The recovery figures: how soon a run cut by `stead stop --cancel-runs` is resumed
//! once the next server is ready, and what a ledger of [`LEDGER_ROWS`] runs with runs
//! to settle costs the cold start and the reconcile. Each repetition starts and stops
//! its own server in its own state directory; every server runs with
//! [`SERVER_ENV`] (no resume delay, a machine id of the bench's own).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail, ensure};

use crate::figures::{Stats, timed};
use crate::raw_ledger;
use crate::runs::{LEDGER_ROWS, poll};
use crate::stead::Stead;

/// The machine id every server of these figures runs as (`STEAD_MACHINE_ID`).
pub const MACHINE_ID: &str = "stead-bench-recovery";
/// The resume delay of every server of these figures (`STEAD_RESUME_DELAY_MS`).
pub const RESUME_DELAY_MS: u64 = 0;
/// The environment of `stead status` when it starts a server here.
const SERVER_ENV: [(&str, &str); 2] = [
    ("STEAD_RESUME_DELAY_MS", "0"),
    ("STEAD_MACHINE_ID", MACHINE_ID),
];
/// Runs left `running` with a dead monitor, and runs left `interrupted` and owed of a
/// removed job, beside the [`LEDGER_ROWS`] finished runs of the reconcile figure.
pub const STALE_RUNNING: u64 = 100;
pub const STALE_OWED: u64 = 100;
/// Ready → resume run marked running should stay under this, in ms.
pub const RESUME_TARGET_MS: f64 = 1000.0;
/// The longest the bench waits for a server to do what it owes.
const WAIT: Duration = Duration::from_secs(60);
/// The server log lines the reconcile figure reads.
const RECONCILED: &str = "reconciled a cut run";
const SETTLED: &str = "settled the runs owed after a cut";
const RESUMED: &str = "resumed a cut run";
const DECLINED: &str = "a cut run is not resumed";

/// Figure 9: a run cut by `stead stop --cancel-runs`, resumed by the next server.
pub struct Resume {
    /// `stead status` started → it answered (the new server is ready).
    pub ready: Stats,
    /// Ready → the resume run's row was written (ledger milliseconds; negative when the
    /// row came before the client had its answer).
    pub row: Stats,
    /// Ready → the resume run's monitor marked it running.
    pub running: Stats,
}

/// Figure 9, `n` times in a fresh state directory each: a job whose first attempt
/// blocks (`stead-bench hold`, whose argv names the state directory so the cleanup
/// finds it), run and running; `stead stop --cancel-runs`; then `stead status` starts
/// the next server, and the resume run's row and start are read from the ledger.
pub fn resume(stead: &Stead, bench_exe: &Path, n: usize) -> anyhow::Result<Resume> {
    let exe = bench_exe
        .to_str()
        .filter(|s| !s.contains('\''))
        .context("the bench's path is not UTF-8 or holds a quote")?;
    let (mut ready, mut row, mut running) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let dir = stead.dir(&format!("h{i}"));
        let d = dir
            .to_str()
            .filter(|s| !s.contains('\''))
            .context("the state directory's path is not UTF-8 or holds a quote")?;
        stead.status(&dir, &SERVER_ENV)?;
        let script = format!("if [ \"$STEAD_ATTEMPT\" = 1 ]; then exec '{exe}' hold '{d}/'; fi");
        stead.call(&dir, &["job", "add", "h", "--shell", "--", &script])?;
        let id = stead.json(&dir, &["run", "h", "--json"])?["id"]
            .as_i64()
            .context("stead run --json printed no id")?;
        let conn = raw_ledger::read_only(&dir)?;
        poll(
            Duration::from_secs(10),
            || format!("run {id} was not running"),
            || Ok(raw_ledger::status(&conn, id)?.filter(|(s, _)| s == "running")),
        )?;
        drop(conn);
        stead.call(&dir, &["stop", "--cancel-runs", "--json"])?;
        let conn = raw_ledger::read_only(&dir)?;
        match raw_ledger::status(&conn, id)? {
            Some((status, None)) if status == "interrupted" => {}
            other => bail!("after stop --cancel-runs, run {id} is {other:?}"),
        }
        drop(conn);

        let wall = SystemTime::now();
        let (answered, _) = timed(|| stead.status(&dir, &SERVER_ENV))?;
        let ready_ms = (wall.duration_since(UNIX_EPOCH)? + answered).as_secs_f64() * 1e3;
        let conn = raw_ledger::read_only(&dir)?;
        let child = poll(
            WAIT,
            || format!("run {id} was not resumed and running"),
            || Ok(raw_ledger::resumed(&conn, id)?.filter(|r| r.started_ms.is_some())),
        )?;
        ensure!(
            child.trigger == "resume",
            "run {} resumes run {id} with trigger {}",
            child.id,
            child.trigger
        );
        let want = format!("resumed as run {}", child.id);
        match raw_ledger::status(&conn, id)? {
            Some((_, Some(resolution))) if resolution == want => {}
            other => bail!("run {id} was resumed as run {}, yet is {other:?}", child.id),
        }
        ready.push(answered);
        row.push(child.created_ms as f64 - ready_ms);
        running.push(child.started_ms.unwrap_or_default() as f64 - ready_ms);
        // The second attempt exits at once.
        poll(
            Duration::from_secs(10),
            || format!("run {} did not end", child.id),
            || Ok((raw_ledger::active(&conn)? == 0).then_some(())),
        )?;
        drop(conn);
        stead.stop(&dir)?;
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(Resume {
        ready: Stats::of(&ready),
        row: Stats::of_ms(row),
        running: Stats::of_ms(running),
    })
}

/// Figure 10: cold starts over a large ledger with runs to settle, beside an empty one.
pub struct Reconcile {
    pub rows: u64,
    pub running: u64,
    pub owed: u64,
    /// `stead status` with no server, on a ledger with no runs.
    pub empty: Stats,
    /// The same on a ledger of [`LEDGER_ROWS`] finished runs plus the runs to settle.
    pub full: Stats,
    /// The same again right after that server settled everything and was stopped: the
    /// large ledger with nothing left to settle.
    pub settled: Stats,
    /// The server log: first to last "reconciled a cut run".
    pub reconcile: Stats,
    /// The server log: first "reconciled a cut run" to "settled the runs owed after a cut".
    pub settle: Stats,
    /// The server log: first to last "resumed a cut run", and first to last "a cut run is
    /// not resumed" (the resume pass takes the runs in id order: the resumed ones first).
    pub resumes: Stats,
    pub declines: Stats,
    /// `stead status` started → "settled the runs owed after a cut" (wall clock).
    pub until_settled: Stats,
}

/// Figure 10: two ledgers are built once, each by a server that is then stopped: an
/// empty one, and one with a job `q` (allow) run once, a job added and removed, then
/// [`LEDGER_ROWS`] succeeded runs of `q`, [`STALE_RUNNING`] runs of `q` still `running`
/// under a monitor that has exited, and [`STALE_OWED`] interrupted, owed runs of the
/// removed job, all put in with SQLite. Each of `n` repetitions copies each ledger into
/// a fresh state directory, times `stead status` starting its server, and on the large
/// one waits for the resume pass to settle all it owes (the running runs are resumed,
/// the removed job's declined), reading the times from the server log, then stops that
/// server and times one more cold start with nothing left to settle.
pub fn reconcile(stead: &Stead, n: usize) -> anyhow::Result<Reconcile> {
    let empty_dir = stead.dir("re");
    stead.status(&empty_dir, &SERVER_ENV)?;
    stead.stop(&empty_dir)?;
    let (full_dir, (first, last)) = full_ledger(stead)?;
    let owed = STALE_RUNNING + STALE_OWED;

    let (mut empty, mut full, mut restart) = (Vec::new(), Vec::new(), Vec::new());
    let (mut reconcile, mut settle, mut until) = (Vec::new(), Vec::new(), Vec::new());
    let (mut resumed, mut declined) = (Vec::new(), Vec::new());
    for i in 0..n {
        let dir = stead.dir(&format!("ce{i}"));
        copy_ledger(&empty_dir, &dir)?;
        empty.push(timed(|| stead.status(&dir, &SERVER_ENV))?.0);
        stead.stop(&dir)?;
        std::fs::remove_dir_all(&dir)?;

        let dir = stead.dir(&format!("cf{i}"));
        copy_ledger(&full_dir, &dir)?;
        let wall = SystemTime::now();
        full.push(timed(|| stead.status(&dir, &SERVER_ENV))?.0);
        let log = dir.join("logs/server.log");
        let times = poll(
            WAIT,
            || format!("{} has no line {SETTLED:?}", log.display()),
            || log_times(&log),
        )?;
        for (what, lines, want) in [
            ("reconciled", &times.reconciled, STALE_RUNNING),
            ("resumed", &times.resumed, STALE_RUNNING),
            ("declined", &times.declined, STALE_OWED),
        ] {
            ensure!(
                lines.len() as u64 == want,
                "the server log says it {what} {} runs, not {want}",
                lines.len()
            );
        }
        let conn = raw_ledger::read_only(&dir)?;
        let (active, resolved, resumes) = raw_ledger::settled(&conn, first, last)?;
        ensure!(
            (active, resolved, resumes) == (0, owed, STALE_RUNNING),
            "after the resume pass, of the {owed} runs to settle {active} are active and \
             {resolved} settled, with {resumes} resumes (expected 0, {owed}, {STALE_RUNNING})"
        );
        let span = |v: &[f64]| v.last().copied().unwrap_or_default() - v[0];
        let first_ms = times.reconciled[0];
        reconcile.push(span(&times.reconciled));
        resumed.push(span(&times.resumed));
        declined.push(span(&times.declined));
        settle.push(times.settled - first_ms);
        until.push(times.settled - wall.duration_since(UNIX_EPOCH)?.as_secs_f64() * 1e3);
        // The resumed runs of `true` end at once.
        poll(
            WAIT,
            || "the resumed runs did not end".to_string(),
            || Ok((raw_ledger::active(&conn)? == 0).then_some(())),
        )?;
        drop(conn);
        stead.stop(&dir)?;
        restart.push(timed(|| stead.status(&dir, &SERVER_ENV))?.0);
        stead.stop(&dir)?;
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(Reconcile {
        rows: LEDGER_ROWS,
        running: STALE_RUNNING,
        owed: STALE_OWED,
        empty: Stats::of(&empty),
        full: Stats::of(&full),
        settled: Stats::of(&restart),
        reconcile: Stats::of_ms(reconcile),
        settle: Stats::of_ms(settle),
        resumes: Stats::of_ms(resumed),
        declines: Stats::of_ms(declined),
        until_settled: Stats::of_ms(until),
    })
}

/// Builds figure 10's large ledger in the state directory `rf`, its server stopped;
/// returns the directory and the first and last id of the runs to settle.
fn full_ledger(stead: &Stead) -> anyhow::Result<(PathBuf, (i64, i64))> {
    let dir = stead.dir("rf");
    stead.status(&dir, &SERVER_ENV)?;
    stead.call(
        &dir,
        &["job", "add", "q", "--concurrency", "allow", "--", "true"],
    )?;
    stead.call(&dir, &["job", "add", "gone", "--", "true"])?;
    stead.json(&dir, &["run", "q", "--wait", "--json"])?;
    let conn = raw_ledger::read_only(&dir)?;
    let gone = raw_ledger::job_id(&conn, "gone")?.context("job gone has no row")?;
    drop(conn);
    stead.call(&dir, &["job", "rm", "gone"])?;
    stead.stop(&dir)?;
    raw_ledger::fill(&dir, "q", LEDGER_ROWS)?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .context("reading /proc/sys/kernel/random/boot_id")?;
    let ids = raw_ledger::owe(
        &dir,
        &raw_ledger::Owed {
            running: STALE_RUNNING,
            interrupted: STALE_OWED,
            job: "q",
            removed_job_id: gone,
            removed_job: "gone",
            machine_id: MACHINE_ID,
            boot_id: boot.trim(),
            dead_pid: dead_pid()?,
        },
    )?;
    Ok((dir, ids))
}

/// The pid of a process that has exited (and been reaped).
fn dead_pid() -> anyhow::Result<u32> {
    let mut child = Command::new("true")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting true")?;
    let pid = child.id();
    child.wait()?;
    Ok(pid)
}

/// Copies the ledger of the stopped server of `from` into a new state directory `to`
/// (mode 0700, as stead makes it).
fn copy_ledger(from: &Path, to: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(to)
        .with_context(|| format!("creating {}", to.display()))?;
    for file in ["stead.db", "stead.db-wal"] {
        let src = from.join(file);
        if src.exists() {
            std::fs::copy(&src, to.join(file))
                .with_context(|| format!("copying {}", src.display()))?;
        }
    }
    Ok(())
}

/// What figure 10 reads from a server log, in milliseconds since the Unix epoch.
struct LogTimes {
    reconciled: Vec<f64>,
    resumed: Vec<f64>,
    declined: Vec<f64>,
    settled: f64,
}

/// The times of every "reconciled a cut run", "resumed a cut run" and "a cut run is not
/// resumed" line and of the first "settled the runs owed after a cut" line; `None` until
/// the latter is written.
fn log_times(log: &Path) -> anyhow::Result<Option<LogTimes>> {
    let text = match std::fs::read_to_string(log) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let at = |line: &str| -> anyhow::Result<f64> {
        let stamp = line.split_whitespace().next().unwrap_or_default();
        let t: jiff::Timestamp = stamp
            .parse()
            .with_context(|| format!("no timestamp at the start of the log line {line:?}"))?;
        Ok(t.as_nanosecond() as f64 / 1e6)
    };
    let (mut reconciled, mut resumed, mut declined) = (Vec::new(), Vec::new(), Vec::new());
    // Only whole lines: the server may be writing the last one.
    for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        if line.contains(RECONCILED) {
            reconciled.push(at(line)?);
        } else if line.contains(RESUMED) {
            resumed.push(at(line)?);
        } else if line.contains(DECLINED) {
            declined.push(at(line)?);
        } else if line.contains(SETTLED) {
            return Ok(Some(LogTimes {
                reconciled,
                resumed,
                declined,
                settled: at(line)?,
            }));
        }
    }
    Ok(None)
}

/// The hidden `stead-bench hold DIR`: the blocking first attempt of figure 9. It only
/// sleeps; DIR is there for the cleanup to find it.
pub fn hold() {
    std::thread::sleep(Duration::from_secs(3600));
}
