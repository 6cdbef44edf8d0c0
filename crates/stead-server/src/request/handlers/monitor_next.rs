//! `monitor_next`: a monitor done with its run offers, on its link, to take another
//! (see `runs::reuse`); answered with the next run handed to it within its wait, or
//! with none.

use std::sync::Arc;
use std::time::Duration;

use stead_protocol::{MonitorNext, MonitorNextRun};

use super::{Answer, invalid};
use crate::runs::Link;
use crate::shared::Shared;

/// The longest a monitor is kept waiting for a run, whatever it asks.
const LONGEST_WAIT: Duration = Duration::from_secs(2);

pub async fn handle(
    shared: &Arc<Shared>,
    params: MonitorNext,
    link: Option<&Link>,
) -> Answer<MonitorNextRun> {
    let Some(link) = link else {
        return Err(invalid(
            "monitor_next is asked by a monitor on its link to its server only",
        ));
    };
    let none = MonitorNextRun { start: None };
    let wait = Duration::from_millis(params.wait_ms).min(LONGEST_WAIT);
    let until = tokio::time::Instant::now() + wait;
    let Some(mut offer) =
        shared
            .runs
            .monitors
            .offer(link, params.after, params.takes_marked, until.into_std())
    else {
        return Ok(none);
    };
    // Its end is recorded and its log whole: the run's watch is over.
    shared.monitor_done(params.after);
    let start = tokio::select! {
        taken = &mut offer.taken => taken.ok(),
        () = tokio::time::sleep_until(until) => None,
        () = shared.stop.cancelled() => None,
    };
    let start = match start {
        Some(start) => Some(start),
        // A run handed over while the wait ran out is the monitor's all the same, as is
        // one being admitted for it (reserved): its admission hands it over, or lets the
        // monitor go.
        None if !shared.runs.monitors.withdraw(offer.token) => offer.taken.await.ok(),
        None => None,
    };
    Ok(MonitorNextRun { start })
}
