//! Request dispatch: one exhaustive match from method name to handler.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use stead_protocol::{
    ErrorBody, ErrorCode, RequestEnvelope, ResponseEnvelope, StopParams, StopResult, method,
};

use super::shared::{Phase, Shared, StopReason};

/// How long `status` waits for a lease renewal it asked for (after a sleep, the lease
/// may read as expired until the heartbeat re-arms it).
const RENEW_WAIT: Duration = Duration::from_secs(1);

type HandlerResult = Result<Value, ErrorBody>;

pub async fn handle(shared: &Shared, line: &str) -> ResponseEnvelope {
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
    let outcome = if *shared.phase.borrow() != Phase::Serving && request.method != method::STOP {
        Err(ErrorBody::new(
            ErrorCode::ShuttingDown,
            "the server is stopping; retry and a successor will answer",
        ))
    } else {
        route(shared, &request).await
    };
    match outcome {
        Ok(result) => ResponseEnvelope::result(request.id, result),
        Err(error) => ResponseEnvelope::error(Some(request.id), error),
    }
}

async fn route(shared: &Shared, request: &RequestEnvelope) -> HandlerResult {
    match request.method.as_str() {
        method::STATUS => status(shared).await,
        method::STOP => {
            let _: StopParams = params(&request.params)?;
            stop(shared).await
        }
        other => Err(ErrorBody::new(
            ErrorCode::UnknownMethod,
            format!(
                "unknown method {other:?}; this server answers: {}",
                [method::STATUS, method::STOP].join(", ")
            ),
        )),
    }
}

fn params<T: DeserializeOwned + Default>(value: &Value) -> Result<T, ErrorBody> {
    if value.is_null() {
        return Ok(T::default());
    }
    if !value.is_object() {
        return Err(ErrorBody::new(
            ErrorCode::InvalidParams,
            "invalid params: expected an object",
        ));
    }
    serde_json::from_value(value.clone())
        .map_err(|e| ErrorBody::new(ErrorCode::InvalidParams, format!("invalid params: {e}")))
}

fn to_value(value: impl serde::Serialize) -> HandlerResult {
    serde_json::to_value(value).map_err(|e| ErrorBody::new(ErrorCode::Internal, e.to_string()))
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
