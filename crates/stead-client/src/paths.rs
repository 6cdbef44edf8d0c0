//! Where a state directory's files live.
//!
//! A state directory holds the ledger (`stead.db`), the lock file, the config, logs and,
//! when its path is short enough, the server's socket. A unix socket path is limited to
//! 104 bytes on macOS (108 on Linux); when `DIR/stead.sock` would be longer, the socket
//! lives in a short per-user runtime directory under `/tmp`, named after a hash of the
//! state directory's canonical path. The name is derived, never stored, so every client
//! in every environment computes the same path without reading anything first.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The longest socket path stead binds directly (see [`stead_sys::socket`]).
pub use stead_sys::socket::MAX_SOCKET_PATH;

/// Environment variable naming the state directory.
pub const STATE_DIR_ENV: &str = "STEAD_STATE_DIR";

/// The files of one state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatePaths {
    dir: PathBuf,
    socket: PathBuf,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathsError {
    #[error("failed to create state directory {path}: {source}")]
    Create { path: PathBuf, source: io::Error },
    #[error("failed to resolve state directory {path}: {source}")]
    Resolve { path: PathBuf, source: io::Error },
    #[error("no state directory: pass --state-dir, set {STATE_DIR_ENV}, or set HOME")]
    NoDefault,
    #[error(
        "state directory {path} is owned by uid {owner}, not by you (uid {me}); refusing to use it"
    )]
    NotOwned { path: PathBuf, owner: u32, me: u32 },
}

impl StatePaths {
    /// Resolves the state directory (flag, else `STEAD_STATE_DIR`, else the platform
    /// default), creates it with mode 0700 if missing, and derives the file paths.
    pub fn resolve(flag: Option<&Path>) -> Result<Self, PathsError> {
        Self::create(&Self::chosen(flag)?)
    }

    /// The state directory a command line would use (flag, else `STEAD_STATE_DIR`,
    /// else the platform default), as given, without creating or resolving it.
    pub fn chosen(flag: Option<&Path>) -> Result<PathBuf, PathsError> {
        match flag {
            Some(dir) => Ok(dir.to_path_buf()),
            None => match std::env::var_os(STATE_DIR_ENV).filter(|v| !v.is_empty()) {
                Some(dir) => Ok(PathBuf::from(dir)),
                None => default_state_dir(),
            },
        }
    }

    /// Creates `dir` (0700) if needed and derives the paths from its canonical form.
    pub fn create(dir: &Path) -> Result<Self, PathsError> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| PathsError::Create {
                path: dir.to_path_buf(),
                source,
            })?;
        let dir = fs::canonicalize(dir).map_err(|source| PathsError::Resolve {
            path: dir.to_path_buf(),
            source,
        })?;
        check_owner(&dir)?;
        Ok(Self::derive(dir))
    }

    fn derive(dir: PathBuf) -> Self {
        let direct = dir.join("stead.sock");
        let socket = if direct.as_os_str().len() <= MAX_SOCKET_PATH {
            direct
        } else {
            short_socket_path(&dir)
        };
        Self { dir, socket }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// True when the socket lives outside the state directory because the directory's
    /// path is too long for a unix socket.
    pub fn socket_is_relocated(&self) -> bool {
        !self.socket.starts_with(&self.dir)
    }

    /// The host's secret store (see [`crate::secrets`]).
    pub fn secrets(&self) -> crate::secrets::SecretStore {
        crate::secrets::SecretStore::in_dir(&self.dir)
    }

    pub fn ledger(&self) -> PathBuf {
        self.dir.join("stead.db")
    }

    pub fn lock_file(&self) -> PathBuf {
        self.dir.join("server.lock.json")
    }

    /// Serializes lock acquisition between starting servers (flock, never held for
    /// longer than one acquisition).
    pub fn lock_mutex(&self) -> PathBuf {
        self.dir.join("server.lock.mutex")
    }

    pub fn config(&self) -> PathBuf {
        self.dir.join("config.toml")
    }

    /// The HTTP API's bearer token (0600), created the first time the API listens.
    pub fn http_token(&self) -> PathBuf {
        self.dir.join("http-token")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.dir.join("logs")
    }

    pub fn server_log(&self) -> PathBuf {
        self.logs_dir().join("server.log")
    }

    /// Creates the directory that will hold the socket, private to this user.
    pub fn prepare_socket_dir(&self) -> io::Result<()> {
        let parent = self
            .socket
            .parent()
            .expect("a socket path always has a parent");
        if !self.socket_is_relocated() {
            return Ok(());
        }
        match fs::DirBuilder::new().mode(0o700).create(parent) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        // The runtime directory is shared ground under /tmp: refuse one that another user
        // made, and keep ours private even if a umask loosened it.
        let meta = fs::symlink_metadata(parent)?;
        let me = rustix::process::getuid().as_raw();
        use std::os::unix::fs::MetadataExt;
        if !meta.is_dir() || meta.uid() != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "socket directory {} is not a directory owned by uid {me}",
                    parent.display()
                ),
            ));
        }
        fs::set_permissions(parent, fs::Permissions::from_mode(0o700))
    }
}

fn short_socket_path(dir: &Path) -> PathBuf {
    let digest = Sha256::digest(dir.as_os_str().as_encoded_bytes());
    let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let uid = rustix::process::getuid().as_raw();
    PathBuf::from(format!("/tmp/stead-{uid}/{name}.sock"))
}

fn check_owner(dir: &Path) -> Result<(), PathsError> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(dir).map_err(|source| PathsError::Resolve {
        path: dir.to_path_buf(),
        source,
    })?;
    let me = rustix::process::getuid().as_raw();
    if meta.uid() != me {
        return Err(PathsError::NotOwned {
            path: dir.to_path_buf(),
            owner: meta.uid(),
            me,
        });
    }
    Ok(())
}

/// The platform's state directory: `$XDG_STATE_HOME/stead` (default
/// `~/.local/state/stead`) on Linux, `~/Library/Application Support/stead` on macOS.
pub fn default_state_dir() -> Result<PathBuf, PathsError> {
    stead_sys::dirs::default_state_dir().ok_or(PathsError::NoDefault)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_dirs_keep_the_socket_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = StatePaths::create(tmp.path()).unwrap();
        assert_eq!(paths.socket(), paths.dir().join("stead.sock"));
        assert!(!paths.socket_is_relocated());
    }

    #[test]
    fn long_dirs_move_the_socket_to_a_short_stable_path() {
        let tmp = tempfile::tempdir().unwrap();
        let long = tmp.path().join("a".repeat(60)).join("b".repeat(60));
        let paths = StatePaths::create(&long).unwrap();
        assert!(paths.socket_is_relocated());
        assert!(paths.socket().as_os_str().len() <= MAX_SOCKET_PATH);
        assert_eq!(paths, StatePaths::create(&long).unwrap());
        let other = StatePaths::create(&tmp.path().join("c".repeat(120))).unwrap();
        assert_ne!(paths.socket(), other.socket());
    }

    #[test]
    fn new_directories_are_private() {
        let tmp = tempfile::tempdir().unwrap();
        let nested = tmp.path().join("x/y");
        let paths = StatePaths::create(&nested).unwrap();
        let mode = fs::metadata(paths.dir()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
