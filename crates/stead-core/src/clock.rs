//! Wall-clock time, injectable.
//!
//! Lease expiry and fire times are kept in wall time, because the monotonic clock
//! stops while a laptop sleeps (and keeps running under SIGSTOP, which tests use to stand
//! in for sleep). Code that decides on time takes a [`Clock`] so tests can make the wall
//! clock jump while nothing else moves.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::sync::Notify;

/// A future that a clock resolves.
pub type Sleep<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A source of wall-clock time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> Timestamp;

    /// Resolves once the wall clock reads `deadline` or later, also when the clock
    /// jumps there (a laptop waking, an NTP correction) rather than ticking there.
    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_>;
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

/// Longest single timer sleep: timers run on the monotonic clock, which neither counts
/// time asleep nor follows wall-clock jumps, so the wall clock is re-read this often
/// while waiting. It bounds how late a fire can be noticed after a jump.
const WALL_RECHECK: Duration = Duration::from_secs(1);

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_> {
        Box::pin(async move {
            loop {
                let left = deadline.duration_since(Timestamp::now());
                if left <= SignedDuration::ZERO {
                    return;
                }
                let left = Duration::try_from(left).unwrap_or(WALL_RECHECK);
                tokio::time::sleep(left.min(WALL_RECHECK)).await;
            }
        })
    }
}

/// A clock for tests: time stands still until moved, and moving it wakes every sleeper,
/// as a wall-clock jump would.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<Timestamp>,
    moved: Notify,
}

impl ManualClock {
    pub fn new(start: Timestamp) -> Arc<Self> {
        Arc::new(Self {
            now: Mutex::new(start),
            moved: Notify::new(),
        })
    }

    /// Sets the wall clock to `to` (forward or back) and wakes every sleeper.
    pub fn set(&self, to: Timestamp) {
        *self.now.lock().unwrap_or_else(|p| p.into_inner()) = to;
        self.moved.notify_waiters();
    }

    /// Moves the wall clock by `by`.
    pub fn advance(&self, by: SignedDuration) {
        let to = self.now() + by;
        self.set(to);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_> {
        Box::pin(async move {
            loop {
                let moved = self.moved.notified();
                if self.now() >= deadline {
                    return;
                }
                moved.await;
            }
        })
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

/// A span of wall time as long as `d` (for arithmetic on timestamps), saturating.
pub fn span(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}
