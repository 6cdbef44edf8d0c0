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

use std::path::Path;
use std::sync::{Arc, Mutex};

use stead_core::identity::StartIdentity;
use stead_core::records::{NewRun, StoredJob};
use stead_core::runs::RunEnd;
use stead_protocol::{ErrorBody, ErrorCode, RunParams};
use stead_store::{Mark, RunWrite, RunWritten, StoreError};
use tokio::sync::oneshot;

use crate::ledger::{blocking, store_error};
use crate::runs::{on_demand, plan_for};
use crate::shared::Shared;

/// The most writes one transaction carries: a longer burst is split, so no commit holds
/// the ledger for long.
const MOST: usize = 512;

/// The longest a run's end waits for a commit to ride with before it commits alone.
const END_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

/// A write waiting for the next commit.
#[derive(Debug)]
pub enum Write {
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

type Reply = oneshot::Sender<Result<RunWritten, Unwritten>>;

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

    /// Writes `write` with whatever else is pending.
    pub async fn write(shared: &Arc<Shared>, write: Write) -> Result<RunWritten, ErrorBody> {
        Ok(Self::write_telling(shared, write).await?)
    }

    /// [`Group::write`], telling a write refused on its own from one whose commit failed.
    pub async fn write_telling(
        shared: &Arc<Shared>,
        write: Write,
    ) -> Result<RunWritten, Unwritten> {
        let (reply, answer) = oneshot::channel();
        let (lead, time) = {
            let mut state = shared.writes.state();
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
        answer.await.unwrap_or_else(|_| {
            Err(Unwritten::Failed(ErrorBody::new(
                ErrorCode::Internal,
                "the commit carrying this write was abandoned",
            )))
        })
    }
}

/// Once [`END_WAIT`] has passed, the ends still waiting are committed, alone if need be.
async fn ends_alone(shared: Arc<Shared>) {
    tokio::time::sleep(END_WAIT).await;
    let lead = {
        let mut state = shared.writes.state();
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
            let mut state = shared.writes.state();
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
                    let _ = reply.send(answer.map_err(|e| Unwritten::Refused(store_error(e))));
                }
            }
            Err(e) => {
                for reply in replies {
                    let _ = reply.send(Err(Unwritten::Failed(e.clone())));
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
    let log_dir = shared.world.paths.logs_dir().join("runs");
    let epoch = shared.epoch();
    type Make<'a> = Box<dyn Fn(&StoredJob) -> NewRun + 'a>;
    let makes: Vec<Option<Make<'_>>> = writes
        .iter()
        .map(|write| match write {
            Write::Admit { params, .. } => {
                Some(Box::new(move |job: &StoredJob| on_demand(shared, job, params)) as Make<'_>)
            }
            Write::Mark(_) | Write::End(..) => None,
        })
        .collect();
    let plan = |job: &StoredJob, new: &NewRun, id: i64, log: &Path, key: &str| {
        plan_for(shared, &job.spec, new, id, log, key)
    };
    let runs: Vec<RunWrite<'_>> = writes
        .iter()
        .zip(&makes)
        .map(|(write, make)| match (write, make) {
            (Write::Admit { job, taker, .. }, Some(make)) => RunWrite::Admit {
                job,
                new: make.as_ref(),
                log_dir: &log_dir,
                plan: &plan,
                epoch,
                taker: taker.as_ref().map(|(pid, identity)| (*pid, identity)),
            },
            (Write::Mark(mark), _) => RunWrite::Mark(mark),
            (Write::End(id, end), _) => RunWrite::End(*id, end),
            (Write::Admit { .. }, None) => unreachable!("every admission has its maker"),
        })
        .collect();
    let written = shared.world.store.write_runs(&runs)?;
    if writes.iter().any(|w| matches!(w, Write::End(..))) {
        shared.starter.after_ends(shared);
    }
    Ok(written)
}
