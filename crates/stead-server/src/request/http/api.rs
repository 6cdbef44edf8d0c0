//! The JSON endpoints: each one a protocol method with its parameters taken from the
//! path and query, answered through the same dispatcher as the socket, so the shapes are
//! the CLI's `--json`.
//!
//! [`method_routes`] says, for every method, where it is served over HTTP (or that it is
//! not): an exhaustive match, so a method added to the protocol does not compile until
//! it is given its routes or explicitly none. The router and `GET /api` are built from
//! it, and `docs/openapi.yaml` is checked against the live routes.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use stead_protocol::{
    Empty, JobName, MethodId, PauseParams, ReadinessParams, Request, RunFilter, RunId, RunNow,
    SetEnabled, SleepFilter,
};

use stead_core::jobs::validate::valid_name;

use super::{App, bad_input, error, no_store, path_error, query_error, status_of};
use crate::request::dispatch;
use crate::request::ledger_calls::blocking;

/// One route: its HTTP method, its path, and the handler.
pub struct Route {
    pub verb: &'static str,
    pub path: &'static str,
    handler: MethodRouter<App>,
}

fn route(verb: &'static str, path: &'static str, handler: MethodRouter<App>) -> Route {
    Route {
        verb,
        path,
        handler,
    }
}

/// Where each protocol method is served over HTTP.
pub fn method_routes(method: MethodId) -> Vec<Route> {
    match method {
        MethodId::Status => vec![route("GET", "/api/status", get(status))],
        MethodId::JobList => vec![route("GET", "/api/jobs", get(jobs))],
        MethodId::JobGet => vec![route("GET", "/api/jobs/{name}", get(job))],
        MethodId::RunNow => vec![route("POST", "/api/jobs/{name}/run", post(run_now))],
        MethodId::JobSetEnabled => vec![
            route("POST", "/api/jobs/{name}/enable", post(enable)),
            route("POST", "/api/jobs/{name}/disable", post(disable)),
        ],
        MethodId::RunList => vec![route("GET", "/api/runs", get(runs))],
        MethodId::RunGet => vec![route("GET", "/api/runs/{id}", get(run))],
        MethodId::CheckpointList => {
            vec![route("GET", "/api/runs/{id}/checkpoints", get(checkpoints))]
        }
        MethodId::RunCancel => vec![route("POST", "/api/runs/{id}/cancel", post(cancel))],
        MethodId::ServiceList => vec![route("GET", "/api/services", get(services))],
        MethodId::HoldList => vec![route("GET", "/api/holds", get(holds))],
        MethodId::Readiness => vec![route("GET", "/api/readiness", get(readiness))],
        MethodId::Hosts => vec![route("GET", "/api/hosts", get(hosts))],
        MethodId::JobPause => vec![
            route("POST", "/api/jobs/{name}/pause", post(pause)),
            route("POST", "/api/jobs/{name}/unpause", post(unpause)),
        ],
        MethodId::QueueList => vec![route("GET", "/api/queues", get(queues))],
        MethodId::NotifyList => vec![route("GET", "/api/notifiers", get(notifiers))],
        MethodId::SleepList => vec![route("GET", "/api/sleeps", get(sleeps))],
        // Not offered over HTTP: lifecycle and write methods the dashboard does not use,
        // waiting calls, which the event stream replaces, the shipped log, which
        // `GET /api/runs/{id}/log` serves as text (`log.rs`), and what a run's monitors
        // tell their own server over its socket.
        MethodId::Stop
        | MethodId::JobAdd
        | MethodId::JobRemove
        | MethodId::Apply
        | MethodId::RunWait
        | MethodId::ServiceAdd
        | MethodId::ServiceRemove
        | MethodId::HoldAcquire
        | MethodId::HoldRelease
        | MethodId::RestartBegin
        | MethodId::RestartEnd
        | MethodId::Http
        | MethodId::RunLog
        | MethodId::MonitorStarted
        | MethodId::MonitorFinished
        | MethodId::MonitorCheck
        | MethodId::MonitorNext
        | MethodId::Prune
        | MethodId::QueueSet
        | MethodId::QueueRemove
        | MethodId::NotifyAdd
        | MethodId::NotifyRemove
        | MethodId::NotifyTest
        // A run's own command writes through the socket; the API only reads.
        | MethodId::CheckpointSet
        | MethodId::CheckpointGet
        | MethodId::StepBegin
        | MethodId::StepDone => Vec::new(),
    }
}

/// The routes that take parameters in a JSON body (every other POST takes none, and a
/// body it would ignore is refused: see `check_request`).
pub const BODY_ROUTES: &[(&str, &str)] = &[
    ("POST", "/api/jobs/{name}/run"),
    ("POST", "/api/jobs/{name}/pause"),
];

