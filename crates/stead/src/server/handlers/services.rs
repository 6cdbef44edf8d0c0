//! `service_add`, `service_list`, `service_remove`, `hold_acquire`, `hold_release`,
//! `hold_list`, `readiness`, `restart_begin`, `restart_end`.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use stead_protocol::{
    ErrorBody, ErrorCode, HoldName, HoldSpec, ReadinessParams, RestartMark, STEAD_SERVICE, Service,
    ServiceName, ServiceSpec,
};

use super::{HandlerResult, invalid, to_value};
use crate::gate::readiness::{self, DEFAULT_WINDOW, InFlight, Inputs, hold_view};
use crate::jobs::JobTiming;
use crate::jobs::validate::valid_name;
use crate::schedule;
use crate::server::runs::{self, blocking};
use crate::server::shared::Shared;
use crate::store::{StoredHold, StoredJob, StoredService};

/// `readiness` waits at most this long for a change, whatever the client asks.
const WAIT_CAP: Duration = Duration::from_secs(3600);

fn service_view(service: &StoredService, jobs: &[StoredJob]) -> Service {
    Service {
        spec: service.spec.clone(),
        builtin: false,
        restarting: service.restarting_since.is_some(),
        dependents: dependents(&service.spec.name, jobs),
    }
}

fn dependents(service: &str, jobs: &[StoredJob]) -> Vec<String> {
    jobs.iter()
        .filter(|j| j.spec.depends_on.iter().any(|d| d == service))
        .map(|j| j.spec.name.clone())
        .collect()
}

fn builtin(jobs: &[StoredJob]) -> Service {
    Service {
        spec: ServiceSpec {
            name: STEAD_SERVICE.to_string(),
            process: Some("stead".into()),
            ..ServiceSpec::default()
        },
        builtin: true,
        restarting: false,
        dependents: dependents(STEAD_SERVICE, jobs),
    }
}

/// Checks a service spec before anything is stored.
pub fn validate(spec: &ServiceSpec) -> Result<(), ErrorBody> {
    if spec.name == STEAD_SERVICE {
        return Err(ErrorBody::new(
            ErrorCode::Conflict,
            "\"stead\" is the built-in service: it needs no declaration",
        ));
    }
    if !valid_name(&spec.name) {
        return Err(invalid(format!(
            "invalid service name {:?}: use 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit",
            spec.name
        )));
    }
    for (field, value) in [
        ("restart", &spec.restart),
        ("ready", &spec.ready),
        ("systemd_unit", &spec.systemd_unit),
        ("launchd_label", &spec.launchd_label),
        ("process", &spec.process),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(invalid(format!("service {}: {field} is empty", spec.name)));
        }
    }
    if spec
        .ready
        .as_deref()
        .is_some_and(|r| r.starts_with("https://"))
    {
        return Err(invalid(format!(
            "service {}: https:// ready URLs are not supported; use an http:// URL on loopback, or a command such as `curl -fsS URL`",
            spec.name
        )));
    }
    Ok(())
}

pub async fn add(shared: &Arc<Shared>, spec: ServiceSpec) -> HandlerResult {
    validate(&spec)?;
    let epoch = shared.epoch();
    let (service, jobs) = blocking(shared, move |s| {
        let service = s
            .world
            .store
            .service_insert(&spec, s.world.clock.now(), epoch)?;
        Ok((service, s.world.store.job_list()?))
    })
    .await?;
    shared.changed();
    to_value(service_view(&service, &jobs))
}

pub async fn list(shared: &Arc<Shared>) -> HandlerResult {
    let (services, jobs) = blocking(shared, |s| {
        Ok((s.world.store.service_list()?, s.world.store.job_list()?))
    })
    .await?;
    let mut all = vec![builtin(&jobs)];
    all.extend(services.iter().map(|svc| service_view(svc, &jobs)));
    to_value(all)
}

pub async fn remove(shared: &Arc<Shared>, params: ServiceName) -> HandlerResult {
    if params.name == STEAD_SERVICE {
        return Err(ErrorBody::new(
            ErrorCode::Conflict,
            "\"stead\" is the built-in service and cannot be removed",
        ));
    }
    let epoch = shared.epoch();
    let (service, jobs) = blocking(shared, move |s| {
        let service = s.world.store.service_remove(&params.name, epoch)?;
        Ok((service, s.world.store.job_list()?))
    })
    .await?;
    shared.changed();
    to_value(service_view(&service, &jobs))
}

/// Fails with `not_found` unless `name` is `stead` or a declared service.
async fn known(shared: &Arc<Shared>, name: &str) -> Result<(), ErrorBody> {
    if name == STEAD_SERVICE {
        return Ok(());
    }
    let services = blocking(shared, |s| s.world.store.service_list()).await?;
    if services.iter().any(|s| s.spec.name == name) {
        Ok(())
    } else {
        Err(ErrorBody::new(
            ErrorCode::NotFound,
            format!("no service named {name:?} (see `stead service ls`)"),
        ))
    }
}

/// A TTL or window: at most a year, so the time arithmetic built on it stays in range.
fn duration(field: &str, value: &str) -> Result<SignedDuration, ErrorBody> {
    schedule::parse_duration(value)
        .ok()
        .filter(|d| d.as_secs() <= 366 * 24 * 3600)
        .and_then(|d| SignedDuration::try_from(d).ok())
        .ok_or_else(|| {
            invalid(format!(
                "invalid {field} {value:?}: expected a duration such as 90s, 10m or 1h, at most 366d"
            ))
        })
}

