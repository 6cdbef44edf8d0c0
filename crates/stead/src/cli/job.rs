//! `stead job`: add, list, show, remove, enable and disable jobs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use clap::{Subcommand, ValueEnum};
use jiff::tz::TimeZone;
use stead_client::Client;
use stead_protocol::{
    CatchUp, Concurrency, Job, JobSpec, OnBattery, PauseParams, ResumeOn, exit, method,
};

use super::errors::DataError;
use super::output::{self, OutputArgs, Show};
use super::render::{self, NONE};

/// The COMMAND column of `stead job ls` is cut to this many characters.
const COMMAND_WIDTH: usize = 48;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: JobCommand,
}

#[derive(Debug, Subcommand)]
enum JobCommand {
    /// Add a job: `stead job add NAME [--cron EXPR | --every DURATION] -- CMD...`
    Add(Box<AddArgs>),
    /// List the jobs
    Ls(OutputArgs),
    /// Show one job
    Show(NameArgs),
    /// Remove a job (its runs stay in the ledger)
    Rm(NameArgs),
    /// Enable a job: it fires on its schedule again
    Enable(NameArgs),
    /// Disable a job: it keeps its definition but never fires (it can still be run by hand)
    Disable(NameArgs),
    /// Pause a job for a while: its fires until then are recorded skipped, and firing
    /// starts again by itself
    Pause(PauseArgs),
    /// End a job's pause now
    Unpause(NameArgs),
}

#[derive(Debug, clap::Args)]
struct PauseArgs {
    /// The job's name
    name: String,
    /// Pause it this long from now (`30m`, `2h`)
    #[arg(
        long = "for",
        value_name = "DURATION",
        required_unless_present = "until",
        conflicts_with = "until"
    )]
    duration: Option<String>,
    /// Pause it until this time (RFC 3339, such as 2026-12-24T08:00:00Z)
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    #[command(flatten)]
    format: OutputArgs,
}

