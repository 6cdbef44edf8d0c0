//! Limits both sides of the wire know, so a client never asks for what a server refuses.

/// The most runs one `run_list` answers.
pub const MAX_RUN_LIST: u32 = 10_000;

/// How many runs `run_list` answers when the filter sets no limit.
pub const DEFAULT_RUN_LIST: u32 = 50;

/// The most bytes of a run's log one `run_log` answers (one chunk of the shared ledger).
pub const MAX_RUN_LOG_READ: u64 = 256 * 1024;
