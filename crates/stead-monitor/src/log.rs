//! A run's log file: the command's stdout and stderr interleaved as raw bytes, capped at
//! the plan's size, plus the monitor's own `[stead: ...]` notes.
//!
//! Past the cap the monitor keeps reading the command's pipes (a full pipe would block
//! the command) but discards what it reads, and says so once.
//!
//! Room for the ledger: output stops being written while the file system holding the log
//! has less free than its reserve (`[logs] keep_free`), so a run whose output would fill
//! the disk leaves room for the ledger (beside it by default) to record how it ends; the
//! log then says how much was dropped and why, and writing resumes once there is room
//! again. A write that fails anyway (the disk filled by something else) drops that output
//! the same way rather than stopping the run.
//!
//! A run's log is a new file: created with `O_CREAT | O_EXCL | O_NOFOLLOW` (mode 0600),
//! so a file or a link planted at the run's predictable path (`logs/runs/ID.log`, by an
//! earlier run of the same user, say) is never followed, appended to or passed off as
//! the run's output: the run fails to start, saying why.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

use stead_core::disk::space_of;
use stead_protocol::KeepFree;

/// How often, in bytes written, the free space is read again while well above the
/// reserve: a statvfs per 64 KiB is nothing beside the writes.
const CHECK_EVERY: u64 = 64 * 1024;

#[derive(Debug)]
pub struct Log {
    file: File,
    /// Bytes in the file, the monitor's notes included.
    len: u64,
    max: u64,
    truncated: bool,
    /// Whether the last byte written ends a line, so a note starts on a line of its own.
    at_line_start: bool,
    room: Room,
}

/// The free space of the log's file system, as last read, and what was dropped for want
/// of it.
#[derive(Debug)]
struct Room {
    /// Bytes kept free (0: no reserve, or a file system that cannot say).
    reserve: u64,
    /// Free bytes when last read, and bytes written since.
    free: u64,
    written_since: u64,
    /// Output dropped since the log last said so, and why.
    dropped: u64,
    why: Option<String>,
}

impl Log {
    /// Creates the log at `path` (0600) and its directories (0700): output is private to
    /// the user whose jobs run. Anything already at `path` is refused, never opened.
    pub fn open(path: &Path, max: u64, keep_free: KeepFree) -> io::Result<Self> {
        let file = create_new(path).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => io::Error::new(
                io::ErrorKind::AlreadyExists,
                "something is already at that path (a file or a link planted there?); \
                 stead neither follows nor appends to it",
            ),
            _ => e,
        })?;
        let (free, total) = space_of(&file).unwrap_or((u64::MAX, 0));
        Ok(Self {
            file,
            len: 0,
            max,
            truncated: false,
            at_line_start: true,
            room: Room {
                reserve: keep_free.bytes_of(total),
                free,
                written_since: 0,
                dropped: 0,
                why: None,
            },
        })
    }

    /// Appends the command's output, up to the cap, while the disk has room.
    pub fn output(&mut self, bytes: &[u8]) {
        if self.truncated {
            return;
        }
        let room = usize::try_from(self.max.saturating_sub(self.len)).unwrap_or(usize::MAX);
        let kept = &bytes[..bytes.len().min(room)];
        match self.no_room_for(kept.len() as u64) {
            Some(why) => self.drop_output(kept.len() as u64, why),
            None => {
                self.say_dropped("writing again");
                if let Err(e) = self.write(kept) {
                    self.drop_output(kept.len() as u64, format!("a write failed ({e})"));
                }
            }
        }
        if bytes.len() > room {
            self.truncated = true;
            self.note(&format!(
                "log truncated at {} bytes; further output discarded",
                self.max
            ));
        }
    }

    /// Appends `[stead: TEXT]` on a line of its own, whatever the cap and the reserve (a
    /// note is small, and the reserve exists so that such lines fit); best effort.
    pub fn note(&mut self, text: &str) {
        self.say_dropped("then");
        let lead = if self.at_line_start { "" } else { "\n" };
        let _ = self.write(format!("{lead}[stead: {text}]\n").as_bytes());
    }

    /// Says how much output was dropped for want of room, if any is unsaid: called once
    /// the command is done, before the run's end is recorded.
    pub fn finish(&mut self) {
        self.say_dropped("to the end of the command");
    }

    /// Why `n` more bytes may not be written, if they may not: the reserve would be
    /// breached. The free space is read again every [`CHECK_EVERY`] bytes, and at every
    /// write once near the reserve.
    fn no_room_for(&mut self, n: u64) -> Option<String> {
        let room = &mut self.room;
        if room.reserve == 0 {
            return None;
        }
        let estimate = room.free.saturating_sub(room.written_since);
        let due = room.written_since + n >= CHECK_EVERY
            || estimate.saturating_sub(n) < room.reserve.saturating_add(CHECK_EVERY);
        if due && let Ok((free, _)) = space_of(&self.file) {
            room.free = free;
            room.written_since = 0;
        }
        let free = room.free.saturating_sub(room.written_since);
        (free.saturating_sub(n) < room.reserve).then(|| {
            format!(
                "the disk holding the log had {free} bytes free, less than the {} kept free for the ledger (logs.keep_free)",
                room.reserve
            )
        })
    }

    fn drop_output(&mut self, n: u64, why: String) {
        self.room.dropped += n;
        self.room.why.get_or_insert(why);
    }

    /// Notes the output dropped since the last such note, `and` what follows it.
    fn say_dropped(&mut self, and: &str) {
        if self.room.dropped == 0 {
            return;
        }
        let (n, why) = (self.room.dropped, self.room.why.take().unwrap_or_default());
        self.room.dropped = 0;
        let lead = if self.at_line_start { "" } else { "\n" };
        let line = format!("{lead}[stead: {n} bytes of output dropped: {why}; {and}]\n");
        let _ = self.write(line.as_bytes());
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.file.write_all(bytes)?;
        self.len += bytes.len() as u64;
        self.room.written_since += bytes.len() as u64;
        self.at_line_start = bytes.ends_with(b"\n");
        Ok(())
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