#[derive(Debug, clap::Args)]
struct AddArgs {
    /// The job's name: letters, digits, `-`, `_` and `.`, at most 64 characters
    name: String,
    /// Run on a cron schedule: five fields, as in a crontab (see docs/scheduling.md)
    #[arg(long, value_name = "EXPR", conflicts_with = "every")]
    cron: Option<String>,
    /// The IANA time zone of --cron [default: the machine's zone]
    // clap drops `requires` when a conflicting flag is given, so `--every` is named too.
    #[arg(long, value_name = "ZONE", requires = "cron", conflicts_with = "every")]
    tz: Option<String>,
    /// Run at a fixed interval, counted from when the job is added (`15m`, `1h30m`)
    #[arg(long, value_name = "DURATION")]
    every: Option<String>,
    /// The working directory [default: the server's]; relative to this shell's directory
    #[arg(long, value_name = "DIR", value_parser = absolute_dir)]
    cwd: Option<String>,
    /// An environment variable for the command; repeat for more (a later K wins)
    #[arg(long = "env", value_name = "K=V", value_parser = env_pair)]
    env: Vec<(String, String)>,
    /// A secret from this host's store (`stead secret set`) the command gets as a
    /// variable: NAME (the variable NAME) or VAR=NAME; repeat for more. Only the name is
    /// kept with the job
    #[arg(long = "secret", value_name = "NAME|VAR=NAME")]
    secrets: Vec<String>,
    /// Terminate a run (SIGTERM, then SIGKILL) after this long (`90s`, `2h`)
    #[arg(long, value_name = "DURATION")]
    timeout: Option<String>,
    /// Overdue when no run has succeeded for this long (`26h`): an `overdue` event, and
    /// `stead status` lists the job until its next success
    #[arg(long, value_name = "DURATION")]
    expect_within: Option<String>,
    /// What to do when a run is due while an earlier one is still going
    #[arg(long, value_enum, default_value_t = ConcurrencyArg::Forbid)]
    concurrency: ConcurrencyArg,
    /// Run the command through `sh -c`, its words joined by spaces into one script
    #[arg(long)]
    shell: bool,
    /// Add the job disabled: it will not fire until `stead job enable NAME`
    #[arg(long)]
    disabled: bool,
    /// A command to try when the previous one genuinely fails; repeat for more, tried in
    /// order (a quoted command line, or with --shell a script). A cut run tries none.
    #[arg(long = "alternative", value_name = "CMD")]
    alternatives: Vec<String>,
    /// A shell command run after a genuine failure of the last alternative, with the
    /// run as JSON on its stdin (never for cancelled, interrupted or skipped runs)
    #[arg(long, value_name = "CMD")]
    on_failure: Option<String>,
    /// A receipt checked before a cut run is resumed, with its STEAD_IDEMPOTENCY_KEY:
    /// exit 0 = the work landed (closed as succeeded, nothing reruns), 1 = resume
    #[arg(long, value_name = "CMD")]
    landed_check: Option<String>,
    /// Fires missed while stead was down or asleep: skip them, run once for all of
    /// them, or run each (bounded)
    #[arg(long, value_enum, default_value_t = CatchUpArg::Once)]
    catch_up: CatchUpArg,
    /// Only fires missed within this long are made up for [default: 6h]
    #[arg(long, value_name = "DURATION")]
    catch_up_window: Option<String>,
    /// Never resume a cut run of this job
    #[arg(long)]
    no_resume: bool,
    /// A service the job's runs depend on (see `stead service add`); repeat for more
    #[arg(long = "depends-on", value_name = "SERVICE")]
    depends_on: Vec<String>,
    /// On a shared ledger: a host whose server may run it (a name `stead hosts` lists);
    /// repeat for more [default: any host]
    #[arg(long = "host", value_name = "NAME")]
    hosts: Vec<String>,
    /// On a shared ledger: where a run cut on a lost host is resumed, on the same host
    /// once it is back, or on any host
    #[arg(long, value_enum, default_value_t = ResumeOnArg::Same)]
    resume_on: ResumeOnArg,
    /// Keep at most this many of the job's runs (the newest); older ones are pruned
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    keep_runs: Option<u32>,
    /// Keep the job's runs this long (`30d`, `12h`) [default: the server's
    /// `[retention] runs_max_age_ms`]
    #[arg(long, value_name = "DURATION")]
    keep_for: Option<String>,
    /// After a genuine failure, retry up to N times (each a new run, trigger `retry`)
    #[arg(long, value_name = "N", default_value_t = 0)]
    retries: u32,
    /// The first retry's delay, doubling for each next one (`30s`, `200ms`) [default: 30s]
    #[arg(long, value_name = "DELAY")]
    retry_delay: Option<String>,
    /// The longest delay between retries [default: 1h]
    #[arg(long, value_name = "DELAY")]
    retry_max_delay: Option<String>,
    /// Run after each success of this job (trigger `after`); repeat for more
    #[arg(long = "after", value_name = "JOB")]
    after: Vec<String>,
    /// The queue whose limit on runs at once it shares (see `stead queue set`)
    #[arg(long, value_name = "NAME")]
    queue: Option<String>,
    /// Start each run's command once the machine has a route out (and --network-check
    /// answers), waiting at most --network-wait
    #[arg(long)]
    needs_network: bool,
    /// With --needs-network: a HOST:PORT that must also accept a TCP connection
    #[arg(long, value_name = "HOST:PORT", requires = "needs_network")]
    network_check: Option<String>,
    /// With --needs-network: the longest wait for the network, after which the run goes
    /// on without it and says so [default: 2m]
    #[arg(long, value_name = "DURATION", requires = "needs_network")]
    network_wait: Option<String>,
    /// What a fire does on battery power: run, defer (until mains power, within the
    /// catch-up window) or skip (recorded skipped)
    #[arg(long, value_enum, default_value_t = OnBatteryArg::Run)]
    on_battery: OnBatteryArg,
    /// Hold a sleep inhibitor while a run is live, so the machine does not sleep under it
    #[arg(long)]
    keep_awake: bool,
    /// Delay each fire by a random amount up to this (`5m`)
    #[arg(long, value_name = "DURATION")]
    jitter: Option<String>,
    /// With --jitter: the same delay for every fire of the job on this host
    #[arg(long, requires = "jitter")]
    jitter_fixed: bool,
    #[command(flatten)]
    format: OutputArgs,
    /// The program and its arguments (or, with --shell, the script), after `--`
    #[arg(last = true, required = true, num_args = 1.., value_name = "CMD")]
    command: Vec<String>,
}

