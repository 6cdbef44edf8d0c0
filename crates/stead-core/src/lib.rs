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
//! - [`overdue`]: when a job that expects a success within a while is overdue;
//! - [`readiness`]: what a restart of a service would cut now (the gate's question);
//! - [`lease`]: the epoch lease's rules (judged by process start identities, which
//!   `stead_sys::identity` reads);
//! - [`runs`]: what a run's monitor executes and how a run ends, as data, and [`plan`],
//!   how a run's plan is made from its job and its row;
//! - [`conditions`]: what a run needs of the machine (network, mains power, staying
//!   awake) and when its fires start (jitter, the spread of catch-ups at a wake);
//! - [`records`]: the ledger's rows as the server and the store exchange them;
//! - [`locator`]: which ledger a server and its monitors use, as data;
//! - [`clock`]: the wall clock, injectable (tests move it by hand); [`sleep`]: a sleep
//!   told from a wall-clock change by the readings of the three clocks.
//!
//! What the operating system is asked (process identities, the machine's id, disks,
//! clocks) goes through the platform layer, `stead-sys`.

pub mod admission;
pub mod clock;
pub mod conditions;
pub mod jobs;
pub mod lease;
pub mod locator;
pub mod overdue;
pub mod params;
pub mod plan;
pub mod readiness;
pub mod records;
pub mod resume;
pub mod retry;
pub mod run_token;
pub mod runs;
pub mod schedule;
pub mod sleep;
