//! The server lifecycle: the pieces that keep exactly one serving server per state
//! directory through sleeps, crashes and restarts.
//!
//! - [`identity`]: a process's start identity, so a reused pid never passes for a live
//!   holder;
//! - [`lock`]: the lock file and the takeover verdict over it;
//! - [`lease`]: the epoch lease's rules (the SQL lives in the store);
//! - [`probe`]: is a socket's holder serving, judged by its hello.
//!
//! How they fit together is told in `docs/lifecycle.md`.

pub mod identity;
pub mod lease;
pub mod lock;
pub mod probe;
