//! How values are kept in rows, the same in every backend: statuses and triggers as
//! text, specs and plans as JSON, instants as milliseconds.

use serde::Serialize;
use stead_core::admission::Verdict;
use stead_core::clock::{from_ms, rfc3339, to_ms};
use stead_core::records::NewRun;
use stead_core::runs::{CommandStart, MonitorPlan, RunEnd};
use stead_protocol::limits::{DEFAULT_RUN_LIST, MAX_RUN_LIST};
use stead_protocol::{JobSpec, Run, RunFilter, RunParams, RunStatus, ServiceSpec, Trigger};

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

/// What an end writes to `started_at_ms`: whether it says (the monitor knows when the
/// command started, or that it never did), and what. An end that does not say keeps the
/// mark, put back to the end should the mark be later: a run never ends before it
/// started.
pub fn end_start_ms(end: &RunEnd) -> (bool, Option<i64>) {
    match end.started {
        CommandStart::AsMarked => (false, None),
        CommandStart::At(at) => (true, Some(to_ms(at))),
        CommandStart::Never => (true, None),
    }
}

/// What an end writes to `waited_ms` and `wait_note`.
pub fn end_wait(end: &RunEnd) -> (Option<i64>, Option<&str>) {
    match &end.waited {
        Some(w) => (
            Some(i64::try_from(w.ms).unwrap_or(i64::MAX)),
            Some(w.note.as_str()),
        ),
        None => (None, None),
    }
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
    trigger: Trigger,
) -> Option<String> {
    if !waiting {
        return None;
    }
    // A retry waits for its backoff; a fire for its jitter; a catch-up for its place in
    // the spread of the catch-ups that came due at one wake.
    let what = match trigger {
        Trigger::Scheduled => "its jitter",
        Trigger::CatchUp => "its place in the wake's spread",
        _ => "its retry delay",
    };
    let delay = not_before_ms.map(|ms| format!("{what}, until {}", rfc3339(from_ms(ms))));
    Some(match (delay, queue) {
        (Some(delay), Some(q)) => format!("{delay}, then a place in queue {q}"),
        (Some(delay), None) => delay,
        (None, Some(q)) => format!("a place in queue {q}"),
        // A chained run on its way to a monitor, or the host's default limit.
        (None, None) => "its turn to start".to_string(),
    })
}

/// A row as either backend hands it back, read cell by cell: integers of any width
/// (widened), and text.
pub trait Cells {
    fn int(&self, i: usize) -> Result<Option<i64>, StoreError>;
    fn text(&self, i: usize) -> Result<Option<String>, StoreError>;
}

/// For a catch-up run (not a fire recorded skipped, whose reason says so already):
/// `$column` of the sleep of its machine that its fire fell into, so that the run names
/// why it was caught up. A macro, so that [`RUN_COLUMNS`] stays one constant string.
macro_rules! sleep_of_catch_up {
    ($column:literal) => {
        concat!(
            "CASE WHEN runs.trigger = 'catch_up' AND runs.status <> 'skipped' THEN
             (SELECT s.",
            $column,
            " FROM sleeps s
              WHERE s.machine_id = runs.machine_id
                AND runs.scheduled_at_ms BETWEEN s.started_at_ms AND s.ended_at_ms
              ORDER BY s.id DESC LIMIT 1) END"
        )
    };
}

/// The columns of a run as every reader of runs selects them, in [`run_from`]'s order,
/// the same SQL on both backends: integers narrower than 64 bits are cast, so both
/// backends hand back every integer alike. Three are derived: the run that follows a
/// failed or cut one (its retry or its resume), and where the sleep a catch-up run's
/// fire fell into began and ended.
pub const RUN_COLUMNS: &str = concat!(
    "id, job, trigger, status, CAST(exit_code AS BIGINT),
    CAST(signal AS BIGINT), reason, attempt, parent_id, idempotency_key, machine_id, boot_id,
    monitor_pid, scheduled_at_ms, created_at_ms, started_at_ms, ended_at_ms, log_path,
    original_trigger, resolution, ended_processes, log_pruned_at_ms, params, queue,
    CAST(waiting AS BIGINT), not_before_ms, slept_ms,
    (SELECT min(c.id) FROM runs c
     WHERE c.parent_id = runs.id AND c.trigger IN ('retry', 'resume')),
    waited_ms, wait_note, ",
    sleep_of_catch_up!("started_at_ms"),
    ", ",
    sleep_of_catch_up!("ended_at_ms")
);

/// A run, from a row of [`RUN_COLUMNS`].
pub fn run_from(row: &impl Cells) -> Result<Run, StoreError> {
    let int = |i: usize, what: &str| {
        row.int(i)?
            .ok_or_else(|| StoreError::Row(format!("a run without {what}")))
    };
    let text = |i: usize, what: &str| {
        row.text(i)?
            .ok_or_else(|| StoreError::Row(format!("a run without {what}")))
    };
    let narrow = |i: usize| -> Result<Option<i32>, StoreError> {
        row.int(i)?
            .map(|n| i32::try_from(n).map_err(|_| StoreError::Row(format!("{n} out of range"))))
            .transpose()
    };
    let count = |i: usize| -> Result<Option<u32>, StoreError> {
        Ok(row.int(i)?.map(|n| u32::try_from(n).unwrap_or(u32::MAX)))
    };
    let queue = row.text(23)?;
    let trigger = trigger_from(&text(2, "a trigger")?)?;
    Ok(Run {
        id: int(0, "an id")?,
        job: text(1, "a job")?,
        trigger,
        status: status_from(&text(3, "a status")?)?,
        exit_code: narrow(4)?,
        signal: narrow(5)?,
        reason: row.text(6)?,
        attempt: int(7, "an attempt")?,
        parent_id: row.int(8)?,
        idempotency_key: text(9, "an idempotency key")?,
        machine_id: text(10, "a machine id")?,
        boot_id: text(11, "a boot id")?,
        monitor_pid: row
            .int(12)?
            .map(|pid| {
                u32::try_from(pid).map_err(|_| StoreError::Row(format!("monitor pid {pid}")))
            })
            .transpose()?,
        scheduled_at: time(row.int(13)?),
        created_at: rfc3339(from_ms(int(14, "a creation time")?)),
        started_at: time(row.int(15)?),
        ended_at: time(row.int(16)?),
        log_path: text(17, "a log path")?,
        original_trigger: row.text(18)?.as_deref().map(trigger_from).transpose()?,
        resolution: row.text(19)?,
        ended_processes: count(20)?,
        log_pruned_at: time(row.int(21)?),
        params: params_from(row.text(22)?)?,
        waiting: waiting_words(
            int(24, "a waiting flag")? == 1,
            row.int(25)?,
            queue.clone(),
            trigger,
        ),
        queue,
        not_before: time(row.int(25)?),
        slept_ms: u64::try_from(row.int(26)?.unwrap_or(0)).unwrap_or(0),
        followed_by: row.int(27)?,
        waited_ms: row.int(28)?.map(|ms| u64::try_from(ms).unwrap_or(0)),
        wait_note: row.text(29)?,
        caught_up: match (row.int(30)?, row.int(31)?) {
            (Some(from), Some(to)) => {
                Some(stead_core::sleep::slept_words(from_ms(from), from_ms(to)))
            }
            _ => None,
        },
    })
}