#[derive(Debug, clap::Args)]
struct NameArgs {
    /// The job's name
    name: String,
    #[command(flatten)]
    format: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ConcurrencyArg {
    /// Both run
    Allow,
    /// The new run is recorded as skipped
    Forbid,
    /// The running one is cancelled and the new one starts
    Replace,
}

impl From<ConcurrencyArg> for Concurrency {
    fn from(arg: ConcurrencyArg) -> Self {
        match arg {
            ConcurrencyArg::Allow => Concurrency::Allow,
            ConcurrencyArg::Forbid => Concurrency::Forbid,
            ConcurrencyArg::Replace => Concurrency::Replace,
        }
    }
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let mut conn = super::connect(&Client::for_state_dir(dir)?)?;
    match args.command {
        JobCommand::Add(add) => {
            let format = add.format;
            let job = conn.job_add(&add.into_spec()?)?;
            output::show_with(&job, format, || detailed("added job", &job))?;
        }
        JobCommand::Ls(format) => output::show(&conn.job_list()?, format)?,
        JobCommand::Show(args) => {
            let job = conn.job_get(&args.name)?;
            output::show_with(&job, args.format, || detailed("job", &job))?;
        }
        JobCommand::Rm(args) => {
            let job = conn.job_remove(&args.name)?;
            let line = format!("removed job {}\n", job.spec.name);
            output::show_with(&job, args.format, || line)?;
        }
        JobCommand::Enable(args) => {
            let job = conn.job_set_enabled(&args.name, true)?;
            let line = match &job.next_fire_at {
                Some(next) => format!(
                    "enabled job {}; next fire {}\n",
                    job.spec.name,
                    render::when(next)
                ),
                None => format!("enabled job {} (it has no schedule)\n", job.spec.name),
            };
            output::show_with(&job, args.format, || line)?;
        }
        JobCommand::Disable(args) => {
            let job = conn.job_set_enabled(&args.name, false)?;
            let line = format!("disabled job {}\n", job.spec.name);
            output::show_with(&job, args.format, || line)?;
        }
        JobCommand::Pause(args) => {
            let job = conn.call::<method::JobPause>(&PauseParams {
                name: args.name,
                until: args.until,
                duration: args.duration,
            })?;
            let line = format!(
                "paused job {} until {}\n",
                job.spec.name,
                job.paused_until
                    .as_deref()
                    .map_or(NONE.into(), render::when)
            );
            output::show_with(&job, args.format, || line)?;
        }
        JobCommand::Unpause(args) => {
            let job = conn.call::<method::JobPause>(&PauseParams {
                name: args.name,
                ..PauseParams::default()
            })?;
            let line = format!("unpaused job {}\n", job.spec.name);
            output::show_with(&job, args.format, || line)?;
        }
    }
    Ok(exit::SUCCESS)
}

/// `HEADING NAME`, then the job's fields a line each.
fn detailed(heading: &str, job: &Job) -> String {
    format!(
        "{heading} {}\n{}",
        job.spec.name,
        render_job(job, &TimeZone::system())
    )
}

/// `--catch-up` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum CatchUpArg {
    Skip,
    Once,
    All,
}

impl From<CatchUpArg> for CatchUp {
    fn from(arg: CatchUpArg) -> Self {
        match arg {
            CatchUpArg::Skip => CatchUp::Skip,
            CatchUpArg::Once => CatchUp::Once,
            CatchUpArg::All => CatchUp::All,
        }
    }
}

/// `--resume-on` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ResumeOnArg {
    Same,
    Any,
}

