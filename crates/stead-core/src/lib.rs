//! stead's core: the decisions a job server makes, as pure functions over plain data,
//! and the records they are made about. No sockets, no ledger, no processes: everything
//! here is tested without them, exhaustively where it can be.
//!
//! - [`schedule`]: cron expressions in IANA time zones, intervals and durations: when
//!   jobs fire, across daylight-saving changes;
//! - [`jobs`]: a declared job checked and normalized ([`jobs::validate()`]), its timing,
//!   due fires and catch-up ([`jobs::timing`]), and the plan of a declarative apply
//!   ([`jobs::apply`]);
//! - [`admission`]: how a new run is recorded under its job's concurrency policy;
//! - [`resume`]: what becomes of a cut run's debt after a restart; [`retry`]: the retry
//!   budget and backoff of a genuinely failed run; [`params`]: a run's own environment
//!   and arguments;
//! - [`readiness`]: what a restart of a service would cut now (the gate's question);
//! - [`lease`]: the epoch lease's rules, and [`identity`], the process start identity
//!   they are judged by;
//! - [`runs`]: what a run's monitor executes and how a run ends, as data;
//! - [`records`]: the ledger's rows as the server and the store exchange them;
//! - [`locator`]: which ledger a server and its monitors use, as data;
//! - [`clock`]: the wall clock, injectable (tests move it by hand);
//! - [`machine`]: this host's id and name;
//! - [`disk`]: how full the disk holding a path or a file is.
//!
//! [`identity`], [`machine`] and [`disk`] are the only modules that read the system
//! (`/proc`, `/etc/machine-id`, statvfs): small synchronous reads every other crate needs
//! alike.

pub mod admission;
pub mod clock;
pub mod disk;
pub mod identity;
pub mod jobs;
pub mod lease;
pub mod locator;
pub mod machine;
pub mod params;
pub mod readiness;
pub mod records;
pub mod resume;
pub mod retry;
pub mod runs;
pub mod schedule;
