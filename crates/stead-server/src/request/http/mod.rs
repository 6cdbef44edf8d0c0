//! The HTTP API and the dashboard: the socket's methods for programs that speak HTTP,
//! a live event stream, `/metrics`, and the page a browser opens.
//!
//! Off unless `[http] listen` (or `stead serve --http`) names an address, or a user asks
//! for the dashboard (`stead dashboard` starts it on a free loopback port). Every API
//! answer comes from the same handlers as the socket's (through
//! [`crate::request::dispatch::call`]), so the JSON is the value the CLI prints with `--json`.
//! The rest of the server knows the API only through [`crate::request::web`].
//!
//! The listener is driven here with hyper rather than `axum::serve`, so that a stopping
//! server drops it before it gives up its lease: a successor binding the same port never
//! finds it still taken.

mod api;
mod assets;
pub mod auth;
mod events;
mod log;

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex, OnceLock};

use axum::Router;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use stead_protocol::{ErrorBody, ErrorCode};
use tracing::{debug, info};

use crate::request::accept::{AcceptErrors, Repeated};
use crate::request::web::{Endpoint, load_or_create_token};
use crate::shared::Shared;
use auth::{Guard, Refusal};

/// Serves the API on `listener` (already bound), with `token`, until the server stops.
pub fn serve(
    shared: &Arc<Shared>,
    listener: std::net::TcpListener,
    token: String,
    allow_remote: bool,
) -> io::Result<Endpoint> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let addr = listener.local_addr()?;
    let guard = Arc::new(Guard::new(addr, allow_remote, &token));
    let router = router(shared.clone(), guard);
    let endpoint = Endpoint { addr, token };
    let stop = shared.stop.clone();
    let slots = Slots::new(crate::system::fdlimit::http_connections(
        crate::system::fdlimit::soft(),
    ));
    let idle = shared.world.config.http.idle_timeout;
    let accept = tokio::spawn(async move {
        let mut errors = AcceptErrors::new("HTTP accept failed");
        let mut refused = Repeated::new("HTTP connection refused: too many connections open");
        loop {
            let accepted = tokio::select! {
                biased;
                () = stop.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, most likely: keep serving what is open, and wait
                    // rather than spin on a listener that stays readable.
                    let pause = errors.failed(&e);
                    tokio::select! {
                        () = stop.cancelled() => break,
                        () = tokio::time::sleep(pause) => continue,
                    }
                }
            };
            errors.accepted();
            let Some(slot) = slots.take(peer.ip()) else {
                // Closed at once: a client past the cap costs one descriptor for an
                // instant, never one held open.
                refused.happened(&peer);
                drop(stream);
                continue;
            };
            // Events are small writes in quick succession: without this, Nagle holds each
            // behind the previous one's delayed ACK (~40 ms).
            let _ = stream.set_nodelay(true);
            let service = TowerToHyperService::new(router.clone());
            let stop = stop.clone();
            tokio::spawn(async move {
                let _slot = slot;
                // The header timeout also closes a connection that sits idle between
                // requests (hyper starts it whenever it waits for a request's head): slow
                // or silent clients cannot hold descriptors.
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(idle)
                    .serve_connection(TokioIo::new(stream), service);
                tokio::select! {
                    result = conn => if let Err(e) = result {
                        debug!(cause = %e, "HTTP connection ended with an error");
                    },
                    // Streams end with the server; nothing waits on a drain.
                    () = stop.cancelled() => {}
                }
            });
        }
        // Dropping the listener here, before shutdown releases the lease, frees the port
        // for a successor.
    });
    shared.web.listening(endpoint.clone(), accept);
    info!(url = %endpoint.url(), "HTTP API listening");
    Ok(endpoint)
}

/// Open connections, counted against the cap as a whole and, for remote peers, per
/// address. On loopback every client has the same address, so there only the whole cap
/// applies.
#[derive(Debug, Clone)]
struct Slots {
    inner: Arc<Mutex<SlotCounts>>,
}

