//! The server's side of runs, one module per step: admit a run ([`admit`]; the plan its
//! monitor follows is made by `stead_core::plan`), start the monitor ([`spawn`], through the
//! [`spawner`] where it can, or handing the run to a monitor done with its last:
//! [`reuse`]), watch it ([`watch`]),
//! cancel or cut runs ([`mod@cancel`]), wait for one to end ([`wait`]), and reconcile at
//! boot ([`mod@reconcile`]).
//!
//! The server never holds a run's command: each run's monitor does, and records the
//! outcome itself. The server watches each monitor's process (its exit watch) only to
//! learn that a row changed, and to settle the rare run whose monitor died before it
//! could record anything. Every server write here is fenced by its lease epoch.

mod admit;
mod cancel;
pub mod logs;
pub mod ownership;
mod reconcile;
mod reuse;
mod spawn;
pub mod spawner;
mod wait;
mod watch;

pub use admit::{Fire, on_demand, start, start_fires, start_now};
pub use cancel::{cancel, cut_where, relay_cancels};
pub use reconcile::reconcile;
pub use reuse::{Link, Monitors};
pub use spawn::{launch, warm_spawner};
pub use wait::wait_terminal;
