//! Queues on the wire: a named limit on how many runs of its jobs go at once on a host.

use serde::{Deserialize, Serialize};

/// A queue as declared (`stead queue set NAME --parallel N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// Letters, digits, `-`, `_` and `.`, at most 64 characters.
    pub name: String,
    /// At most this many runs of the queue's jobs at once on a host (at least 1).
    pub parallel: u32,
}

/// A queue as the server knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    #[serde(flatten)]
    pub spec: QueueSpec,
    /// Jobs that name it.
    pub jobs: Vec<String>,
    /// Its runs handed to their monitors and not ended.
    pub running: u64,
    /// Its runs waiting for a place.
    pub waiting: u64,
}

/// Parameters naming one queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueName {
    pub name: String,
}
