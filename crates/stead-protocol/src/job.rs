//! Jobs on the wire, in `stead apply` files and in `stead job show --json`: one shape.
//!
//! Durations are strings such as `"90s"`, `"30m"`, `"1h30m"` (units `d`, `h`, `m`, `s`),
//! so a job file reads the way a person writes it. The server validates everything and
//! answers `invalid_params` with a message naming the field and value.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What may run at the same time as an earlier run of the same job that is still going.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Concurrency {
    /// Both run.
    Allow,
    /// The new run is recorded as `skipped`, with the run it overlapped named.
    #[default]
    Forbid,
    /// The running one is cancelled and the new one starts.
    Replace,
}

/// What to do with fires missed while stead was stopped or the machine slept.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CatchUp {
    /// Missed fires are not made up for.
    Skip,
    /// One run, for the latest missed fire, stands in for all of them.
    #[default]
    Once,
    /// Each missed fire runs, oldest first, up to a cap (the rest are recorded as passed
    /// over, with the reason).
    All,
}

/// A job as declared by a person.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Unique; letters, digits, `-`, `_` and `.`, at most 64 characters.
    pub name: String,
    /// A five-field cron expression (see docs/scheduling.md). Exclusive with `every`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// IANA time zone of `cron`; the machine's zone when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// A fixed interval such as `"15m"`, counted from when the job was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// The program and its arguments; with `shell`, a single shell script string.
    pub command: Vec<String>,
    /// Run `command` through `sh -c` (default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub shell: bool,
    /// Working directory (absolute); the server's own when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables for the run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Secrets from the host's secret store (`stead secret set`) its runs' commands get as
    /// environment variables: `"NAME"` (the variable NAME) or `"VAR=NAME"`. Only the
    /// names are kept; a run on a host that lacks one fails to start, naming it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// The run is terminated (SIGTERM, then SIGKILL) after this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// What a fire or run does while an earlier run of the job is still going:
    /// `forbid` (default: it is recorded `skipped`), `allow` or `replace`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub concurrency: Concurrency,
    /// A disabled job keeps its definition but never fires; it can still be run by hand
    /// (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub enabled: bool,
    /// Commands tried in order when the previous one genuinely fails (exits non-zero or
    /// is killed by a signal it did not get from stead). A cut run tries none of them.
    /// Each is an argument vector; with `shell`, a one-element script.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<Vec<String>>,
    /// A shell command run after a genuine failure of the last alternative, with the run
    /// as JSON on its stdin. Never for cancelled, interrupted or skipped runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<String>,
    /// A receipt: a shell command run before resuming a cut run, with that run's
    /// `STEAD_IDEMPOTENCY_KEY`. Exit 0: the work landed, the run is closed as succeeded
    /// and nothing reruns. Exit 1: it did not land, resume. Anything else: resume, and
    /// the reason is recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed_check: Option<String>,
    /// Missed fires: `skip`, `once` (default) or `all`.
    #[serde(default, skip_serializing_if = "is_default_catch_up")]
    pub catch_up: CatchUp,
    /// Only fires missed within this long before now are made up for (default `"6h"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch_up_window: Option<String>,
    /// Resume a cut (interrupted) run once after the server restarts (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub resume: bool,
    /// Services this job's runs depend on: a restart of one of them waits for these runs
    /// (the gate), and a run cut by one is interrupted, not failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// On a shared ledger: the hosts (by name, as `stead hosts` lists them) whose servers
    /// may run it; empty: any host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// On a shared ledger: where a run cut on a lost host is resumed.
    #[serde(default, skip_serializing_if = "is_default_resume_on")]
    pub resume_on: ResumeOn,
    /// Retention: keep at most this many of the job's runs (the newest); older ones are
    /// pruned. Absent: no count limit beyond the server's `[retention]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_runs: Option<u32>,
    /// Retention: keep the job's runs this long (such as `"30d"`), instead of the
    /// server's `runs_max_age`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_for: Option<String>,
    /// After a genuine failure (the whole alternatives chain failed), retry up to this
    /// many times, each a new run with trigger `retry` (default 0). A cut run is
    /// resumed, never retried.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// The first retry's delay (default `"30s"`); each next one doubles it, up to
    /// `retry_max_delay`, with ±20 % jitter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_delay: Option<String>,
    /// The longest delay between retries (default `"1h"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_max_delay: Option<String>,
    /// Jobs whose successful runs start a run of this one (trigger `after`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// The queue (`stead queue set`) whose limit on runs at once this job's runs share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// The job is overdue when it has had no successful run for this long (such as
    /// `"26h"`), counted from its last success or from when it was added: an `overdue`
    /// event, once per lapse, and `stead status` lists it until a success ends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_within: Option<String>,
    /// Its runs need the network: each command starts once the machine has a route out
    /// (and `network_check` answers), waiting at most `network_wait` (default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub needs_network: bool,
    /// With `needs_network`: a `host:port` that must accept a TCP connection too (its
    /// name resolved each time, so DNS is checked as well).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_check: Option<String>,
    /// With `needs_network`: the longest a run waits for the network before it goes on
    /// without it, saying so (default `"2m"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_wait: Option<String>,
    /// What a fire does while the machine runs on battery: `run` (default), `defer`
    /// (until it is on mains power, within the catch-up window) or `skip`.
    #[serde(default, skip_serializing_if = "is_default_on_battery")]
    pub on_battery: OnBattery,
    /// Hold a sleep inhibitor while a run is live, so the machine does not sleep under
    /// it (default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub keep_awake: bool,
    /// Delay each fire by a random amount up to this (such as `"5m"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<String>,
    /// With `jitter`: the same delay for every fire of the job on a host, instead of a
    /// new one each time (default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub jitter_fixed: bool,
}