/// The routes that are not a protocol method: the index, the run log (`log.rs`), the
/// event stream (`events.rs`) and the metrics.
const OTHER_ROUTES: &[(&str, &str)] = &[
    ("GET", "/api"),
    ("GET", "/api/runs/{id}/log"),
    ("GET", "/api/events"),
    ("GET", "/metrics"),
];

/// Every route of the API, as `GET /api` lists them (and `docs/openapi.yaml` documents).
pub fn endpoints() -> Vec<(&'static str, &'static str)> {
    let mut all: Vec<(&str, &str)> = OTHER_ROUTES.to_vec();
    for &method in MethodId::ALL {
        all.extend(method_routes(method).iter().map(|r| (r.verb, r.path)));
    }
    all.sort_by_key(|&(verb, path)| (path, verb));
    all
}

pub fn routes() -> Router<App> {
    let mut router = Router::new()
        .route("/api", get(index))
        .route("/metrics", get(metrics));
    for &method in MethodId::ALL {
        for r in method_routes(method) {
            router = router.route(r.path, r.handler);
        }
    }
    router
}

/// Answers a request with its result as JSON (`success` status) or its error with the
/// status that fits.
async fn call(app: &App, request: Request, success: StatusCode) -> Response {
    match dispatch::call(&app.shared, request).await {
        Ok(result) => (success, no_store(), Json(result)).into_response(),
        Err(body) => error(status_of(body.code), body),
    }
}

async fn get_call(app: &App, request: Request) -> Response {
    call(app, request, StatusCode::OK).await
}

async fn index() -> Response {
    let endpoints: Vec<Value> = endpoints()
        .into_iter()
        .map(|(method, path)| json!({ "method": method, "path": path }))
        .collect();
    (
        no_store(),
        Json(json!({
            "protocol": stead_protocol::PROTOCOL,
            "version": crate::VERSION,
            "endpoints": endpoints,
        })),
    )
        .into_response()
}

async fn status(State(app): State<App>) -> Response {
    get_call(&app, Request::Status(Empty {})).await
}

async fn jobs(State(app): State<App>) -> Response {
    get_call(&app, Request::JobList(Empty {})).await
}

/// A job's name from the path: a name no job could have is a bad request, not a
/// missing job. The error is what the 400 says.
fn job_name(name: Result<Path<String>, PathRejection>) -> Result<String, String> {
    match name {
        Ok(Path(name)) if valid_name(&name) => Ok(name),
        Ok(Path(name)) => Err(format!(
            "invalid job name {name:?}: names are 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit"
        )),
        Err(e) => Err(format!("invalid path: {}", e.body_text())),
    }
}

async fn job(State(app): State<App>, name: Result<Path<String>, PathRejection>) -> Response {
    match job_name(name) {
        Ok(name) => get_call(&app, Request::JobGet(JobName { name })).await,
        Err(why) => bad_input(why),
    }
}

/// A JSON body's fields, read strictly: an object (serde would take a struct from an
/// array too); no body is the defaults (whitespace alone is not JSON, and is refused as
/// the document says). The error is what the 400 says.
fn body<T: DeserializeOwned + Default>(bytes: &[u8]) -> Result<T, String> {
    if bytes.is_empty() {
        return Ok(T::default());
    }
    let fields = match serde_json::from_slice::<Value>(bytes) {
        Ok(value @ Value::Object(_)) => serde_json::from_value(value),
        Ok(_) => return Err("invalid body: expected a JSON object".into()),
        Err(e) => Err(e),
    };
    fields.map_err(|e| format!("invalid body: {e}"))
}

/// What `POST /api/jobs/{name}/run` may carry: the run's own environment and arguments.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunBody {
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    args: Vec<String>,
}

async fn run_now(
    State(app): State<App>,
    name: Result<Path<String>, PathRejection>,
    bytes: Bytes,
) -> Response {
    let job = match job_name(name) {
        Ok(job) => job,
        Err(why) => return bad_input(why),
    };
    let params: RunBody = match body(&bytes) {
        Ok(params) => params,
        Err(why) => return bad_input(why),
    };
    let request = Request::RunNow(RunNow {
        job,
        env: params.env,
        args: params.args,
    });
    call(&app, request, StatusCode::CREATED).await
}

/// What `POST /api/jobs/{name}/pause` carries: how long (`for`) or until when.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PauseBody {
    #[serde(default, rename = "for")]
    duration: Option<String>,
    #[serde(default)]
    until: Option<String>,
}

