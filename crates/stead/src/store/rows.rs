//! What the ledger backends share: the stored text of statuses, triggers and specs, the
//! admission rules, and the words written into rows. Pure functions, so SQLite and
//! PostgreSQL decide and write alike; each backend keeps only its SQL.

use serde::Serialize;
use stead_protocol::{Concurrency, JobSpec, RunFilter, RunStatus, ServiceSpec, Trigger};

use super::{ActiveRun, NewRun, StoreError};
use crate::clock::{from_ms, rfc3339, to_ms};
use crate::runs::{MonitorPlan, RunEnd};

/// The most rows one `run_list` returns.
pub const MAX_LIST: u32 = 10_000;
const DEFAULT_LIST: u32 = 50;

/// The statuses of a run that has not ended, as a SQL list.
pub const IN_FLIGHT: &str = "'queued', 'running'";

/// The reason and resolution of an interrupted run a receipt proved landed.
pub const LANDED: &str = "landed, proven by receipt";

/// How many rows a listing returns.
pub fn list_limit(filter: &RunFilter) -> i64 {
    i64::from(filter.limit.unwrap_or(DEFAULT_LIST).min(MAX_LIST))
}

pub fn status_from(s: &str) -> Result<RunStatus, StoreError> {
    RunStatus::ALL
        .into_iter()
        .find(|st| st.as_str() == s)
        .ok_or_else(|| StoreError::Row(format!("unknown run status {s:?}")))
}

pub fn trigger_from(s: &str) -> Result<Trigger, StoreError> {
    [
        Trigger::Scheduled,
        Trigger::OnDemand,
        Trigger::Resume,
        Trigger::CatchUp,
    ]
    .into_iter()
    .find(|t| t.as_str() == s)
    .ok_or_else(|| StoreError::Row(format!("unknown run trigger {s:?}")))
}

/// A stored instant as the wire shows it.
pub fn time(ms: Option<i64>) -> Option<String> {
    ms.map(|ms| rfc3339(from_ms(ms)))
}

/// A job or service spec as stored: whole, as JSON.
pub fn spec_json(spec: &impl Serialize) -> String {
    serde_json::to_string(spec).expect("a spec always serializes")
}

pub fn job_spec(id: i64, json: &str) -> Result<JobSpec, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Row(format!("job {id}: {e}")))
}

pub fn service_spec(json: &str) -> Result<ServiceSpec, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Row(format!("service: {e}")))
}

/// How a new run is recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `queued`, or `skipped` (with the reason and the end time).
    pub status: RunStatus,
    pub reason: Option<String>,
    pub ended_at_ms: Option<i64>,
}

/// Applies the job's concurrency policy to a new run, given the job's runs in flight
/// (oldest first).
pub fn admission(new: &NewRun, running: &[ActiveRun]) -> Result<Verdict, StoreError> {
    let overlap = match (new.concurrency, running.first()) {
        (Concurrency::Forbid, Some(other)) => Some(other),
        _ => None,
    };
    if let (Some(other), Some(_)) = (overlap, &new.resolves) {
        // A resume is owed work: it waits for the overlap to end rather than be skipped.
        return Err(StoreError::Overlap(other.id));
    }
    let overlap = overlap.map(|other| {
        format!(
            "overlap: run {} of this job is still {} (concurrency = forbid)",
            other.id,
            other.status.as_str()
        )
    });
    // A fire passed over by the catch-up policy is recorded as skipped, with why.
    Ok(match new.skip_reason.clone().or(overlap) {
        Some(reason) => Verdict {
            status: RunStatus::Skipped,
            reason: Some(reason),
            ended_at_ms: Some(to_ms(new.created_at)),
        },
        None => Verdict {
            status: RunStatus::Queued,
            reason: None,
            ended_at_ms: None,
        },
    })
}

/// Whether admitting a run with `verdict` cancels the job's runs in flight.
pub fn replaces(new: &NewRun, verdict: &Verdict) -> bool {
    new.concurrency == Concurrency::Replace && verdict.status == RunStatus::Queued
}

/// The resolution written on a parent that run `id` resumes.
pub fn resumed_as(id: i64, note: Option<&str>) -> String {
    match note {
        Some(note) => format!("resumed as run {id} ({note})"),
        None => format!("resumed as run {id}"),
    }
}

/// A key that names the work, not the attempt: a scheduled fire's key is its job and
/// scheduled time, so any run for that fire (a resume, a catch-up) carries the same key.
pub fn default_key(new: &NewRun, id: i64) -> String {
    match new.scheduled_at {
        Some(at) => format!("{}@{}", new.job, rfc3339(at)),
        None => format!("{}#{id}", new.job),
    }
}

/// The stored plan: `{}` for a run that will never start.
pub fn plan_json(plan: Option<&MonitorPlan>) -> String {
    match plan {
        Some(p) => serde_json::to_string(p).expect("a monitor plan always serializes"),
        None => "{}".to_string(),
    }
}

/// The end a monitor records: a dependent run that fails while `restarting` (the first
/// of its services being restarted) is being restarted was cut by the restart, so it is
/// owed (interrupted), not failed.
pub fn monitor_end(end: &RunEnd, restarting: Option<&str>) -> RunEnd {
    match restarting {
        Some(service) if end.status == RunStatus::Failed => RunEnd {
            status: RunStatus::Interrupted,
            reason: Some(format!(
                "interrupted: its service {service} was being restarted ({})",
                end.reason.as_deref().unwrap_or("it failed")
            )),
            ..end.clone()
        },
        _ => end.clone(),
    }
}
