//! The descriptors a long-lived stead process starts with: only 0, 1 and 2.
//!
//! A server is usually started by a client, which may itself have inherited descriptors
//! from whoever ran it (a shell's `exec 5> >(...)`, a pipe of a test harness). Held by a
//! server that lives for weeks, such a descriptor keeps its other end from ever seeing
//! end of file, and every run would inherit it too. So the daemon and each run's monitor
//! close whatever they inherited beyond stdin, stdout and stderr before they open anything
//! of their own; everything stead opens afterwards is close-on-exec (Rust's default), so
//! runs start with 0, 1 and 2 alone.

/// Closes every descriptor above 2. Call it before the process opens anything itself.
pub fn close_inherited() {
    #[cfg(target_os = "linux")]
    {
        // close_range(2), Linux 5.9 and later: the whole range in one call.
        // SAFETY: closes descriptors this process has not opened; nothing of this
        // process refers to them (it has opened nothing yet).
        if unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) } == 0 {
            return;
        }
    }
    // Elsewhere, or on an older kernel: the open descriptors, listed first and then
    // closed, so the listing's own descriptor is not closed under it.
    let listing = if cfg!(target_os = "linux") {
        "/proc/self/fd"
    } else {
        "/dev/fd"
    };
    let Ok(entries) = std::fs::read_dir(listing) else {
        return;
    };
    let open: Vec<i32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in open {
        // SAFETY: as above; a descriptor that was the listing's is already closed and
        // the call fails harmlessly.
        unsafe {
            libc::close(fd);
        }
    }
}