impl From<ResumeOnArg> for ResumeOn {
    fn from(arg: ResumeOnArg) -> Self {
        match arg {
            ResumeOnArg::Same => ResumeOn::Same,
            ResumeOnArg::Any => ResumeOn::Any,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OnBatteryArg {
    /// As on mains power
    Run,
    /// Wait for mains power, within the catch-up window
    Defer,
    /// Record the fire skipped
    Skip,
}

impl From<OnBatteryArg> for OnBattery {
    fn from(arg: OnBatteryArg) -> Self {
        match arg {
            OnBatteryArg::Run => OnBattery::Run,
            OnBatteryArg::Defer => OnBattery::Defer,
            OnBatteryArg::Skip => OnBattery::Skip,
        }
    }
}

impl AddArgs {
    fn into_spec(self) -> Result<JobSpec, DataError> {
        let alternatives = self
            .alternatives
            .iter()
            .map(|alt| {
                if self.shell {
                    Ok(vec![alt.clone()])
                } else {
                    shell_words::split(alt)
                        .map_err(|e| DataError(format!("--alternative {alt:?}: {e}")))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(JobSpec {
            name: self.name,
            cron: self.cron,
            tz: self.tz,
            every: self.every,
            command: command_words(self.command, self.shell),
            shell: self.shell,
            cwd: self.cwd,
            // A later K=V for the same K wins, as in `env K=1 K=2`.
            env: self.env.into_iter().collect::<BTreeMap<_, _>>(),
            secrets: self.secrets,
            timeout: self.timeout,
            concurrency: self.concurrency.into(),
            enabled: !self.disabled,
            alternatives,
            on_failure: self.on_failure,
            landed_check: self.landed_check,
            catch_up: self.catch_up.into(),
            catch_up_window: self.catch_up_window,
            resume: !self.no_resume,
            depends_on: self.depends_on,
            hosts: self.hosts,
            resume_on: self.resume_on.into(),
            keep_runs: self.keep_runs,
            keep_for: self.keep_for,
            retries: self.retries,
            retry_delay: self.retry_delay,
            retry_max_delay: self.retry_max_delay,
            after: self.after,
            queue: self.queue,
            expect_within: self.expect_within,
            needs_network: self.needs_network,
            network_check: self.network_check,
            network_wait: self.network_wait,
            on_battery: self.on_battery.into(),
            keep_awake: self.keep_awake,
            jitter: self.jitter,
            jitter_fixed: self.jitter_fixed,
        })
    }
}

/// The command as sent: a shell job's words become one script, because `sh -c` takes
/// the script as one argument (`--shell -- echo a '|' wc` and `--shell -- 'echo a | wc'`
/// mean the same).
fn command_words(words: Vec<String>, shell: bool) -> Vec<String> {
    if shell { vec![words.join(" ")] } else { words }
}

/// Parses `--env K=V`; the value may itself contain `=`.
pub(super) fn env_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some(("", _)) => Err(format!("{s:?} has no variable name before `=`")),
        Some((key, value)) => Ok((key.to_string(), value.to_string())),
        None => Err(format!("{s:?} is not of the form K=V")),
    }
}

/// Makes `--cwd` absolute against this process's directory: the server runs elsewhere,
/// so a relative path would mean the server's directory, not the one the person meant.
fn absolute_dir(s: &str) -> Result<String, String> {
    let path = std::path::absolute(s).map_err(|e| format!("{s:?}: {e}"))?;
    path.into_os_string()
        .into_string()
        .map_err(|_| format!("{s:?} is not valid UTF-8 once made absolute"))
}

/// A job's schedule in words: `cron 0 20 * * * (Europe/Berlin)`, `every 1m`, `manual`.
fn schedule(spec: &JobSpec) -> String {
    match (&spec.cron, &spec.every) {
        (Some(cron), _) => match &spec.tz {
            Some(tz) => format!("cron {cron} ({tz})"),
            None => format!("cron {cron}"),
        },
        (None, Some(every)) => format!("every {every}"),
        (None, None) => "manual".to_string(),
    }
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// One job's fields as aligned `key  value` lines, indented under a heading, times in
/// zone `tz`.
fn render_job(job: &Job, tz: &TimeZone) -> String {
    let spec = &job.spec;
    let when = |t: &str| render::when_in(t, tz);
    let next = match (&job.next_fire_at, spec.enabled) {
        (Some(next), _) => when(next),
        (None, false) => "none (disabled)".to_string(),
        (None, true) => NONE.to_string(),
    };
    let mut lines: Vec<(&str, String)> = vec![
        ("schedule", schedule(spec)),
        ("next fire", next),
        ("command", render::command_line(spec)),
    ];
    if spec.shell {
        lines.push(("shell", "yes (run with sh -c)".to_string()));
    }
    if let Some(cwd) = &spec.cwd {
        lines.push(("cwd", cwd.clone()));
    }
    for (key, value) in &spec.env {
        lines.push(("env", format!("{key}={value}")));
    }
    for entry in &spec.secrets {
        lines.push(("secret", entry.clone()));
    }
    if let Some(timeout) = &spec.timeout {
        lines.push(("timeout", timeout.clone()));
    }
    if let Some(within) = &spec.expect_within {
        lines.push(("expect within", within.clone()));
    }
    if spec.retries > 0 {
        lines.push(("retries", retries(spec)));
    }
    if !spec.after.is_empty() {
        lines.push(("after", spec.after.join(", ")));
    }
    if let Some(queue) = &spec.queue {
        lines.push(("queue", queue.clone()));
    }
    if spec.needs_network {
        let check = spec
            .network_check
            .as_deref()
            .map(|c| format!(", {c} answering"))
            .unwrap_or_default();
        let wait = spec
            .network_wait
            .as_deref()
            .unwrap_or(stead_core::conditions::DEFAULT_NETWORK_WAIT);
        lines.push(("network", format!("needed{check} (waits up to {wait})")));
    }
    if spec.on_battery != OnBattery::Run {
        lines.push(("on battery", spec.on_battery.as_str().to_string()));
    }
    if spec.keep_awake {
        lines.push(("keep awake", "yes".to_string()));
    }
    if let Some(jitter) = &spec.jitter {
        let fixed = if spec.jitter_fixed {
            " (fixed per host)"
        } else {
            ""
        };
        lines.push(("jitter", format!("up to {jitter}{fixed}")));
    }
    if let Some(n) = spec.keep_runs {
        lines.push(("keep runs", n.to_string()));
    }
    if let Some(keep_for) = &spec.keep_for {
        lines.push(("keep for", keep_for.clone()));
    }
    lines.push((
        "concurrency",
        concurrency_name(spec.concurrency).to_string(),
    ));
    lines.push(("enabled", yes_no(spec.enabled).to_string()));
    if let Some(until) = &job.paused_until {
        lines.push(("paused", format!("until {}", when(until))));
    }
    lines.push(("created", when(&job.created_at)));
    lines.push(("updated", when(&job.updated_at)));
    let mut out = String::new();
    for (key, value) in lines {
        // A script's further lines stay under its first, not at the left margin.
        let value = value.trim_end().replace('\n', &format!("\n{:15}", ""));
        let _ = writeln!(out, "  {key:<12} {value}");
    }
    out
}

/// `3 (first after 30s, doubling up to 1h)`.
fn retries(spec: &JobSpec) -> String {
    use stead_core::jobs::validate::{DEFAULT_RETRY_DELAY, DEFAULT_RETRY_MAX_DELAY};
    format!(
        "{} (first after {}, doubling up to {}, ±{} %)",
        spec.retries,
        spec.retry_delay.as_deref().unwrap_or(DEFAULT_RETRY_DELAY),
        spec.retry_max_delay
            .as_deref()
            .unwrap_or(DEFAULT_RETRY_MAX_DELAY),
        stead_core::retry::JITTER_PERCENT
    )
}

fn concurrency_name(c: Concurrency) -> &'static str {
    match c {
        Concurrency::Allow => "allow",
        Concurrency::Forbid => "forbid",
        Concurrency::Replace => "replace",
    }
}

/// Whether a job fires: `enabled`, `disabled`, or `paused until TIME`.
fn state(job: &Job, tz: &TimeZone) -> String {
    match (&job.paused_until, job.spec.enabled) {
        (_, false) => "disabled".to_string(),
        (Some(until), true) => format!("paused until {}", render::when_in(until, tz)),
        (None, true) => "enabled".to_string(),
    }
}

impl Show for Vec<Job> {
    fn human(&self) -> String {
        render_jobs(self, &TimeZone::system())
    }
}

/// The `stead job ls` table, times in zone `tz`.
fn render_jobs(jobs: &[Job], tz: &TimeZone) -> String {
    if jobs.is_empty() {
        return "no jobs; add one with `stead job add` or `stead apply`\n".to_string();
    }
    let rows = jobs.iter().map(|job| {
        let spec = &job.spec;
        let schedule = match (&spec.cron, &spec.every) {
            (Some(cron), _) => cron.clone(),
            (None, Some(every)) => format!("every {every}"),
            (None, None) => "manual".to_string(),
        };
        let tz_cell = match (&spec.cron, &spec.tz) {
            (Some(_), Some(zone)) => zone.clone(),
            _ => NONE.to_string(),
        };
        vec![
            spec.name.clone(),
            schedule,
            tz_cell,
            job.next_fire_at
                .as_deref()
                .map_or_else(|| NONE.to_string(), |t| render::when_in(t, tz)),
            state(job, tz),
            render::truncate(&render::command_line(spec), COMMAND_WIDTH),
        ]
    });
    render::table(
        &["NAME", "SCHEDULE", "TZ", "NEXT FIRE", "STATE", "COMMAND"],
        rows,
    )
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// Just enough of a command line to parse `job` arguments as the real one does.
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        command: JobCommand,
    }

    fn parse(args: &[&str]) -> Result<JobCommand, clap::Error> {
        Cli::try_parse_from(std::iter::once("job").chain(args.iter().copied())).map(|c| c.command)
    }

    fn add_spec(args: &[&str]) -> JobSpec {
        match parse(args).unwrap() {
            JobCommand::Add(add) => add.into_spec().unwrap(),
            other => panic!("parsed as {other:?}"),
        }
    }

    fn job(spec: JobSpec, next: Option<&str>) -> Job {
        Job {
            schedule_kind: if spec.cron.is_some() {
                "cron"
            } else if spec.every.is_some() {
                "every"
            } else {
                "manual"
            }
            .to_string(),
            spec,
            created_at: "2026-11-30T09:00:00.000Z".into(),
            updated_at: "2026-11-30T09:00:00.000Z".into(),
            next_fire_at: next.map(str::to_string),
            paused_until: None,
        }
    }

    #[test]
    fn env_pairs_split_at_the_first_equals() {
        assert_eq!(env_pair("A=1"), Ok(("A".into(), "1".into())));
        assert_eq!(env_pair("A=x=y"), Ok(("A".into(), "x=y".into())));
        assert_eq!(env_pair("EMPTY="), Ok(("EMPTY".into(), String::new())));
        let err = env_pair("NOEQUALS").unwrap_err();
        assert!(err.contains("\"NOEQUALS\""), "{err}");
        assert!(env_pair("=v").is_err());
    }

    #[test]
    fn env_without_equals_is_a_usage_error_naming_the_value() {
        let err = parse(&["add", "j", "--env", "PATHX", "--", "true"]).unwrap_err();
        assert_eq!(err.exit_code(), exit::USAGE);
        assert!(err.to_string().contains("PATHX"), "{err}");
    }

    #[test]
    fn a_full_add_becomes_a_spec() {
        let spec = add_spec(&[
            "add",
            "backup",
            "--cron",
            "30 2 * * *",
            "--tz",
            "Europe/Berlin",
            "--cwd",
            "/srv",
            "--env",
            "A=1",
            "--env",
            "B=2",
            "--env",
            "A=3",
            "--timeout",
            "1h",
            "--concurrency",
            "replace",
            "--disabled",
            "--",
            "rsync",
            "-a",
            "--delete",
            "src/",
            "dst/",
        ]);
        assert_eq!(spec.name, "backup");
        assert_eq!(spec.cron.as_deref(), Some("30 2 * * *"));
        assert_eq!(spec.tz.as_deref(), Some("Europe/Berlin"));
        assert_eq!(spec.cwd.as_deref(), Some("/srv"));
        assert_eq!(
            spec.env,
            BTreeMap::from([("A".into(), "3".into()), ("B".into(), "2".into())])
        );
        assert_eq!(spec.timeout.as_deref(), Some("1h"));
        assert_eq!(spec.concurrency, Concurrency::Replace);
        assert!(!spec.enabled);
        assert!(!spec.shell);
        assert_eq!(spec.command, ["rsync", "-a", "--delete", "src/", "dst/"]);
    }

    #[test]
    fn shell_words_join_into_one_script() {
        let spec = add_spec(&["add", "j", "--shell", "--", "echo", "a", "|", "wc", "-c"]);
        assert!(spec.shell);
        assert_eq!(spec.command, ["echo a | wc -c"]);
        let spec = add_spec(&["add", "j", "--shell", "--", "echo a | wc -c"]);
        assert_eq!(spec.command, ["echo a | wc -c"]);
        // Defaults: forbid, enabled, no schedule.
        assert_eq!(spec.concurrency, Concurrency::Forbid);
        assert!(spec.enabled);
        assert_eq!(schedule(&spec), "manual");
    }

    #[test]
    fn relative_cwd_is_made_absolute_here() {
        let spec = add_spec(&["add", "j", "--cwd", "sub/dir", "--", "true"]);
        let expected = std::env::current_dir().unwrap().join("sub/dir");
        assert_eq!(spec.cwd.as_deref(), expected.to_str());
    }

    #[test]
    fn schedule_flags_are_checked_by_the_parser() {
        let both = parse(&[
            "add",
            "j",
            "--cron",
            "* * * * *",
            "--every",
            "1m",
            "--",
            "true",
        ]);
        assert_eq!(both.unwrap_err().exit_code(), exit::USAGE);
        let tz_alone = parse(&["add", "j", "--tz", "UTC", "--every", "1m", "--", "true"]);
        assert_eq!(tz_alone.unwrap_err().exit_code(), exit::USAGE);
        let no_command = parse(&["add", "j", "--every", "1m"]);
        assert_eq!(no_command.unwrap_err().exit_code(), exit::USAGE);
    }

    #[test]
    fn a_job_renders_with_zone_and_next_fire() {
        let mut spec = add_spec(&[
            "add",
            "journal",
            "--cron",
            "0 20 * * *",
            "--tz",
            "Europe/Berlin",
            "--secret",
            "GH=GITHUB_TOKEN",
            "--shell",
            "--",
            "echo 'dear diary'",
        ]);
        spec.env.insert("LANG".into(), "C".into());
        assert_eq!(spec.secrets, ["GH=GITHUB_TOKEN"]);
        let out = render_job(
            &job(spec, Some("2026-11-30T20:00:00+01:00")),
            &TimeZone::UTC,
        );
        assert_eq!(
            out,
            "  schedule     cron 0 20 * * * (Europe/Berlin)\n\
             \x20 next fire    2026-11-30 19:00:00 UTC\n\
             \x20 command      echo 'dear diary'\n\
             \x20 shell        yes (run with sh -c)\n\
             \x20 env          LANG=C\n\
             \x20 secret       GH=GITHUB_TOKEN\n\
             \x20 concurrency  forbid\n\
             \x20 enabled      yes\n\
             \x20 created      2026-11-30 09:00:00 UTC\n\
             \x20 updated      2026-11-30 09:00:00 UTC\n"
        );
    }

    #[test]
    fn the_job_table_has_one_row_per_job() {
        let heartbeat = job(
            add_spec(&["add", "heartbeat", "--every", "1m", "--", "date", "-u"]),
            Some("2026-11-30T09:01:00Z"),
        );
        let journal = job(
            add_spec(&[
                "add",
                "journal",
                "--cron",
                "0 20 * * *",
                "--tz",
                "Europe/Berlin",
                "--disabled",
                "--",
                "true",
            ]),
            None,
        );
        let long = job(
            add_spec(&["add", "hello", "--shell", "--", &"x".repeat(80)]),
            None,
        );
        let mut paused = job(
            add_spec(&[
                "add",
                "sync",
                "--cron",
                "0 * * * *",
                "--tz",
                "Asia/Tokyo",
                "--",
                "true",
            ]),
            Some("2026-11-30T19:00:00+09:00"),
        );
        paused.paused_until = Some("2026-11-30T12:30:00.250Z".into());
        let out = render_jobs(&[heartbeat, journal, long, paused], &TimeZone::UTC);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5, "{out}");
        assert!(lines[0].starts_with("NAME       SCHEDULE    TZ "), "{out}");
        assert!(lines[0].contains("  STATE  "), "{out}");
        assert!(lines[0].ends_with("COMMAND"), "{out}");
        assert!(lines[1].contains("every 1m") && lines[1].contains("2026-11-30 09:01:00 UTC"));
        assert!(lines[1].contains(" enabled "), "{out}");
        assert!(lines[1].ends_with("date -u"), "{out}");
        assert!(lines[2].contains("0 20 * * *") && lines[2].contains("Europe/Berlin"));
        assert!(lines[2].contains(" disabled "), "{out}");
        assert!(lines[3].ends_with(&format!("{}…", "x".repeat(COMMAND_WIDTH - 1))));
        // One form for every time in the column, whatever the job's zone.
        assert!(lines[4].contains("2026-11-30 10:00:00 UTC"), "{out}");
        assert!(
            lines[4].contains("paused until 2026-11-30 12:30:00 UTC"),
            "{out}"
        );
        assert_eq!(render_jobs(&[], &TimeZone::UTC).lines().count(), 1);
    }
}
