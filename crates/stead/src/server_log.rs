//! The server's own log, `logs/server.log`: moved to `server.log.1` once it passes
//! [`ROTATE_BYTES`], whenever that happens while the server runs, so it never grows
//! without bound (an earlier `server.log.1` is replaced: at most two files are kept).
//!
//! Written by hand: tracing-appender rotates by time only, and a size-capped file is a
//! rename and a reopen behind a lock.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::MakeWriter;

/// The size past which the log is moved aside.
pub const ROTATE_BYTES: u64 = 10 * 1024 * 1024;

/// `server.log`, rotated by size; a `MakeWriter` for tracing.
#[derive(Debug, Clone)]
pub struct ServerLog {
    inner: Arc<Mutex<Open>>,
}

#[derive(Debug)]
struct Open {
    path: PathBuf,
    file: File,
    len: u64,
    limit: u64,
}

impl ServerLog {
    /// Opens `path` for appending (0600), rotating it first if it is already over the
    /// limit.
    pub fn open(path: &Path, limit: u64) -> io::Result<Self> {
        let mut open = Open {
            path: path.to_path_buf(),
            file: append(path)?,
            len: 0,
            limit,
        };
        open.len = open.file.metadata()?.len();
        if open.len > limit {
            open.rotate()?;
        }
        Ok(Self {
            inner: Arc::new(Mutex::new(open)),
        })
    }
}

fn append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

impl Open {
    fn rotate(&mut self) -> io::Result<()> {
        let mut aside = self.path.as_os_str().to_owned();
        aside.push(".1");
        std::fs::rename(&self.path, aside)?;
        self.file = append(&self.path)?;
        self.len = 0;
        Ok(())
    }
}

/// One event's write. A log line is never split across the two files: the rotation
/// happens before a write that would pass the limit.
pub struct Writer<'a> {
    log: &'a ServerLog,
}

impl Write for Writer<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut open = self.log.inner.lock().unwrap_or_else(|p| p.into_inner());
        if open.len > 0 && open.len + buf.len() as u64 > open.limit {
            // A log that cannot be rotated (a full disk, a removed directory) goes on in
            // the file it has rather than losing the line.
            let _ = open.rotate();
        }
        let n = open.file.write(buf)?;
        open.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.log
            .inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .file
            .flush()
    }
}

impl<'a> MakeWriter<'a> for ServerLog {
    type Writer = Writer<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        Writer { log: self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_moves_aside_when_a_write_would_pass_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        let log = ServerLog::open(&path, 100).unwrap();
        // As tracing writes an event: one formatted line, in one write.
        for i in 0..30 {
            let line = format!("line {i:04} of the log\n");
            log.make_writer().write_all(line.as_bytes()).unwrap();
        }
        let current = std::fs::read_to_string(&path).unwrap();
        let aside = std::fs::read_to_string(dir.path().join("server.log.1")).unwrap();
        assert!(
            current.len() <= 100 && aside.len() <= 100,
            "{current:?} {aside:?}"
        );
        assert!(current.ends_with("line 0029 of the log\n"), "{current}");
        // Whole lines only, in each file.
        assert!(aside.lines().all(|l| l.starts_with("line ")), "{aside}");
    }

    #[test]
    fn an_oversized_log_is_moved_aside_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        std::fs::write(&path, "x".repeat(200)).unwrap();
        let _log = ServerLog::open(&path, 100).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        assert_eq!(
            std::fs::metadata(dir.path().join("server.log.1"))
                .unwrap()
                .len(),
            200
        );
    }
}
