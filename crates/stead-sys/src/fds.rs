//! Closing the descriptors a long-lived process inherited.
//!
//! A server is usually started by a client, which may itself have inherited descriptors
//! from whoever ran it (a shell's `exec 5> >(...)`, a pipe of a test harness). Held by a
//! server that lives for weeks, such a descriptor keeps its other end from ever seeing
//! end of file, and every run would inherit it too. Linux closes the whole range in one
//! call (`close_range`, 5.9 and later) and lists `/proc/self/fd` where that is missing;
//! macOS lists `/dev/fd`.

use crate::os;

/// Closes every descriptor above 2. Call it before the process opens anything itself.
pub fn close_inherited() {
    if os::close_from(3) {
        return;
    }
    // The open descriptors, listed first and then closed, so the listing's own
    // descriptor is not closed under it.
    let Ok(entries) = std::fs::read_dir(os::OPEN_FDS) else {
        return;
    };
    let open: Vec<i32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in open {
        // SAFETY: closes descriptors this process has not opened (the caller opened
        // nothing yet); one that was the listing's is closed already and the call fails
        // harmlessly.
        unsafe {
            libc::close(fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;
    use std::process::{Command, Stdio};

    /// In a child (a fresh process, as the daemon is): the descriptors it inherited
    /// beyond 0, 1 and 2 are gone once it called `close_inherited`.
    #[test]
    fn inherited_descriptors_are_closed() {
        if std::env::var_os("STEAD_SYS_FDS_CHILD").is_some() {
            return;
        }
        let file = tempfile::tempfile().unwrap();
        let fd = file.as_raw_fd();
        // Not close-on-exec: the child inherits it, as a leaked descriptor would be.
        rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty()).unwrap();
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "fds::tests::child_closes", "--nocapture"])
            .env("STEAD_SYS_FDS_CHILD", fd.to_string())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains(&format!("open before: true, after: false ({fd})")),
            "{text}"
        );
    }

    /// The child's half of the test above (does nothing when run on its own).
    #[test]
    fn child_closes() {
        let Some(fd) = std::env::var("STEAD_SYS_FDS_CHILD")
            .ok()
            .and_then(|v| v.parse::<i32>().ok())
        else {
            return;
        };
        // SAFETY: F_GETFD only asks about the descriptor.
        let open = || unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
        let before = open();
        super::close_inherited();
        println!("open before: {before}, after: {} ({fd})", open());
    }
}
