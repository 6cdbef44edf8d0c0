//! Writes about runs that commit together: the admissions of on-demand runs, monitors'
//! running marks and runs' ends, as they arrive at a server at once, written in one
//! transaction (one wait for the disk for all of them) with a savepoint each, so that
//! one refused (a job that does not exist, a fenced server, a run already ended) costs
//! the others nothing. Each is written exactly as it would be alone, by the same steps.

use stead_core::plan::Planner;
use stead_core::records::{Admission, OnDemand};
use stead_core::runs::RunEnd;
use stead_protocol::RunStatus;
use stead_sys::identity::StartIdentity;

use crate::Refusal;
use crate::StoreError;
use crate::backend::JobSteps;
use crate::backend::sealed::{Backend, Part};
use crate::backend::{Guard, Steps};
use crate::recorder::Mark;

/// One write of [`RunWrites::write_runs`].
pub enum RunWrite<'a> {
    /// An on-demand run of the job named `job` (read in the transaction, and its run
    /// made from it as `on_demand` says), admitted as [`RunLedger::run_admit`] admits
    /// one, fenced by this host's lease `epoch`, its plan made by `planner`. Refused
    /// with [`StoreError::Refused(Refusal::NoSuchJob)`] when there is no such job.
    ///
    /// `taker`: a monitor waiting for a run (its pid and start identity) that takes this
    /// one if it is admitted to start now. The run is then marked running for it in the
    /// same step, as the monitor's own mark would (on the admission's instant), and the
    /// admission answers the row `running`: one commit for the row and its mark.
    ///
    /// [`RunLedger::run_admit`]: crate::RunLedger::run_admit
    Admit {
        job: &'a str,
        on_demand: OnDemand<'a>,
        planner: &'a Planner,
        epoch: i64,
        taker: Option<(u32, &'a StartIdentity)>,
    },
    /// A monitor's running mark, as [`RunRecorder::mark_running`] writes it.
    ///
    /// [`RunRecorder::mark_running`]: crate::RunRecorder::mark_running
    Mark(&'a Mark),
    /// A run's end from its monitor, as [`RunRecorder::finish`] writes it, with what
    /// follows it.
    ///
    /// [`RunRecorder::finish`]: crate::RunRecorder::finish
    End(i64, &'a RunEnd),
}

/// What a [`RunWrite`] came to.
#[derive(Debug)]
pub enum RunWritten {
    Admitted(Box<Admission>),
    /// Whether the run was marked (false: it was no longer queued).
    Marked(bool),
    /// Whether the end was recorded (false: the run had ended already).
    Ended(bool),
}

/// Runs' writes committed together; see the module docs.
pub trait RunWrites {
    /// Writes `writes` in one transaction, answering each in order. The commit waits on
    /// the disk unless every write is a running mark (whose commit never waits, see
    /// `Guard::Mark`). `Err` when the transaction as a whole failed: then none was
    /// written (or, on a connection lost while committing, whether they were is
    /// unknown, as for any write), and each is the caller's to try again.
    fn write_runs(
        &self,
        writes: &[RunWrite<'_>],
    ) -> Result<Vec<Result<RunWritten, StoreError>>, StoreError>;
}

impl<B: Backend> RunWrites for B {
    fn write_runs(
        &self,
        writes: &[RunWrite<'_>],
    ) -> Result<Vec<Result<RunWritten, StoreError>>, StoreError> {
        let mut steps: Vec<Step<'_, B>> = writes.iter().map(|w| step::<B>(w)).collect();
        let mut parts: Vec<Part<'_, B, RunWritten>> = writes
            .iter()
            .zip(steps.iter_mut())
            .map(|(w, step)| (guard(w), &mut **step as _))
            .collect();
        self.write_each(&mut parts)
    }
}

fn guard(write: &RunWrite<'_>) -> Guard {
    match write {
        RunWrite::Admit { epoch, .. } => Guard::Host(*epoch),
        RunWrite::Mark(_) => Guard::Mark,
        RunWrite::End(..) => Guard::Unfenced,
    }
}

/// What one write does in its transaction.
type Step<'w, B> =
    Box<dyn FnMut(&mut <B as Backend>::Tx<'_>) -> Result<RunWritten, StoreError> + 'w>;

fn step<'w, B: Backend>(write: &'w RunWrite<'_>) -> Step<'w, B> {
    match write {
        RunWrite::Admit {
            job,
            on_demand,
            planner,
            epoch,
            taker,
        } => Box::new(move |tx| {
            let Some(stored) = tx.job_get(job)? else {
                return Err(StoreError::Refused(Refusal::NoSuchJob((*job).to_string())));
            };
            let run = on_demand.run_of(&stored);
            let mut admission = crate::run_ledger::admit(tx, &run, &stored.spec, planner, *epoch)?;
            if let Some((pid, identity)) = taker {
                mark_for(tx, &mut admission, *pid, identity, run.created_at)?;
            }
            Ok(RunWritten::Admitted(Box::new(admission)))
        }),
        RunWrite::Mark(mark) => {
            Box::new(move |tx| crate::recorder::mark(tx, mark).map(RunWritten::Marked))
        }
        RunWrite::End(id, end) => {
            Box::new(move |tx| crate::recorder::finish(tx, *id, end).map(RunWritten::Ended))
        }
    }
}

/// Marks the run `admission` admitted running for the monitor `pid` waiting to take it,
/// when it is to start now (queued with a plan, not waiting for its turn); its row then
/// says so.
fn mark_for(
    tx: &mut impl Steps,
    admission: &mut Admission,
    pid: u32,
    identity: &StartIdentity,
    at: jiff::Timestamp,
) -> Result<(), StoreError> {
    let run = &admission.run;
    if admission.plan.is_none() || run.status != RunStatus::Queued || run.waiting.is_some() {
        return Ok(());
    }
    let mark = Mark {
        run_id: run.id,
        monitor_pid: pid,
        monitor_identity: identity.clone(),
        started_at: at,
    };
    if crate::recorder::mark(tx, &mark)? {
        admission.run = tx
            .run_get(mark.run_id)?
            .ok_or(StoreError::Refused(Refusal::NoSuchRun(mark.run_id)))?;
    }
    Ok(())
}
