//! The `floor` suite: the figures of a run start measured against the machine's floor
//! (a durable SQLite commit, a process spawned and exited), each beside a peer doing the
//! same work where one exists:
//!
//! - fire → command running for an every-second job, on SQLite and on PostgreSQL;
//! - a burst: [`BURST`] jobs due at the same minute, from the minute to the first, the
//!   median and the last command started, beside Debian's cron running as many crontab
//!   entries at one minute;
//! - on-demand runs of `true` POSTed one after another through one kept-alive HTTP
//!   connection, until all have ended, in runs per second: [`COLD_POSTS`] to a fresh
//!   server, then more to the same server, warm;
//! - the idle server's resident memory beside pueued's, in the same run, and the
//!   proportional set size of every process each keeps (stead's server and spawner)
//!   after a start and one status;
//! - a warm `stead status --json` beside `pueue status --json`, whole processes;
//! - the size of the programs a user installs (`stead` and `steadd`, `pueue` and
//!   `pueued`), and with `--clean-build` how long a clean release build of this tree takes.
//!
//! Every command the burst runs is `stead-probe`, which appends its start time to a file:
//! both sides are timed by the same program.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::figures::{self, Idle, IdlePss, Stats};
use crate::pueue::Pueue;
use crate::raw_ledger::Backend;
use crate::report::stats;
use crate::runs::{self, Latency, poll, poll_every};
use crate::stead::Stead;
use crate::{pg, probe, progress};

/// Jobs (and crontab entries) due at the same minute in the burst figure.
pub const BURST: usize = 1000;
/// Where the burst's crontab goes while cron runs it (removed after).
/// How often the burst figures look whether every fire has reached the probe: the lags
/// are the probes' own timestamps, and reading a growing file every few milliseconds
/// would take CPU from the thousand processes being measured.
const BURST_POLL: Duration = Duration::from_millis(250);
const CRON_FILE: &str = "/etc/cron.d/stead-bench-burst";

/// How a burst went: lags from the minute, in milliseconds.
pub struct Burst {
    pub commands: usize,
    pub first: f64,
    pub median: f64,
    pub last: f64,
}

impl Burst {
    /// From the probe's lines, those of the fire at `minute` (nanoseconds since the epoch).
    fn of(samples: &[probe::Sample], minute: i128) -> Self {
        let mut lags: Vec<f64> = samples
            .iter()
            .map(|s| {
                let started = s.started.duration_since(UNIX_EPOCH).unwrap().as_nanos() as i128;
                (started - minute) as f64 / 1e6
            })
            .collect();
        lags.sort_by(f64::total_cmp);
        Self {
            commands: lags.len(),
            first: lags.first().copied().unwrap_or(f64::NAN),
            median: Stats::of_ms(lags.clone()).median,
            last: lags.last().copied().unwrap_or(f64::NAN),
        }
    }

    fn json(&self) -> Value {
        json!({
            "commands": self.commands,
            "first_ms": self.first,
            "median_ms": self.median,
            "last_ms": self.last,
        })
    }
}

/// The on-demand runs POSTed through one connection.
pub struct HttpRuns {
    pub runs: usize,
    /// From the first POST until its last answer.
    pub submit: Duration,
    /// From the first POST until every run had ended.
    pub total: Duration,
    /// Each POST, answer included.
    pub per_post: Stats,
}

impl HttpRuns {
    pub fn per_second(&self) -> f64 {
        self.runs as f64 / self.total.as_secs_f64()
    }
}

