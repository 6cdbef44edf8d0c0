//! Unix sockets as stead opens them. Linux sets close-on-exec and non-blocking in the
//! call that makes a socket (`SOCK_CLOEXEC`, `SOCK_NONBLOCK`); macOS has no such flags,
//! and sets both with a second call, before anything can fork (stead's processes start
//! children only from threads that make no sockets meanwhile, or through the spawner).

use std::io;
use std::os::fd::OwnedFd;

use rustix::net::{RecvFlags, SendFlags};

use crate::os;

/// The longest socket path stead binds directly: macOS's `sun_path` holds 104 bytes with
/// the terminating NUL (Linux's 108); the smaller bound holds on both, so a state
/// directory's socket is in the same place whichever machine reads it.
pub const MAX_SOCKET_PATH: usize = 103;

/// A unix stream socket, close-on-exec and non-blocking (a connect on it never waits).
pub fn stream_nonblocking() -> io::Result<OwnedFd> {
    Ok(os::stream_socket_nonblocking()?)
}

/// A close-on-exec pair of connected unix sockets that keep message boundaries and take
/// messages of a mebibyte (`SOCK_SEQPACKET`): the spawner's control socket. macOS has no
/// such unix sockets (its datagrams stop at 2 KiB); there it answers `Unsupported`, and
/// no spawner is started ([`crate::spawn::FORK_SERVER`]).
pub fn message_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(os::message_pair()?)
}

/// What a send is given so that a peer gone raises no SIGPIPE: `MSG_NOSIGNAL` where
/// the platform has it; elsewhere nothing (stead's programs ignore SIGPIPE, as every
/// Rust program does from its start).
pub const SEND_NOSIGNAL: SendFlags = os::SEND_NOSIGNAL;

/// What `recvmsg` is given so that descriptors received arrive close-on-exec where the
/// platform does it in the call; elsewhere the receiver sets it ([`received_cloexec`]).
pub const RECV_CLOEXEC: RecvFlags = os::RECV_CLOEXEC;

/// Makes a received descriptor close-on-exec where `recvmsg` could not.
pub fn received_cloexec(fd: &OwnedFd) -> io::Result<()> {
    Ok(os::received_cloexec(fd)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_are_close_on_exec_and_a_stream_one_does_not_block() {
        let stream = stream_nonblocking().unwrap();
        let flags = rustix::io::fcntl_getfd(&stream).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        assert!(
            rustix::fs::fcntl_getfl(&stream)
                .unwrap()
                .contains(rustix::fs::OFlags::NONBLOCK)
        );
        let (a, b) = match (message_pair(), crate::spawn::FORK_SERVER) {
            (Ok(pair), _) => pair,
            // Only where no spawner needs it.
            (Err(e), false) => {
                assert_eq!(e.kind(), std::io::ErrorKind::Unsupported);
                return;
            }
            (Err(e), true) => panic!("the spawner's socket pair: {e}"),
        };
        for fd in [&a, &b] {
            let flags = rustix::io::fcntl_getfd(fd).unwrap();
            assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        }
        // Message boundaries are kept: two sends are two receives.
        rustix::net::send(&a, b"one", rustix::net::SendFlags::empty()).unwrap();
        rustix::net::send(&a, b"two!", rustix::net::SendFlags::empty()).unwrap();
        let mut buf = [0u8; 16];
        let n = rustix::net::recv(&b, &mut buf, RecvFlags::empty())
            .unwrap()
            .0;
        assert_eq!(&buf[..n], b"one");
        let n = rustix::net::recv(&b, &mut buf, RecvFlags::empty())
            .unwrap()
            .0;
        assert_eq!(&buf[..n], b"two!");
    }
}
