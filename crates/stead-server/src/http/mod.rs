//! The HTTP API and the dashboard: the socket's methods for programs that speak HTTP,
//! a live event stream, `/metrics`, and the page a browser opens.
//!
//! Off unless `[http] listen` (or `stead serve --http`) names an address, or a user asks
//! for the dashboard (`stead dashboard` starts it on a free loopback port). Every API
//! answer comes from the same handlers as the socket's (through
//! [`crate::dispatch::call`]), so the JSON is the value the CLI prints with `--json`.
//! The rest of the server knows the API only through [`crate::web`].
//!
//! The listener is driven here with hyper rather than `axum::serve`, so that a stopping
//! server drops it before it gives up its lease: a successor binding the same port never
//! finds it still taken.

mod api;
mod assets;
pub mod auth;
mod events;
mod log;

use std::io;
use std::net::Ipv4Addr;
use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use stead_protocol::{ErrorBody, ErrorCode};
use tracing::{debug, info, warn};

use crate::shared::Shared;
use crate::web::{Endpoint, load_or_create_token};
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
    let accept = tokio::spawn(async move {
        loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        // Events are small writes in quick succession: without this, Nagle
                        // holds each behind the previous one's delayed ACK (~40 ms).
                        let _ = stream.set_nodelay(true);
                        let service = TowerToHyperService::new(router.clone());
                        let stop = stop.clone();
                        tokio::spawn(async move {
                            let conn = hyper::server::conn::http1::Builder::new()
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
                    Err(e) => warn!(cause = %e, "HTTP accept failed"),
                },
            }
        }
        // Dropping the listener here, before shutdown releases the lease, frees the port
        // for a successor.
    });
    shared.web.listening(endpoint.clone(), accept);
    info!(url = %endpoint.url(), "HTTP API listening");
    Ok(endpoint)
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
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(app.clone(), check_site))
        .with_state(app)
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

async fn method_not_allowed(request: Request) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorBody::new(
            ErrorCode::MethodNotAllowed,
            format!(
                "{} is not allowed on {}; GET /api lists the endpoints",
                request.method(),
                request.uri().path()
            ),
        ),
    )
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
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
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
