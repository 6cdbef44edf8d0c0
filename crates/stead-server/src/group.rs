//! Group commit for the writes monitors send through their server: the running marks and
//! the ends that arrive while one transaction commits are written together by the next,
//! so a burst of a thousand starts costs a handful of commits rather than a thousand, and
//! a lone write waits for nothing but its own commit.
//!
//! Whoever finds no commit under way becomes the committer: a task of its own (a caller
//! whose connection closes cannot strand the others) that commits what is pending, then
//! what arrived meanwhile, until nothing is left.

use std::sync::{Arc, Mutex};

use stead_protocol::{ErrorBody, ErrorCode};
use stead_store::StoreError;
use tokio::sync::oneshot;

use crate::ledger::{blocking, store_error};
use crate::shared::Shared;

/// The most writes one transaction carries: a longer burst is split, so no commit holds
/// the ledger for long.
const MOST: usize = 512;

type Reply<Out> = oneshot::Sender<Result<Out, ErrorBody>>;

/// Writes waiting for the next commit; see the module docs.
pub struct Group<Req, Out> {
    state: Mutex<State<Req, Out>>,
}

struct State<Req, Out> {
    pending: Vec<(Req, Reply<Out>)>,
    committing: bool,
}

impl<Req, Out> Default for Group<Req, Out> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                pending: Vec::new(),
                committing: false,
            }),
        }
    }
}

impl<Req, Out> std::fmt::Debug for Group<Req, Out> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        write!(f, "Group({} pending)", state.pending.len())
    }
}

/// Writes a batch, answering each request in order.
pub type Commit<Req, Out> = fn(&Shared, &[Req]) -> Vec<Result<Out, StoreError>>;

impl<Req: Send + 'static, Out: Send + 'static> Group<Req, Out> {
    /// Writes `req` with whatever else is pending, by `commit`; `of` finds this group in
    /// the server's state (the committer outlives the caller).
    pub async fn write(
        shared: &Arc<Shared>,
        of: fn(&Shared) -> &Self,
        commit: Commit<Req, Out>,
        req: Req,
    ) -> Result<Out, ErrorBody> {
        let (reply, answer) = oneshot::channel();
        let lead = {
            let mut state = of(shared).state.lock().unwrap_or_else(|p| p.into_inner());
            state.pending.push((req, reply));
            !std::mem::replace(&mut state.committing, true)
        };
        if lead {
            tokio::spawn(commit_all(shared.clone(), of, commit));
        }
        answer.await.unwrap_or_else(|_| {
            Err(ErrorBody::new(
                ErrorCode::Internal,
                "the commit carrying this write was abandoned",
            ))
        })
    }
}

async fn commit_all<Req: Send + 'static, Out: Send + 'static>(
    shared: Arc<Shared>,
    of: fn(&Shared) -> &Group<Req, Out>,
    commit: Commit<Req, Out>,
) {
    loop {
        let batch: Vec<(Req, Reply<Out>)> = {
            let mut state = of(&shared).state.lock().unwrap_or_else(|p| p.into_inner());
            if state.pending.is_empty() {
                state.committing = false;
                return;
            }
            let most = state.pending.len().min(MOST);
            let rest = state.pending.split_off(most);
            std::mem::replace(&mut state.pending, rest)
        };
        let (reqs, replies): (Vec<Req>, Vec<Reply<Out>>) = batch.into_iter().unzip();
        let written = blocking(&shared, move |s| Ok(commit(s, &reqs))).await;
        match written {
            Ok(outs) => {
                for (reply, out) in replies.into_iter().zip(outs) {
                    let _ = reply.send(out.map_err(store_error));
                }
            }
            Err(e) => {
                for reply in replies {
                    let _ = reply.send(Err(e.clone()));
                }
            }
        }
    }
}
