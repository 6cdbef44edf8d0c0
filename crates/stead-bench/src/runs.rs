//! The runs figures: throughput of on-demand runs (beside pueue), fire-to-exec latency of
//! a scheduled job, `stead runs` over a large ledger, and the memory of an idle server
//! with many jobs and of one run's monitor. Each figure starts and stops its own server
//! in its own state directory; every time is wall clock. The throughput and latency
//! figures run on either ledger ([`Backend`]): the cluster suite runs them on both.

use std::cell::Cell;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant, UNIX_EPOCH};

use anyhow::{Context, bail};

use crate::figures::{Stats, series, timed};
use crate::pueue::Pueue;
use crate::raw_ledger::{self, Backend};
use crate::stead::Stead;
use crate::{probe, proc};

/// How often the bench looks whether submitted work has ended.
const POLL: Duration = Duration::from_millis(2);
/// The longest the bench waits for submitted work to end.
const DRAIN_LIMIT: Duration = Duration::from_secs(600);
/// Finished runs put into the ledger for the `stead runs` figure.
pub const LEDGER_ROWS: u64 = 100_000;
/// Jobs of the idle server in the memory figure, and the zones their cron runs in.
pub const IDLE_JOBS: usize = 1000;
const ZONES: [&str; 5] = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Asia/Tokyo",
    "Australia/Sydney",
];
/// A cron schedule that does not fire while the bench runs (03:00 on January 1st).
pub const IDLE_CRON: &str = "0 3 1 1 *";
/// The memory a run's monitor should stay under, in MiB.
pub const MONITOR_TARGET_MIB: f64 = 2.0;

/// Calls `f` every [`POLL`] until it returns a value; fails after `limit`, saying `what`.
pub fn poll<T>(
    limit: Duration,
    what: impl Fn() -> String,
    f: impl FnMut() -> anyhow::Result<Option<T>>,
) -> anyhow::Result<T> {
    poll_every(POLL, limit, what, f)
}

/// [`poll`] every `every`: for figures the probes' own timestamps make, where a bench
/// looking often would only take CPU from what it measures.
pub fn poll_every<T>(
    every: Duration,
    limit: Duration,
    what: impl Fn() -> String,
    mut f: impl FnMut() -> anyhow::Result<Option<T>>,
) -> anyhow::Result<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = f()? {
            return Ok(value);
        }
        if Instant::now() >= deadline {
            bail!("{} after {} s", what(), limit.as_secs());
        }
        std::thread::sleep(every);
    }
}

/// Figure 5 for one side: `runs` runs of `true`, each submitted by its own client
/// process, one after another.
pub struct Throughput {
    pub runs: u64,
    /// From the first submission until the last client process exited.
    pub submit: Duration,
    /// From the first submission until every run had ended.
    pub total: Duration,
    /// Each client process.
    pub per_call: Stats,
    pub succeeded: u64,
    /// How many tasks may run at once (pueue's parallel setting); None: no limit.
    pub parallel: Option<u64>,
}

impl Throughput {
    pub fn per_second(&self) -> f64 {
        self.runs as f64 / self.total.as_secs_f64()
    }
}

/// Submits `n` times with `submit`, then waits until `ended` says all have ended.
fn throughput(
    n: u64,
    mut submit: impl FnMut() -> anyhow::Result<()>,
    mut ended: impl FnMut() -> anyhow::Result<(u64, u64)>,
    parallel: Option<u64>,
) -> anyhow::Result<Throughput> {
    let mut per_call = Vec::with_capacity(n as usize);
    let start = Instant::now();
    for _ in 0..n {
        per_call.push(timed(&mut submit)?.0);
    }
    let submit = start.elapsed();
    let last = Cell::new(0);
    let succeeded = poll(
        DRAIN_LIMIT,
        || format!("only {} of {n} runs ended", last.get()),
        || {
            let (done, succeeded) = ended()?;
            last.set(done);
            Ok((done >= n).then_some(succeeded))
        },
    )?;
    Ok(Throughput {
        runs: n,
        submit,
        total: start.elapsed(),
        per_call: Stats::of(&per_call),
        succeeded,
        parallel,
    })
}

/// Figure 5: `stead run t` for a job `--concurrency allow -- true`; the ends are
/// counted in the ledger (SQLite: read-only), on `backend`.
pub fn throughput_stead(stead: &Stead, backend: Backend, n: u64) -> anyhow::Result<Throughput> {
    let dir = stead.dir(&backend.dir_name("t"));
    stead.status(&dir, &backend.server_env())?;
    stead.call(
        &dir,
        &["job", "add", "t", "--concurrency", "allow", "--", "true"],
    )?;
    let mut reader = backend.reader(&dir)?;
    let figure = throughput(
        n,
        || stead.call(&dir, &["run", "t"]),
        || reader.ended(),
        None,
    )?;
    drop(reader);
    stead.stop(&dir)?;
    Ok(figure)
}