#[derive(Debug, Default)]
struct SlotCounts {
    max: usize,
    open: usize,
    per_peer: HashMap<IpAddr, usize>,
}

/// One open connection's place; given back when dropped.
struct Slot {
    inner: Arc<Mutex<SlotCounts>>,
    peer: IpAddr,
}

impl Slots {
    fn new(max: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(SlotCounts {
                max,
                ..SlotCounts::default()
            })),
        }
    }

    fn take(&self, peer: IpAddr) -> Option<Slot> {
        let mut counts = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let per_peer_max = (counts.max / 4).max(1);
        let mine = counts.per_peer.get(&peer).copied().unwrap_or(0);
        if counts.open >= counts.max || (!peer.is_loopback() && mine >= per_peer_max) {
            return None;
        }
        counts.open += 1;
        *counts.per_peer.entry(peer).or_default() += 1;
        Some(Slot {
            inner: self.inner.clone(),
            peer,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        counts.open -= 1;
        if let Some(n) = counts.per_peer.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                counts.per_peer.remove(&self.peer);
            }
        }
    }
}

/// Starts the API on a free loopback port, with the state directory's token (what
/// `stead dashboard` asks for when the API is off).
pub fn start_on_loopback(shared: &Arc<Shared>) -> io::Result<Endpoint> {
    let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let token = load_or_create_token(&shared.world.paths.http_token())?;
    serve(shared, listener, token, false)
}

/// State every handler receives.
#[derive(Debug, Clone)]
struct App {
    shared: Arc<Shared>,
    guard: Arc<Guard>,
}

fn router(shared: Arc<Shared>, guard: Arc<Guard>) -> Router {
    let app = App { shared, guard };
    let protected = api::routes()
        .merge(events::routes())
        .merge(log::routes())
        .route_layer(middleware::from_fn_with_state(app.clone(), require_token));
    assets::routes()
        .merge(protected)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(app.clone(), check_site))
        .layer(middleware::from_fn(check_request))
        .with_state(app)
}

/// The most a request body may carry.
const MAX_BODY: usize = 64 * 1024;

/// What every request must be before anything else looks at it: in origin form
/// (`/api/runs`, not `http://host/api/runs`, which would be judged by a different
/// authority than its `Host`), with one `Host`, and of the method its path takes (each
/// path takes one, GET or POST; HEAD is not served): any other is answered 405 with
/// `Allow`, whatever it carries. Then a body only on a POST, bounded, and empty or `{}`
/// unless its route takes parameters in its body ([`api::BODY_ROUTES`]): a body an
/// endpoint would ignore is refused rather than silently dropped. A path that is not
/// routed is left to the router's 404.
async fn check_request(request: Request, next: Next) -> Response {
    let refuse =
        |status, message: String| error(status, ErrorBody::new(ErrorCode::InvalidRequest, message));
    let uri = request.uri();
    if uri.scheme().is_some() || uri.authority().is_some() {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!("request target {uri} is in absolute form; send the path alone (origin form)"),
        );
    }
    if request.headers().get_all(header::HOST).iter().count() > 1 {
        return refuse(StatusCode::BAD_REQUEST, "more than one Host header".into());
    }
    let Some(path) = request.extensions().get::<MatchedPath>() else {
        return next.run(request).await;
    };
    let allowed = allowed_methods(path.as_str());
    if !allowed.contains(&request.method().as_str()) {
        return method_not_allowed(request.method(), uri.path(), &allowed);
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let chunked = request.headers().contains_key(header::TRANSFER_ENCODING);
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than {MAX_BODY} bytes"),
        );
    }
    if declared.unwrap_or(0) == 0 && !chunked {
        return next.run(request).await;
    }
    if request.method() != Method::POST {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!("a {} request carries no body", request.method()),
        );
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is larger than {MAX_BODY} bytes (or was cut short)"),
            );
        }
    };
    let empty_object = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&bytes)
        .is_ok_and(|fields| fields.is_empty());
    let takes_body = parts
        .extensions
        .get::<MatchedPath>()
        .is_some_and(|path| api::BODY_ROUTES.contains(&("POST", path.as_str())));
    if !takes_body && !bytes.is_empty() && !empty_object {
        return error(
            StatusCode::BAD_REQUEST,
            ErrorBody::new(
                ErrorCode::InvalidParams,
                format!(
                    "{} takes no parameters in its body: send none, or {{}}",
                    parts.uri.path()
                ),
            ),
        );
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// Host, Origin and Sec-Fetch-Site, on every route (the page too).
async fn check_site(State(app): State<App>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    match app.guard.check_site(
        text(header::HOST),
        text(header::ORIGIN),
        text(header::HeaderName::from_static("sec-fetch-site")),
    ) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refused(&refusal),
    }
}

