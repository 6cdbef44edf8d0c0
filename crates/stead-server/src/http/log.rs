//! `GET /api/runs/{id}/log`: a run's output from a byte offset, whole or followed.
//!
//! Following reads what the monitor has written, then waits for the run's next event or
//! a short interval, as `stead logs --follow` does; it ends once the run has ended and the
//! rest is sent. The end is learned before the last read, never after: a monitor records
//! the end only once all output is in the file.
//!
//! Either way the log is streamed in chunks of at most [`CHUNK`] bytes, each read only
//! when the client has taken the one before: a client that stops reading holds one chunk
//! and its socket's buffer, never the log. One answer carries at most
//! [`MAX_ANSWER`] bytes (a log the monitor wrote fits whole: it caps logs at 32 MiB); a
//! longer file, which only something other than the monitor can have made, is read on
//! from the offset the answer ends at.

use std::io::SeekFrom;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use stead_core::runs::DEFAULT_LOG_MAX_BYTES;
use stead_protocol::{ErrorBody, ErrorCode, Request, Run, RunId};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::sync::broadcast;

use super::{App, error, no_store, path_error, query_error, status_of};
use crate::dispatch;
use crate::shared::Shared;

/// How long a follower waits for more output when no event wakes it sooner.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(200);

/// The most one chunk of the body carries.
const CHUNK: usize = 64 * 1024;

/// The most one answer carries: a monitor's log cap, and room for its notes.
const MAX_ANSWER: u64 = DEFAULT_LOG_MAX_BYTES + 1024 * 1024;

pub fn routes() -> Router<App> {
    Router::new().route("/api/runs/{id}/log", get(log))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LogQuery {
    #[serde(default)]
    offset: u64,
    #[serde(default)]
    follow: bool,
}

async fn log(
    State(app): State<App>,
    id: Result<Path<i64>, PathRejection>,
    query: Result<Query<LogQuery>, QueryRejection>,
) -> Response {
    let id = match id {
        Ok(Path(id)) => id,
        Err(e) => return path_error(&e),
    };
    let query = match query {
        Ok(Query(q)) => q,
        Err(e) => return query_error(&e),
    };
    let run = match run_of(&app.shared, id).await {
        Ok(run) => run,
        Err(body) => return error(status_of(body.code), body),
    };
    let path = PathBuf::from(&run.log_path);
    if !run.machine_id.is_empty() && run.machine_id != app.shared.world.machine_id && !path.exists()
    {
        // Logs stay on the host that ran the run.
        let body = ErrorBody::new(
            ErrorCode::NotFound,
            format!(
                "run {id} ran on another host (machine {}): its log is on that host; open its dashboard there",
                run.machine_id
            ),
        );
        return error(status_of(body.code), body);
    }
    if query.follow {
        // A follower starts inside what exists, like a whole read: a log only grows.
        match size(&path).await {
            Ok(len) if query.offset > len => {
                let body = past_the_end(query.offset, len);
                return error(status_of(body.code), body);
            }
            Ok(_) => {}
            Err(body) => return error(status_of(body.code), body),
        }
        let follower = Follower {
            events: app.shared.run_events.subscribe(),
            shared: app.shared.clone(),
            id,
            path,
            file: None,
            offset: query.offset,
            ending: false,
            left: MAX_ANSWER,
        };
        let stream = futures_util::stream::unfold(follower, |mut f| async move {
            let chunk = f.next().await?;
            Some((chunk, f))
        });
        return text(Body::from_stream(stream), None);
    }
    match whole(&path, query.offset).await {
        Ok((body, end)) => text(body, Some(end)),
        Err(body) => error(status_of(body.code), body),
    }
}

fn text(body: Body, end: Option<u64>) -> Response {
    let mut response = (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        no_store(),
        body,
    )
        .into_response();
    if let Some(end) = end {
        response
            .headers_mut()
            .insert("x-stead-log-offset", HeaderValue::from(end));
    }
    *response.status_mut() = StatusCode::OK;
    response
}

async fn run_of(shared: &Arc<Shared>, id: i64) -> Result<Run, ErrorBody> {
    let value = dispatch::call(shared, Request::RunGet(RunId { id })).await?;
    serde_json::from_value(value).map_err(|e| ErrorBody::new(ErrorCode::Internal, e.to_string()))
}

/// The log from `offset` to its current end (at most [`MAX_ANSWER`] bytes of it) as a
/// stream, and the offset it ends at. No log yet reads as empty.
async fn whole(path: &std::path::Path, offset: u64) -> Result<(Body, u64), ErrorBody> {
    let mut file = match tokio::fs::File::open(path).await {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return if offset == 0 {
                Ok((Body::empty(), 0))
            } else {
                Err(past_the_end(offset, 0))
            };
        }
        Err(e) => return Err(read_error(path, &e)),
    };
    let len = file
        .metadata()
        .await
        .map_err(|e| read_error(path, &e))?
        .len();
    if offset > len {
        return Err(past_the_end(offset, len));
    }
    file.seek(SeekFrom::Start(offset))
        .await
        .map_err(|e| read_error(path, &e))?;
    let end = offset + (len - offset).min(MAX_ANSWER);
    let chunks =
        futures_util::stream::unfold((file, end - offset), |(mut file, left)| async move {
            if left == 0 {
                return None;
            }
            let mut buf = vec![0u8; CHUNK.min(usize::try_from(left).unwrap_or(CHUNK))];
            match file.read(&mut buf).await {
                // Shorter than it was a moment ago: what there is has been sent.
                Ok(0) => None,
                Ok(n) => {
                    buf.truncate(n);
                    Some((Ok(Bytes::from(buf)), (file, left - n as u64)))
                }
                Err(e) => Some((Err(e), (file, 0))),
            }
        });
    Ok((Body::from_stream(chunks), end))
}

