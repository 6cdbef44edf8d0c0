//! Group commit for the writes about runs that reach the server at once: on-demand
//! admissions, monitors' running marks and runs' ends. Whatever arrives while one
//! transaction commits is written together by the next (one wait for the disk for all
//! of them, each in a savepoint of its own: `stead_store::RunWrites`), so a burst of a
//! thousand starts costs a handful of commits rather than a thousand, an on-demand run's
//! admission shares its commit with the ends of the runs before it, and a lone write
//! waits for nothing but its own commit.
//!
//! Whoever finds no commit under way becomes the committer: a task of its own (a caller
//! whose connection closes cannot strand the others) that commits what is pending, then
//! what arrived meanwhile, until nothing is left.
//!
//! A run's end waits a moment ([`END_WAIT`]) for a durable commit to ride with: the
//! next admission's, when one comes, else one of its own. Under a stream of runs an end
//! then never makes an admission wait behind a wait for the disk of its own, and a run
//! costs one wait for the disk, not two. (A running mark needs none: `Guard::Mark`.)

use std::sync::{Arc, Mutex};

use stead_core::records::Admission;
use stead_core::runs::RunEnd;
use stead_protocol::{ErrorBody, ErrorCode, RunParams};
use stead_store::{Mark, RunWrite, RunWritten, StoreError};
use stead_sys::identity::StartIdentity;
use tokio::sync::oneshot;

use crate::request::ledger_calls::{blocking, store_error};
use crate::runs::on_demand;
use crate::shared::Shared;

/// The most writes one transaction carries: a longer burst is split, so no commit holds
/// the ledger for long.
const MOST: usize = 512;

/// The longest a run's end waits for a commit to ride with before it commits alone.
const END_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

/// A write waiting for the next commit.
#[derive(Debug)]
enum Write {
    /// A run of the job named `job` now, with parameters of its own; marked running for
    /// `taker` (a waiting monitor's pid and start identity) when it is to start now.
    Admit {
        job: String,
        params: RunParams,
        taker: Option<(u32, StartIdentity)>,
    },
    Mark(Mark),
    /// A run's end, from its monitor.
    End(i64, RunEnd),
}

/// Where a write's answer goes, in its own kind.
enum Reply {
    Admitted(oneshot::Sender<Result<Box<Admission>, Unwritten>>),
    Marked(oneshot::Sender<Result<bool, Unwritten>>),
    Ended(oneshot::Sender<Result<bool, Unwritten>>),
}

impl Reply {
    /// Sends the ledger's answer to the write this reply is for. (A receiver that went
    /// away, its caller's connection closed, needs none.)
    fn send(self, answer: Result<RunWritten, Unwritten>) {
        match (self, answer) {
            (Reply::Admitted(to), Ok(RunWritten::Admitted(admission))) => {
                let _ = to.send(Ok(admission));
            }
            (Reply::Marked(to), Ok(RunWritten::Marked(marked))) => {
                let _ = to.send(Ok(marked));
            }
            (Reply::Ended(to), Ok(RunWritten::Ended(ended))) => {
                let _ = to.send(Ok(ended));
            }
            (reply, Err(unwritten)) => reply.fail(unwritten),
            // The store answers each write in its own kind; were it not to, the caller
            // learns of it rather than the server of a panic.
            (reply, Ok(other)) => reply.fail(Unwritten::Failed(ErrorBody::new(
                ErrorCode::Internal,
                format!("the ledger answered a write with another kind of answer: {other:?}"),
            ))),
        }
    }

    fn fail(self, unwritten: Unwritten) {
        let _ = match self {
            Reply::Admitted(to) => to.send(Err(unwritten)).map_err(drop),
            Reply::Marked(to) | Reply::Ended(to) => to.send(Err(unwritten)).map_err(drop),
        };
    }
}

/// Why a write was not written.
#[derive(Debug)]
pub enum Unwritten {
    /// Refused on its own (no such job, fenced...), its savepoint rolled back: nothing
    /// of it is on the ledger.
    Refused(ErrorBody),
    /// Its transaction failed as a whole, or was abandoned: it may have committed all the
    /// same (a connection lost during COMMIT).
    Failed(ErrorBody),
}

impl From<Unwritten> for ErrorBody {
    fn from(unwritten: Unwritten) -> Self {
        match unwritten {
            Unwritten::Refused(body) | Unwritten::Failed(body) => body,
        }
    }
}

/// Writes waiting for the next commit; see the module docs.
#[derive(Default)]
pub struct Group {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    pending: Vec<(Write, Reply)>,
    /// Ends waiting for a durable commit to ride with.
    ends: Vec<(Write, Reply)>,
    committing: bool,
    /// Whether a timer will move `ends` to `pending`.
    timed: bool,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Group({} pending)", self.state().pending.len())
    }
}

