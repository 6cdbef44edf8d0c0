//! Jobs on the wire, in `stead apply` files and in `stead job show --json`: one shape.
//!
//! Durations are strings such as `"90s"`, `"30m"`, `"1h30m"` (units `d`, `h`, `m`, `s`),
//! so a job file reads the way a person writes it. The server validates everything and
//! answers `invalid_params` with a message naming the field and value.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What may run at the same time as an earlier run of the same job that is still going.
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

/// A job as declared by a person.
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
    /// Run `command` through `sh -c`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub shell: bool,
    /// Working directory (absolute); the server's own when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables for the run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The run is terminated (SIGTERM, then SIGKILL) after this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub concurrency: Concurrency,
    /// A disabled job keeps its definition but never fires; it can still be run by hand.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub enabled: bool,
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
    /// Remove jobs that are not in `jobs`.
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
}

/// One changed job and the fields that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobChange {
    pub name: String,
    pub fields: Vec<String>,
}
