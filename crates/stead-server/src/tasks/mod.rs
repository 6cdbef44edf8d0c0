//! The server's background tasks, each a loop that sleeps until its next deadline or a
//! wake-up (`Shared::wake`) and ends when the server stops:
//!
//! - [`heartbeat`]: renews the lease (and, on a shared ledger, confirms this host's runs
//!   are its own), and at each beat samples the clocks for a sleep ([`sleeps`]) and
//!   checks for overdue jobs ([`overdue`]);
//! - [`scheduler`]: fires jobs on their schedules, and records the fires not run;
//! - [`starter`]: hands waiting runs to monitors (retries once their delay passed, runs
//!   of a queue once it has room);
//! - [`resume`]: resumes cut runs, or settles why not;
//! - [`retention`]: prunes old runs and logs;
//! - [`notify`]: delivers the outbox's events to notifiers;
//! - [`cluster`] and [`ship`]: a host among several on a shared ledger, and the shipping
//!   of its run logs to it.

pub mod cluster;
pub mod heartbeat;
pub mod notify;
pub mod overdue;
pub mod resume;
pub mod retention;
pub mod scheduler;
pub mod ship;
pub mod sleeps;
pub mod starter;
