//! `GET /api/events`: the ledger's changes as server-sent events.
//!
//! Fed by the same broadcasts that wake the server's own waiters (`run_events` for runs,
//! `changes` for jobs, services and holds), so a browser hears of a run's end as soon as
//! `stead run --wait` does. A run event carries the whole row, read when the event is
//! sent, so a client needs no second request to show it.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use tokio::sync::{broadcast, watch};

use super::App;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

/// Keeps idle streams (and the proxies between) from timing out.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub fn routes() -> Router<App> {
    Router::new().route("/api/events", get(events))
}

async fn events(State(app): State<App>) -> impl IntoResponse {
    let shared = app.shared;
    // Subscribed before the hello is built, so nothing between the two is missed.
    let feed = Feed {
        runs: shared.run_events.subscribe(),
        changes: shared.changes.subscribe(),
        hello: Some(json_event("hello", &shared.status())),
        shared,
    };
    let stream = futures_util::stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok::<_, std::convert::Infallible>(event), feed))
    });
    // `no-store`, as every API answer (the event stream's own default is `no-cache`).
    (
        [(header::CACHE_CONTROL, "no-store")],
        Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)),
    )
}

struct Feed {
    shared: Arc<Shared>,
    runs: broadcast::Receiver<i64>,
    changes: watch::Receiver<u64>,
    hello: Option<Event>,
}

impl Feed {
    /// The next event, or `None` once the server stops.
    async fn next(&mut self) -> Option<Event> {
        if let Some(hello) = self.hello.take() {
            return Some(hello);
        }
        loop {
            tokio::select! {
                biased;
                () = self.shared.stop.cancelled() => return None,
                received = self.runs.recv() => match received {
                    Ok(id) => {
                        let run = blocking(&self.shared, move |s| s.world.store.run_get(id)).await;
                        // Gone (its job removed) or unreadable: the next event or a refetch
                        // tells the client the rest.
                        if let Ok(Some(run)) = run {
                            return Some(json_event("run", &run));
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::debug!(missed, "an event stream fell behind");
                        return Some(Event::default().event("lagged").data("{}"));
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                changed = self.changes.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    return Some(Event::default().event("changed").data("{}"));
                }
            }
        }
    }
}

fn json_event(name: &str, value: &impl serde::Serialize) -> Event {
    Event::default()
        .event(name)
        .data(serde_json::to_string(value).expect("wire types serialize"))
}