/// What a fire does while the machine runs on battery.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnBattery {
    /// It runs as on mains power.
    #[default]
    Run,
    /// It waits for mains power, within the catch-up window; past it, it is skipped.
    Defer,
    /// It is recorded `skipped`, saying why.
    Skip,
}

impl OnBattery {
    pub fn as_str(self) -> &'static str {
        match self {
            OnBattery::Run => "run",
            OnBattery::Defer => "defer",
            OnBattery::Skip => "skip",
        }
    }
}

fn is_default_on_battery(o: &OnBattery) -> bool {
    *o == OnBattery::default()
}

/// Where a run cut on a lost host may be resumed.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeOn {
    /// Only on the host that started it, once it is back: the debt is that machine's.
    #[default]
    Same,
    /// On whichever host claims it first, once the lost host's lease has lapsed.
    Any,
}

fn is_default_resume_on(r: &ResumeOn) -> bool {
    *r == ResumeOn::default()
}

impl Default for JobSpec {
    /// An enabled manual job with no name and no command: a base for struct updates.
    fn default() -> Self {
        Self {
            name: String::new(),
            cron: None,
            tz: None,
            every: None,
            command: Vec::new(),
            shell: false,
            cwd: None,
            env: BTreeMap::new(),
            secrets: Vec::new(),
            timeout: None,
            concurrency: Concurrency::default(),
            enabled: true,
            alternatives: Vec::new(),
            on_failure: None,
            landed_check: None,
            catch_up: CatchUp::default(),
            catch_up_window: None,
            resume: true,
            depends_on: Vec::new(),
            hosts: Vec::new(),
            resume_on: ResumeOn::default(),
            keep_runs: None,
            keep_for: None,
            retries: 0,
            retry_delay: None,
            retry_max_delay: None,
            after: Vec::new(),
            queue: None,
            expect_within: None,
            needs_network: false,
            network_check: None,
            network_wait: None,
            on_battery: OnBattery::default(),
            keep_awake: false,
            jitter: None,
            jitter_fixed: false,
        }
    }
}

/// A `secrets` entry read as (variable, secret name): `"NAME"` is `("NAME", "NAME")`,
/// `"VAR=NAME"` is `("VAR", "NAME")`. Neither part is checked here.
pub fn secret_binding(entry: &str) -> (&str, &str) {
    entry.split_once('=').unwrap_or((entry, entry))
}

/// Whether `name` may name an environment variable: a letter or `_`, then letters,
/// digits and `_`.
pub fn valid_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `name` may name a secret: a variable name (so that `"NAME"` alone gives the
/// variable of the same name) of at most 128 bytes.
pub fn valid_secret_name(name: &str) -> bool {
    name.len() <= 128 && valid_variable_name(name)
}

fn is_default_catch_up(c: &CatchUp) -> bool {
    *c == CatchUp::default()
}

/// A job as stored: its spec plus what the server knows about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    #[serde(flatten)]
    pub spec: JobSpec,
    /// `"cron"`, `"every"` or `"manual"`.
    pub schedule_kind: String,
    pub created_at: String,
    pub updated_at: String,
    /// The next scheduled fire (RFC 3339 with the job's UTC offset), when enabled and
    /// scheduled.
    pub next_fire_at: Option<String>,
    /// While paused (`stead job pause`): when firing starts again by itself (RFC 3339,
    /// UTC). Fires until then are recorded `skipped`. Absent when not paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_until: Option<String>,
}

/// Parameters of `job_pause`: pause `name` for a while (`for`, a duration counted on the
/// server's clock) or until `until` (RFC 3339), or unpause it (neither given).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PauseParams {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Such as `"30m"` or `"2h"`; exclusive with `until`.
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !b
}

fn is_true(b: &bool) -> bool {
    *b
}

fn yes() -> bool {
    true
}

fn is_default(c: &Concurrency) -> bool {
    *c == Concurrency::default()
}

/// Parameters naming one job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobName {
    pub name: String,
}

/// Parameters of `job_set_enabled`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetEnabled {
    pub name: String,
    pub enabled: bool,
}

/// Parameters of `apply`: the whole desired set of jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyParams {
    pub jobs: Vec<JobSpec>,
    /// Services declared in the same file (`[[service]]` tables).
    #[serde(default)]
    pub services: Vec<crate::ServiceSpec>,
    /// Queues declared in the same file (`[[queue]]` tables).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<crate::QueueSpec>,
    /// Notifiers declared in the same file (`[[notify]]` tables).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notifiers: Vec<crate::NotifierSpec>,
    /// Remove jobs (and services, queues and notifiers) that are not in the file.
    #[serde(default)]
    pub prune: bool,
    /// Compute and report the plan, change nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// What `apply` did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyResult {
    pub created: Vec<String>,
    pub changed: Vec<JobChange>,
    pub removed: Vec<String>,
    pub unchanged: Vec<String>,
    pub dry_run: bool,
    /// The same for services.
    #[serde(default)]
    pub services: NameChanges,
    /// The same for queues.
    #[serde(default)]
    pub queues: NameChanges,
    /// The same for notifiers.
    #[serde(default)]
    pub notifiers: NameChanges,
}

/// What `apply` did to the services, queues or notifiers of a file, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameChanges {
    pub created: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: Vec<String>,
}

/// One changed job and the fields that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobChange {
    pub name: String,
    pub fields: Vec<String>,
}