pub struct FloorReport {
    pub stead: String,
    /// Of the functions `crates/stead/hot-code.order` lists, how many steadd defines:
    /// how much of its hot code the linker could lay out together (`None` without the
    /// list or `nm`).
    pub hot_code: Option<(usize, usize)>,
    /// The same of stead and `crates/stead/hot-code-client.order`.
    pub hot_code_client: Option<(usize, usize)>,
    pub latency_sqlite: Latency,
    pub latency_pg: Option<Latency>,
    pub burst: Burst,
    pub cron: Option<Burst>,
    pub http: Http,
    pub idle: Idle,
    pub pueue_idle: Option<Idle>,
    pub pss: IdlePss,
    pub pueue_pss: Option<IdlePss>,
    /// stead's after one run: the server, its spawner and any monitor still waiting.
    pub pss_after_a_run: IdlePss,
    pub warm: Stats,
    pub pueue_warm: Option<Stats>,
    pub sizes: Sizes,
    pub clean_build: Option<Duration>,
}

/// The next whole minute at least `lead` from now, in nanoseconds since the epoch.
fn next_minute(lead: Duration) -> i128 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + lead;
    let minute = 60_000_000_000i128;
    (now.as_nanos() as i128 / minute + 1) * minute
}

fn wait_until_nanos(at: i128) {
    loop {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i128;
        if now >= at {
            return;
        }
        std::thread::sleep(Duration::from_nanos(((at - now) as u64).min(200_000_000)));
    }
}

/// [`BURST`] jobs `* * * * *` added in one `stead apply`; the fires of the first whole
/// minute at least 5 s after they were added are measured.
fn burst(stead: &Stead, probe_exe: &Path, root: &Path) -> anyhow::Result<Burst> {
    let dir = stead.dir("burst");
    stead.status(&dir, &[])?;
    let out = root.join("burst.probe");
    let mut file = String::new();
    for i in 0..BURST {
        let _ = writeln!(
            file,
            "[[job]]\nname = \"b{i:04}\"\ncron = \"* * * * *\"\ntz = \"UTC\"\ncommand = [{:?}, {:?}]\n",
            probe_exe.display().to_string(),
            out.display().to_string()
        );
    }
    let jobs = root.join("burst.toml");
    std::fs::write(&jobs, file)?;
    stead.call(&dir, &["apply", jobs.to_str().context("UTF-8 path")?])?;
    let minute = next_minute(Duration::from_secs(5));
    wait_until_nanos(minute);
    let scheduled = jiff::Timestamp::from_nanosecond(minute)?;
    let samples = all_of_the_burst(&out, "fires at the minute reached the probe", |s| {
        s.scheduled_at == Some(scheduled)
    })?;
    // Nothing more fires: an empty file pruned.
    let none = root.join("none.toml");
    std::fs::write(&none, "")?;
    stead.call(
        &dir,
        &["apply", "--prune", none.to_str().context("UTF-8 path")?],
    )?;
    stead.stop(&dir)?;
    Ok(Burst::of(&samples, minute))
}

/// Waits (up to a minute) until the probe file `out` holds [`BURST`] samples of the
/// burst, as `of_burst` tells them from others; `what` names them in the error.
fn all_of_the_burst(
    out: &Path,
    what: &str,
    of_burst: impl Fn(&probe::Sample) -> bool,
) -> anyhow::Result<Vec<probe::Sample>> {
    poll_every(
        BURST_POLL,
        Duration::from_secs(60),
        || format!("not every one of the {BURST} {what}"),
        || {
            let samples: Vec<_> = probe::read(out)?.into_iter().filter(&of_burst).collect();
            Ok((samples.len() == BURST).then_some(samples))
        },
    )
}

/// Kills cron and removes its crontab when the figure ends, however it ends.
struct CronGuard(Child);

