//! Whether the machine can reach the network: a route out, and a host that answers.
//!
//! A route is found as the kernel would pick one: a UDP socket connected to an address
//! (a public one, or the host a job names) gets a source address only when the routing
//! table has a way there; no packet is sent. The same call works on Linux and macOS. A
//! host that answers is a TCP connection accepted, its name resolved first (so DNS is
//! checked too).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::time::Duration;

/// Public addresses a route out leads to (well-known resolvers; nothing is sent to them).
const PUBLIC: [IpAddr; 2] = [
    IpAddr::V4(Ipv4Addr::new(192, 0, 43, 8)),
    IpAddr::V6(Ipv6Addr::new(0x2001, 0x500, 0x88, 0x200, 0, 0, 0, 8)),
];

/// Whether the routing table has a way to `to`: a UDP socket connected to it gets a
/// source address that is not unspecified. Nothing is sent.
pub fn has_route_to(to: IpAddr) -> bool {
    let local: SocketAddr = match to {
        IpAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        IpAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let Ok(socket) = UdpSocket::bind(local) else {
        return false;
    };
    socket.connect((to, 53)).is_ok()
        && socket
            .local_addr()
            .is_ok_and(|a| !a.ip().is_unspecified() && !a.ip().is_loopback())
}

/// Whether the machine has a route out to the internet (IPv4 or IPv6).
pub fn has_route_out() -> bool {
    PUBLIC.into_iter().any(has_route_to)
}

/// Whether `host:port` resolves and one of its addresses, reachable by a route, accepts
/// a TCP connection within `timeout` (each address tried in turn).
pub fn answers(host_port: &str, timeout: Duration) -> bool {
    let Ok(addrs) = host_port.to_socket_addrs() else {
        return false;
    };
    addrs
        .filter(|a| a.ip().is_loopback() || has_route_to(a.ip()))
        .any(|a| TcpStream::connect_timeout(&a, timeout).is_ok())
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;

    #[test]
    fn a_listening_port_answers_and_a_closed_one_does_not() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        assert!(answers(&addr.to_string(), Duration::from_secs(1)));
        drop(listener);
        assert!(!answers(&addr.to_string(), Duration::from_secs(1)));
        assert!(!answers("no-such-host.invalid:80", Duration::from_secs(1)));
    }

    #[test]
    fn loopback_is_no_route_out() {
        assert!(!has_route_to(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    }
}
