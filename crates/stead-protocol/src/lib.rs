//! The stead wire protocol: the types a client and a server exchange, the protocol
//! version, and the exit codes every `stead` command documents.
//!
//! The transport is newline-delimited JSON over a unix socket. On every connection the
//! server writes one [`Hello`] line first; after that the client writes
//! [`RequestEnvelope`] lines and the server answers each with one [`ResponseEnvelope`]
//! line carrying the same `id`. See `docs/protocol.md` for the full contract.
//!
//! This crate holds data only (serde, no I/O), so any program can speak to stead by
//! depending on it alone.

pub mod exit;
mod message;
mod status;

pub use message::{
    ErrorBody, ErrorCode, Hello, HelloLine, Outcome, RequestEnvelope, ResponseEnvelope,
};
pub use status::{StatusResult, StopParams, StopResult};

/// The protocol identifier carried in every hello line. A client refuses a server whose
/// identifier differs, rather than guessing at a shape it does not know.
pub const PROTOCOL: &str = "stead/1";

/// The longest line either side accepts, in bytes (without the newline). A longer line
/// is answered with [`ErrorCode::LineTooLong`] and skipped; the connection stays usable.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// The method names a server answers. Kept as constants so client and server cannot drift.
pub mod method {
    /// Server identity, lease and paths: [`crate::StatusResult`].
    pub const STATUS: &str = "status";
    /// Graceful stop: [`crate::StopParams`] in, [`crate::StopResult`] out.
    pub const STOP: &str = "stop";
}
