//! Overdue jobs on the ledger: a lapse begins when a job that expects a success within a
//! while (`expect_within`) has gone that long without one, and is written once, with its
//! `overdue` event, in one transaction; the job's next success ends it (`outcomes.rs`).
//! The lapse is a column of the job's row, so a restarted server neither forgets it nor
//! tells of it again.

use jiff::Timestamp;
use stead_core::clock::rfc3339;
use stead_core::overdue::lapse;
use stead_core::records::StoredJob;
use stead_protocol::units::parse_duration;
use stead_protocol::{NotifyEvent, Overdue};

use crate::StoreError;
use crate::backend::sealed::Backend;
use crate::backend::{Announce, Guard, JobSteps, Steps};
use crate::outcomes;

pub trait Overdues {
    /// Begins the lapse of every enabled job overdue at `now` that is not in one yet,
    /// each with its `overdue` event; answers those jobs with when their lapse began.
    /// Fenced by the scheduler's leadership: one host tells of a lapse.
    fn overdue_check(
        &self,
        now: Timestamp,
        epoch: i64,
    ) -> Result<Vec<(String, Timestamp)>, StoreError>;
    /// The jobs in a lapse now, by name.
    fn overdue_list(&self) -> Result<Vec<Overdue>, StoreError>;
}

/// A job's `expect_within`, when it has one that reads.
pub fn expect_within(job: &StoredJob) -> Option<std::time::Duration> {
    job.spec
        .expect_within
        .as_deref()
        .and_then(|w| parse_duration(w).ok())
}

/// When `job`'s lapse begins, if one should begin at `now`: the job is enabled, expects
/// a success within a while, is not in a lapse already, and has gone that long without.
fn lapse_due<T: Steps>(
    tx: &mut T,
    job: &StoredJob,
    now: Timestamp,
) -> Result<Option<Timestamp>, StoreError> {
    let Some(within) = expect_within(job).filter(|_| job.spec.enabled) else {
        return Ok(None);
    };
    if job.overdue_since.is_some() {
        return Ok(None);
    }
    let last = tx.job_last_success(job.id)?;
    Ok(lapse(within, last, job.created_at, now))
}

impl<B: Backend> Overdues for B {
    fn overdue_check(
        &self,
        now: Timestamp,
        epoch: i64,
    ) -> Result<Vec<(String, Timestamp)>, StoreError> {
        // A read settles the heartbeats when no lapse is due, which is nearly all of them.
        let due = self.read(&mut |tx| {
            for job in tx.job_list()? {
                if lapse_due(tx, &job, now)?.is_some() {
                    return Ok(true);
                }
            }
            Ok(false)
        })?;
        if !due {
            return Ok(Vec::new());
        }
        self.write(Guard::Leader(epoch), &mut |tx| {
            let mut began = Vec::new();
            for job in tx.job_list()? {
                let Some(since) = lapse_due(tx, &job, now)? else {
                    continue;
                };
                tx.job_set_overdue(job.id, Some(since))?;
                let text = format!(
                    "{} is overdue: no success within {} (due {})",
                    job.spec.name,
                    job.spec.expect_within.as_deref().unwrap_or_default(),
                    rfc3339(since)
                );
                outcomes::tell(tx, NotifyEvent::Overdue, &job.spec.name, None, text, now)?;
                began.push((job.spec.name.clone(), since));
            }
            if !began.is_empty() {
                tx.announce(Announce::Changed)?;
            }
            Ok(began)
        })
    }

    fn overdue_list(&self) -> Result<Vec<Overdue>, StoreError> {
        let jobs = self.read(&mut |tx| tx.job_list())?;
        Ok(jobs
            .into_iter()
            .filter_map(|job| {
                Some(Overdue {
                    since: rfc3339(job.overdue_since?),
                    expect_within: job.spec.expect_within?,
                    job: job.spec.name,
                })
            })
            .collect())
    }
}
