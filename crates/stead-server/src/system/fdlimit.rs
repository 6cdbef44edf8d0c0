//! The server's descriptor budget. At start the soft limit on open descriptors is raised
//! to the hard limit (the usual soft limit, 1,024, is the kernel's historical default,
//! not a choice). Part of it is kept out of the HTTP API's reach: however many TCP
//! clients come, the socket that stead's own commands use, the runs' monitors and the
//! ledger still get descriptors.

use rustix::process::{Resource, Rlimit};

/// Descriptors never given to HTTP connections: the socket's clients, the pipes of
/// monitors being started, the ledger and logs.
#[cfg(feature = "http")]
const RESERVED: u64 = 64;
/// HTTP connections at most, whatever the limit (a loopback dashboard needs a handful).
#[cfg(feature = "http")]
const HTTP_CEILING: u64 = 1024;
#[cfg(feature = "http")]
const HTTP_FLOOR: u64 = 8;

/// Raises the soft descriptor limit to the hard one; returns the soft limit in force.
pub fn raise() -> u64 {
    let Rlimit { current, maximum } = rustix::process::getrlimit(Resource::Nofile);
    if maximum.is_some() && current != maximum {
        let raised = Rlimit {
            current: maximum,
            maximum,
        };
        if rustix::process::setrlimit(Resource::Nofile, raised).is_ok() {
            return maximum.unwrap_or(u64::MAX);
        }
    }
    current.unwrap_or(u64::MAX)
}

/// The soft limit in force.
#[cfg(feature = "http")]
pub fn soft() -> u64 {
    rustix::process::getrlimit(Resource::Nofile)
        .current
        .unwrap_or(u64::MAX)
}

/// How many HTTP connections may be open at once under a soft limit of `soft`: half of
/// what is left once the reserve is set aside, so runs and the socket keep the rest.
#[cfg(feature = "http")]
pub fn http_connections(soft: u64) -> usize {
    let usable = soft.saturating_sub(RESERVED) / 2;
    usize::try_from(usable.clamp(HTTP_FLOOR, HTTP_CEILING)).unwrap_or(HTTP_FLOOR as usize)
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    #[test]
    fn http_gets_half_of_what_the_reserve_leaves_within_bounds() {
        assert_eq!(http_connections(256), 96);
        assert_eq!(http_connections(1024), 480);
        assert_eq!(http_connections(u64::MAX), 1024);
        assert_eq!(http_connections(10), 8);
    }
}
