//! Admission: how a new run is recorded under its job's concurrency policy, given the
//! job's runs in flight. Pure, so every ledger backend decides alike.

use stead_protocol::{Concurrency, RunStatus};

use crate::records::{ActiveRun, NewRun};

/// How a new run is recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `queued`, or `skipped` (with the reason).
    pub status: RunStatus,
    pub reason: Option<String>,
}

/// A resume met a run of its job in flight under `concurrency = forbid`: it is owed
/// work, so it waits for the overlap to end rather than be recorded skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlap(pub i64);

/// Applies the job's concurrency policy to a new run, given the job's runs in flight
/// (oldest first).
pub fn admission(new: &NewRun, running: &[ActiveRun]) -> Result<Verdict, Overlap> {
    let overlap = match (new.concurrency, running.first()) {
        (Concurrency::Forbid, Some(other)) => Some(other),
        _ => None,
    };
    if let (Some(other), Some(_)) = (overlap, &new.resolves) {
        return Err(Overlap(other.id));
    }
    let overlap = overlap.map(|other| {
        format!(
            "overlap: run {} of this job is still {} (concurrency = forbid)",
            other.id,
            other.status.as_str()
        )
    });
    // A fire passed over by the catch-up policy is recorded as skipped, with why.
    Ok(match new.skip_reason.clone().or(overlap) {
        Some(reason) => Verdict {
            status: RunStatus::Skipped,
            reason: Some(reason),
        },
        None => Verdict {
            status: RunStatus::Queued,
            reason: None,
        },
    })
}

/// Whether admitting a run with `verdict` cancels the job's runs in flight.
pub fn replaces(new: &NewRun, verdict: &Verdict) -> bool {
    new.concurrency == Concurrency::Replace && verdict.status == RunStatus::Queued
}
