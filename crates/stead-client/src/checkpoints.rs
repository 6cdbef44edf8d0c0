//! Typed calls for checkpoints and steps, and the run a command is inside of: a run's
//! command reads its id and token from the environment its monitor gave it.

use stead_protocol::{
    Checkpoint, CheckpointGet, CheckpointSet, Checkpoints, RunId, Step, StepParams, StepState,
    method,
};

use crate::{ClientError, Connection};

/// The run a command runs inside of, as its environment names it (`STEAD_RUN_ID` and
/// `STEAD_RUN_TOKEN`, which the run's monitor sets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunContext {
    pub run_id: i64,
    /// `None` where the environment names a run without its token (a landed check
    /// reading its cut run's checkpoints): enough to read, not to write.
    pub token: Option<String>,
}

impl RunContext {
    /// The run the environment names; `None` outside any run, or when `STEAD_RUN_ID` is
    /// not a run id.
    pub fn from_env() -> Option<RunContext> {
        let run_id = std::env::var("STEAD_RUN_ID").ok()?.trim().parse().ok()?;
        let token = std::env::var("STEAD_RUN_TOKEN")
            .ok()
            .filter(|t| !t.is_empty());
        Some(RunContext { run_id, token })
    }
}

impl Connection {
    /// Sets checkpoint `key` of run `run_id`'s idempotency key; answered once committed.
    /// Refused unless the run holds its key now and `token` is its own.
    pub fn checkpoint_set(
        &mut self,
        run_id: i64,
        token: &str,
        key: &str,
        value: &str,
    ) -> Result<Checkpoint, ClientError> {
        self.call::<method::CheckpointSet>(&CheckpointSet {
            run_id,
            token: token.to_string(),
            key: key.to_string(),
            value: value.to_string(),
        })
    }

    /// Checkpoint `key` of run `run_id`'s idempotency key; `None` when it is not set.
    pub fn checkpoint_get(
        &mut self,
        run_id: i64,
        key: &str,
    ) -> Result<Option<Checkpoint>, ClientError> {
        self.call::<method::CheckpointGet>(&CheckpointGet {
            run_id,
            key: key.to_string(),
        })
    }

    /// The checkpoints and completed steps of run `run_id`'s idempotency key.
    pub fn checkpoint_list(&mut self, run_id: i64) -> Result<Checkpoints, ClientError> {
        self.call::<method::CheckpointList>(&RunId { id: run_id })
    }

    /// Whether step `name` of run `run_id`'s key completed already.
    pub fn step_begin(
        &mut self,
        run_id: i64,
        token: &str,
        name: &str,
    ) -> Result<StepState, ClientError> {
        self.call::<method::StepBegin>(&step(run_id, token, name))
    }

    /// Records step `name` of run `run_id` completed; answered once committed.
    pub fn step_done(&mut self, run_id: i64, token: &str, name: &str) -> Result<Step, ClientError> {
        self.call::<method::StepDone>(&step(run_id, token, name))
    }
}

fn step(run_id: i64, token: &str, name: &str) -> StepParams {
    StepParams {
        run_id,
        token: token.to_string(),
        name: name.to_string(),
    }
}
