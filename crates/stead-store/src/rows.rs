//! How values are kept in rows, the same in every backend: statuses and triggers as
//! text, specs and plans as JSON, instants as milliseconds.

use serde::Serialize;
use stead_core::admission::Verdict;
use stead_core::clock::{from_ms, rfc3339, to_ms};
use stead_core::records::NewRun;
use stead_core::runs::MonitorPlan;
use stead_protocol::limits::{DEFAULT_RUN_LIST, MAX_RUN_LIST};
use stead_protocol::{JobSpec, RunFilter, RunParams, RunStatus, ServiceSpec, Trigger};

use crate::StoreError;

/// How many rows a listing returns.
pub fn list_limit(filter: &RunFilter) -> i64 {
    i64::from(filter.limit.unwrap_or(DEFAULT_RUN_LIST).min(MAX_RUN_LIST))
}

/// Statuses as a SQL list (`'queued', 'running'`): fixed words, never user input.
pub fn status_list(statuses: &[RunStatus]) -> String {
    statuses
        .iter()
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// When a new row ends as it is written: a skipped run ends when it is recorded.
pub fn ended_at_ms(new: &NewRun, verdict: &Verdict) -> Option<i64> {
    (verdict.status == RunStatus::Skipped).then(|| to_ms(new.created_at))
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
        Trigger::Retry,
        Trigger::After,
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

/// The stored plan: `{}` for a run that will never start.
pub fn plan_json(plan: Option<&MonitorPlan>) -> String {
    match plan {
        Some(p) => serde_json::to_string(p).expect("a monitor plan always serializes"),
        None => "{}".to_string(),
    }
}

/// A stored plan: `{}` (a run that never starts, or one whose plan is made when it
/// starts) is `None`.
pub fn plan_from(id: i64, json: &str) -> Result<Option<MonitorPlan>, StoreError> {
    if json == "{}" {
        return Ok(None);
    }
    serde_json::from_str(json)
        .map(Some)
        .map_err(|e| StoreError::Row(format!("run {id}: its plan: {e}")))
}

/// A run's parameters as stored: JSON, or NULL when it has none.
pub fn params_json(params: Option<&RunParams>) -> Option<String> {
    params
        .filter(|p| !p.is_empty())
        .map(|p| serde_json::to_string(p).expect("run parameters always serialize"))
}

pub fn params_from(json: Option<String>) -> Result<Option<RunParams>, StoreError> {
    json.map(|j| {
        serde_json::from_str(&j).map_err(|e| StoreError::Row(format!("run parameters: {e}")))
    })
    .transpose()
}

/// What a waiting run waits for, in words.
pub fn waiting_words(
    waiting: bool,
    not_before_ms: Option<i64>,
    queue: Option<String>,
) -> Option<String> {
    if !waiting {
        return None;
    }
    let delay = not_before_ms.map(|ms| format!("its retry delay, until {}", rfc3339(from_ms(ms))));
    Some(match (delay, queue) {
        (Some(delay), Some(q)) => format!("{delay}, then a place in queue {q}"),
        (Some(delay), None) => delay,
        (None, Some(q)) => format!("a place in queue {q}"),
        // A chained run on its way to a monitor, or the host's default limit.
        (None, None) => "its turn to start".to_string(),
    })
}