async fn require_token(State(app): State<App>, request: Request, next: Next) -> Response {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    match app.guard.check_token(authorization) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refused(&refusal),
    }
}

fn refused(refusal: &Refusal) -> Response {
    let (status, code) = match refusal {
        Refusal::Host(_) | Refusal::Origin(_) => (StatusCode::FORBIDDEN, ErrorCode::Forbidden),
        Refusal::Token(_) => (StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized),
    };
    let mut response = error(status, ErrorBody::new(code, refusal.to_string()));
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer realm=\"stead\""),
        );
    }
    response
}

async fn not_found(request: Request) -> Response {
    error(
        StatusCode::NOT_FOUND,
        ErrorBody::new(
            ErrorCode::NotFound,
            format!(
                "no such path {:?}; GET /api lists the endpoints",
                request.uri().path()
            ),
        ),
    )
}

/// The methods a routed path (as the router matched it) takes: an API path those
/// [`api::endpoints`] lists for it, a file of the dashboard GET.
fn allowed_methods(path: &str) -> Vec<&'static str> {
    static ENDPOINTS: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    let verbs: Vec<&str> = ENDPOINTS
        .get_or_init(api::endpoints)
        .iter()
        .filter(|&&(_, p)| p == path)
        .map(|&(verb, _)| verb)
        .collect();
    if verbs.is_empty() { vec!["GET"] } else { verbs }
}

/// 405 for a method `path` does not take, with the ones it does in `Allow`.
fn method_not_allowed(method: &Method, path: &str, allowed: &[&str]) -> Response {
    let allow = allowed.join(", ");
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorBody::new(
            ErrorCode::MethodNotAllowed,
            format!(
                "{method} is not allowed on {path}, which takes {allow}; GET /api lists the endpoints"
            ),
        ),
    );
    if let Ok(value) = header::HeaderValue::from_str(&allow) {
        response.headers_mut().insert(header::ALLOW, value);
    }
    response
}

/// An error answer: the protocol's error body, with the status that fits its code.
fn error(status: StatusCode, body: ErrorBody) -> Response {
    (status, no_store(), axum::Json(body)).into_response()
}

fn bad_input(message: String) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        ErrorBody::new(ErrorCode::InvalidParams, message),
    )
}

fn query_error(e: &QueryRejection) -> Response {
    bad_input(format!("invalid query: {}", e.body_text()))
}

fn path_error(e: &PathRejection) -> Response {
    bad_input(format!("invalid path: {}", e.body_text()))
}

/// The status an error code maps to.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::InvalidJson
        | ErrorCode::LineTooLong
        | ErrorCode::InvalidRequest
        | ErrorCode::InvalidParams => StatusCode::BAD_REQUEST,
        ErrorCode::UnknownMethod | ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::Conflict => StatusCode::CONFLICT,
        ErrorCode::ShuttingDown | ErrorCode::StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        // `Internal`, and a code of a later protocol (the enum is non-exhaustive; the
        // tests check that every code of this one has its own status).
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// API answers are live state: never cached.
fn no_store() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_code_but_internal_has_a_status_of_its_own() {
        for code in ErrorCode::ALL {
            let status = status_of(code);
            assert_eq!(
                status == StatusCode::INTERNAL_SERVER_ERROR,
                code == ErrorCode::Internal,
                "{code:?} answers {status}"
            );
        }
    }
}
