//! `GET /api/runs/{id}/log`: a run's output from a byte offset, whole or followed.
//!
//! A run of this host is read from its log file; a run of another host of a shared
//! ledger from the copy its host ships to the ledger (`run_log`), with the same offsets.
//! Followed from the ledger, the answer ends once the log is complete, or once the run
//! has ended on a host that no longer serves (the rest is shipped when its server
//! starts again).
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
use stead_protocol::{ErrorBody, ErrorCode, Request, Run, RunId, RunLog, RunLogParams};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::sync::broadcast;

use super::{App, error, no_store, path_error, query_error, status_of};
use crate::request::dispatch;
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
    if let Some(when) = &run.log_pruned_at {
        let body = ErrorBody::new(
            ErrorCode::NotFound,
            format!("run {id}'s log was pruned on {when} by retention (the run's record is kept)"),
        );
        return error(status_of(body.code), body);
    }
    let path = PathBuf::from(&run.log_path);
    let remote = elsewhere(&app.shared, &run);
    if query.follow {
        // A follower starts inside what exists, like a whole read: a log only grows.
        let len = if remote {
            shipped(&app.shared, id, query.offset, 0)
                .await
                .map(|(log, _)| log.shipped_bytes)
        } else {
            size(&path).await
        };
        match len {
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
            source: if remote {
                Source::Ledger
            } else {
                Source::File { path, file: None }
            },
            // Queued for any host: which host's log it will be is not known yet.
            unclaimed: run.machine_id.is_empty() && app.shared.world.store.is_shared(),
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
    let read = if remote {
        whole_shipped(&app.shared, id, query.offset).await
    } else {
        whole(&path, query.offset).await
    };
    match read {
        Ok((body, end)) => text(body, Some(end)),
        Err(body) => error(status_of(body.code), body),
    }
}

/// Whether `run` ran on another host of a shared ledger: its log is read from the
/// ledger, where its host ships it.
fn elsewhere(shared: &Shared, run: &Run) -> bool {
    shared.world.store.is_shared()
        && !run.machine_id.is_empty()
        && run.machine_id != shared.world.machine_id
}

/// Up to `max` bytes of a run's shipped log from `offset`, and what the ledger says of it.
async fn shipped(
    shared: &Arc<Shared>,
    id: i64,
    offset: u64,
    max: usize,
) -> Result<(RunLog, Vec<u8>), ErrorBody> {
    let params = RunLogParams {
        id,
        offset,
        max_bytes: Some(max as u64),
    };
    let value = dispatch::call(shared, Request::RunLog(params)).await?;
    let log: RunLog = serde_json::from_value(value)
        .map_err(|e| ErrorBody::new(ErrorCode::Internal, e.to_string()))?;
    let bytes = log
        .bytes()
        .map_err(|e| ErrorBody::new(ErrorCode::Internal, e))?;
    Ok((log, bytes))
}

/// The shipped log from `offset` to what the ledger holds now (at most [`MAX_ANSWER`]
/// bytes), as a stream of chunks each read from the ledger when the one before is
/// taken, and the offset it ends at.
async fn whole_shipped(
    shared: &Arc<Shared>,
    id: i64,
    offset: u64,
) -> Result<(Body, u64), ErrorBody> {
    let (log, first) = shipped(shared, id, offset, CHUNK).await?;
    let end = log.shipped_bytes.min(offset.saturating_add(MAX_ANSWER));
    let first = Bytes::from(first);
    let at = offset + first.len() as u64;
    let state = (shared.clone(), Some(first), at);
    let chunks = futures_util::stream::unfold(state, move |(shared, first, at)| async move {
        if let Some(first) = first.filter(|b| !b.is_empty()) {
            return Some((Ok(first), (shared, None, at)));
        }
        if at >= end {
            return None;
        }
        let max = CHUNK.min(usize::try_from(end - at).unwrap_or(CHUNK));
        match shipped(&shared, id, at, max).await {
            Ok((_, bytes)) if bytes.is_empty() => None,
            Ok((_, bytes)) => {
                let next = at + bytes.len() as u64;
                Some((Ok(Bytes::from(bytes)), (shared, None, next)))
            }
            Err(e) => Some((Err(std::io::Error::other(e.message)), (shared, None, end))),
        }
    });
    Ok((Body::from_stream(chunks), end))
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
    source: Source,
    /// The run was queued for any host when the follower started: once a host claims
    /// it, its log is that host's.
    unclaimed: bool,
    offset: u64,
    /// The run has ended: read to the end of the file, then stop.
    ending: bool,
    /// What this answer may still carry.
    left: u64,
}

/// Where a followed log is read from.
enum Source {
    /// This host's file.
    File {
        path: PathBuf,
        file: Option<tokio::fs::File>,
    },
    /// The copy another host ships to the shared ledger.
    Ledger,
}

/// What one read of a followed log found.
enum Read {
    Bytes(Bytes),
    /// Nothing new yet.
    Nothing,
    /// Nothing more will come.
    Done,
}

impl Follower {
    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        loop {
            if self.left == 0 {
                return None;
            }
            let max = CHUNK.min(usize::try_from(self.left).unwrap_or(CHUNK));
            let read = match &mut self.source {
                Source::File { path, file } => read_file(path, file, self.offset, max).await,
                Source::Ledger => read_shipped(&self.shared, self.id, self.offset, max).await,
            };
            match read {
                Ok(Read::Bytes(bytes)) => {
                    self.offset += bytes.len() as u64;
                    self.left -= bytes.len() as u64;
                    return Some(Ok(bytes));
                }
                Ok(Read::Done) => return None,
                Ok(Read::Nothing) => {}
                Err(e) => return Some(Err(e)),
            }
            if self.ending {
                return None;
            }
            if matches!(self.source, Source::File { .. }) {
                // Nothing more to read now: has the run ended? If so, one more pass
                // reads the rest.
                match run_of(&self.shared, self.id).await {
                    Ok(run) if self.unclaimed && !run.machine_id.is_empty() => {
                        // Claimed: its log is the claiming host's.
                        self.unclaimed = false;
                        self.source = if elsewhere(&self.shared, &run) {
                            Source::Ledger
                        } else {
                            Source::File {
                                path: PathBuf::from(&run.log_path),
                                file: None,
                            }
                        };
                        continue;
                    }
                    Ok(run) if run.status.is_terminal() => {
                        self.ending = true;
                        continue;
                    }
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
            tokio::select! {
                () = self.shared.stop.cancelled() => return None,
                _ = self.events.recv() => {}
                () = tokio::time::sleep(FOLLOW_INTERVAL) => {}
            }
        }
    }
}

/// The next bytes of this host's log file from `offset`.
async fn read_file(
    path: &std::path::Path,
    file: &mut Option<tokio::fs::File>,
    offset: u64,
    max: usize,
) -> Result<Read, std::io::Error> {
    if file.is_none() {
        match tokio::fs::File::open(path).await {
            Ok(mut opened) => {
                opened.seek(SeekFrom::Start(offset)).await?;
                *file = Some(opened);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Read::Nothing),
            Err(e) => return Err(e),
        }
    }
    let Some(file) = file.as_mut() else {
        return Ok(Read::Nothing);
    };
    let mut buf = vec![0u8; max];
    match file.read(&mut buf).await? {
        0 => Ok(Read::Nothing),
        n => {
            buf.truncate(n);
            Ok(Read::Bytes(Bytes::from(buf)))
        }
    }
}

/// The next bytes of another host's shipped log from `offset`: done once the log is
/// complete, or once the run has ended on a host that does not serve (the rest stays
/// there until its server starts again).
async fn read_shipped(
    shared: &Arc<Shared>,
    id: i64,
    offset: u64,
    max: usize,
) -> Result<Read, std::io::Error> {
    let (log, bytes) = shipped(shared, id, offset, max)
        .await
        .map_err(|e| std::io::Error::other(e.message))?;
    if !bytes.is_empty() {
        return Ok(Read::Bytes(Bytes::from(bytes)));
    }
    let stranded = log.status.is_terminal() && log.host_state.as_deref() != Some("serving");
    if log.complete || log.kept_on_host || stranded {
        Ok(Read::Done)
    } else {
        Ok(Read::Nothing)
    }
}
