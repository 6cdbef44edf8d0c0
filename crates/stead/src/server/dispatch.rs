//! Request dispatch: one exhaustive match from method name to handler.

use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use stead_protocol::{
    ErrorBody, ErrorCode, HttpParams, RequestEnvelope, ResponseEnvelope, StopParams, StopResult,
    method,
};

use super::handlers::{self, jobs, runs, services};
use super::shared::{Phase, Shared, StopReason};

/// How long `status` waits for a lease renewal it asked for (after a sleep, the lease
/// may read as expired until the heartbeat re-arms it).
const RENEW_WAIT: Duration = Duration::from_secs(1);

use handlers::{HandlerResult, to_value};

/// Every method this server answers, for the `unknown_method` message.
const METHODS: &[&str] = &[
    method::STATUS,
    method::STOP,
    method::JOB_ADD,
    method::JOB_LIST,
    method::JOB_GET,
    method::JOB_REMOVE,
    method::JOB_SET_ENABLED,
    method::APPLY,
    method::RUN_NOW,
    method::RUN_LIST,
    method::RUN_GET,
    method::RUN_WAIT,
    method::RUN_CANCEL,
    method::SERVICE_ADD,
    method::SERVICE_LIST,
    method::SERVICE_REMOVE,
    method::HOLD_ACQUIRE,
    method::HOLD_RELEASE,
    method::HOLD_LIST,
    method::READINESS,
    method::RESTART_BEGIN,
    method::RESTART_END,
    method::HTTP,
    method::HOSTS,
];

pub async fn handle(shared: &Arc<Shared>, line: &str) -> ResponseEnvelope {
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => {
            return ResponseEnvelope::error(
                None,
                ErrorBody::new(ErrorCode::InvalidJson, format!("invalid JSON: {e}")),
            );
        }
    };
    let id = value.get("id").and_then(Value::as_u64);
    let request: RequestEnvelope = match serde_json::from_value(value) {
        Ok(request) => request,
        Err(e) => {
            return ResponseEnvelope::error(
                id,
                ErrorBody::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "not a request envelope ({e}); expected {{\"id\": <integer>, \"method\": <string>, \"params\": {{...}}}}"
                    ),
                ),
            );
        }
    };
    match call(shared, &request.method, &request.params).await {
        Ok(result) => ResponseEnvelope::result(request.id, result),
        Err(error) => ResponseEnvelope::error(Some(request.id), error),
    }
}

/// Answers one method call: from the socket, or from the HTTP API with the parameters it
/// took from a path and query.
pub async fn call(shared: &Arc<Shared>, method: &str, params: &Value) -> HandlerResult {
    if *shared.phase.borrow() != Phase::Serving && method != method::STOP {
        return Err(ErrorBody::new(
            ErrorCode::ShuttingDown,
            "the server is stopping; retry and a successor will answer",
        ));
    }
    route(shared, method, params).await
}

async fn route(shared: &Arc<Shared>, method: &str, p: &Value) -> HandlerResult {
    match method {
        method::STATUS => status(shared).await,
        method::STOP => {
            let params: StopParams = params_or_default(p)?;
            if params.cancel_runs {
                super::runs::cut_where(
                    shared,
                    "interrupted: stead was stopped with --cancel-runs",
                    |_| true,
                )
                .await?;
            }
            stop(shared).await
        }
        method::JOB_ADD => jobs::add(shared, params(p)?).await,
        method::JOB_LIST => jobs::list(shared).await,
        method::JOB_GET => jobs::get(shared, params(p)?).await,
        method::JOB_REMOVE => jobs::remove(shared, params(p)?).await,
        method::JOB_SET_ENABLED => jobs::set_enabled(shared, params(p)?).await,
        method::APPLY => jobs::apply(shared, params(p)?).await,
        method::RUN_NOW => runs::now(shared, params(p)?).await,
        method::RUN_LIST => runs::list(shared, params_or_default(p)?).await,
        method::RUN_GET => runs::get(shared, params(p)?).await,
        method::RUN_WAIT => runs::wait(shared, params(p)?).await,
        method::RUN_CANCEL => runs::cancel(shared, params(p)?).await,
        method::SERVICE_ADD => services::add(shared, params(p)?).await,
        method::SERVICE_LIST => services::list(shared).await,
        method::SERVICE_REMOVE => services::remove(shared, params(p)?).await,
        method::HOLD_ACQUIRE => services::hold_acquire(shared, params(p)?).await,
        method::HOLD_RELEASE => services::hold_release(shared, params(p)?).await,
        method::HOLD_LIST => services::hold_list(shared).await,
        method::READINESS => services::readiness(shared, params_or_default(p)?).await,
        method::RESTART_BEGIN => services::restart_begin(shared, params(p)?).await,
        method::RESTART_END => services::restart_end(shared, params(p)?).await,
        method::HOSTS => handlers::hosts::list(shared).await,
        method::HTTP => {
            let params: HttpParams = params_or_default(p)?;
            to_value(super::http::endpoint(shared, params.start)?)
        }
        other => Err(ErrorBody::new(
            ErrorCode::UnknownMethod,
            format!(
                "unknown method {other:?}; this server answers: {}",
                METHODS.join(", ")
            ),
        )),
    }
}

/// Parameters that must be given.
fn params<T: DeserializeOwned>(value: &Value) -> Result<T, ErrorBody> {
    if !value.is_object() {
        return Err(ErrorBody::new(
            ErrorCode::InvalidParams,
            "invalid params: expected an object",
        ));
    }
    serde_json::from_value(value.clone())
        .map_err(|e| ErrorBody::new(ErrorCode::InvalidParams, format!("invalid params: {e}")))
}

/// Parameters that may be omitted entirely.
fn params_or_default<T: DeserializeOwned + Default>(value: &Value) -> Result<T, ErrorBody> {
    if value.is_null() {
        return Ok(T::default());
    }
    params(value)
}

async fn status(shared: &Shared) -> HandlerResult {
    if shared.lease().expires_at <= shared.world.clock.now() {
        // Woken from a sleep before the heartbeat: re-arm now rather than report a lease
        // that only looks lost.
        let mut updates = shared.lease_updates();
        let before = updates.borrow_and_update().expires_at;
        shared.renew_now.notify_one();
        let _ =
            tokio::time::timeout(RENEW_WAIT, updates.wait_for(|l| l.expires_at != before)).await;
    }
    to_value(shared.status())
}

async fn stop(shared: &Shared) -> HandlerResult {
    shared.begin_stop(StopReason::Requested);
    // Answer only once a successor can start: the client may start one the moment it
    // reads this line.
    shared.released().await;
    to_value(StopResult {
        server_id: shared.server_id.clone(),
        pid: shared.pid,
        start_identity: shared.start_identity.to_string(),
    })
}