async fn pause(
    State(app): State<App>,
    name: Result<Path<String>, PathRejection>,
    bytes: Bytes,
) -> Response {
    let name = match job_name(name) {
        Ok(name) => name,
        Err(why) => return bad_input(why),
    };
    let asked: PauseBody = match body(&bytes) {
        Ok(asked) => asked,
        Err(why) => return bad_input(why),
    };
    if asked.duration.is_none() && asked.until.is_none() {
        return bad_input(
            "a pause needs {\"for\": DURATION} or {\"until\": RFC3339} in its body (POST .../unpause ends one)".into(),
        );
    }
    let params = PauseParams {
        name,
        until: asked.until,
        duration: asked.duration,
    };
    get_call(&app, Request::JobPause(params)).await
}

async fn unpause(State(app): State<App>, name: Result<Path<String>, PathRejection>) -> Response {
    match job_name(name) {
        Ok(name) => {
            let params = PauseParams {
                name,
                ..PauseParams::default()
            };
            get_call(&app, Request::JobPause(params)).await
        }
        Err(why) => bad_input(why),
    }
}

async fn queues(State(app): State<App>) -> Response {
    get_call(&app, Request::QueueList(Empty {})).await
}

async fn notifiers(State(app): State<App>) -> Response {
    get_call(&app, Request::NotifyList(Empty {})).await
}

async fn enable(State(app): State<App>, name: Result<Path<String>, PathRejection>) -> Response {
    set_enabled(&app, name, true).await
}

async fn disable(State(app): State<App>, name: Result<Path<String>, PathRejection>) -> Response {
    set_enabled(&app, name, false).await
}

async fn set_enabled(
    app: &App,
    name: Result<Path<String>, PathRejection>,
    enabled: bool,
) -> Response {
    match name {
        Ok(Path(name)) => get_call(app, Request::JobSetEnabled(SetEnabled { name, enabled })).await,
        Err(e) => path_error(&e),
    }
}

async fn runs(
    State(app): State<App>,
    filter: Result<Query<RunFilter>, QueryRejection>,
) -> Response {
    match filter {
        Ok(Query(filter)) => get_call(&app, Request::RunList(filter)).await,
        Err(e) => query_error(&e),
    }
}

async fn sleeps(
    State(app): State<App>,
    filter: Result<Query<SleepFilter>, QueryRejection>,
) -> Response {
    match filter {
        Ok(Query(filter)) => get_call(&app, Request::SleepList(filter)).await,
        Err(e) => query_error(&e),
    }
}

async fn checkpoints(State(app): State<App>, id: Result<Path<i64>, PathRejection>) -> Response {
    match id {
        Ok(Path(id)) => get_call(&app, Request::CheckpointList(RunId { id })).await,
        Err(e) => path_error(&e),
    }
}

async fn run(State(app): State<App>, id: Result<Path<i64>, PathRejection>) -> Response {
    match id {
        Ok(Path(id)) => get_call(&app, Request::RunGet(RunId { id })).await,
        Err(e) => path_error(&e),
    }
}

async fn cancel(State(app): State<App>, id: Result<Path<i64>, PathRejection>) -> Response {
    match id {
        Ok(Path(id)) => get_call(&app, Request::RunCancel(RunId { id })).await,
        Err(e) => path_error(&e),
    }
}

async fn services(State(app): State<App>) -> Response {
    get_call(&app, Request::ServiceList(Empty {})).await
}

async fn holds(State(app): State<App>) -> Response {
    get_call(&app, Request::HoldList(Empty {})).await
}

async fn hosts(State(app): State<App>) -> Response {
    get_call(&app, Request::Hosts(Empty {})).await
}

/// What `/api/readiness` accepts: the gate's question without its long-poll parts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadinessQuery {
    service: Option<String>,
    window: Option<String>,
}

async fn readiness(
    State(app): State<App>,
    query: Result<Query<ReadinessQuery>, QueryRejection>,
) -> Response {
    match query {
        Ok(Query(q)) => {
            let params = ReadinessParams {
                service: q.service,
                window: q.window,
                wait_ms: None,
                unless: None,
            };
            get_call(&app, Request::Readiness(params)).await
        }
        Err(e) => query_error(&e),
    }
}

async fn metrics(State(app): State<App>) -> Response {
    let read = blocking(&app.shared, |s| {
        let counts = s.world.store.run_counts()?;
        let jobs = s.world.store.job_list()?.len();
        Ok((counts, jobs))
    })
    .await;
    match read {
        Ok((counts, jobs)) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            no_store(),
            app.shared.metrics.render(&counts, jobs),
        )
            .into_response(),
        Err(body) => error(status_of(body.code), body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_listed_once_and_every_path_is_routed_once() {
        let all = endpoints();
        let mut seen = std::collections::BTreeSet::new();
        for endpoint in &all {
            assert!(seen.insert(*endpoint), "{endpoint:?} is listed twice");
        }
        // Building the router panics on a path registered twice with one verb.
        let _ = routes();
        assert!(all.contains(&("POST", "/api/jobs/{name}/run")));
        assert!(all.contains(&("GET", "/api/runs/{id}/log")));
    }
}
