//! `readiness`: what a restart of a service would cut now (dependent runs in flight,
//! fires due within the window, live holds), or, with `wait_ms`, once that differs from
//! what the client last saw: the gate's long poll.

use std::sync::Arc;
use std::time::Duration;

use stead_core::jobs::JobTiming;
use stead_core::readiness::{self, DEFAULT_WINDOW, InFlight, Inputs};
use stead_core::records::StoredJob;
use stead_protocol::{Readiness, ReadinessParams, STEAD_SERVICE};

use super::Answer;
use super::services::{duration, known};
use crate::request::ledger_calls::{blocking, in_flight};
use crate::shared::Shared;

/// `readiness` waits at most this long for a change, whatever the client asks.
const WAIT_CAP: Duration = Duration::from_secs(3600);

pub async fn handle(shared: &Arc<Shared>, params: ReadinessParams) -> Answer<Readiness> {
    let waits = params.wait_ms.is_some_and(|ms| ms > 0);
    let began = tokio::time::Instant::now();
    let answer = readiness_now_or_later(shared, params).await?;
    if waits {
        shared.metrics.gate_waited(answer.ready, began.elapsed());
    }
    Ok(answer)
}

/// The readiness, at once or, with `wait_ms`, once it differs from `unless`.
async fn readiness_now_or_later(
    shared: &Arc<Shared>,
    params: ReadinessParams,
) -> Answer<Readiness> {
    let service = params
        .service
        .clone()
        .unwrap_or_else(|| STEAD_SERVICE.to_string());
    known(shared, &service).await?;
    let window = match &params.window {
        Some(w) => duration("window", w)?,
        None => DEFAULT_WINDOW,
    };
    let deadline = tokio::time::Instant::now()
        + params
            .wait_ms
            .map_or(Duration::ZERO, Duration::from_millis)
            .min(WAIT_CAP);
    loop {
        // Subscribed before computing, so a change made meanwhile is not missed.
        let mut runs_changed = shared.run_events.subscribe();
        let mut other_changes = shared.changes.subscribe();
        let service = service.clone();
        let answer = blocking(shared, move |s| {
            let jobs: Vec<(StoredJob, JobTiming)> = s
                .world
                .store
                .job_list()?
                .into_iter()
                .filter_map(|j| {
                    let timing = JobTiming::of(&j.spec, j.anchor).ok()?;
                    Some((j, timing))
                })
                .collect();
            let in_flight: Vec<InFlight> = in_flight(&s.world.store)?
                .into_iter()
                .map(|r| InFlight {
                    id: r.id,
                    job: r.job,
                    started_at: r.started_at,
                })
                .collect();
            let holds = s.world.store.hold_list()?;
            Ok(readiness::readiness(Inputs {
                service: &service,
                now: s.world.clock.now(),
                window,
                jobs: &jobs,
                in_flight: &in_flight,
                holds: &holds,
            }))
        })
        .await?;
        let unchanged = params.unless.as_ref() == Some(&answer.readiness);
        if !unchanged || tokio::time::Instant::now() >= deadline {
            return Ok(answer.readiness);
        }
        let clock = shared.world.clock.clone();
        tokio::select! {
            _ = runs_changed.recv() => {}
            _ = other_changes.changed() => {}
            () = async {
                match answer.next_change {
                    Some(at) => clock.sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {}
            () = tokio::time::sleep_until(deadline) => return Ok(answer.readiness),
            () = shared.stop.cancelled() => return Ok(answer.readiness),
        }
    }
}
