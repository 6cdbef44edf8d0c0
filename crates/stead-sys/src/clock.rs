//! The two clocks a laptop needs told apart: the awake clock, which stops while the
//! machine sleeps (Linux `CLOCK_MONOTONIC`; macOS `CLOCK_UPTIME_RAW`, which is
//! `mach_absolute_time`), and the sleep-inclusive clock, which goes on (Linux
//! `CLOCK_BOOTTIME`; macOS `CLOCK_MONOTONIC`, which is `mach_continuous_time`). Neither
//! follows the wall clock when it is set. Their difference grows by exactly the time the
//! machine slept: that is how a sleep is told from a wall-clock change.

use std::time::Duration;

use crate::os;

/// Time the machine has been awake since it booted (time asleep not counted).
pub fn awake() -> Duration {
    read(os::AWAKE_CLOCK)
}

/// Time since the machine booted, time asleep included.
pub fn since_boot() -> Duration {
    read(os::BOOT_CLOCK)
}

fn read(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; both clocks of each platform exist on
    // every release stead runs on (Linux 2.6.39, macOS 10.12 and later).
    unsafe { libc::clock_gettime(id, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Both clocks read together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Readings {
    pub awake: Duration,
    pub since_boot: Duration,
}

impl Readings {
    pub fn now() -> Self {
        // The awake clock first: a sleep between the two reads then counts as slept
        // rather than making the machine look asleep for less than no time.
        let awake = awake();
        let since_boot = since_boot();
        Self { awake, since_boot }
    }

    /// How long the machine has slept since it booted.
    pub fn asleep(&self) -> Duration {
        self.since_boot.saturating_sub(self.awake)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_clocks_go_forward_and_count_time_awake() {
        let before = Readings::now();
        std::thread::sleep(Duration::from_millis(20));
        let after = Readings::now();
        assert!(after.awake >= before.awake + Duration::from_millis(20));
        assert!(after.since_boot >= before.since_boot + Duration::from_millis(20));
        // Time asleep since boot never shrinks (rounding aside).
        assert!(after.asleep() + Duration::from_millis(1) >= before.asleep());
        assert!(after.since_boot + Duration::from_millis(1) >= after.awake);
    }
}
