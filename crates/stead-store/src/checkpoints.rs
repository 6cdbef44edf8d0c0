//! Checkpoints and steps: the durable key/value map and the completed steps a run's
//! command records under its idempotency key, so that its resume and retries see them
//! (see `docs/checkpoints.md`).
//!
//! A write is accepted only from the run that holds its key now, the newest attempt of
//! the key that has not ended, and only with that run's token; both are checked in the
//! transaction that writes, with the writer's row locked, so a cut attempt still alive
//! somewhere cannot write once its successor may have started.

use jiff::Timestamp;
use stead_core::run_token::token_matches;
use stead_protocol::checkpoint::{
    MAX_CHECKPOINT_KEYS, MAX_CHECKPOINT_VALUE_BYTES, MAX_STEPS, valid_checkpoint_name,
};
use stead_protocol::{Checkpoint, Checkpoints, Step};

use crate::backend::sealed::Backend;
use crate::backend::{CheckpointSteps, Guard, KeyHolder, Steps};
use crate::{Refusal, StoreError};

pub trait RunCheckpoints {
    /// Run `run_id` (proving itself with `token`) sets checkpoint `name` to `value`.
    fn checkpoint_set(
        &self,
        run_id: i64,
        token: &str,
        name: &str,
        value: &str,
        now: Timestamp,
    ) -> Result<Checkpoint, StoreError>;
    /// Checkpoint `name` of run `run_id`'s key; `None` when it is not set.
    fn checkpoint_get(&self, run_id: i64, name: &str) -> Result<Option<Checkpoint>, StoreError>;
    /// Everything run `run_id`'s key holds.
    fn checkpoints_of(&self, run_id: i64) -> Result<Checkpoints, StoreError>;
    /// Whether step `name` of run `run_id`'s key completed already; refused as a write
    /// would be, since a run that does not hold its key must not start new work.
    fn step_begin(&self, run_id: i64, token: &str, name: &str) -> Result<Option<Step>, StoreError>;
    /// Run `run_id` completed step `name`.
    fn step_done(
        &self,
        run_id: i64,
        token: &str,
        name: &str,
        now: Timestamp,
    ) -> Result<Step, StoreError>;
}

/// Refuses a name no checkpoint or step may have.
fn check_name(what: &'static str, name: &str) -> Result<(), StoreError> {
    if valid_checkpoint_name(name) {
        Ok(())
    } else {
        Err(Refusal::CheckpointName {
            what,
            name: name.to_string(),
        }
        .into())
    }
}

/// Run `run_id` as a writer: its token checked, holding its key, and with `lock` (in a
/// write) its row locked until the commit.
fn writer<T: Steps>(
    tx: &mut T,
    run_id: i64,
    token: &str,
    lock: bool,
) -> Result<KeyHolder, StoreError> {
    let found = tx
        .key_holder(run_id, lock)?
        .ok_or(Refusal::NoSuchRun(run_id))?;
    let plan = tx.run_plan(run_id)?.and_then(|(plan, _)| plan);
    if !plan.is_some_and(|plan| token_matches(&plan, token)) {
        return Err(Refusal::WrongRunToken(run_id).into());
    }
    if found.holder != Some(run_id) {
        return Err(Refusal::NotKeyHolder {
            run: run_id,
            holder: found.holder,
        }
        .into());
    }
    Ok(found)
}

/// Run `run_id`'s key, for a read.
fn key_of<T: Steps>(tx: &mut T, run_id: i64) -> Result<String, StoreError> {
    Ok(tx
        .key_holder(run_id, false)?
        .ok_or(Refusal::NoSuchRun(run_id))?
        .key)
}

impl<B: Backend> RunCheckpoints for B {
    fn checkpoint_set(
        &self,
        run_id: i64,
        token: &str,
        name: &str,
        value: &str,
        now: Timestamp,
    ) -> Result<Checkpoint, StoreError> {
        check_name("checkpoint key", name)?;
        if value.len() > MAX_CHECKPOINT_VALUE_BYTES {
            return Err(Refusal::CheckpointLimit(format!(
                "a checkpoint's value holds at most {MAX_CHECKPOINT_VALUE_BYTES} bytes (this one has {})",
                value.len()
            ))
            .into());
        }
        // Fenced by the key's holder, checked inside the transaction, not by a server's
        // epoch: the run's own command writes, whichever server passes it on.
        self.write(Guard::Unfenced, &mut |tx| {
            let w = writer(tx, run_id, token, true)?;
            if tx.checkpoint_get(&w.key, name)?.is_none()
                && tx.checkpoint_count(&w.key)? >= MAX_CHECKPOINT_KEYS
            {
                return Err(Refusal::CheckpointLimit(format!(
                    "an idempotency key holds at most {MAX_CHECKPOINT_KEYS} checkpoint keys"
                ))
                .into());
            }
            tx.checkpoint_put(&w.key, name, value, run_id, now)
        })
    }

    fn checkpoint_get(&self, run_id: i64, name: &str) -> Result<Option<Checkpoint>, StoreError> {
        check_name("checkpoint key", name)?;
        self.read(&mut |tx| {
            let key = key_of(tx, run_id)?;
            tx.checkpoint_get(&key, name)
        })
    }

    fn checkpoints_of(&self, run_id: i64) -> Result<Checkpoints, StoreError> {
        self.read(&mut |tx| {
            let key = key_of(tx, run_id)?;
            Ok(Checkpoints {
                run_id,
                checkpoints: tx.checkpoint_list(&key)?,
                steps: tx.step_list(&key)?,
                idempotency_key: key,
            })
        })
    }

    fn step_begin(&self, run_id: i64, token: &str, name: &str) -> Result<Option<Step>, StoreError> {
        check_name("step name", name)?;
        self.read(&mut |tx| {
            let w = writer(tx, run_id, token, false)?;
            tx.step_get(&w.key, name)
        })
    }

    fn step_done(
        &self,
        run_id: i64,
        token: &str,
        name: &str,
        now: Timestamp,
    ) -> Result<Step, StoreError> {
        check_name("step name", name)?;
        self.write(Guard::Unfenced, &mut |tx| {
            let w = writer(tx, run_id, token, true)?;
            if tx.step_get(&w.key, name)?.is_none() && tx.step_count(&w.key)? >= MAX_STEPS {
                return Err(Refusal::CheckpointLimit(format!(
                    "an idempotency key holds at most {MAX_STEPS} completed steps"
                ))
                .into());
            }
            tx.step_put(&w.key, name, run_id, w.attempt, now)
        })
    }
}
