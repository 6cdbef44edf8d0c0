//! A monitor's writes about its own run, written once over the backends' [`Steps`].
//!
//! They are not fenced by any server's epoch: the monitor is the authority on its own
//! run, whichever server is current, and the status guards keep each write exactly-once.

use jiff::Timestamp;
use stead_core::runs::{RunEnd, monitor_end};
use stead_protocol::{Run, RunStatus};
use stead_sys::identity::StartIdentity;

use crate::StoreError;
use crate::backend::sealed::Backend;
use crate::backend::{Guard, Steps};
use crate::backend::{RunSteps, ServiceSteps};
use crate::run_ledger::announced;

/// Where a monitor records its run. Implemented by the ledger; tests use fakes.
pub trait RunRecorder {
    /// `queued → running`, naming the monitor. Returns false when the run is no longer
    /// queued (it was cancelled or interrupted before it could start): the monitor must
    /// not start the command.
    fn mark_running(
        &self,
        run_id: i64,
        monitor_pid: u32,
        monitor_identity: &StartIdentity,
        started_at: Timestamp,
    ) -> Result<bool, StoreError>;

    /// `running → end.status`, exactly once. Returns false when the run was already
    /// terminal (someone else settled it); the existing outcome stands.
    fn finish(&self, run_id: i64, end: &RunEnd) -> Result<bool, StoreError>;

    /// The run as recorded (for the failure hook's input).
    fn run(&self, run_id: i64) -> Result<Option<Run>, StoreError>;

    /// A service the run's job depends on that is being restarted now, if any: a failure
    /// then is the restart's doing, and no alternative is dialled into it.
    fn restarting_service(&self, run_id: i64) -> Result<Option<String>, StoreError>;

    /// Gets ready for the first write (a connection opened ahead of it), so that a run
    /// marked on its instant pays for nothing but the write. Nothing by default.
    fn prepare(&self) {}
}

/// One monitor's running mark, as its server writes it with others
/// ([`RunWrite::Mark`](crate::RunWrite::Mark)).
#[derive(Debug, Clone)]
pub struct Mark {
    pub run_id: i64,
    pub monitor_pid: u32,
    pub monitor_identity: StartIdentity,
    pub started_at: Timestamp,
}

/// The monitor's final write: only from `running`, so a run the server already settled
/// (or a cancel before start) keeps its outcome. A dependent run that fails while its
/// service is being restarted was cut by the restart: it is owed, not failed. That is
/// decided here, in the same transaction, with the services locked, so the outcome cannot
/// race the restart's start or end.
pub(crate) fn finish(tx: &mut impl Steps, run_id: i64, end: &RunEnd) -> Result<bool, StoreError> {
    let job_id = tx.run_job(run_id)?;
    let restarting = if end.status == RunStatus::Failed {
        tx.services_restarting_for(job_id, true)?
    } else {
        Vec::new()
    };
    let end = monitor_end(end, restarting.first().map(String::as_str));
    let finished = tx.run_end(run_id, &end, &[RunStatus::Running])?;
    if finished {
        crate::outcomes::after_end(tx, run_id)?;
    }
    announced(tx, run_id, finished)
}

/// `queued → running`, naming the monitor.
pub(crate) fn mark(tx: &mut impl Steps, m: &Mark) -> Result<bool, StoreError> {
    let marked = tx.run_mark_running(m.run_id, m.monitor_pid, &m.monitor_identity, m.started_at)?;
    announced(tx, m.run_id, marked)
}

impl<B: Backend> RunRecorder for B {
    fn mark_running(
        &self,
        run_id: i64,
        monitor_pid: u32,
        monitor_identity: &StartIdentity,
        started_at: Timestamp,
    ) -> Result<bool, StoreError> {
        let m = Mark {
            run_id,
            monitor_pid,
            monitor_identity: monitor_identity.clone(),
            started_at,
        };
        self.write(Guard::Mark, &mut |tx| mark(tx, &m))
    }

    fn finish(&self, run_id: i64, end: &RunEnd) -> Result<bool, StoreError> {
        self.write(Guard::Unfenced, &mut |tx| finish(tx, run_id, end))
    }

    fn run(&self, run_id: i64) -> Result<Option<Run>, StoreError> {
        self.read(&mut |tx| tx.run_get(run_id))
    }

    fn restarting_service(&self, run_id: i64) -> Result<Option<String>, StoreError> {
        self.read(&mut |tx| {
            let job_id = tx.run_job(run_id)?;
            Ok(tx
                .services_restarting_for(job_id, false)?
                .into_iter()
                .next())
        })
    }
}
