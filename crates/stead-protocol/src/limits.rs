//! Limits both sides of the wire know, so a client never asks for what a server refuses.

/// The most runs one `run_list` answers.
pub const MAX_RUN_LIST: u32 = 10_000;

/// How many runs `run_list` answers when the filter sets no limit.
pub const DEFAULT_RUN_LIST: u32 = 50;

/// A host whose clock is further than this from a shared ledger's database clock is told
/// so (`stead status`, `stead hosts`, `stead doctor`). Nothing depends on the hosts'
/// clocks agreeing (expiries are the database's), but the times a skewed host shows are
/// off by as much.
pub const CLOCK_SKEW_WARN_MS: i64 = 1_000;

/// The most bytes of a run's log one `run_log` answers (one chunk of the shared ledger).
pub const MAX_RUN_LOG_READ: u64 = 256 * 1024;

/// The most run ids a `prune` answer lists of each kind (`run_ids`, `log_ids`); beyond
/// it the counts still say how many went, and `ids_truncated` says the lists stop short.
/// Keeps the answer well inside [`MAX_LINE`] however much one prune removes.
pub const MAX_PRUNE_IDS: usize = 10_000;
