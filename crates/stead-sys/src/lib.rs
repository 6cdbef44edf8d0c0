//! stead's platform layer: every service of the operating system that stead uses, behind
//! one small interface each, with one implementation for Linux and one for macOS. The
//! rest of stead is the same code on both and holds no `cfg(target_os)`; what differs,
//! and what stead does where an OS lacks something, is in `docs/platforms.md`.
//!
//! - [`identity`]: a process's start identity (a pid plus what changes when the pid is
//!   reused), the boot id;
//! - [`machine`]: this host's id and name;
//! - [`clock`]: the awake clock and the sleep-inclusive one;
//! - [`exit`]: a descriptor that turns readable when a process (not only a child) exits;
//! - [`procs`]: the processes descended from this one, those of a process group, and
//!   keeping orphans findable (a subreaper);
//! - [`signal`]: signals that carry a value, and what a handler needs;
//! - [`fds`]: closing inherited descriptors;
//! - [`socket`]: unix sockets as stead opens them;
//! - [`spawn`]: how monitors may be started (forked by a single-threaded helper, or only
//!   exec'd) and what that helper needs;
//! - [`network`]: a route out, a host that answers; [`power`]: mains or battery;
//!   [`inhibit`]: keeping the machine awake while a run is live;
//! - [`disk`]: free space; [`memory`]: giving back pages a start touched;
//! - [`dirs`]: the platform's state directory and the program that opens a URL.
//!
//! Each OS module (`linux`, `macos`) implements the same set of functions, which these
//! modules wrap; a function missing from one fails that platform's build, which
//! `scripts/check-macos` runs on every change.

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!("stead runs on Linux and macOS");

#[cfg_attr(target_os = "linux", path = "linux/mod.rs")]
#[cfg_attr(target_os = "macos", path = "macos/mod.rs")]
mod os;

pub mod clock;
pub mod dirs;
pub mod disk;
pub mod exit;
pub mod fds;
pub mod identity;
pub mod inhibit;
pub mod machine;
pub mod memory;
pub mod network;
pub mod power;
pub mod procs;
// Read on macOS; its rules are tested everywhere.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
mod procargs;
pub mod signal;
pub mod socket;
pub mod spawn;