impl Drop for CronGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(CRON_FILE);
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The same burst under Debian's cron: [`BURST`] entries `* * * * *` in a crontab of
/// `/etc/cron.d`, cron started in the foreground; `None` without cron or root.
fn burst_cron(probe_exe: &Path, root: &Path) -> anyhow::Result<Option<Burst>> {
    let cron = PathBuf::from("/usr/sbin/cron");
    if !cron.is_file() || !Path::new("/etc/cron.d").is_dir() {
        eprintln!("cron: not found (apt-get install cron; scripts/setup-bench does)");
        return Ok(None);
    }
    if std::process::Command::new("pgrep")
        .args(["-x", "cron"])
        .stdout(Stdio::null())
        .status()?
        .success()
    {
        eprintln!("cron: one already runs here; its burst is not measured beside it");
        return Ok(None);
    }
    let out = root.join("cron.probe");
    let mut table = String::new();
    for _ in 0..BURST {
        let _ = writeln!(
            table,
            "* * * * * root {} {}",
            probe_exe.display(),
            out.display()
        );
    }
    std::fs::write(CRON_FILE, table).with_context(|| format!("writing {CRON_FILE} (root only)"))?;
    // Cron reads its tables when it starts and then once a minute: it starts well before
    // the measured minute.
    let minute = next_minute(Duration::from_secs(10));
    let guard = CronGuard(
        Command::new(&cron)
            .args(["-f", "-L", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting cron")?,
    );
    wait_until_nanos(minute);
    let samples = all_of_the_burst(&out, "cron entries ran", |s| {
        let t = s.started.duration_since(UNIX_EPOCH).unwrap().as_nanos() as i128;
        t >= minute && t < minute + 60_000_000_000
    })?;
    drop(guard);
    Ok(Some(Burst::of(&samples, minute)))
}

/// Runs POSTed to a fresh server for the cold figure: as many as a user trying stead
/// out sends before the server has warmed (monitors started, pages faulted in).
pub const COLD_POSTS: usize = 1000;

/// The HTTP figures: [`COLD_POSTS`] runs on a fresh server, then `warm` more on the same
/// server, each batch timed from its first POST until every run of it has ended.
pub struct Http {
    pub cold: HttpRuns,
    pub warm: HttpRuns,
}

/// Runs of a job `--concurrency allow -- true`, each POSTed to the HTTP API through one
/// kept-alive connection as soon as the last was answered; the ends are counted in the
/// ledger. The server is fresh: started by the `job add` that makes the job.
fn http_runs(stead: &Stead, warm: usize) -> anyhow::Result<Http> {
    let dir = stead.dir("http");
    stead.call(
        &dir,
        &["job", "add", "t", "--concurrency", "allow", "--", "true"],
    )?;
    let endpoint = stead.json(&dir, &["dashboard", "--json"])?;
    let base = endpoint["url"]
        .as_str()
        .context("the API's URL")?
        .to_string();
    let auth = format!(
        "Bearer {}",
        endpoint["token"].as_str().context("the API's token")?
    );
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_idle_connections(1)
        .build()
        .into();
    let url = format!("{base}/api/jobs/t/run");
    let mut reader = Backend::Sqlite.reader(&dir)?;
    let mut batch = |n: usize, before: u64| -> anyhow::Result<HttpRuns> {
        let mut per_post = Vec::with_capacity(n);
        let start = Instant::now();
        for i in 0..n {
            let posted = Instant::now();
            let answer = agent
                .post(&url)
                .header("Authorization", &auth)
                .send_empty()?;
            if answer.status() != 201 {
                bail!("POST {i} answered {}", answer.status());
            }
            let _ = answer.into_body().read_to_vec()?;
            per_post.push(posted.elapsed());
        }
        let submit = start.elapsed();
        let all = before + n as u64;
        poll(
            Duration::from_secs(600),
            || format!("the {n} runs did not all end"),
            || Ok((reader.ended()?.0 >= all).then_some(())),
        )?;
        Ok(HttpRuns {
            runs: n,
            submit,
            total: start.elapsed(),
            per_post: Stats::of(&per_post),
        })
    };
    let cold = batch(COLD_POSTS, 0)?;
    let warm = batch(warm, COLD_POSTS as u64)?;
    drop(reader);
    stead.stop(&dir)?;
    Ok(Http { cold, warm })
}

/// What a user downloads and installs: the sizes of the two programs of each side, in MiB.
pub struct Sizes {
    pub stead: f64,
    pub steadd: f64,
    pub pueue: Option<(f64, f64)>,
}

fn sizes(stead: &Stead, pueue: Option<&Pueue>) -> anyhow::Result<Sizes> {
    let mib = |path: &Path| -> anyhow::Result<f64> {
        let len = std::fs::metadata(path)
            .with_context(|| format!("{}", path.display()))?
            .len();
        Ok(len as f64 / (1024.0 * 1024.0))
    };
    let pueue = match pueue {
        Some(p) => Some((mib(&p.bins().client)?, mib(&p.bins().daemon)?)),
        None => None,
    };
    Ok(Sizes {
        stead: mib(stead.exe())?,
        steadd: mib(&stead.exe().with_file_name("steadd"))?,
        pueue,
    })
}

/// A clean `cargo build --release` of this tree (the README's first command on a fresh
/// clone) into a target directory of its own under `root`, removed after.
fn clean_build(root: &Path) -> anyhow::Result<Duration> {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = root.join("clean-build");
    let start = Instant::now();
    let status = Command::new("cargo")
        .args(["build", "--release", "--quiet"])
        .current_dir(&tree)
        .env("CARGO_TARGET_DIR", &target)
        .stdin(Stdio::null())
        .status()
        .context("running cargo")?;
    let took = start.elapsed();
    std::fs::remove_dir_all(&target)?;
    if !status.success() {
        bail!("the clean build failed: {status}");
    }
    Ok(took)
}

pub struct Inputs<'a> {
    pub stead: &'a Stead,
    pub pueue: Option<&'a Pueue>,
    pub probe: &'a Path,
    pub root: &'a Path,
    /// A scratch database for the PostgreSQL latency, when a server is there.
    pub pg_database: Option<String>,
    pub fires: usize,
    /// Runs POSTed to the warm server, after the cold figure's.
    pub posts: usize,
    pub warm: usize,
    /// Time a clean release build too (minutes of both cores).
    pub clean_build: bool,
}

pub fn run(inputs: Inputs<'_>) -> anyhow::Result<FloorReport> {
    let Inputs {
        stead,
        pueue,
        probe,
        root,
        pg_database,
        fires,
        posts,
        warm,
        clean_build: build,
    } = inputs;
    let sizes = sizes(stead, pueue)?;
    progress("idle memory beside pueued");
    let (idle, pueue_idle) = figures::idle(stead, pueue)?;
    let (pss, pueue_pss, pss_after_a_run) = figures::idle_pss(stead, pueue)?;
    progress("warm status beside pueue status");
    let (warm_stats, pueue_warm) = figures::warm(stead, pueue, warm)?;
    progress(&format!(
        "fire -> exec on SQLite: {fires} fires, one a second"
    ));
    let latency_sqlite =
        runs::latency(stead, Backend::Sqlite, probe, &root.join("l.probe"), fires)?;
    let latency_pg = match &pg_database {
        Some(db) => {
            progress(&format!("fire -> exec on PostgreSQL: {fires} fires"));
            Some(runs::latency(
                stead,
                Backend::Postgres(db),
                probe,
                &root.join("lpg.probe"),
                fires,
            )?)
        }
        None => None,
    };
    progress(&format!("{BURST} jobs due at one minute (waits for it)"));
    let burst = burst(stead, probe, root)?;
    progress(&format!(
        "{BURST} crontab entries at one minute under cron (waits for it)"
    ));
    let cron = burst_cron(probe, root)?;
    progress(&format!(
        "{COLD_POSTS} runs through one HTTP connection to a fresh server, then {posts}"
    ));
    let http = http_runs(stead, posts)?;
    let clean_build = match build {
        true => {
            progress("a clean release build of this tree");
            Some(clean_build(root)?)
        }
        false => None,
    };
    Ok(FloorReport {
        stead: stead.exe().display().to_string(),
        hot_code: hot_code(&stead.exe().with_file_name("steadd"), "hot-code.order"),
        hot_code_client: hot_code(stead.exe(), "hot-code-client.order"),
        latency_sqlite,
        latency_pg,
        burst,
        cron,
        http,
        idle,
        pueue_idle,
        pss,
        pueue_pss,
        pss_after_a_run,
        warm: warm_stats,
        pueue_warm,
        sizes,
        clean_build,
    })
}

/// How many of the functions `crates/stead/LIST` lists `program` defines, of how many
/// (see `scripts/order-hot-code`): a list gone stale after an upgrade shows here.
fn hot_code(program: &Path, list: &str) -> Option<(usize, usize)> {
    let list = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../stead")
        .join(list);
    let listed: Vec<String> = std::fs::read_to_string(list)
        .ok()?
        .lines()
        .map(str::to_string)
        .collect();
    let out = Command::new("nm")
        .arg("--defined-only")
        .arg(program)
        .output()
        .ok()?;
    let defined: std::collections::HashSet<&str> = std::str::from_utf8(&out.stdout)
        .ok()?
        .lines()
        .filter_map(|line| line.split(' ').nth(2))
        .collect();
    let found = listed
        .iter()
        .filter(|f| defined.contains(f.as_str()))
        .count();
    Some((found, listed.len()))
}

/// Whether a PostgreSQL server answers for the figure on it.
pub fn postgres_here() -> bool {
    pg::server_version(&pg::admin_url()).is_ok()
}

impl FloorReport {
    pub fn table(&self) -> String {
        let mut out = format!("floor ({})\n", self.stead);
        let l = &self.latency_sqlite.exec;
        let _ = writeln!(
            out,
            "fire -> command running, SQLite        median {:.2} ms, p90 {:.2} ms (n={})",
            l.median, l.p90, l.n
        );
        if let Some(pg) = &self.latency_pg {
            let p = &pg.exec;
            let _ = writeln!(
                out,
                "fire -> command running, PostgreSQL    median {:.2} ms, p90 {:.2} ms ({:.2}x SQLite)",
                p.median,
                p.p90,
                p.median / l.median
            );
        }
        let b = &self.burst;
        let _ = writeln!(
            out,
            "{BURST} jobs at one minute: started       first {:.0} ms, median {:.0} ms, last {:.0} ms after the minute",
            b.first, b.median, b.last
        );
        match &self.cron {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "... cron, {BURST} crontab entries        first {:.0} ms, median {:.0} ms, last {:.0} ms after the minute",
                    c.first, c.median, c.last
                );
            }
            None => out.push_str("... cron: not measured\n"),
        }
        for (which, h) in [("fresh", &self.http.cold), ("warm ", &self.http.warm)] {
            let _ = writeln!(
                out,
                "runs of true, one HTTP connection, {which} {:.0} runs/s ({} runs: posted in {:.2} s, all ended in {:.2} s; a POST median {:.2} ms)",
                h.per_second(),
                h.runs,
                h.submit.as_secs_f64(),
                h.total.as_secs_f64(),
                h.per_post.median
            );
        }
        let mib = |idle: &Idle| idle.after_calls.0;
        let split = |idle: &Idle| {
            let (anon, file) = idle.after_calls_split;
            format!("{:.1} MiB (anonymous {anon:.1}, file {file:.1})", mib(idle))
        };
        match &self.pueue_idle {
            Some(p) => {
                let _ = writeln!(
                    out,
                    "idle resident memory                      stead {}, pueued {} ({:.2}x)",
                    split(&self.idle),
                    split(p),
                    mib(&self.idle) / mib(p)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "idle resident memory                      stead {} (pueue not found)",
                    split(&self.idle)
                );
            }
        }
        let pss = &self.pss;
        let _ = match &self.pueue_pss {
            Some(p) => writeln!(
                out,
                "idle PSS after start and one status       stead {:.1} MiB ({} processes), pueued {:.1} MiB ({:.2}x)",
                pss.total,
                pss.processes,
                p.total,
                pss.total / p.total
            ),
            None => writeln!(
                out,
                "idle PSS after start and one status       stead {:.1} MiB ({} processes; pueue not found)",
                pss.total, pss.processes
            ),
        };
        let _ = writeln!(
            out,
            "PSS after one run                         stead {:.1} MiB ({} processes: the server, its spawner, any monitor still waiting for a run)",
            self.pss_after_a_run.total, self.pss_after_a_run.processes
        );
        let sz = &self.sizes;
        let _ = match sz.pueue {
            Some((client, daemon)) => writeln!(
                out,
                "programs' size                            stead {:.1} MiB + steadd {:.1} MiB, pueue {client:.1} MiB + pueued {daemon:.1} MiB ({:.2}x)",
                sz.stead,
                sz.steadd,
                (sz.stead + sz.steadd) / (client + daemon)
            ),
            None => writeln!(
                out,
                "programs' size                            stead {:.1} MiB + steadd {:.1} MiB",
                sz.stead, sz.steadd
            ),
        };
        let _ = match self.clean_build {
            Some(took) => writeln!(
                out,
                "clean release build of this tree          {:.0} s",
                took.as_secs_f64()
            ),
            None => writeln!(
                out,
                "clean release build of this tree          not measured (--clean-build)"
            ),
        };
        for (program, list, figure) in [
            ("steadd", "hot-code.order", self.hot_code),
            ("stead", "hot-code-client.order", self.hot_code_client),
        ] {
            let _ = match figure {
                Some((found, listed)) => writeln!(
                    out,
                    "hot code laid out together, {program:<13}{found} of the {listed} functions crates/stead/{list} lists"
                ),
                None => writeln!(
                    out,
                    "hot code laid out together, {program:<13}no list, or no nm"
                ),
            };
        }
        match &self.pueue_warm {
            Some(p) => {
                let _ = writeln!(
                    out,
                    "warm status, whole processes              stead {:.2} ms, pueue {:.2} ms ({:.2}x)",
                    self.warm.median,
                    p.median,
                    self.warm.median / p.median
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "warm status, whole processes              stead {:.2} ms (pueue not found)",
                    self.warm.median
                );
            }
        }
        out
    }

    pub fn json(&self) -> Value {
        json!({
            "stead": self.stead,
            "hot_code_functions": self.hot_code.map(|(found, listed)| json!({"found": found, "listed": listed})),
            "hot_code_client_functions": self.hot_code_client.map(|(found, listed)| json!({"found": found, "listed": listed})),
            "fire_to_exec_sqlite_ms": stats(&self.latency_sqlite.exec),
            "fire_to_exec_postgres_ms": self.latency_pg.as_ref().map(|l| stats(&l.exec)),
            "burst": self.burst.json(),
            "burst_cron": self.cron.as_ref().map(Burst::json),
            "http_runs_per_second_fresh": self.http.cold.per_second(),
            "http_runs_per_second_warm": self.http.warm.per_second(),
            "http_post_ms_fresh": stats(&self.http.cold.per_post),
            "http_post_ms_warm": stats(&self.http.warm.per_post),
            "idle_pss_mib": self.pss.total,
            "idle_pss_processes": self.pss.processes,
            "after_a_run_pss_mib": self.pss_after_a_run.total,
            "after_a_run_pss_processes": self.pss_after_a_run.processes,
            "pueued_idle_pss_mib": self.pueue_pss.as_ref().map(|p| p.total),
            "program_mib": {"stead": self.sizes.stead, "steadd": self.sizes.steadd},
            "pueue_program_mib": self.sizes.pueue.map(|(c, d)| json!({"pueue": c, "pueued": d})),
            "clean_build_s": self.clean_build.map(|d| d.as_secs_f64()),
            "idle_rss_mib": self.idle.after_calls.0,
            "pueued_idle_rss_mib": self.pueue_idle.as_ref().map(|p| p.after_calls.0),
            "idle_rss_anon_file_mib": self.idle.after_calls_split,
            "pueued_idle_rss_anon_file_mib": self.pueue_idle.as_ref().map(|p| p.after_calls_split),
            "warm_status_ms": stats(&self.warm),
            "pueue_warm_status_ms": self.pueue_warm.as_ref().map(stats),
        })
    }
}
