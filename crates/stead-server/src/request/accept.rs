//! What both accept loops (the socket's and the HTTP API's) do when accepting fails or
//! a connection must be turned away: back off instead of spinning, and say so once with
//! a count instead of once per attempt.
//!
//! The usual failure is running out of descriptors (EMFILE, ENFILE): the listener stays
//! readable, so an accept loop that retries at once spins at full CPU and writes a log
//! line per attempt, millions a second. The loop keeps serving the connections it has;
//! it only waits before accepting again, longer while the failures go on.

use std::time::{Duration, Instant};

use tracing::warn;

/// The first pause after a failed accept, and the longest.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LAST_PAUSE: Duration = Duration::from_secs(1);
/// How often a failure that keeps happening is logged again, with its count.
const REPORT_EVERY: Duration = Duration::from_secs(10);

/// A failure or refusal that may repeat many times a second: logged the first time,
/// then at most once per [`REPORT_EVERY`] with how many times it happened meanwhile.
#[derive(Debug)]
pub struct Repeated {
    what: &'static str,
    count: u64,
    reported_at: Option<Instant>,
}

impl Repeated {
    pub fn new(what: &'static str) -> Self {
        Self {
            what,
            count: 0,
            reported_at: None,
        }
    }

    /// Counts one occurrence and logs it when a report is due.
    pub fn happened(&mut self, detail: &dyn std::fmt::Display) {
        self.count += 1;
        let now = Instant::now();
        let due = self
            .reported_at
            .is_none_or(|at| now.duration_since(at) >= REPORT_EVERY);
        if due {
            if self.count == 1 {
                warn!(cause = %detail, "{}", self.what);
            } else {
                warn!(
                    cause = %detail,
                    times = self.count,
                    "{} ({} times since the last report)",
                    self.what,
                    self.count
                );
            }
            self.count = 0;
            self.reported_at = Some(now);
        }
    }
}

/// An accept loop's failures: how long to pause before the next accept.
#[derive(Debug)]
pub struct AcceptErrors {
    report: Repeated,
    pause: Duration,
}

impl AcceptErrors {
    pub fn new(what: &'static str) -> Self {
        Self {
            report: Repeated::new(what),
            pause: FIRST_PAUSE,
        }
    }

    /// A failed accept: reported (see [`Repeated`]), and the pause to take before the
    /// next, doubling while the failures go on.
    pub fn failed(&mut self, e: &std::io::Error) -> Duration {
        self.report.happened(e);
        let pause = self.pause;
        self.pause = (self.pause * 2).min(LAST_PAUSE);
        pause
    }

    /// A successful accept: the next failure pauses briefly again.
    pub fn accepted(&mut self) {
        self.pause = FIRST_PAUSE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_a_second_and_reset_on_success() {
        let mut errors = AcceptErrors::new("accept failed");
        let e = std::io::Error::from_raw_os_error(24);
        let pauses: Vec<Duration> = (0..9).map(|_| errors.failed(&e)).collect();
        assert_eq!(pauses[0], FIRST_PAUSE);
        assert_eq!(pauses[1], FIRST_PAUSE * 2);
        assert_eq!(*pauses.last().unwrap(), LAST_PAUSE);
        assert!(pauses.windows(2).all(|w| w[0] <= w[1]));
        errors.accepted();
        assert_eq!(errors.failed(&e), FIRST_PAUSE);
    }

    #[test]
    fn a_repeated_failure_is_reported_once_per_period() {
        let mut r = Repeated::new("x");
        for _ in 0..1000 {
            r.happened(&"boom");
        }
        // The first was reported; the other 999 wait for the next report.
        assert_eq!(r.count, 999);
        assert!(r.reported_at.is_some());
    }
}
