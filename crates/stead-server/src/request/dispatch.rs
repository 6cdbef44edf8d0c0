//! Request dispatch: one exhaustive `match` from a parsed [`Request`] to its handler, for
//! the socket and the HTTP API alike. A protocol method without a handler does not
//! compile.

use std::sync::Arc;

use serde_json::Value;
use stead_protocol::{
    ErrorBody, ErrorCode, Method, Request, RequestEnvelope, ResponseEnvelope, method,
};
use tracing::Instrument;

use crate::request::handlers::*;
use crate::runs::Link;
use crate::shared::{Phase, Shared};

/// Answers one request line of the socket protocol, read from a connection or from a
/// monitor's `link`.
pub async fn handle(shared: &Arc<Shared>, line: &str, link: Option<&Link>) -> ResponseEnvelope {
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
    let envelope: RequestEnvelope = match serde_json::from_value(value) {
        Ok(envelope) => envelope,
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
    // A stopping server refuses everything but `stop`, whatever the request holds.
    let answer = match refused(shared, envelope.method == method::Stop::NAME) {
        Some(refusal) => Err(refusal),
        None => match Request::parse(&envelope.method, envelope.params) {
            Ok(request) => route(shared, request, link).await,
            Err(error) => Err(error),
        },
    };
    match answer {
        Ok(result) => ResponseEnvelope::result(envelope.id, result),
        Err(error) => ResponseEnvelope::error(Some(envelope.id), error),
    }
}

/// Answers one request: from the socket, or from the HTTP API with the parameters it
/// took from a path and query.
pub async fn call(shared: &Arc<Shared>, request: Request) -> Result<Value, ErrorBody> {
    match refused(shared, matches!(request, Request::Stop(_))) {
        Some(refusal) => Err(refusal),
        None => route(shared, request, None).await,
    }
}

/// A server that is stopping takes no new work: the client retries, and a successor
/// answers.
fn refused(shared: &Shared, is_stop: bool) -> Option<ErrorBody> {
    (*shared.phase.borrow() != Phase::Serving && !is_stop).then(|| {
        ErrorBody::new(
            ErrorCode::ShuttingDown,
            "the server is stopping; retry and a successor will answer",
        )
    })
}

/// A handler's answer as the method's result on the wire; the type parameter ties each
/// handler to its method's declared output.
fn answer<M: Method>(result: Result<M::Output, ErrorBody>) -> Result<Value, ErrorBody> {
    serde_json::to_value(result?).map_err(|e| ErrorBody::new(ErrorCode::Internal, e.to_string()))
}

/// Answers `request` in a span of its own (what is logged while it is answered names
/// the method). `link`: the monitor's link the request came on, if it did (only a link
/// knows which monitor asks).
async fn route(
    shared: &Arc<Shared>,
    request: Request,
    link: Option<&Link>,
) -> Result<Value, ErrorBody> {
    let span = tracing::info_span!("request", method = request.id().name());
    to_handler(shared, request, link).instrument(span).await
}

async fn to_handler(
    shared: &Arc<Shared>,
    request: Request,
    link: Option<&Link>,
) -> Result<Value, ErrorBody> {
    match request {
        Request::Status(_) => answer::<method::Status>(status::handle(shared).await),
        Request::Stop(p) => answer::<method::Stop>(stop::handle(shared, p).await),
        Request::JobAdd(p) => answer::<method::JobAdd>(job_add::handle(shared, p).await),
        Request::JobList(_) => answer::<method::JobList>(job_list::handle(shared).await),
        Request::JobGet(p) => answer::<method::JobGet>(job_get::handle(shared, p).await),
        Request::JobRemove(p) => answer::<method::JobRemove>(job_remove::handle(shared, p).await),
        Request::JobSetEnabled(p) => {
            answer::<method::JobSetEnabled>(job_set_enabled::handle(shared, p).await)
        }
        Request::Apply(p) => answer::<method::Apply>(apply::handle(shared, p).await),
        Request::RunNow(p) => answer::<method::RunNow>(run_now::handle(shared, p).await),
        Request::RunList(p) => answer::<method::RunList>(run_list::handle(shared, p).await),
        Request::RunGet(p) => answer::<method::RunGet>(run_get::handle(shared, p).await),
        Request::RunWait(p) => answer::<method::RunWait>(run_wait::handle(shared, p).await),
        Request::RunCancel(p) => answer::<method::RunCancel>(run_cancel::handle(shared, p).await),
        Request::ServiceAdd(p) => {
            answer::<method::ServiceAdd>(service_add::handle(shared, p).await)
        }
        Request::ServiceList(_) => {
            answer::<method::ServiceList>(service_list::handle(shared).await)
        }
        Request::ServiceRemove(p) => {
            answer::<method::ServiceRemove>(service_remove::handle(shared, p).await)
        }
        Request::HoldAcquire(p) => {
            answer::<method::HoldAcquire>(hold_acquire::handle(shared, p).await)
        }
        Request::HoldRelease(p) => {
            answer::<method::HoldRelease>(hold_release::handle(shared, p).await)
        }
        Request::HoldList(_) => answer::<method::HoldList>(hold_list::handle(shared).await),
        Request::Readiness(p) => answer::<method::Readiness>(readiness::handle(shared, p).await),
        Request::RestartBegin(p) => {
            answer::<method::RestartBegin>(restart_begin::handle(shared, p).await)
        }
        Request::RestartEnd(p) => {
            answer::<method::RestartEnd>(restart_end::handle(shared, p).await)
        }
        Request::Http(p) => answer::<method::Http>(http::handle(shared, p).await),
        Request::Hosts(_) => answer::<method::Hosts>(hosts::handle(shared).await),
        Request::RunLog(p) => answer::<method::RunLog>(run_log::handle(shared, p).await),
        Request::MonitorStarted(p) => {
            answer::<method::MonitorStarted>(monitor_started::handle(shared, p).await)
        }
        Request::MonitorFinished(p) => {
            answer::<method::MonitorFinished>(monitor_finished::handle(shared, p, link).await)
        }
        Request::MonitorCheck(p) => {
            answer::<method::MonitorCheck>(monitor_check::handle(shared, p).await)
        }
        Request::MonitorNext(p) => {
            answer::<method::MonitorNext>(monitor_next::handle(shared, p, link).await)
        }
        Request::Prune(p) => answer::<method::Prune>(prune::handle(shared, p).await),
        Request::JobPause(p) => answer::<method::JobPause>(job_pause::handle(shared, p).await),
        Request::QueueSet(p) => answer::<method::QueueSet>(queue_set::handle(shared, p).await),
        Request::QueueList(_) => answer::<method::QueueList>(queue_list::handle(shared).await),
        Request::QueueRemove(p) => {
            answer::<method::QueueRemove>(queue_remove::handle(shared, p).await)
        }
        Request::NotifyAdd(p) => answer::<method::NotifyAdd>(notify_add::handle(shared, p).await),
        Request::NotifyList(_) => answer::<method::NotifyList>(notify_list::handle(shared).await),
        Request::NotifyRemove(p) => {
            answer::<method::NotifyRemove>(notify_remove::handle(shared, p).await)
        }
        Request::NotifyTest(p) => {
            answer::<method::NotifyTest>(notify_test::handle(shared, p).await)
        }
        Request::SleepList(p) => answer::<method::SleepList>(sleep_list::handle(shared, p).await),
        Request::CheckpointSet(p) => {
            answer::<method::CheckpointSet>(checkpoint_set::handle(shared, p).await)
        }
        Request::CheckpointGet(p) => {
            answer::<method::CheckpointGet>(checkpoint_get::handle(shared, p).await)
        }
        Request::CheckpointList(p) => {
            answer::<method::CheckpointList>(checkpoint_list::handle(shared, p).await)
        }
        Request::StepBegin(p) => answer::<method::StepBegin>(step_begin::handle(shared, p).await),
        Request::StepDone(p) => answer::<method::StepDone>(step_done::handle(shared, p).await),
    }
}