/// Figure 5, the other side: `pueue add -- true` with pueue's parallel tasks set to
/// `n`; the ends are counted in `pueue status --json`.
pub fn throughput_pueue(pueue: &Pueue, n: u64) -> anyhow::Result<Throughput> {
    let parallel = n.to_string();
    pueue.call(["parallel", &parallel])?;
    let status = pueue.status_json()?;
    let parallel = status["groups"]["default"]["parallel_tasks"]
        .as_u64()
        .context("pueue status --json has no groups.default.parallel_tasks")?;
    let figure = throughput(
        n,
        || pueue.call(["add", "--", "true"]),
        || pueue_done(&pueue.status_json()?),
        Some(parallel),
    )?;
    pueue.call(["clean"])?;
    Ok(figure)
}

/// Tasks that are done, and how many of them succeeded. pueue 4 writes a done status
/// as `{"Done": {"result": "Success", ...}}`, pueue 3 as `{"Done": "Success"}`.
fn pueue_done(status: &serde_json::Value) -> anyhow::Result<(u64, u64)> {
    let tasks = status["tasks"]
        .as_object()
        .context("pueue status --json has no tasks")?;
    let (mut done, mut success) = (0, 0);
    for task in tasks.values() {
        let Some(d) = task["status"].get("Done") else {
            continue;
        };
        done += 1;
        let result = d.get("result").unwrap_or(d);
        success += u64::from(result.as_str() == Some("Success"));
    }
    Ok((done, success))
}

/// Figure 6: how late after its scheduled time each stage of a fire happened.
pub struct Latency {
    /// Scheduled time → the run's row (ledger milliseconds).
    pub created: Stats,
    /// Scheduled time → the monitor marked the run running (ledger milliseconds).
    pub running: Stats,
    /// Scheduled time → the probe's `main` began.
    pub exec: Stats,
}

/// Figure 6: a job `--every 1s` running `stead-probe FILE`, until `n` scheduled fires
/// have reached the probe, on `backend`.
pub fn latency(
    stead: &Stead,
    backend: Backend,
    probe_exe: &Path,
    file: &Path,
    n: usize,
) -> anyhow::Result<Latency> {
    let dir = stead.dir(&backend.dir_name("l"));
    stead.status(&dir, &backend.server_env())?;
    let exe = probe_exe
        .to_str()
        .context("the probe's path is not UTF-8")?;
    let out = file
        .to_str()
        .context("the probe file's path is not UTF-8")?;
    stead.call(
        &dir,
        &["job", "add", "lat", "--every", "1s", "--", exe, out],
    )?;
    let limit = Duration::from_secs(n as u64 + 30);
    let got = Cell::new(0);
    let samples = poll(
        limit,
        || format!("only {} of {n} fires reached the probe", got.get()),
        || {
            let samples: Vec<_> = probe::read(file)?
                .into_iter()
                .filter(|s| s.trigger == "scheduled")
                .take(n)
                .collect();
            got.set(samples.len());
            Ok((samples.len() == n).then_some(samples))
        },
    )?;
    stead.call(&dir, &["job", "disable", "lat"])?;
    let mut reader = backend.reader(&dir)?;
    let ms = |d: i64| Duration::from_millis(d.max(0) as u64);
    let (mut created, mut running, mut exec) = (Vec::new(), Vec::new(), Vec::new());
    for s in &samples {
        let (Some(id), Some(scheduled_at)) = (s.run_id, s.scheduled_at) else {
            bail!("the probe ran without a run of stead");
        };
        let scheduled_ms = scheduled_at.as_millisecond();
        let (c, r) = reader
            .run_times(id)?
            .with_context(|| format!("run {id} has no start in the ledger"))?;
        created.push(ms(c - scheduled_ms));
        running.push(ms(r - scheduled_ms));
        let started = s.started.duration_since(UNIX_EPOCH)?.as_nanos() as i128;
        let late = started - scheduled_at.as_nanosecond();
        if late < 0 {
            bail!("run {id} started {} ns before its scheduled time", -late);
        }
        exec.push(Duration::from_nanos(late as u64));
    }
    drop(reader);
    stead.stop(&dir)?;
    Ok(Latency {
        created: Stats::of(&created),
        running: Stats::of(&running),
        exec: Stats::of(&exec),
    })
}

/// Figure 7: `stead runs` with [`LEDGER_ROWS`] finished runs in the ledger.
pub struct Listing {
    pub rows: u64,
    /// `stead runs --limit 50 --json`
    pub newest: Stats,
    /// `stead runs --job q --status succeeded --limit 50 --json` (every run matches)
    pub filtered: Stats,
    /// `stead runs --status failed --limit 50 --json` (no run matches)
    pub no_match: Stats,
}

/// The arguments of figure 7's three listings.
pub const LISTINGS: [&[&str]; 3] = [
    &["runs", "--limit", "50", "--json"],
    &[
        "runs",
        "--job",
        "q",
        "--status",
        "succeeded",
        "--limit",
        "50",
        "--json",
    ],
    &["runs", "--status", "failed", "--limit", "50", "--json"],
];

