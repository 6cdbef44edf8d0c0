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

/// A host's clock set to a shared ledger's: the local clock plus the offset to the
/// database's clock, last measured at a lease renewal. A server of a shared ledger reads
/// time through it, so the fires it computes as the leader and the times it records follow
/// the one clock every host agrees on, whatever this host's own clock says; expiries are
/// still judged by the database itself, in the statements that write them.
#[derive(Debug)]
pub struct LedgerClock {
    local: SharedClock,
    /// The database's clock minus the local one, in microseconds.
    offset_us: std::sync::atomic::AtomicI64,
}

impl LedgerClock {
    pub fn new(local: SharedClock) -> Arc<Self> {
        Arc::new(Self {
            local,
            offset_us: std::sync::atomic::AtomicI64::new(0),
        })
    }

    /// This host's own reading, uncorrected.
    pub fn local_now(&self) -> Timestamp {
        self.local.now()
    }

    /// Records a reading of the ledger's clock, `ledger`, taken while the local clock
    /// went from `sent` to `received` (see [`ledger_offset`]).
    pub fn observe(&self, sent: Timestamp, ledger: Timestamp, received: Timestamp) {
        let offset = ledger_offset(sent, ledger, received);
        let us = i64::try_from(offset.as_micros()).unwrap_or(i64::MAX);
        self.offset_us
            .store(us, std::sync::atomic::Ordering::Relaxed);
    }

    /// The ledger's clock minus this host's, as last observed.
    pub fn offset(&self) -> SignedDuration {
        SignedDuration::from_micros(self.offset_us.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// How far a reading of another clock, `other`, taken while the local clock went from
/// `sent` to `received`, is ahead of the local clock: the reading is set against the
/// round trip's midpoint.
pub fn ledger_offset(sent: Timestamp, other: Timestamp, received: Timestamp) -> SignedDuration {
    let half_trip = received.duration_since(sent) / 2;
    other.duration_since(sent + half_trip)
}

impl Clock for LedgerClock {
    fn now(&self) -> Timestamp {
        self.local.now() + self.offset()
    }

    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_> {
        Box::pin(async move {
            // The offset may move while sleeping: sleep on the local clock in short
            // steps and judge the deadline in ledger time after each.
            loop {
                let now = self.now();
                if now >= deadline {
                    return;
                }
                let step = deadline.duration_since(now).min(span(WALL_RECHECK));
                self.local.sleep_until(self.local.now() + step).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    #[test]
    fn a_ledger_clock_reads_the_ledgers_time_from_a_skewed_host() {
        let local = ManualClock::new(at(0));
        let clock = LedgerClock::new(local.clone());
        assert_eq!(clock.now(), at(0));
        // The host runs 10 s ahead: the database read 50 s while the host read 60 s.
        local.set(at(62));
        clock.observe(at(60), at(51), at(62));
        assert_eq!(clock.offset(), SignedDuration::from_secs(-10));
        assert_eq!(clock.now(), at(52));
        assert_eq!(clock.local_now(), at(62));
        // Behind by 10 s, with a 4 s round trip centred on the reading.
        clock.observe(at(60), at(72), at(64));
        assert_eq!(clock.offset(), SignedDuration::from_secs(10));
    }

    #[tokio::test]
    async fn a_ledger_clock_wakes_a_sleeper_at_the_ledgers_deadline() {
        let local = ManualClock::new(at(0));
        let clock = LedgerClock::new(local.clone());
        clock.observe(at(0), at(100), at(0));
        let sleeper = {
            let clock = clock.clone();
            tokio::spawn(async move { clock.sleep_until(at(110)).await })
        };
        // Ledger time 105: not yet.
        local.set(at(5));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        local.set(at(10));
        tokio::time::timeout(std::time::Duration::from_secs(10), sleeper)
            .await
            .expect("woken at the ledger's deadline")
            .unwrap();
    }
}
