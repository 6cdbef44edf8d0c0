//! How runs' monitors may be started, and what the process that forks them needs.
//!
//! On Linux a server keeps a single-threaded helper (the spawner) that forks each
//! monitor without exec'ing the binary: a copy of a process that is already up starts
//! its run at once. macOS does not allow it: a child forked from a process may call only
//! async-signal-safe functions until it execs (its system libraries are not fork-safe),
//! and the exit watch a spawner would hand back (a kqueue) cannot be passed between
//! processes. There every monitor is started by `posix_spawn`-style fork and exec of the
//! binary, which is what the spawner falls back to everywhere.

use crate::os;

/// Whether monitors may be forked, without exec, by a single-threaded helper.
pub const FORK_SERVER: bool = os::FORK_SERVER;

/// Asks the kernel to wake this thread's timers on time rather than up to its default
/// slack late (Linux's 50 µs; a no-op where there is no such setting).
pub fn tighten_timer_slack() {
    os::tighten_timer_slack();
}

/// Where this process's command line lies in its memory (what `ps` shows), so a forked
/// copy can rewrite a word of it in place; `None` where it cannot be found.
#[derive(Debug, Clone, Copy)]
pub struct ArgumentArea {
    start: usize,
    len: usize,
}

impl ArgumentArea {
    /// This process's argument area.
    pub fn find() -> Option<Self> {
        let (start, end) = os::argument_area()?;
        (end > start && end - start <= 1 << 20).then_some(Self {
            start,
            len: end - start,
        })
    }

    /// Rewrites the last occurrence of `from` in the command line as `to` (of the same
    /// length).
    pub fn rename(self, from: &[u8], to: &[u8]) {
        debug_assert_eq!(from.len(), to.len());
        // SAFETY: the area is this process's own argument area (read from its own
        // stat, or inherited through fork from the process that read it), mapped
        // writable on its stack, which nothing else of this process reads now (std
        // keeps a copy of the arguments).
        let args = unsafe { std::slice::from_raw_parts_mut(self.start as *mut u8, self.len) };
        if let Some(at) = args.windows(from.len()).rposition(|w| w == from) {
            args[at..at + to.len()].copy_from_slice(to);
        }
    }
}
