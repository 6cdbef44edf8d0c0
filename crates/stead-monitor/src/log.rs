//! A run's log file: the command's stdout and stderr interleaved as raw bytes, capped at
//! the plan's size, plus the monitor's own `[stead: ...]` notes.
//!
//! Past the cap the monitor keeps reading the command's pipes (a full pipe would block
//! the command) but discards what it reads, and says so once.
//!
//! A run's log is a new file: created with `O_CREAT | O_EXCL | O_NOFOLLOW` (mode 0600),
//! so a file or a link planted at the run's predictable path (`logs/runs/ID.log`, by an
//! earlier run of the same user, say) is never followed, appended to or passed off as
//! the run's output: the run fails to start, saying why.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

#[derive(Debug)]
pub struct Log {
    /// `None` once a write failed (a full disk): output is then discarded.
    file: Option<File>,
    /// Bytes in the file, the monitor's notes included.
    len: u64,
    max: u64,
    truncated: bool,
    /// Whether the last byte written ends a line, so a note starts on a line of its own.
    at_line_start: bool,
}

impl Log {
    /// Creates the log at `path` (0600) and its directories (0700): output is private to
    /// the user whose jobs run. Anything already at `path` is refused, never opened.
    pub fn open(path: &Path, max: u64) -> io::Result<Self> {
        let file = create_new(path).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => io::Error::new(
                io::ErrorKind::AlreadyExists,
                "something is already at that path (a file or a link planted there?); \
                 stead neither follows nor appends to it",
            ),
            _ => e,
        })?;
        Ok(Self {
            file: Some(file),
            len: 0,
            max,
            truncated: false,
            at_line_start: true,
        })
    }

    /// Appends the command's output, up to the cap.
    pub fn output(&mut self, bytes: &[u8]) {
        if self.truncated {
            return;
        }
        let room = usize::try_from(self.max.saturating_sub(self.len)).unwrap_or(usize::MAX);
        self.write(&bytes[..bytes.len().min(room)]);
        if bytes.len() > room {
            self.truncated = true;
            self.note(&format!(
                "log truncated at {} bytes; further output discarded",
                self.max
            ));
        }
    }

    /// Appends `[stead: TEXT]` on a line of its own, whatever the cap.
    pub fn note(&mut self, text: &str) {
        let lead = if self.at_line_start { "" } else { "\n" };
        self.write(format!("{lead}[stead: {text}]\n").as_bytes());
    }

    fn write(&mut self, bytes: &[u8]) {
        let Some(file) = &mut self.file else { return };
        if bytes.is_empty() {
            return;
        }
        if file.write_all(bytes).is_err() {
            self.file = None;
            return;
        }
        self.len += bytes.len() as u64;
        self.at_line_start = bytes.ends_with(b"\n");
    }
}

/// Writes a note as the whole log at `path`, when the run ends before its [`Log`] was
/// opened; best effort, and never onto something already there.
pub fn note_at(path: &Path, text: &str) {
    if let Ok(mut file) = create_new(path) {
        let _ = writeln!(file, "[stead: {text}]");
    }
}

fn create_new(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    OpenOptions::new()
        .append(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(path)
}
