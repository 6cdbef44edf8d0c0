//! What the server asks of the system around it, beyond the platform layer
//! (`stead_sys`): the lock file that makes one server per state directory ([`lock`]),
//! durable file writes ([`fsutil`]), its descriptor limit ([`fdlimit`]), and what it
//! keeps resident once started ([`resident`]).

pub mod fdlimit;
pub mod fsutil;
pub mod lock;
pub mod resident;
