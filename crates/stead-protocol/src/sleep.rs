//! Sleeps on the wire: each sleep a server lived through, as `stead sleeps` lists them.

use serde::{Deserialize, Serialize};

/// One sleep the machine woke from, told from a wall-clock change by its clocks (see
/// docs/recovery.md). Times are RFC 3339 in UTC, on the wall clock as it read at the
/// wake: the sleep is placed ending when the server noticed it, which is at most one
/// heartbeat after the machine woke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sleep {
    pub id: i64,
    /// The host's name, and its machine id.
    pub host: String,
    pub machine_id: String,
    pub started_at: String,
    pub ended_at: String,
    /// How long the machine slept, in milliseconds.
    pub duration_ms: u64,
    /// How far the wall clock was also set, in milliseconds (positive: forward), when it
    /// was set by a second or more besides the sleep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_set_ms: Option<i64>,
}

/// Parameters of `sleep_list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SleepFilter {
    /// At most this many, newest first (default 50, at most 10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}
