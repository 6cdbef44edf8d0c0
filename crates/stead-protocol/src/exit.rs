//! Exit codes of the `stead` command, in one place.
//!
//! Codes follow BSD `sysexits.h` where a meaning fits, so scripts can tell a deferral
//! (75) from a broken installation (78) from an unreachable server (69).

/// The command did what was asked.
pub const SUCCESS: i32 = 0;
/// The command ran but what it asked for failed (a missing job or run, a refused request).
pub const FAILURE: i32 = 1;
/// The command line itself was wrong (unknown flag, bad value); nothing was changed.
pub const USAGE: i32 = 2;
/// The input data was wrong (a bad cron expression, an invalid job file); nothing was changed.
pub const DATA_ERROR: i32 = 65;
/// No server answered and none could be started within the start deadline.
pub const UNAVAILABLE: i32 = 69;
/// An internal error: a bug in stead, or a protocol mismatch between client and server.
pub const SOFTWARE: i32 = 70;
/// The state directory or ledger could not be read or written (permissions, corruption).
pub const IO_ERROR: i32 = 74;
/// Try again later: a gate deferred because something would still be cut.
pub const TEMP_FAIL: i32 = 75;
/// The configuration (`config.toml` or a `STEAD_*` variable) is invalid.
pub const CONFIG: i32 = 78;
