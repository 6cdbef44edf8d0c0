//! The restart gate: what a restart of a service would cut now ([`readiness`], pure),
//! and how a service is checked ready after a restart ([`ready_check`]).
//!
//! The waiting itself lives in the CLI (`stead gate`), which asks the server and waits
//! on its answer changing; the design is in `docs/gate.md`.

pub mod readiness;
pub mod ready_check;
