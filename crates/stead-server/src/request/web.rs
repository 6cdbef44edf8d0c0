//! What the server knows of its HTTP API whether or not this build serves it (the API
//! itself is the `http` module, behind the `http` feature): where it listens, the token
//! it wants, and how a request starts it. Handlers go through this; they never call into
//! the HTTP layer, which calls them.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;

use crate::shared::Shared;

/// Whether this build can serve the HTTP API at all.
pub const SUPPORTED: bool = cfg!(feature = "http");

/// Length of a token: 32 random bytes, hex.
const TOKEN_LEN: usize = 64;

/// Where the API listens, once it does.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub addr: SocketAddr,
    pub token: String,
}

impl Endpoint {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Starts the API on a free loopback port (the `http` module provides it).
pub type StartFn = fn(&Arc<Shared>) -> io::Result<Endpoint>;

/// The HTTP side of one server.
#[derive(Debug, Default)]
pub struct HttpState {
    endpoint: Mutex<Option<Endpoint>>,
    accept: Mutex<Option<JoinHandle<()>>>,
    start: Option<StartFn>,
}

impl HttpState {
    pub fn new(start: Option<StartFn>) -> Self {
        Self {
            start,
            ..Self::default()
        }
    }

    pub fn endpoint(&self) -> Option<Endpoint> {
        self.endpoint
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Records that the API listens at `endpoint`, accepting on the task `accept`.
    pub fn listening(&self, endpoint: Endpoint, accept: JoinHandle<()>) {
        *self.accept.lock().unwrap_or_else(|p| p.into_inner()) = Some(accept);
        *self.endpoint.lock().unwrap_or_else(|p| p.into_inner()) = Some(endpoint);
    }

    /// Starts the API on a free loopback port. One start at a time: the socket's handlers
    /// run on the server's single thread and this holds no await, so a check-then-bind
    /// cannot interleave with another.
    pub fn start_on_loopback(&self, shared: &Arc<Shared>) -> io::Result<Endpoint> {
        match self.start {
            Some(start) => start(shared),
            None => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "this stead was built without the HTTP API (cargo feature `http`)",
            )),
        }
    }

    /// Waits until the listener is closed (the server is stopping).
    pub async fn closed(&self) {
        let accept = self.accept.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(accept) = accept {
            let _ = accept.await;
        }
    }
}

/// Reads the token from `path`, creating it (0600, written whole) when absent or
/// unreadable as a token. A token survives restarts, so a saved dashboard URL keeps
/// working.
pub fn load_or_create_token(path: &Path) -> io::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) if is_token(text.trim()) => return Ok(text.trim().to_string()),
        Ok(_) => {
            tracing::warn!(path = %path.display(), "a token file was malformed; writing a new token")
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut bytes = [0u8; TOKEN_LEN / 2];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    crate::system::fsutil::write_atomic(path, format!("{token}\n").as_bytes(), 0o600)?;
    Ok(token)
}

fn is_token(text: &str) -> bool {
    text.len() == TOKEN_LEN && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_token_file_is_private_stable_and_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("http-token");
        let first = load_or_create_token(&path).unwrap();
        assert!(is_token(&first));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_or_create_token(&path).unwrap(), first);
        std::fs::write(&path, "garbage").unwrap();
        let repaired = load_or_create_token(&path).unwrap();
        assert!(is_token(&repaired));
        assert_ne!(repaired, first);
    }
}
