//! Wall-clock time, injectable.
//!
//! Lease expiry and fire times are kept in wall time, because the monotonic clock
//! stops while a laptop sleeps (and keeps running under SIGSTOP, which tests use to stand
//! in for sleep). Code that decides on time takes a [`Clock`] so tests can make the wall
//! clock jump while nothing else moves.

use std::sync::Arc;

use jiff::Timestamp;

/// A source of wall-clock time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> Timestamp;
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A shared clock handle.
pub type SharedClock = Arc<dyn Clock>;

/// The real wall clock as a shared handle.
pub fn system() -> SharedClock {
    Arc::new(SystemClock)
}

/// Milliseconds since the Unix epoch, the unit the ledger stores.
pub fn to_ms(t: Timestamp) -> i64 {
    t.as_millisecond()
}

/// The inverse of [`to_ms`]; out-of-range values clamp to the representable range.
pub fn from_ms(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or(if ms < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

/// RFC 3339 in UTC with millisecond precision, the format of every time stead prints.
pub fn rfc3339(t: Timestamp) -> String {
    format!("{t:.3}")
}
