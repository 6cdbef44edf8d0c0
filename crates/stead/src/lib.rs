//! stead: a job server that never loses a run.
//!
//! This crate holds the daemon, the client library and everything the `stead` binary
//! calls. The rooms, from the outside in:
//!
//! - [`paths`] and [`config`]: where a state directory lives and how it is tuned;
//! - [`lifecycle`]: process start identity, the lock file, the epoch lease and the
//!   serving probe: the pieces that keep exactly one server per state directory;
//! - [`store`]: the durable ledger (SQLite) behind a trait;
//! - [`server`]: the daemon (`stead serve`);
//! - [`client`]: connect, ensure a server is available, typed calls;
//! - [`schedule`]: cron expressions, time zones and intervals: when jobs fire (pure);
//! - [`doctor`]: read-only diagnosis of a state directory.
//!
//! The design is in `docs/lifecycle.md` and the wire format in `docs/protocol.md`.

pub mod client;
pub mod clock;
pub mod config;
pub mod doctor;
pub mod fsutil;
pub mod gate;
pub mod guard;
pub mod jobs;
pub mod lifecycle;
pub mod machine;
pub mod paths;
pub mod runs;
pub mod schedule;
pub mod server;
pub mod store;

/// The version of this build, reported in hello lines and `stead status`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