pub async fn hold_acquire(shared: &Arc<Shared>, spec: HoldSpec) -> HandlerResult {
    if !valid_name(&spec.name) {
        return Err(invalid(format!("invalid hold name {:?}", spec.name)));
    }
    let ttl = duration("ttl", &spec.ttl)?;
    known(shared, &spec.service).await?;
    let now = shared.world.clock.now();
    let hold = StoredHold {
        name: spec.name,
        service: spec.service,
        acquired_at: now,
        expires_at: now + ttl,
    };
    let epoch = shared.epoch();
    let hold = blocking(shared, move |s| s.world.store.hold_upsert(&hold, epoch)).await?;
    shared.changed();
    to_value(hold_view(&hold, now))
}

pub async fn hold_release(shared: &Arc<Shared>, params: HoldName) -> HandlerResult {
    let epoch = shared.epoch();
    let hold = blocking(shared, move |s| {
        s.world.store.hold_remove(&params.name, epoch)
    })
    .await?;
    shared.changed();
    to_value(hold_view(&hold, shared.world.clock.now()))
}

pub async fn hold_list(shared: &Arc<Shared>) -> HandlerResult {
    let holds = blocking(shared, |s| s.world.store.hold_list()).await?;
    let now = shared.world.clock.now();
    to_value(holds.iter().map(|h| hold_view(h, now)).collect::<Vec<_>>())
}

pub async fn readiness(shared: &Arc<Shared>, params: ReadinessParams) -> HandlerResult {
    let waits = params.wait_ms.is_some_and(|ms| ms > 0);
    let began = tokio::time::Instant::now();
    let answer = readiness_now_or_later(shared, params).await?;
    if waits {
        shared.metrics.gate_waited(answer.ready, began.elapsed());
    }
    to_value(answer)
}

/// The readiness, at once or, with `wait_ms`, once it differs from `unless`.
async fn readiness_now_or_later(
    shared: &Arc<Shared>,
    params: ReadinessParams,
) -> Result<stead_protocol::Readiness, ErrorBody> {
    let service = params
        .service
        .clone()
        .unwrap_or_else(|| STEAD_SERVICE.to_string());
    known(shared, &service).await?;
    let window = match &params.window {
        Some(w) => duration("window", w)?,
        None => DEFAULT_WINDOW,
    };
    let deadline = tokio::time::Instant::now()
        + params
            .wait_ms
            .map_or(Duration::ZERO, Duration::from_millis)
            .min(WAIT_CAP);
    loop {
        // Subscribed before computing, so a change made meanwhile is not missed.
        let mut runs_changed = shared.run_events.subscribe();
        let mut other_changes = shared.changes.subscribe();
        let service = service.clone();
        let answer = blocking(shared, move |s| {
            let jobs: Vec<(StoredJob, JobTiming)> = s
                .world
                .store
                .job_list()?
                .into_iter()
                .filter_map(|j| {
                    let timing = JobTiming::of(&j.spec, j.anchor).ok()?;
                    Some((j, timing))
                })
                .collect();
            let in_flight: Vec<InFlight> = runs::in_flight(&s.world.store)?
                .into_iter()
                .map(|r| InFlight {
                    id: r.id,
                    job: r.job,
                    started_at: r.started_at,
                })
                .collect();
            let holds = s.world.store.hold_list()?;
            Ok(readiness::readiness(Inputs {
                service: &service,
                now: s.world.clock.now(),
                window,
                jobs: &jobs,
                in_flight: &in_flight,
                holds: &holds,
            }))
        })
        .await?;
        let unchanged = params.unless.as_ref() == Some(&answer.readiness);
        if !unchanged || tokio::time::Instant::now() >= deadline {
            return Ok(answer.readiness);
        }
        let clock = shared.world.clock.clone();
        tokio::select! {
            _ = runs_changed.recv() => {}
            _ = other_changes.changed() => {}
            () = async {
                match answer.next_change {
                    Some(at) => clock.sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {}
            () = tokio::time::sleep_until(deadline) => return Ok(answer.readiness),
            () = shared.stop.cancelled() => return Ok(answer.readiness),
        }
    }
}

pub async fn restart_begin(shared: &Arc<Shared>, params: RestartMark) -> HandlerResult {
    if params.service == STEAD_SERVICE {
        return Err(invalid(
            "a restart of stead itself is done by `stead restart`, which stops and starts the server",
        ));
    }
    known(shared, &params.service).await?;
    let epoch = shared.epoch();
    let name = params.service.clone();
    let jobs = blocking(shared, move |s| {
        s.world
            .store
            .service_set_restarting(&name, Some(s.world.clock.now()), epoch)?;
        s.world.store.job_list()
    })
    .await?;
    if params.cut_runs {
        let dependent = dependents(&params.service, &jobs);
        runs::cut_where(
            shared,
            &format!("interrupted: its service {} was restarted", params.service),
            move |job| dependent.iter().any(|d| d == job),
        )
        .await?;
    }
    shared.changed();
    to_value(serde_json::json!({}))
}

pub async fn restart_end(shared: &Arc<Shared>, params: RestartMark) -> HandlerResult {
    known(shared, &params.service).await?;
    let epoch = shared.epoch();
    let name = params.service.clone();
    blocking(shared, move |s| {
        s.world.store.service_set_restarting(&name, None, epoch)
    })
    .await?;
    // Fires that waited for the service go on; runs it cut are owed and resumed now.
    shared.jobs_changed.notify_one();
    shared.runs_cut.notify_one();
    shared.changed();
    to_value(serde_json::json!({}))
}
