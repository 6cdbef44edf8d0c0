//! The serving probe: a holder is serving when a hello line arrives on its socket within
//! the probe timeout.
//!
//! Accepting a connection is not enough: a frozen or wedged process still has its
//! listening socket, and the kernel queues connections for it. Only a hello proves the
//! holder's event loop is alive. A missing socket path is "not serving" without any
//! connection attempt.

use std::fmt;
use std::io::{self, BufRead, BufReader};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use stead_protocol::{Hello, HelloLine, MAX_LINE_BYTES, PROTOCOL};

/// Why a holder is judged not serving.
#[derive(Debug)]
pub enum NotServing {
    /// No socket file at the path: nothing was attempted.
    Missing,
    /// Connecting failed (ECONNREFUSED on a socket nobody listens on, ...).
    Connect(io::Error),
    /// Connected, but no hello within the timeout.
    Silent,
    /// Something answered, but not a stead hello.
    BadHello(String),
    /// A stead server of another protocol version answered.
    WrongProtocol(String),
}

impl fmt::Display for NotServing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotServing::Missing => f.write_str("no socket"),
            NotServing::Connect(e) => write!(f, "connect failed: {e}"),
            NotServing::Silent => f.write_str("no hello within the probe timeout"),
            NotServing::BadHello(why) => write!(f, "unexpected hello: {why}"),
            NotServing::WrongProtocol(found) => write!(
                f,
                "the server speaks protocol {found:?}, this client speaks {PROTOCOL:?}"
            ),
        }
    }
}

impl PartialEq for NotServing {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for NotServing {}

/// The probe's answer.
#[derive(Debug, PartialEq, Eq)]
pub enum ProbeOutcome {
    Serving(Hello),
    NotServing(NotServing),
}

/// A connection whose hello has been read: the start of every client session.
#[derive(Debug)]
pub struct Greeted {
    pub reader: BufReader<UnixStream>,
    pub hello: Hello,
}

/// Connects to `socket` and reads the hello line within `timeout`.
pub fn open(socket: &Path, timeout: Duration) -> Result<Greeted, NotServing> {
    if std::fs::symlink_metadata(socket).is_err() {
        return Err(NotServing::Missing);
    }
    let deadline = Instant::now() + timeout;
    let stream = connect(socket).map_err(NotServing::Connect)?;
    greet(stream, deadline)
}

/// Reads the hello line on `stream`, connected to a server, by `deadline`.
fn greet(stream: UnixStream, deadline: Instant) -> Result<Greeted, NotServing> {
    let mut reader = BufReader::new(stream);
    let line = read_line_by(&mut reader, deadline).map_err(|e| match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => NotServing::Silent,
        _ => NotServing::BadHello(e.to_string()),
    })?;
    let hello = serde_json::from_str::<HelloLine>(&line)
        .map_err(|e| NotServing::BadHello(format!("{e}: {}", truncate(&line))))?
        .hello;
    if hello.protocol != PROTOCOL {
        return Err(NotServing::WrongProtocol(hello.protocol));
    }
    reader
        .get_ref()
        .set_read_timeout(None)
        .map_err(|e| NotServing::BadHello(e.to_string()))?;
    Ok(Greeted { reader, hello })
}

/// Connects without ever blocking: a frozen holder's accept queue can fill up, and a
/// blocking connect would then wait for as long as the holder stays frozen. A full queue
/// (EAGAIN) means the holder is not accepting, which is "not serving".
fn connect(socket: &Path) -> io::Result<UnixStream> {
    let fd = stead_sys::socket::stream_nonblocking()?;
    rustix::net::connect(&fd, &rustix::net::SocketAddrUnix::new(socket)?)?;
    // Connected: reads from here on are bounded by read timeouts instead.
    rustix::fs::fcntl_setfl(&fd, rustix::fs::OFlags::empty())?;
    Ok(UnixStream::from(fd))
}

/// Asks whether a server is serving on `socket`.
pub fn probe(socket: &Path, timeout: Duration) -> ProbeOutcome {
    match open(socket, timeout) {
        Ok(greeted) => ProbeOutcome::Serving(greeted.hello),
        Err(why) => ProbeOutcome::NotServing(why),
    }
}

