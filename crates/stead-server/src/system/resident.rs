//! What the server keeps resident once it has started. Starting runs code that is never
//! run again (the migrations, the configuration's parser, the ledger's checks, the
//! runtime's set-up), and the kernel maps up to 64 KiB around every page of it that was
//! touched (fault-around): most of a fresh server's resident set is program text and
//! read-only data it will not read again. So, once serving and once its background
//! tasks have made their first pass (whose code, run at the start, would otherwise be
//! mapped again at once), the server lets go of those mappings' pages and of the heap its
//! start freed. Nothing is lost: the pages stay in the page cache (shared with the
//! spawner and the monitors, which map the same file), and whatever the server runs next
//! is mapped again by a minor fault, from memory. What it runs next is laid out together
//! in the program (see `crates/stead/build.rs`), so little cold code comes back with it.
//! How, and where it can be done at all, is the platform layer's
//! ([`stead_sys::memory`]).

/// The background tasks whose first pass the let-go waits for: the scheduler, the
/// starter and the deliverer of notifications (each adds a permit to
/// `Shared::first_passes`).
pub const FIRST_PASSES: u32 = 3;

/// The longest the let-go waits for them.
pub const SETTLE_MAX: std::time::Duration = std::time::Duration::from_secs(1);

/// Lets go of what the start touched (see [`stead_sys::memory`]).
pub fn let_go_of_start() {
    let bytes = stead_sys::memory::let_go_of_start();
    tracing::debug!(kib = bytes / 1024, "let go of what the start touched");
}
