//! Signals that carry a value, and what a signal handler needs.
//!
//! A server cancels a run by sending its monitor SIGUSR1. On Linux the signal is queued
//! with the run's id as its value (`sigqueue`), so a monitor that takes run after run
//! tells a cancel of the run it was just handed from one meant for the run before.
//! macOS has no `sigqueue`: the signal goes plainly (`kill`) and carries nothing; there,
//! monitors are exec'd for one run each (see [`crate::spawn::FORK_SERVER`]), so a plain
//! cancel can only be for the one run the monitor has.

use std::io;

use rustix::process::Signal;

use crate::os;

/// Whether a value queued with a signal reaches its handler on this platform.
pub const CARRIES_VALUES: bool = os::SIGNALS_CARRY_VALUES;

/// Sends `sig` to `pid` with `value` where the platform can carry one; whether the value
/// rode along (false: sent plainly).
pub fn queue(pid: u32, sig: Signal, value: i64) -> io::Result<bool> {
    os::queue_signal(pid, sig, value)
}

/// The value a signal was queued with, if it was (for the handler of `sig`).
///
/// # Safety
/// `info` is the siginfo the kernel passed to the handler of `sig`.
pub unsafe fn queued_value(sig: libc::c_int, info: *const libc::siginfo_t) -> Option<i64> {
    // SAFETY: as the caller promises.
    unsafe { os::queued_value(sig, info) }
}

/// Where this thread's `errno` lives: a handler saves and restores it around its work.
pub fn errno_location() -> *mut libc::c_int {
    os::errno_location()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, Ordering};

    use super::*;

    static SEEN: AtomicI64 = AtomicI64::new(0);

    extern "C" fn record(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // SAFETY: the kernel's siginfo for this handler's signal.
        let value = unsafe { queued_value(sig, info) }.unwrap_or(-1);
        SEEN.store(value, Ordering::SeqCst);
    }

    /// A value queued with a signal reaches its handler where the platform carries one;
    /// elsewhere the signal arrives plainly, without one.
    #[test]
    fn a_queued_value_reaches_the_handler() {
        // SAFETY: installs a handler for SIGUSR2 (unused by the test harness) that only
        // stores an atomic.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = record as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            assert_eq!(
                libc::sigaction(libc::SIGUSR2, &action, std::ptr::null_mut()),
                0
            );
        }
        let carried = queue(std::process::id(), Signal::USR2, 4242).unwrap();
        assert_eq!(carried, CARRIES_VALUES);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while SEEN.load(Ordering::SeqCst) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the signal never came"
            );
            std::thread::yield_now();
        }
        let expected = if carried { 4242 } else { -1 };
        assert_eq!(SEEN.load(Ordering::SeqCst), expected);
    }
}