/// Reads one line (without its newline) before `deadline`, refusing lines longer than
/// the protocol allows.
pub fn read_line_by(reader: &mut BufReader<UnixStream>, deadline: Instant) -> io::Result<String> {
    read_line_unless(reader, deadline, &mut || false)
}

/// [`read_line_by`], giving up (`Interrupted`) when `give_up` says so: asked before the
/// wait, and whenever a signal interrupts it.
pub fn read_line_unless(
    reader: &mut BufReader<UnixStream>,
    deadline: Instant,
    give_up: &mut dyn FnMut() -> bool,
) -> io::Result<String> {
    let mut buf = Vec::new();
    if reader.buffer().is_empty() && give_up() {
        return Err(io::ErrorKind::Interrupted.into());
    }
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        reader.get_ref().set_read_timeout(Some(left))?;
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted && give_up() => return Err(e),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        buf.extend_from_slice(chunk);
        let consumed = done.unwrap_or(chunk.len());
        reader.consume(consumed);
        if buf.len() > MAX_LINE_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "line longer than the protocol allows",
            ));
        }
        if done.is_some() {
            return String::from_utf8(buf)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "line is not UTF-8"));
        }
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::net::UnixListener;

    use super::*;

    fn hello_line() -> String {
        let line = HelloLine {
            hello: Hello {
                protocol: PROTOCOL.into(),
                server_id: "s1".into(),
                epoch: 1,
                pid: 1,
                version: "t".into(),
            },
        };
        format!("{}\n", serde_json::to_string(&line).unwrap())
    }

    #[test]
    fn hello_writing_server_is_serving() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            conn.write_all(hello_line().as_bytes()).unwrap();
        });
        let outcome = probe(&path, Duration::from_secs(5));
        server.join().unwrap();
        match outcome {
            ProbeOutcome::Serving(hello) => assert_eq!(hello.server_id, "s1"),
            other => panic!("expected serving, got {other:?}"),
        }
    }

    #[test]
    fn silent_bound_socket_is_not_serving() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        // Bound and listening, but nobody ever accepts or writes: a frozen holder.
        let _listener = UnixListener::bind(&path).unwrap();
        let started = Instant::now();
        let outcome = probe(&path, Duration::from_millis(200));
        assert_eq!(outcome, ProbeOutcome::NotServing(NotServing::Silent));
        assert!(started.elapsed() >= Duration::from_millis(200));
    }

    #[test]
    fn missing_path_is_not_serving_without_connecting() {
        let dir = tempfile::tempdir().unwrap();
        let outcome = probe(&dir.path().join("absent.sock"), Duration::from_secs(5));
        assert_eq!(outcome, ProbeOutcome::NotServing(NotServing::Missing));
    }

    #[test]
    fn stale_socket_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        drop(UnixListener::bind(&path).unwrap());
        assert!(matches!(
            probe(&path, Duration::from_secs(5)),
            ProbeOutcome::NotServing(NotServing::Connect(_))
        ));
    }

    #[test]
    fn a_full_accept_queue_is_not_serving_and_never_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        // A frozen holder: listening with a tiny backlog, never accepting.
        let fd = rustix::net::socket(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::STREAM,
            None,
        )
        .unwrap();
        rustix::net::bind(&fd, &rustix::net::SocketAddrUnix::new(&path).unwrap()).unwrap();
        rustix::net::listen(&fd, 0).unwrap();
        let mut held = Vec::new();
        let started = Instant::now();
        // Fill the queue; the connect that no longer fits must fail at once.
        let refused = loop {
            match connect(&path) {
                Ok(stream) => held.push(stream),
                Err(e) => break e,
            }
            assert!(held.len() < 4096, "the accept queue never filled");
        };
        assert_eq!(refused.kind(), io::ErrorKind::WouldBlock, "{refused}");
        assert!(matches!(
            probe(&path, Duration::from_secs(5)),
            ProbeOutcome::NotServing(NotServing::Connect(e)) if e.kind() == io::ErrorKind::WouldBlock
        ));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_foreign_answer_is_not_a_hello() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            conn.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n\n")
                .unwrap();
        });
        let outcome = probe(&path, Duration::from_secs(5));
        server.join().unwrap();
        assert!(matches!(
            outcome,
            ProbeOutcome::NotServing(NotServing::BadHello(_))
        ));
    }
}