impl Group {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admits an on-demand run of the job named `job` with `params`, marked running for
    /// `taker` (a waiting monitor's pid and start identity) when it is to start now,
    /// with whatever else is pending. The error tells a write refused on its own from
    /// one whose commit failed.
    pub async fn admit(
        shared: &Arc<Shared>,
        job: String,
        params: RunParams,
        taker: Option<(u32, StartIdentity)>,
    ) -> Result<Box<Admission>, Unwritten> {
        let (reply, answer) = oneshot::channel();
        let write = Write::Admit { job, params, taker };
        Self::submit(shared, write, Reply::Admitted(reply));
        answered(answer).await
    }

    /// A monitor's running mark; whether the run was marked (false: it was no longer
    /// queued).
    pub async fn mark(shared: &Arc<Shared>, mark: Mark) -> Result<bool, ErrorBody> {
        let (reply, answer) = oneshot::channel();
        Self::submit(shared, Write::Mark(mark), Reply::Marked(reply));
        Ok(answered(answer).await?)
    }

    /// A run's end from its monitor; whether it was recorded (false: the run had ended
    /// already).
    pub async fn end(shared: &Arc<Shared>, id: i64, end: RunEnd) -> Result<bool, ErrorBody> {
        let (reply, answer) = oneshot::channel();
        Self::submit(shared, Write::End(id, end), Reply::Ended(reply));
        Ok(answered(answer).await?)
    }

    /// Queues `write` for the next commit, leading one when none is under way.
    fn submit(shared: &Arc<Shared>, write: Write, reply: Reply) {
        let (lead, time) = {
            let mut state = shared.runs.writes.state();
            if matches!(write, Write::End(..)) {
                state.ends.push((write, reply));
                (false, !std::mem::replace(&mut state.timed, true))
            } else {
                state.pending.push((write, reply));
                (!std::mem::replace(&mut state.committing, true), false)
            }
        };
        if lead {
            tokio::spawn(commit_all(shared.clone()));
        }
        if time {
            tokio::spawn(ends_alone(shared.clone()));
        }
    }
}

/// The answer to a write, once its commit is done.
async fn answered<T>(answer: oneshot::Receiver<Result<T, Unwritten>>) -> Result<T, Unwritten> {
    answer.await.unwrap_or_else(|_| {
        Err(Unwritten::Failed(ErrorBody::new(
            ErrorCode::Internal,
            "the commit carrying this write was abandoned",
        )))
    })
}

/// Once [`END_WAIT`] has passed, the ends still waiting are committed, alone if need be.
async fn ends_alone(shared: Arc<Shared>) {
    tokio::time::sleep(END_WAIT).await;
    let lead = {
        let mut state = shared.runs.writes.state();
        state.timed = false;
        if state.ends.is_empty() {
            return;
        }
        let ends = std::mem::take(&mut state.ends);
        state.pending.extend(ends);
        !std::mem::replace(&mut state.committing, true)
    };
    if lead {
        commit_all(shared).await;
    }
}

async fn commit_all(shared: Arc<Shared>) {
    loop {
        let batch: Vec<(Write, Reply)> = {
            let mut state = shared.runs.writes.state();
            if state.pending.is_empty() {
                state.committing = false;
                return;
            }
            let most = state.pending.len().min(MOST);
            let rest = state.pending.split_off(most);
            let mut batch = std::mem::replace(&mut state.pending, rest);
            // A commit that waits for the disk anyway takes the waiting ends along.
            if batch.iter().any(|(w, _)| !matches!(w, Write::Mark(_))) {
                let room = MOST.saturating_sub(batch.len()).min(state.ends.len());
                batch.extend(state.ends.drain(..room));
            }
            batch
        };
        let (writes, replies): (Vec<Write>, Vec<Reply>) = batch.into_iter().unzip();
        match blocking(&shared, move |s| commit(s, &writes)).await {
            Ok(answers) => {
                for (reply, answer) in replies.into_iter().zip(answers) {
                    reply.send(answer.map_err(|e| Unwritten::Refused(store_error(e))));
                }
            }
            Err(e) => {
                for reply in replies {
                    reply.fail(Unwritten::Failed(e.clone()));
                }
            }
        }
    }
}

/// Writes `writes` in one transaction; `Err` when the transaction as a whole failed.
fn commit(
    shared: &Shared,
    writes: &[Write],
) -> Result<Vec<Result<RunWritten, StoreError>>, StoreError> {
    let epoch = shared.epoch();
    let runs: Vec<RunWrite<'_>> = writes
        .iter()
        .map(|write| match write {
            Write::Admit { job, params, taker } => RunWrite::Admit {
                job,
                on_demand: on_demand(shared, params),
                planner: &shared.runs.planner,
                epoch,
                taker: taker.as_ref().map(|(pid, identity)| (*pid, identity)),
            },
            Write::Mark(mark) => RunWrite::Mark(mark),
            Write::End(id, end) => RunWrite::End(*id, end),
        })
        .collect();
    let written = shared.world.store.write_runs(&runs)?;
    if writes.iter().any(|w| matches!(w, Write::End(..))) {
        shared.runs.starter.after_ends(shared);
    }
    Ok(written)
}
