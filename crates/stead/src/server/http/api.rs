//! The JSON endpoints: each one a socket method with its parameters taken from the path
//! and query, answered by the same handler, so the shapes are the CLI's `--json`.

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use stead_protocol::{RunFilter, method};

use super::{App, error, no_store, path_error, query_error, status_of};
use crate::server::dispatch;
use crate::server::runs::blocking;

/// Every route of the API, as `GET /api` lists them (and `docs/openapi.yaml` documents).
pub const ENDPOINTS: &[(&str, &str)] = &[
    ("GET", "/api"),
    ("GET", "/api/status"),
    ("GET", "/api/jobs"),
    ("GET", "/api/jobs/{name}"),
    ("POST", "/api/jobs/{name}/run"),
    ("POST", "/api/jobs/{name}/enable"),
    ("POST", "/api/jobs/{name}/disable"),
    ("GET", "/api/runs"),
    ("GET", "/api/runs/{id}"),
    ("POST", "/api/runs/{id}/cancel"),
    ("GET", "/api/runs/{id}/log"),
    ("GET", "/api/services"),
    ("GET", "/api/holds"),
    ("GET", "/api/readiness"),
    ("GET", "/api/hosts"),
    ("GET", "/api/events"),
    ("GET", "/metrics"),
];

pub fn routes() -> Router<App> {
    Router::new()
        .route("/api", get(index))
        .route("/api/status", get(status))
        .route("/api/jobs", get(jobs))
        .route("/api/jobs/{name}", get(job))
        .route("/api/jobs/{name}/run", post(run_now))
        .route("/api/jobs/{name}/enable", post(enable))
        .route("/api/jobs/{name}/disable", post(disable))
        .route("/api/runs", get(runs))
        .route("/api/runs/{id}", get(run))
        .route("/api/runs/{id}/cancel", post(cancel))
        .route("/api/services", get(services))
        .route("/api/holds", get(holds))
        .route("/api/readiness", get(readiness))
        .route("/api/hosts", get(hosts))
        .route("/metrics", get(metrics))
}

/// Calls a socket method and answers with its result as JSON (`success` status) or its
/// error with the status that fits.
async fn call(app: &App, method: &str, params: Value, success: StatusCode) -> Response {
    match dispatch::call(&app.shared, method, &params).await {
        Ok(result) => (success, no_store(), Json(result)).into_response(),
        Err(body) => error(status_of(body.code), body),
    }
}

async fn get_call(app: &App, method: &str, params: Value) -> Response {
    call(app, method, params, StatusCode::OK).await
}

async fn index() -> Response {
    let endpoints: Vec<Value> = ENDPOINTS
        .iter()
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
    get_call(&app, method::STATUS, Value::Null).await
}

async fn jobs(State(app): State<App>) -> Response {
    get_call(&app, method::JOB_LIST, json!({})).await
}

async fn job(State(app): State<App>, name: Result<Path<String>, PathRejection>) -> Response {
    match name {
        Ok(Path(name)) => get_call(&app, method::JOB_GET, json!({ "name": name })).await,
        Err(e) => path_error(&e),
    }
}

async fn run_now(State(app): State<App>, name: Result<Path<String>, PathRejection>) -> Response {
    match name {
        Ok(Path(name)) => {
            call(
                &app,
                method::RUN_NOW,
                json!({ "job": name }),
                StatusCode::CREATED,
            )
            .await
        }
        Err(e) => path_error(&e),
    }
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
        Ok(Path(name)) => {
            get_call(
                app,
                method::JOB_SET_ENABLED,
                json!({ "name": name, "enabled": enabled }),
            )
            .await
        }
        Err(e) => path_error(&e),
    }
}

async fn runs(
    State(app): State<App>,
    filter: Result<Query<RunFilter>, QueryRejection>,
) -> Response {
    match filter {
        Ok(Query(filter)) => {
            let params = serde_json::to_value(filter).expect("a filter serializes");
            get_call(&app, method::RUN_LIST, params).await
        }
        Err(e) => query_error(&e),
    }
}

async fn run(State(app): State<App>, id: Result<Path<i64>, PathRejection>) -> Response {
    match id {
        Ok(Path(id)) => get_call(&app, method::RUN_GET, json!({ "id": id })).await,
        Err(e) => path_error(&e),
    }
}

async fn cancel(State(app): State<App>, id: Result<Path<i64>, PathRejection>) -> Response {
    match id {
        Ok(Path(id)) => get_call(&app, method::RUN_CANCEL, json!({ "id": id })).await,
        Err(e) => path_error(&e),
    }
}

async fn services(State(app): State<App>) -> Response {
    get_call(&app, method::SERVICE_LIST, json!({})).await
}

async fn holds(State(app): State<App>) -> Response {
    get_call(&app, method::HOLD_LIST, json!({})).await
}

async fn hosts(State(app): State<App>) -> Response {
    get_call(&app, method::HOSTS, json!({})).await
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
            get_call(
                &app,
                method::READINESS,
                json!({ "service": q.service, "window": q.window }),
            )
            .await
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
