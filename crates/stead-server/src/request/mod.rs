//! The request path: connections accepted on the socket ([`accept`], [`connection`]),
//! each request answered by its method's handler ([`dispatch`], [`handlers`]) over the
//! ledger ([`ledger_calls`]: blocking calls off the async threads, refusals as protocol
//! errors; [`group_commit`]: the writes about runs that commit together), the HTTP API
//! and dashboard (`http`, feature `http`) over the same dispatcher, what the server knows
//! of its HTTP API in any build ([`web`]), and what `/metrics` counts ([`metrics`]).

pub mod accept;
pub mod connection;
// The dispatcher is also what the HTTP API and the test server call.
#[cfg_attr(not(any(feature = "http", feature = "testing")), allow(dead_code))]
pub mod dispatch;
pub mod group_commit;
pub mod handlers;
#[cfg(feature = "http")]
pub mod http;
pub mod ledger_calls;
// Collected always; rendered only by the HTTP API's `/metrics`.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub mod metrics;
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub mod web;
