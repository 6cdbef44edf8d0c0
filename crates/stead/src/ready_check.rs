//! Is a service ready: a shell command that exits 0, or an `http://` URL that answers
//! 2xx. Checked once; the caller retries until its deadline.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How a check went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Ready,
    NotYet(String),
}

/// Runs the readiness check `spec` (a URL or a shell command) once, within `timeout`.
pub fn check(spec: &str, timeout: Duration) -> Check {
    if let Some(rest) = spec.strip_prefix("http://") {
        http(rest, timeout)
    } else if spec.starts_with("https://") {
        Check::NotYet(
            "https readiness URLs are not supported; use an http:// URL on loopback or a command (curl -fsS URL)".into(),
        )
    } else {
        command(spec, timeout)
    }
}

fn command(script: &str, timeout: Duration) -> Check {
    match run_bounded(script, timeout, Stdio::null()) {
        Ok(Some(status)) if status.success() => Check::Ready,
        Ok(Some(status)) => Check::NotYet(format!("the ready command {status}")),
        Ok(None) => Check::NotYet("the ready command timed out".into()),
        Err(e) => Check::NotYet(format!("the ready command could not start: {e}")),
    }
}

/// Runs `sh -c script` in its own process group and waits for it, at most `limit`; past
/// that the whole group is killed and `None` is returned. Output goes nowhere, except
/// stderr to `stderr`.
pub fn run_bounded(
    script: &str,
    limit: Duration,
    stderr: Stdio,
) -> std::io::Result<Option<ExitStatus>> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(0)
        .spawn()?;
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            if let Some(pgid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
            }
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A plain HTTP/1.1 GET: the readiness URL of a local service, where pulling in a TLS
/// stack would buy nothing.
fn http(rest: &str, timeout: Duration) -> Check {
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
    let with_port = if authority.contains(':') {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    let addr = match with_port.to_socket_addrs().map(|mut a| a.next()) {
        Ok(Some(addr)) => addr,
        Ok(None) | Err(_) => return Check::NotYet(format!("cannot resolve {authority}")),
    };
    let mut stream = match TcpStream::connect_timeout(&addr, timeout) {
        Ok(stream) => stream,
        Err(e) => return Check::NotYet(format!("{authority}: {e}")),
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    if let Err(e) = stream.write_all(request.as_bytes()) {
        return Check::NotYet(format!("{authority}: {e}"));
    }
    let mut head = [0u8; 64];
    let n = match stream.read(&mut head) {
        Ok(n) => n,
        Err(e) => return Check::NotYet(format!("{authority}: {e}")),
    };
    let line = String::from_utf8_lossy(&head[..n]);
    match line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok())
    {
        Some(code) if (200..300).contains(&code) => Check::Ready,
        Some(code) => Check::NotYet(format!("http://{rest} answered {code}")),
        None => Check::NotYet(format!("http://{rest} did not answer HTTP")),
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;

    #[test]
    fn commands_are_ready_when_they_exit_zero() {
        assert_eq!(check("true", Duration::from_secs(5)), Check::Ready);
        assert!(
            matches!(check("exit 3", Duration::from_secs(5)), Check::NotYet(m) if m.contains("3"))
        );
        assert!(matches!(
            check("sleep 5", Duration::from_millis(100)),
            Check::NotYet(m) if m.contains("timed out")
        ));
    }

    fn serve_once(status: &'static str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = [0u8; 512];
            let _ = conn.read(&mut buf);
            let _ = conn
                .write_all(format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n").as_bytes());
        });
        format!("http://127.0.0.1:{port}/health")
    }

    #[test]
    fn urls_are_ready_on_2xx_only() {
        assert_eq!(
            check(&serve_once("204 No Content"), Duration::from_secs(5)),
            Check::Ready
        );
        assert!(matches!(
            check(&serve_once("503 Service Unavailable"), Duration::from_secs(5)),
            Check::NotYet(m) if m.contains("503")
        ));
        let closed = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        assert!(matches!(
            check(
                &format!("http://127.0.0.1:{closed}/"),
                Duration::from_secs(1)
            ),
            Check::NotYet(_)
        ));
    }
}