/// Figure 7: one real run of a job, the server stopped, [`LEDGER_ROWS`] succeeded runs
/// of that job inserted, the server started again, then `n` timed listings of each kind.
pub fn listing(stead: &Stead, n: usize) -> anyhow::Result<Listing> {
    let dir = stead.dir("q");
    raw_ledger::with_one_run(stead, &dir, &[], "q")?;
    raw_ledger::refill(stead, &dir, &[], "q", LEDGER_ROWS)?;
    let list = |args: &[&str], expect: usize| {
        series(n, || {
            let got = stead.json(&dir, args)?.as_array().map_or(0, Vec::len);
            if got != expect {
                bail!("stead {} listed {got} runs, not {expect}", args.join(" "));
            }
            Ok(())
        })
    };
    let newest = list(LISTINGS[0], 50)?;
    let filtered = list(LISTINGS[1], 50)?;
    let no_match = list(LISTINGS[2], 0)?;
    stead.stop(&dir)?;
    Ok(Listing {
        rows: LEDGER_ROWS,
        newest,
        filtered,
        no_match,
    })
}

/// Figure 8: resident memory in MiB.
pub struct Memory {
    /// The server's VmRSS and VmHWM, settled, with no jobs.
    pub empty: (f64, f64),
    /// The same with [`IDLE_JOBS`] jobs applied.
    pub jobs: (f64, f64),
    /// One monitor's VmRSS and VmHWM while its run sleeps.
    pub monitor: (f64, f64),
    /// The monitor's VmRSS split into anonymous (RssAnon) and file-backed (RssFile)
    /// pages, and its proportional set size (file pages shared with the server and other
    /// monitors counted in part).
    pub monitor_anon: f64,
    pub monitor_file: f64,
    pub monitor_pss: f64,
}

/// Samples VmRSS every 250 ms until four samples in a row agree (1 s unchanged), for
/// at most 10 s, then returns VmRSS and VmHWM.
pub fn settled(pid: u32) -> anyhow::Result<(f64, f64)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut last, mut same) = (proc::status_field(pid, "VmRSS")?, 0);
    while same < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
        let now = proc::status_field(pid, "VmRSS")?;
        same = if now == last { same + 1 } else { 0 };
        last = now;
    }
    proc::memory_mib(pid)
}

/// [`IDLE_JOBS`] jobs that never fire while the bench runs, as `stead apply` reads them.
fn idle_jobs_toml() -> String {
    let mut toml = String::new();
    for i in 0..IDLE_JOBS {
        let _ = writeln!(
            toml,
            "[[job]]\nname = \"idle-{i:04}\"\ncron = \"{IDLE_CRON}\"\ntz = \"{}\"\ncommand = [\"true\"]\n",
            ZONES[i % ZONES.len()]
        );
    }
    toml
}

/// Figure 8: the server settled with no jobs, then with [`IDLE_JOBS`] applied; then
/// the monitor of a `sleep 30` run, which is cancelled afterwards.
pub fn memory(stead: &Stead, root: &Path) -> anyhow::Result<Memory> {
    let dir = stead.dir("m");
    let pid = stead.status(&dir, &[])?.pid;
    let empty = settled(pid)?;
    let file = root.join("jobs.toml");
    std::fs::write(&file, idle_jobs_toml())?;
    let file = file.to_str().context("the jobs file's path is not UTF-8")?;
    stead.json(&dir, &["apply", file, "--json"])?;
    if stead.status(&dir, &[])?.pid != pid {
        bail!("the server changed while the jobs were applied");
    }
    let jobs = settled(pid)?;

    stead.call(
        &dir,
        &[
            "job",
            "add",
            "s",
            "--concurrency",
            "allow",
            "--",
            "sleep",
            "30",
        ],
    )?;
    let run = stead.json(&dir, &["run", "s", "--json"])?;
    let id = run["id"]
        .as_i64()
        .context("stead run --json printed no id")?;
    let id = id.to_string();
    let monitor = poll(
        Duration::from_secs(10),
        || format!("run {id} was not running"),
        || {
            let run = stead.json(&dir, &["show", &id, "--json"])?;
            Ok(
                match (run["status"].as_str(), run["monitor_pid"].as_u64()) {
                    (Some("running"), Some(pid)) => Some(u32::try_from(pid)?),
                    _ => None,
                },
            )
        },
    )?;
    let rss = settled(monitor)?;
    let mib = |field: &str| -> anyhow::Result<f64> {
        Ok(proc::status_field(monitor, field)? as f64 / 1024.0)
    };
    let (anon, file) = (mib("RssAnon")?, mib("RssFile")?);
    let pss = proc::rollup_field(monitor, "Pss")? as f64 / 1024.0;
    stead.call(&dir, &["cancel", &id, "--json"])?;
    stead.stop(&dir)?;
    Ok(Memory {
        empty,
        jobs,
        monitor: rss,
        monitor_anon: anon,
        monitor_file: file,
        monitor_pss: pss,
    })
}