fn past_the_end(offset: u64, len: u64) -> ErrorBody {
    ErrorBody::new(
        ErrorCode::InvalidParams,
        format!("offset {offset} is past the end of the log ({len} bytes)"),
    )
}

/// The log's size now (0 while it does not exist).
async fn size(path: &std::path::Path) -> Result<u64, ErrorBody> {
    match tokio::fs::metadata(path).await {
        Ok(meta) => Ok(meta.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(read_error(path, &e)),
    }
}

fn read_error(path: &std::path::Path, e: &std::io::Error) -> ErrorBody {
    ErrorBody::new(
        ErrorCode::Internal,
        format!("cannot read the run's log {}: {e}", path.display()),
    )
}

/// A followed log.
struct Follower {
    shared: Arc<Shared>,
    events: broadcast::Receiver<i64>,
    id: i64,
    path: PathBuf,
    file: Option<tokio::fs::File>,
    offset: u64,
    /// The run has ended: read to the end of the file, then stop.
    ending: bool,
    /// What this answer may still carry.
    left: u64,
}

impl Follower {
    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        loop {
            if self.file.is_none() {
                match tokio::fs::File::open(&self.path).await {
                    Ok(mut file) => {
                        if let Err(e) = file.seek(SeekFrom::Start(self.offset)).await {
                            return Some(Err(e));
                        }
                        self.file = Some(file);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Some(Err(e)),
                }
            }
            if self.left == 0 {
                return None;
            }
            if let Some(file) = self.file.as_mut() {
                let mut buf = vec![0u8; CHUNK.min(usize::try_from(self.left).unwrap_or(CHUNK))];
                match file.read(&mut buf).await {
                    Ok(0) => {}
                    Ok(n) => {
                        buf.truncate(n);
                        self.offset += n as u64;
                        self.left -= n as u64;
                        return Some(Ok(Bytes::from(buf)));
                    }
                    Err(e) => return Some(Err(e)),
                }
            }
            if self.ending {
                return None;
            }
            // Nothing more to read now: has the run ended? If so, one more pass reads
            // the rest.
            match run_of(&self.shared, self.id).await {
                Ok(run) if run.status.is_terminal() => {
                    self.ending = true;
                    continue;
                }
                Ok(_) => {}
                Err(_) => return None,
            }
            tokio::select! {
                () = self.shared.stop.cancelled() => return None,
                _ = self.events.recv() => {}
                () = tokio::time::sleep(FOLLOW_INTERVAL) => {}
            }
        }
    }
}
