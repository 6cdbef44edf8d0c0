//! Checkpoints on the wire: a run's durable key/value map and its completed steps, kept
//! per idempotency key so that the run's resume and retries see what it recorded.
//!
//! Writes name the run that makes them and carry its secret token (`STEAD_RUN_TOKEN`,
//! which its monitor gives the command); the ledger accepts them only from the run that
//! holds the key now. Reads name any run of the key and need no token.

use serde::{Deserialize, Serialize};

/// The most bytes one checkpoint's value holds.
pub const MAX_CHECKPOINT_VALUE_BYTES: usize = 64 * 1024;
/// The most checkpoint keys one idempotency key holds.
pub const MAX_CHECKPOINT_KEYS: u64 = 1_000;
/// The most completed steps one idempotency key holds.
pub const MAX_STEPS: u64 = 1_000;
/// The longest checkpoint key or step name, in bytes.
pub const MAX_CHECKPOINT_NAME_BYTES: usize = 128;

/// Whether `name` may name a checkpoint or a step: 1 to 128 letters, digits, `-`, `_`,
/// `.`, `:` or `/`.
pub fn valid_checkpoint_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_CHECKPOINT_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':' | b'/'))
}

/// Parameters of `checkpoint_set`: run `run_id` records `key = value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointSet {
    pub run_id: i64,
    /// The run's `STEAD_RUN_TOKEN`.
    pub token: String,
    pub key: String,
    /// UTF-8, at most [`MAX_CHECKPOINT_VALUE_BYTES`].
    pub value: String,
}

/// Parameters of `checkpoint_get`: one key, as run `run_id`'s idempotency key holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointGet {
    pub run_id: i64,
    pub key: String,
}

/// Parameters of `step_begin` and `step_done`: run `run_id`'s step `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepParams {
    pub run_id: i64,
    /// The run's `STEAD_RUN_TOKEN`.
    pub token: String,
    pub name: String,
}

/// One checkpoint: its value and which run set it, when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub key: String,
    pub value: String,
    /// The run (attempt) that set it last.
    pub run_id: i64,
    /// RFC 3339, UTC.
    pub set_at: String,
}

/// One completed step: by which run and attempt, when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub name: String,
    pub run_id: i64,
    pub attempt: i64,
    /// RFC 3339, UTC.
    pub completed_at: String,
}

/// What `step_begin` answers: the step's completion when it completed already (the
/// command is skipped), `None` when it is to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepState {
    pub completed: Option<Step>,
}

/// Everything the idempotency key of run `run_id` holds: its checkpoints by key, its
/// completed steps in the order they completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoints {
    pub run_id: i64,
    pub idempotency_key: String,
    pub checkpoints: Vec<Checkpoint>,
    pub steps: Vec<Step>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_and_plain() {
        for ok in ["session", "batch-3", "a.b_c:d/e", &"x".repeat(128)] {
            assert!(valid_checkpoint_name(ok), "{ok}");
        }
        for bad in ["", "has space", "é", "a\nb", &"x".repeat(129)] {
            assert!(!valid_checkpoint_name(bad), "{bad:?}");
        }
    }
}
